"""The main job: load -> validate -> measure -> rank, into one result dict.

:func:`run` is what ``annotation-audit run`` calls; the CLI only parses flags and renders.
"""

from __future__ import annotations

import platform
from collections.abc import Callable, Sequence
from pathlib import Path

from . import __version__
from .contract.table import AnnotationTable
from .progress import Step, no_step
from .resample import Bootstrap


def meta(table: AnnotationTable, bootstrap: Bootstrap, **extra) -> dict:
    """The ``meta`` block: versions, seed, resample count and method, source. No timestamps."""
    import numpy
    import pandas

    return {
        "tool": "annotation-audit",
        "version": __version__,
        "seed": bootstrap.seed,
        "n_bootstrap": bootstrap.n_resamples,
        "bootstrap": bootstrap.to_dict(),
        "source": table.source,
        "engine": table.info.get("engine", "pandas"),
        "versions": {"python": platform.python_version(), "numpy": numpy.__version__,
                     "pandas": pandas.__version__},
        **extra,
    }


def audit_table(table: AnnotationTable, *, bootstrap: Bootstrap, min_per_pool: int = 2,
                unit: str = "judgment", step: Step = no_step, **rank_options) -> dict:
    """Every analysis on an already loaded table, after its memory estimate is checked against
    the budget in force (:func:`audit.budget.check_table`; exit 2 before anything is
    allocated when it is over).

    Returns the result dict as the library gives it: plain Python types, NaN where a number is
    undefined. Renderers take :func:`audit.results.json_form` of it (NaN as None).
    """
    from .budget import check_table
    from .measure import measure
    from .rank import rank

    sizes = rank_options.get("sizes")
    check_table(table, n_resamples=bootstrap.n_resamples,
                n_sims=int(rank_options.get("n_sims") or 20_000),
                max_size=max((int(x) for x in sizes), default=0) if sizes else 100)
    results = {"meta": meta(table, bootstrap), "dataset": table.summary()}
    with step("reliability and pool disagreement"):
        results.update(measure(table, bootstrap=bootstrap, min_per_pool=min_per_pool))
    with step("leaderboards and stability"):
        results.update(rank(table, bootstrap=bootstrap, unit=unit, **rank_options))
    return results


def run(source, *, format: str = "auto", spec=None, pools=None, pool_column: str | None = None,
        min_pool_annotators: int | None = None, aspect: str | None = None,
        split: str | None = None, name: str | None = None, engine: str = "pandas",
        spark_master: str | None = None, spark_conf: dict | None = None,
        out: str | Path | None = None, seed: int = 0, n_bootstrap: int = 1000,
        min_per_pool: int = 2, unit: str = "judgment", report: bool = True,
        sizes: Sequence[int] | None = None, gap_model: str | None = None,
        perturbation: str | None = None, n_sims: int | None = None,
        max_flipped: int | None = None, step: Step = no_step,
        load_options: dict | None = None, allow_outside: bool = False,
        max_memory=None, items: bool | None = None, items_csv: bool = False,
        card: dict | None = None, profile=False) -> dict:
    """Load ``source``, run every analysis, and (with ``out``) write ``out/results.json`` and,
    unless ``report=False``, the HTML report, the dataset card and the per-item table.

    Every option is a keyword, checked by Python when the call is made: a misspelt one is a
    ``TypeError`` before anything is read.

    Parameters
    ----------
    source
        A path or hub name, a :class:`pandas.DataFrame`, or a ``datasets.Dataset`` /
        ``DatasetDict``: anything :func:`audit.ingest.load` accepts.
    format, spec, pools, pool_column, min_pool_annotators, aspect, split, name
        The loading options of :func:`audit.ingest.load` (the CLI's ``--format``, ``--spec``,
        ...); ``spec`` is a YAML path, a dict of the same keys, or a
        :class:`audit.ingest.spec.DatasetSpec`. ``aspect=None`` is MultiPref's default aspect.
    engine, spark_master, spark_conf
        ``engine="spark"`` runs the loading passes (read, map, validate, encode) on Spark
        (:mod:`audit.ingest.spark`); everything after them is the same code.
    out
        Output folder, written as one set (:func:`audit.outputs.write_run`): the files and a
        ``manifest.json`` are staged beside it and swapped in together, so a reader never sees
        a mix of two runs; ``meta.run_id`` is set. It is resolved before anything is read: a
        folder that holds an input, lies in an input folder, or holds files annotation-audit
        did not write is an :class:`audit.errors.InputError` (:mod:`audit.outputs`). The input
        is never written to.
    seed, n_bootstrap
        The bootstrap's seed and number of item resamples; written into ``meta``.
    min_per_pool, unit
        Judgments a pool needs on an item to count in pool disagreement; leaderboard unit
        (``"judgment"`` or ``"majority"``).
    report
        With ``out``: also write ``report.html`` (with its charts), ``dataset_card.md`` and
        ``croissant_rai.json`` (:func:`audit.report.write_reports`). ``False`` writes only
        ``results.json``, for a pure-analysis run.
    items, items_csv
        With ``out``: write ``items.parquet``, one row per item with each pool's label
        distribution, majority and unanimity and each pair of pools' disagreement class
        (:mod:`audit.items`); None writes it when ``report`` does. ``items_csv`` also writes
        ``items.csv`` (spreadsheet-safe) and implies ``items``. Nothing about them goes into
        ``results.json`` (the same bytes with or without them); ``manifest.json`` lists them.
    sizes, gap_model, perturbation, n_sims, max_flipped
        Leaderboard-stability options of :func:`audit.rank.rank`; None keeps its default.
    step
        Progress hook: ``step(name)`` is a context manager around each stage.
    allow_outside
        Let a spec file name a file outside its folder (:func:`audit.ingest.load`).
    max_memory
        The memory budget (:mod:`audit.budget`): bytes, a size (``"8G"``) or a share of the
        available memory (``"75%"``); None keeps the budget in force (default: half the
        available memory). An audit estimated to need more is an
        :class:`audit.budget.MemoryBudgetError` before anything is allocated.
    profile
        ``True`` (or an :class:`audit.profile.Profile`, read afterwards by the caller): time
        each stage and its peak memory and write them as ``meta.profile``
        (:mod:`audit.profile`). Off by default: timings are the one thing that differs between
        two runs of the same data and seed.
    card
        Publishing metadata flags (``license``, ``language``, ``task_categories``, ``tags``,
        ``pretty_name``) over the spec's ``card:`` section; parsed and checked against the
        Hub's vocabularies before anything is read (:func:`audit.report.card_meta.card_metadata`)
        and kept as ``results["dataset"]["card"]`` when any is set.
    load_options
        The loading options as one dict (kept for callers written before they were keywords of
        their own); a key there overrides the keyword, an unknown key is a ``TypeError``.

    Returns
    -------
    dict
        The result object (see :mod:`audit.results`), with ``meta.run_id`` when ``out`` is
        given: plain Python types (``dict``, ``list``, ``str``, ``int``, ``float``, ``bool``,
        None), and an undefined number (a coefficient of a degenerate table, a rate with
        nothing to count) as a float NaN, as :func:`audit.measure.measure` and
        :func:`audit.rank.rank` return it; test it with :func:`math.isnan`.
        ``results.json`` holds the same values with NaN written as ``null``:
        :func:`audit.results.json_form` gives that form (what the report, the card and the
        terminal summary read).
    """
    from .budget import check_resampling, limit, parse_max_memory
    from .profile import profiled

    check_resampling(n_bootstrap, seed)
    from .ingest import DEFAULT_ASPECT, load
    from .outputs import find_inputs, guard_folder, verify_inputs
    from .report.card_meta import from_spec
    from .results import json_form

    with profiled(profile, step) as (profile, step):
        max_memory = parse_max_memory(max_memory) if max_memory is not None else None

        options = {"format": format, "spec": spec, "pools": pools, "pool_column": pool_column,
                   "min_pool_annotators": min_pool_annotators,
                   "aspect": DEFAULT_ASPECT if aspect is None else aspect, "split": split,
                   "name": name, "engine": engine, "spark_master": spark_master,
                   "spark_conf": spark_conf, "allow_outside": allow_outside}
        unknown = sorted(set(load_options or {}) - set(options))
        if unknown:
            raise TypeError(f"run() got unknown load option(s) "
                            f"{', '.join(map(repr, unknown))} in load_options; options: "
                            f"{', '.join(options)}")
        options.update(load_options or {})
        rank_options = {k: v for k, v in (("sizes", sizes), ("gap_model", gap_model),
                                          ("perturbation", perturbation), ("n_sims", n_sims),
                                          ("max_flipped", max_flipped)) if v is not None}
        inputs = find_inputs(source, spec=options["spec"], pools=options["pools"],
                             format=options["format"])
        if out is not None:
            guard_folder(out, inputs)
        card_meta = from_spec(options["spec"], card, allow_outside=options["allow_outside"])
        verify_inputs(inputs)
        spark = " on Spark" if options["engine"] == "spark" else ""
        with step("loading and validating" + spark):
            table = load(source, **options)
        with limit(max_memory):
            results = audit_table(table, bootstrap=Bootstrap(n_bootstrap, seed),
                                  min_per_pool=min_per_pool, unit=unit, step=step,
                                  **rank_options)
        if card_meta:
            results["dataset"]["card"] = card_meta
        if out is not None:
            from .outputs import write_run

            extra = None
            if items_csv or (report if items is None else items):
                with step("per-item table"):
                    extra = _items_writer(table, csv=items_csv)
            if profile is not None:
                results["meta"]["profile"] = profile.to_dict()
            shown = json_form(results)
            writing = "writing the report and dataset card" if report else "writing the results"
            with step(writing):
                write_run(shown, out, inputs=inputs, report=report, extra=extra)
            results["meta"]["run_id"] = shown["meta"]["run_id"]
        elif profile is not None:
            results["meta"]["profile"] = profile.to_dict()
        return results


def _items_writer(table: AnnotationTable, *, csv: bool) -> Callable:
    """Build the item table now; return the writer :func:`audit.outputs.write_run` calls on
    its staging folder."""
    from .items import item_table, write_items

    frame = item_table(table)
    return lambda folder: write_items(frame, folder, csv=csv)

