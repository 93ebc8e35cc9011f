"""The gate: load a dataset, audit it if the suite needs it, and validate the suite.

:func:`check` is what ``annotation-audit check`` calls. Order matters for fast, clear failures:
the suite is read and validated first (a bad suite costs nothing), then checked against the
loaded table (pools, columns, pairwise data, ``--baseline``), and only then are the
measurements computed and the suite run through great_expectations. Every mismatch between the
suite and the data is a :class:`audit.errors.SuiteFileError` naming the suite line.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

from ..contract.table import AnnotationTable
from ..errors import AuditWarning, join_names
from ..progress import Step, no_step
from ..resample import Bootstrap
from .catalogue import ALL, EVERY
from .suite import Expectation, Suite
from .suite_file import load_suite


@dataclass
class CheckResult:
    """What a check produced.

    Attributes
    ----------
    suite
        The validated suite.
    results
        The audit's result dict with an ``expectations`` block (and ``baseline`` in PR mode).
    validation
        great_expectations' ``ExpectationSuiteValidationResult``.
    """

    suite: Suite
    results: dict
    validation: object

    @property
    def success(self) -> bool:
        return bool(self.validation.success)

    @cached_property
    def validation_json(self) -> dict:
        """The validation result in great_expectations' JSON form."""
        return self.validation.to_json_dict()


def _name_rows_by_line(validation: dict, table) -> None:
    """Add to ``validation``'s meta the line of the data file each failing judgment it lists
    starts on (``row_names``: source row -> ``line 7``), when the table was read from a CSV /
    TSV / JSON Lines file (``table.lines``), so every renderer names the line a user opens, as
    load errors do. The file is scanned only when a judgment failed, up to the last named."""
    from .catalogue import META_KEY
    from .outcomes import failing_judgments

    lines = getattr(table, "lines", None)
    rows = failing_judgments(validation) if lines is not None else []
    if not rows:
        return
    names = lines.names(rows)
    mine = validation.setdefault("meta", {}).setdefault(META_KEY, {})
    mine["row_names"] = {str(r): name for r, name in names.items()}


def check(source, *, suite: str | Path | Suite, baseline=None, seed: int = 0,
          n_bootstrap: int = 1000, min_per_pool: int = 2, unit: str = "judgment",
          load_options: dict | None = None, out: str | Path | None = None,
          step: Step = no_step, profile=False) -> CheckResult:
    """Validate ``source`` against an expectation suite.

    Parameters
    ----------
    source
        A path or hub name accepted by :func:`audit.ingest.load`.
    suite
        A suite file (YAML) or a parsed :class:`audit.suites.suite.Suite`.
    baseline
        The previous version of the dataset (dataset-PR mode): the result gets a ``baseline``
        block (:func:`audit.suites.baseline.compare`) and the baseline claims can run.
    seed, n_bootstrap, min_per_pool, unit
        Passed to the audit (:func:`audit.pipeline.audit_table`), which runs only when a claim
        needs a measurement or a baseline is given.
    load_options
        Passed to :func:`audit.ingest.load` for both versions.
    out
        Folder to write what ``annotation-audit run --out`` writes into — ``results.json``
        (here with the ``expectations`` block, the pass/fail table, and in PR mode the
        ``baseline`` block), ``report.html`` with its charts, ``dataset_card.md`` and the
        per-item table ``items.parquet`` (:mod:`audit.items`) — as one
        set with a ``manifest.json`` (:func:`audit.outputs.write_run`). With it the full audit
        runs even when no claim needs it, so the report is complete. Resolved before anything
        is read, and refused when it would touch an input (:mod:`audit.outputs`).
    profile
        As :func:`audit.run`'s: per-stage timings and peak memory as ``meta.profile``.

    Raises
    ------
    SuiteFileError
        The suite is bad, or does not fit the data (message names the line).

    Without ``baseline`` the suite's dataset-PR claims are skipped with a warning, and listed
    in the result (``expectations.skipped``).
    """
    from ..ingest import load
    from ..outputs import find_inputs, guard_folder, verify_inputs
    from ..pipeline import audit_table, meta
    from ..report.card_meta import from_spec
    from ..results import json_form
    from . import gx_run
    from .batches import batches
    from .measurements import measurements
    from .outcomes import summary
    from ..profile import profiled

    with profiled(profile, step) as (profile, step):
        load_options = load_options or {}
        inputs = find_inputs(source, spec=load_options.get("spec"),
                             pools=load_options.get("pools"), suite=suite, baseline=baseline,
                             format=load_options.get("format", "auto"))
        if out is not None:
            guard_folder(out, inputs)
        suite = suite if isinstance(suite, Suite) else load_suite(suite)
        card = from_spec(load_options.get("spec"), allow_outside=bool(
            load_options.get("allow_outside"))) if out is not None else {}
        verify_inputs(inputs)
        with step("loading and validating"):
            table = load(source, **(load_options or {}))
            old = load(baseline, **(load_options or {})) if baseline is not None else None
        skipped = []
        if old is None:
            suite, skipped = without_baseline_claims(suite)
        fit_table(suite, table, has_baseline=old is not None)
        suite = read_label_values(suite, table.scale)
        boot = Bootstrap(n_bootstrap, seed)
        options = {"bootstrap": boot, "min_per_pool": min_per_pool, "unit": unit}
        if "audit" in suite.needs or old is not None or out is not None:
            results = json_form(audit_table(table, step=step, **options))
        else:
            results = {"meta": meta(table, boot), "dataset": table.summary()}
        if old is not None:
            from .baseline import compare

            with step("baseline audit and comparison"):
                old_results = json_form(audit_table(old, **options))
                results["baseline"] = compare(old, table, old_results=old_results,
                                              new_results=results)
        frames = batches(table, suite.batches)
        if "measurements" in suite.batches:
            frames["measurements"] = measurements(results)
            fit_measurements(suite, frames["measurements"])
        with step("running the expectation suite"):
            validation = gx_run.validate(suite, frames, skipped=skipped)
        if profile is not None and out is None:
            results["meta"]["profile"] = profile.to_dict()
        outcome = CheckResult(suite, results, validation)
        _name_rows_by_line(outcome.validation_json, table)
        results["expectations"] = summary(outcome.validation_json)
        if out is not None:
            from ..items import item_table, write_items
            from ..outputs import write_run

            if card:  # the spec's card: section, as run --out writes it
                results["dataset"]["card"] = card
            with step("per-item table"):
                items = item_table(table)
            if profile is not None:
                results["meta"]["profile"] = profile.to_dict()
            with step("writing the report and dataset card"):
                write_run(results, out, inputs=inputs, report=True, command="check",
                          extra=lambda folder: write_items(items, folder))
        return outcome


def without_baseline_claims(suite: Suite) -> tuple[Suite, list[dict]]:
    """The suite without its dataset-PR claims, and those claims as skipped entries.

    Without ``--baseline`` the claims comparing two versions cannot run; they are reported as
    skipped (with a warning), so one suite serves both pull requests and plain checks.
    """
    keep = tuple(e for e in suite.expectations if "baseline" not in e.kind.needs)
    skipped = [{"expectation": e.title, "expect": e.expect, "line": e.line,
                "description": e.description, "claim": e.claim,
                "reason": "needs --baseline OLD_SOURCE (dataset-PR mode)"}
               for e in suite.expectations if "baseline" in e.kind.needs]
    if skipped:
        warnings.warn(f"{suite.path or suite.name}: {len(skipped)} dataset-PR expectation(s) "
                      f"skipped (line(s) {', '.join(str(s['line']) for s in skipped)}): they "
                      "need --baseline OLD_SOURCE", AuditWarning, stacklevel=3)
    return replace(suite, expectations=keep), skipped


def _pools_named(exp: Expectation) -> list[tuple[str, str]]:
    """(key, pool name) for every pool an expectation names (tokens excluded)."""
    named = []
    for key in ("pool", "judge"):
        v = exp.params.get(key)
        if v is not None and v not in (ALL, EVERY):
            named.append((key, v))
    pools = exp.params.get("pools")
    if isinstance(pools, list):
        named += [("pools", p) for p in pools]
    return named


def fit_table(suite: Suite, table: AnnotationTable, *, has_baseline: bool) -> None:
    """Check that every expectation can run on ``table``; raise SuiteFileError naming the line."""
    for exp in suite.expectations:
        needs = exp.kind.needs
        if "baseline" in needs and not has_baseline:
            raise suite.error(exp, "compares against a previous version; give it with "
                              "--baseline OLD_SOURCE (dataset-PR mode)")  # library callers
        if "pairwise" in needs and not table.is_pairwise:
            raise suite.error(exp, "needs pairwise data (model_a and model_b columns); "
                              f"{table.source} has none")
        if "models" in needs and not (table.is_pairwise or table.is_rating):
            raise suite.error(exp, "needs model columns (model_a / model_b, or model); "
                              f"{table.source} has none")
        if "annotators" in needs and not table.annotators_given:
            from ..contract.table import NOT_WHO_VOTED

            raise suite.error(exp, f"counts or pairs annotators; {table.source}: "
                              f"{NOT_WHO_VOTED} (its annotators are one per vote, made up)")
        if "preference" in needs and not table.scale.is_preference:
            raise suite.error(exp, f"needs preference labels; {table.source} has "
                              f"{table.scale.kind.value} labels")
        column = exp.params.get("column")
        if column is not None and column not in table.frame.columns:
            raise suite.error(exp, f"column {column!r} is not in {table.source}; its columns "
                              f"are {join_names(table.frame.columns)}", key="column")
        if exp.params.get("judge") == EVERY and not table.judge_pools:
            raise suite.error(exp, f"{table.source} has no judge pool (an LLM judge) to compare "
                              "with the human pools")
        if exp.measurement is not None:
            _scope_words_are_not_pools(suite, exp, table)
        for key, name in _pools_named(exp):
            known = table.judge_pools if key == "judge" else table.pools
            what = "judge pool" if key == "judge" else "pool"
            if name not in known:
                raise suite.error(exp, f"no {what} {name!r} in {table.source}; "
                                  f"{what}s are {join_names(known) or 'none'}", key=key)


def _scope_words_are_not_pools(suite: Suite, exp: Expectation, table: AnnotationTable) -> None:
    """Refuse a claim scoped ``every`` on data with a pool named ``every``, or scoped ``all``
    on data with a pool named ``all`` beside other pools.

    A claim's scope words name the measurement it reads (``krippendorff_alpha[every]``: the
    worst pool; ``[all]``: every human pool together), and a pool's own measurement has the
    same id: a pool named ``every`` stood in for the worst pool, so a claim on every pool
    read that pool alone and passed however the others did. (One pool named ``all`` is the
    data without pools, whose measurements are the all-pools ones.)
    """
    scope = exp.measurement.partition("[")[2].rstrip("]").split(", ")
    pools = table.pools
    clash = [w for w in (EVERY, ALL)
             if w in scope and w in pools and (w == EVERY or len(pools) > 1)]
    if clash:
        word = clash[0]
        raise suite.error(exp, f"{table.source} has a pool named {word!r}, the word a suite "
                          f"uses for {'each pool' if word == EVERY else 'every pool together'}"
                          ", so this claim cannot tell the two apart; rename the pool (in "
                          "the data, or give each annotator's pool by --pools or the spec's "
                          "pools.map)")


def read_label_values(suite: Suite, scale) -> Suite:
    """The suite with each ``labels_in_set`` value read as the data's labels are read.

    A value is read by the table's scale (``scale``, a
    :class:`audit.contract.labels.LabelScale`): its ``label.map`` or the preference vocabulary
    it recognised (``A`` -> -1, ``tie`` -> 0), numbers as numbers, a display name
    (``label.names``) as its value. So a suite written in the file's own words (``values: [A,
    B, tie]``) checks the judgments those words became; a value the scale cannot read is kept
    as written and matches no judgment.
    """
    names = {n: v for n, v in zip(scale.names, scale.values)} if scale.names else {}
    exps = []
    for exp in suite.expectations:
        if exp.expect == "labels_in_set":
            values = exp.params["values"]
            codes = scale.codes(values)
            read = [names[str(v)] if str(v) in names else
                    scale.values[c] if c >= 0 else v for v, c in zip(values, codes)]
            exp = replace(exp, params={**exp.params, "values": list(dict.fromkeys(read))})
        exps.append(exp)
    return replace(suite, expectations=tuple(exps))


def fit_measurements(suite: Suite, frame) -> None:
    """Check that every claim's measurement exists; raise SuiteFileError naming the line."""
    for exp in suite.expectations:
        mid = exp.measurement
        if mid is None or mid in frame.index:
            continue
        q = frame["quantity"].to_numpy()
        quantity = mid.split("[", 1)[0]
        have = frame.index[q == quantity].tolist()
        if have:
            raise suite.error(exp, f"the audit has no measurement {mid!r}; it has "
                              f"{join_names(have)}")
        raise suite.error(exp, f"the audit measured no {quantity} on this data (e.g. a "
                          "metric defined only for ordered labels, a single pool, or no "
                          "models to rank)")
