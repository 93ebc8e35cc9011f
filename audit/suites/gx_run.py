"""Run a suite through great_expectations with an ephemeral context.

The only module that imports great_expectations (seconds to import), and only when a suite runs.
Each batch a suite needs (:mod:`audit.suites.batches`, :mod:`audit.suites.measurements`) becomes a
whole-dataframe batch definition on one in-memory pandas data source, validated by a
``ValidationDefinition`` holding that batch's part of the suite. The parts' results are merged, in
suite order, into one ``ExpectationSuiteValidationResult`` named after the suite; its ``meta``
keeps every batch's own validation metadata under ``annotation_audit.batches``. Each result of a
statistical claim also carries, in its ``meta``, the measurement it read (value, 95% CI and, for
``every``, the worst pool), so a renderer needs nothing but the validation result.
"""

from __future__ import annotations

import warnings

import pandas as pd

from ..mainguard import guard
from ..results import jsonable
from .catalogue import META_KEY
from .gx_json import to_gx_json
from .suite import Suite

#: great_expectations' result format: counts plus up to 20 unexpected values and their index.
RESULT_FORMAT = "SUMMARY"
DATA_SOURCE = "annotation-audit"


def validate(suite: Suite, frames: dict[str, pd.DataFrame], *, skipped: list | None = None):
    """Validate ``frames`` (batch name -> frame) against ``suite``.

    ``skipped`` (expectations not run, with the reason) is recorded in the result's ``meta``.

    Returns
    -------
    great_expectations.core.ExpectationSuiteValidationResult
        One result per expectation, in the suite's order.
    """
    # great_expectations imports pyspark.sql.connect where pyspark is installed (mainguard)
    with warnings.catch_warnings(), guard():
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", FutureWarning)
        import great_expectations as gx
        from great_expectations.core.expectation_validation_result import (
            ExpectationSuiteValidationResult,
        )
        from great_expectations.data_context.types.base import ProgressBarsConfig

        context = gx.get_context(mode="ephemeral")
        context.variables.progress_bars = ProgressBarsConfig(globally=False)
        source = context.data_sources.add_pandas(DATA_SOURCE)
        spec = to_gx_json(suite)
        position: dict[str, int] = {}
        results, batch_meta = [], {}
        for batch in suite.batches:
            idx = [i for i, e in enumerate(suite.expectations) if e.batch == batch]
            part = context.suites.add(gx.ExpectationSuite(
                name=f"{suite.name}.{batch}", meta=spec["meta"],
                expectations=[spec["expectations"][i] for i in idx]))
            position.update({e.id: i for i, e in zip(idx, part.expectations)})
            definition = source.add_dataframe_asset(batch).add_batch_definition_whole_dataframe(
                batch)
            run = context.validation_definitions.add(gx.ValidationDefinition(
                name=f"{suite.name}.{batch}", data=definition, suite=part))
            res = run.run(batch_parameters={"dataframe": frames[batch]},
                          result_format=RESULT_FORMAT)
            results.extend(res.results)
            batch_meta[batch] = res.meta
    results.sort(key=lambda r: position[r.expectation_config.id])
    _annotate(results, frames.get("measurements"))
    n_ok = sum(bool(r.success) for r in results)
    first = next(iter(batch_meta.values()), {})
    meta = {"great_expectations_version": first.get("great_expectations_version"),
            "run_id": first.get("run_id"), "validation_time": first.get("validation_time"),
            META_KEY: {"suite": suite.path, "batches": batch_meta, "skipped": skipped or []}}
    return ExpectationSuiteValidationResult(
        success=n_ok == len(results), results=results, suite_name=suite.name, meta=meta,
        statistics={"evaluated_expectations": len(results), "successful_expectations": n_ok,
                    "unsuccessful_expectations": len(results) - n_ok,
                    "success_percent": 100.0 * n_ok / len(results) if results else None})


def _annotate(results, table: pd.DataFrame | None) -> None:
    """Put the measurement each claim read into its result's ``meta``."""
    for r in results:
        mid = (r.expectation_config.meta or {}).get(META_KEY, {}).get("measurement")
        if mid is None or table is None or mid not in table.index:
            continue
        row = table.loc[mid]
        r.meta = {**(r.meta or {}), META_KEY: jsonable({
            "measurement": mid, "value": float(row["value"]),
            "ci95": [float(row["ci_low"]), float(row["ci_high"])],
            "worst": row["worst"] or None})}
