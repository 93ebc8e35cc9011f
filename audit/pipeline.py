"""The main job: load -> validate -> measure -> rank, into one result dict.

:func:`run` is what ``annotation-audit run`` calls; the CLI only parses flags and renders.
"""

from __future__ import annotations

import contextvars
import platform
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
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


#: ``meta.bootstrap.method`` where some figure's interval is computed another way.
OTHERWISE = " unless a figure names another (meta.bootstrap.exceptions)"


def interval_exceptions(results: dict) -> dict[str, str]:
    """Every figure of ``results`` whose interval is not ``meta.bootstrap``'s default (the item
    bootstrap's percentiles), by where it sits in results.json, and its method as the figure
    names it: a reliability entry's ``interval`` (Cohen's kappa's mean over pairs), a
    ``cohen_pairs`` entry's ``interval`` (``ci95.mean``) and ``pair_interval`` (``pairs[].ci95``),
    and every block's ``ci_method`` (its intervals: Wilson for rates, the pool nulls' excess,
    the continuous scale's item resampling). A list's rows are ``[]``, the pools of
    ``by_pool`` ``*``; where one place holds several methods (a pool's pairs collected, another's
    on a Spark cluster) they are joined by " | "."""
    from .resample import METHOD

    found: dict[str, list[str]] = {}

    def note(where: str, method) -> None:
        if isinstance(method, str) and method and method != METHOD:
            methods = found.setdefault(where, [])
            if method not in methods:
                methods.append(method)

    def walk(node, path: str, in_pools: bool = False) -> None:
        if isinstance(node, list):
            for row in node:
                walk(row, f"{path}[]")
            return
        if not isinstance(node, dict):
            return
        if "ci_method" in node:
            note(f"{path}.ci95" if "ci95" in node else path, node["ci_method"])
        for key, value in node.items():
            here = f"{path}.*" if in_pools else (f"{path}.{key}" if path else key)
            if key == "interval" and isinstance(value, str):
                note(f"{path}.ci95.mean" if ".cohen_pairs." in f"{path}." else f"{path}.ci95",
                     value)
            elif key == "pair_interval":
                note(f"{path}.pairs[].ci95", value)
            elif key != "meta":
                walk(value, here, in_pools=key == "by_pool")

    walk({k: v for k, v in results.items() if k != "meta"}, "")
    return {where: " | ".join(methods) for where, methods in found.items()}


def note_interval_methods(results: dict) -> dict:
    """``results`` with ``meta.bootstrap`` saying the truth about its intervals: the default
    method, and the figures computed otherwise (:func:`interval_exceptions`) in
    ``exceptions``; the method then says "unless a figure names another". In place; returned."""
    from .resample import METHOD

    boot = results.get("meta", {}).get("bootstrap")
    if boot is not None:
        exceptions = interval_exceptions(results)
        boot["method"] = METHOD + (OTHERWISE if exceptions else "")
        boot["exceptions"] = exceptions
    return results


def audit_table(table: AnnotationTable, *, bootstrap: Bootstrap, min_per_pool: int = 2,
                unit: str = "judgment", step: Step = no_step, **rank_options) -> dict:
    """Every analysis on an already loaded table, after its memory estimate is checked against
    the budget in force (:func:`audit.budget.check_table`; exit 2 before anything is
    allocated when it is over, Cohen's kappa linearised when only its pairs' bootstrap was).

    Returns the result dict as the library gives it: plain Python types, NaN where a number is
    undefined. Renderers take :func:`audit.results.json_form` of it (NaN as None).

    A pairwise table's leaderboard resamples are drawn on a worker thread while reliability and
    pool disagreement are measured, when they fit the memory budget beside the audit
    (:mod:`audit.rank.ahead`); the results are the same bits either way.
    """
    from .budget import check_table
    from .measure import measure
    from .profile import record_beside
    from .rank import rank
    from .rank.ahead import STAGE, draw_ahead

    sizes = rank_options.get("sizes")
    checked = check_table(table, n_resamples=bootstrap.n_resamples,
                          n_sims=int(rank_options.get("n_sims") or 20_000),
                          max_size=max((int(x) for x in sizes), default=0) if sizes else 100)
    results = {"meta": meta(table, bootstrap), "dataset": table.summary()}
    ahead = draw_ahead(table, bootstrap=bootstrap, unit=unit, room=checked.room)
    try:
        with step("reliability and pool disagreement"):
            results.update(measure(table, bootstrap=bootstrap, min_per_pool=min_per_pool,
                                   cohen=checked.cohen))
        with step("leaderboards and stability"):
            results.update(rank(table, bootstrap=bootstrap, unit=unit, ahead=ahead,
                                **rank_options))
    finally:
        if ahead is not None:
            ahead.close()
            record_beside(STAGE, ahead.seconds)
    return note_interval_methods(results)


#: What :func:`next_options` accepts for each block (the keywords of ``plan_block`` and
#: ``advise_block`` besides the seed).
PLAN_KEYS = ("models", "stay", "pool", "budget", "n_sims")
ADVISE_KEYS = ("budget", "target", "more")


def next_options(plan: dict | None = None, advise: dict | None = None) -> tuple[dict, dict]:
    """The ``plan`` and ``advise`` options, checked before any data is read: an unknown key is
    a ``TypeError`` (a misspelt keyword), a value out of range an :class:`InputError` naming
    the command-line flag (``--stay``, ``--models``, ``--budget``, ``--target``, ``--more``).
    ``None`` values are left out (the block's default applies)."""
    from .budget import MAX_BOARD_SIZE, MAX_SIMS
    from .errors import InputError

    def given(options, keys, name):
        options = dict(options or {})
        unknown = sorted(set(options) - set(keys))
        if unknown:
            raise TypeError(f"unknown {name} option(s) {', '.join(map(repr, unknown))}; "
                            f"options: {', '.join(keys)}")
        return {k: v for k, v in options.items() if v is not None}

    def whole(value, flag, low, high=None):
        if isinstance(value, bool) or not isinstance(value, int) or value < low or (
                high is not None and value > high):
            top = f" to {high:,}" if high is not None else " or more"
            raise InputError(f"{flag} must be a whole number from {low}{top}; got {value!r}")
        return value

    plan, advise = given(plan, PLAN_KEYS, "plan"), given(advise, ADVISE_KEYS, "advise")
    if "models" in plan:
        sizes = [plan["models"]] if isinstance(plan["models"], int) else list(plan["models"])
        if not sizes:
            raise InputError("--models needs at least one leaderboard size")
        plan["models"] = tuple(whole(k, "--models", 2, MAX_BOARD_SIZE) for k in sizes)
    if "stay" in plan:
        stay = plan["stay"]
        if isinstance(stay, bool) or not isinstance(stay, (int, float)) or not 0 < stay < 1:
            raise InputError(f"--stay must be a probability strictly between 0 and 1; "
                             f"got {stay!r}")
        plan["stay"] = float(stay)
    if "budget" in plan:
        whole(plan["budget"], "--budget", 1)
    if "n_sims" in plan:
        whole(plan["n_sims"], "--sims", 100, MAX_SIMS)
    if "pool" in plan and not isinstance(plan["pool"], str):
        raise InputError(f"--pool must be a pool's name; got {plan['pool']!r}")
    if "budget" in advise:
        whole(advise["budget"], "--budget", 1)
    if "more" in advise:
        from .advice import MORE_MAX

        whole(advise["more"], "--more", 1, MORE_MAX)
    if "target" in advise:
        from .advice import TARGETS

        if advise["target"] not in TARGETS:
            raise InputError(f"--target must be one of {', '.join(TARGETS)}; "
                             f"got {advise['target']!r}")
    return plan, advise


def check_pool(table: AnnotationTable, pool: str | None) -> None:
    """``--pool`` names a human pool of the loaded table (checked before the audit runs)."""
    if pool is None or pool in table.human_pools:
        return
    from .errors import InputError, join_names

    raise InputError(f"--pool {pool!r} is not a human pool of the data; its human pools: "
                     f"{join_names(table.human_pools)}")


def next_steps(table: AnnotationTable, results: dict, *, plan: dict | None = None,
               advise: dict | None = None, seed: int = 0, frame=None,
               max_cells: int | None = None) -> dict:
    """The ``plan`` and ``advise`` blocks of an audited table (``results`` as
    :func:`audit_table` returns it), each with its defaults where ``plan`` / ``advise`` (checked
    by :func:`next_options`) give no value, both seeded with ``seed``. ``frame``: the item
    table (:func:`audit.items.item_table`) when the caller built it already; ``max_cells``:
    the advice's leaderboard target is skipped above this many units times adjacent pairs
    (:func:`audit.advice.advise_block`; None: never)."""
    from .advice import ADVISE_DEFAULTS, advise_block
    from .planning import PLAN_DEFAULTS, plan_block
    from .profile import section

    advise = {"budget": ADVISE_DEFAULTS["budget"], "more": ADVISE_DEFAULTS["more"],
              **(advise or {})}  # no target: the data decides (leaderboard when it has models)

    def planned():
        with section("plan"):
            return plan_block(table, results, **{**PLAN_DEFAULTS, **(plan or {})}, seed=seed)

    def advised():
        with section("advice"):
            return advise_block(table, results, **advise, seed=seed, frame=frame,
                                max_cells=max_cells)

    if len(table.frame) > BESIDE_JUDGMENTS:  # one after the other: their peaks do not add
        return {"plan": planned(), "advise": advised()}
    # the plan (its own seeded streams) runs on a worker thread beside the advice: both read the
    # table and the results and write nothing they share, and their array work releases the GIL
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="annotation-audit-plan") as pool:
        plan_done = pool.submit(contextvars.copy_context().run, planned)
        advice = advised()
        return {"plan": plan_done.result(), "advise": advice}


#: Most judgments for which :func:`next_steps` runs the plan beside the advice. Their working
#: memory grows with the items, and side by side their peaks add: at 10M judgments 3.0 GiB
#: (``benchmarks/RESULTS.md``'s run of 2026-12-05 13:10) against 2.1 GiB one after the other;
#: at 1M they add ~0.1 GiB for 0.2 s less.
BESIDE_JUDGMENTS = 2_000_000


def run(source, *, format: str = "auto", spec=None, pools=None, pool_column: str | None = None,
        min_pool_annotators: int | None = None, aspect: str | None = None,
        split: str | None = None, name: str | None = None, engine: str = "pandas",
        spark_master: str | None = None, spark_conf: dict | None = None,
        keep_on_cluster: bool | str | None = None, out: str | Path | None = None,
        seed: int = 0, n_bootstrap: int = 1000,
        min_per_pool: int = 2, unit: str = "judgment", report: bool = True,
        sizes: Sequence[int] | None = None, gap_model: str | None = None,
        perturbation: str | None = None, n_sims: int | None = None,
        max_flipped: int | None = None, step: Step = no_step,
        load_options: dict | None = None, allow_outside: bool = False,
        max_memory=None, items: bool | None = None, items_csv: bool = False,
        card: dict | None = None, profile=False, plan_options: dict | None = None,
        advise_options: dict | None = None, advice_files: bool | None = None,
        after: Callable[[AnnotationTable, dict], object] | None = None) -> dict:
    """Load ``source``, run every analysis, and (with ``out``) write ``out/results.json`` and,
    unless ``report=False``, the HTML report, the dataset card and the per-item table.

    The result ends with what to do next: the ``plan`` block (:func:`audit.planning.plan_block`:
    the items a 10- and a 20-model leaderboard need to keep their order) and the ``advise`` block
    (:func:`audit.advice.advise_block`: the items to send back for annotation), each with its
    defaults unless ``plan_options`` / ``advise_options`` say otherwise (:func:`plan` and
    :func:`advise` are this function with those options).

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
        (:mod:`audit.ingest.spark`). A pairwise preference table then stays on the cluster
        and is audited from what Spark group-bys return
        (:func:`audit.ingest.spark.cluster_audit.audit_cluster`; ``items.parquet`` and the
        advice files are streamed or queried from it); any other table is collected and
        audited by the same code as the pandas engine. The results are the pandas engine's.
    keep_on_cluster
        ``--engine spark`` only: None (default) is ``"auto"`` (the above); ``False`` collects
        every table (the engine before the cluster path, e.g. to compare the two);
        ``True`` keeps the table on the cluster or, for a table the aggregates path does not
        cover, refuses it (:func:`audit.ingest.load`).
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
    plan_options, advise_options
        Keywords of :func:`audit.planning.plan_block` (``models``, ``stay``, ``pool``,
        ``budget``, ``n_sims``) and :func:`audit.advice.advise_block` (``budget``, ``target``,
        ``more``), checked before anything is read (:func:`next_options`); missing ones keep
        the defaults (:data:`audit.planning.PLAN_DEFAULTS`, :data:`audit.advice.ADVISE_DEFAULTS`).
        The seed of both is ``seed``. Without ``advise_options`` (a plain run), the advice's
        leaderboard target is skipped, its ``skipped`` saying to run ``annotation-audit
        advise``, above :data:`audit.advice.advise.RUN_MAX_CELLS` units times adjacent pairs
        (10M judgments of 50 models); :func:`advise` always computes it.
    advice_files
        With ``out``: write ``advice.csv`` (spreadsheet-safe) and ``advice.parquet``, the
        advised items ready for an annotation tool (:func:`audit.advice.advise_frame`); None
        writes them with the report (which links ``advice.csv``).
    after
        Called as ``after(table, results)`` once the audit is done, before anything is written
        (``advise --csv`` builds its table from the loaded table there, without reading the
        source twice).
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
    from .advice.advise import RUN_MAX_CELLS
    from .budget import check_resampling, parse_max_memory
    from .profile import profiled

    check_resampling(n_bootstrap, seed)
    if isinstance(out, str) and out in ("", "-"):  # '': the current folder, as the CLI refuses
        from .errors import EMPTY_PATH, STDOUT_PATH, InputError

        raise InputError(EMPTY_PATH if out == "" else STDOUT_PATH, key="out")
    asked = advise_options is not None
    plan_options, advise_options = next_options(plan_options, advise_options)
    from .ingest import DEFAULT_ASPECT, load
    from .outputs import find_inputs, guard_folder, verify_inputs
    from .report.card_meta import from_spec

    with profiled(profile, step) as (profile, step):
        max_memory = parse_max_memory(max_memory) if max_memory is not None else None

        options = {"format": format, "spec": spec, "pools": pools, "pool_column": pool_column,
                   "min_pool_annotators": min_pool_annotators,
                   "aspect": DEFAULT_ASPECT if aspect is None else aspect, "split": split,
                   "name": name, "engine": engine, "spark_master": spark_master,
                   "spark_conf": spark_conf, "allow_outside": allow_outside,
                   "keep_on_cluster": keep_on_cluster}
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
        spark = options["engine"] == "spark"
        if options["keep_on_cluster"] is None:
            options["keep_on_cluster"] = "auto" if spark else False
        with step("loading and validating" + (" on Spark" if spark else "")):
            table = load(source, **options)
        try:
            return _audit_and_write(
                table, bootstrap=Bootstrap(n_bootstrap, seed), min_per_pool=min_per_pool,
                unit=unit, step=step, rank_options=rank_options, plan_options=plan_options,
                advise_options=advise_options, max_cells=None if asked else RUN_MAX_CELLS,
                max_memory=max_memory, out=out, inputs=inputs, report=report,
                write_items=out is not None and (items_csv or (report if items is None
                                                               else items)),
                items_csv=items_csv,
                advice_files=out is not None and (report if advice_files is None
                                                  else advice_files),
                after=after, card_meta=card_meta, profile=profile)
        finally:
            if _on_cluster(table):
                table.release()


def _on_cluster(table) -> bool:
    """Whether ``table`` is a :class:`audit.ingest.spark.coded.ClusterTable` (its judgments kept
    on the cluster), without importing the Spark engine when it is not."""
    from .advice import on_cluster

    return on_cluster(table)


def _audit_and_write(table, *, bootstrap: Bootstrap, min_per_pool: int, unit: str, step: Step,
                     rank_options: dict, plan_options: dict, advise_options: dict,
                     max_cells: int | None, max_memory, out, inputs, report: bool,
                     write_items: bool, items_csv: bool, advice_files: bool, after,
                     card_meta: dict | None, profile) -> dict:
    """:func:`run` after loading: the audit of ``table`` (a driver-side
    :class:`AnnotationTable`, or a :class:`audit.ingest.spark.coded.ClusterTable`, audited from
    the cluster's aggregates by :func:`audit.ingest.spark.cluster_audit.audit_cluster`), then,
    with ``out``, the output set written atomically (:func:`audit.outputs.write_run`).

    The analyses run with BLAS (numpy's and scipy's matrix products) on one thread
    (:func:`audit.resample.one_blas_thread`): a product's last digits then do not depend on the
    machine's core count, and BLAS's idle threads do not spin on the cores that the
    resampling's own worker threads and the leaderboards' worker (:mod:`audit.rank.ahead`) use.
    The products inside one audit are small or already resampled one row block at a time: a
    second BLAS thread bought no time, and its spinning cost system time."""
    from .budget import limit
    from .resample import one_blas_thread
    from .results import json_form

    check_pool(table, plan_options.get("pool"))
    cluster = _on_cluster(table)
    frame = None
    with limit(max_memory), one_blas_thread():
        if cluster:
            from .ingest.spark.cluster_audit import audit_cluster
            from .ingest.spark.failures import spark_failures

            with spark_failures(table.source):  # a failed job: one message, exit 2
                results = note_interval_methods(audit_cluster(
                    table, bootstrap=bootstrap, min_per_pool=min_per_pool, unit=unit, step=step,
                    plan=plan_options, advise=advise_options, max_cells=max_cells,
                    **rank_options))
        else:
            results = audit_table(table, bootstrap=bootstrap, min_per_pool=min_per_pool,
                                  unit=unit, step=step, **rank_options)
            if write_items or advice_files:
                from .items import item_table

                with step("per-item table"):
                    frame = item_table(table)
            with step("plan and advice"):
                results.update(next_steps(table, results, plan=plan_options,
                                          advise=advise_options, seed=bootstrap.seed,
                                          frame=frame, max_cells=max_cells))
    if after is not None:
        after(table, results)
    if card_meta:
        results["dataset"]["card"] = card_meta
    if out is None:
        if profile is not None:
            results["meta"]["profile"] = profile.to_dict()
        return results
    from .outputs import write_run

    writers = []
    if write_items:
        writers.append(_items_writer(table, frame, csv=items_csv))
    if advice_files:
        writers.append(_advice_writer(table, results["advise"], frame))
    extra = (lambda folder: [w(folder) for w in writers]) if writers else None
    if profile is not None:
        results["meta"]["profile"] = profile.to_dict()
    shown = json_form(results)
    writing = "writing the report and dataset card" if report else "writing the results"
    with step(writing):
        write_run(shown, out, inputs=inputs, report=report, extra=extra)
    results["meta"]["run_id"] = shown["meta"]["run_id"]
    return results


def _items_writer(table, frame, *, csv: bool) -> Callable:
    """The writer of ``items.parquet`` (and ``items.csv``) for :func:`audit.outputs.write_run`:
    from the item table ``frame`` (:func:`audit.items.write_items`), or streamed from the
    cluster in bounded chunks for a table kept there
    (:func:`audit.ingest.spark.units.write_items_from_cluster`)."""
    if _on_cluster(table):
        from .ingest.spark.failures import spark_failures
        from .ingest.spark.units import write_items_from_cluster

        def from_cluster(folder):
            with spark_failures(table.source):
                return write_items_from_cluster(table, folder, csv=csv)

        return from_cluster
    from .items import write_items

    return lambda folder: write_items(frame, folder, csv=csv)


def _advice_writer(table: AnnotationTable, block: dict, items) -> Callable:
    """The writer of ``advice.csv`` and ``advice.parquet`` (:func:`audit.advice.advise_frame`
    over the item table ``items``, :func:`audit.report.advice_table.write_advice`) for
    :func:`audit.outputs.write_run`."""
    from .advice import advise_frame
    from .report.advice_table import write_advice

    frame = advise_frame(table, block, frame=items)
    return lambda folder: write_advice(frame, folder)


def plan(source, *, models=(10, 20), stay: float = 0.9, pool: str | None = None,
         budget: int | None = None, n_sims: int | None = None, seed: int = 0,
         out: str | Path | None = None, **options) -> dict:
    """How many items (and judgments per item, per pool) a leaderboard of each size in
    ``models`` needs to keep its order with probability ``stay``: :func:`run` with these
    ``plan`` options (:func:`audit.planning.plan_block`); the answer is ``results["plan"]``.

    ``pool``: plan for this human pool's leaderboard (default: the block's choice);
    ``budget``: also the best ``P(stay)`` within this many judgments per pool; ``n_sims``:
    simulated leaderboards per size. Every other keyword is :func:`run`'s (loading options,
    ``n_bootstrap``, ``out``, ``report``, ...), so the audit's figures are ``run``'s. Options
    are checked before anything is read (:func:`next_options`; an unknown pool right after
    loading), each error naming its command-line flag.
    """
    return run(source, seed=seed, out=out, **options,
               plan_options={"models": models, "stay": stay, "pool": pool, "budget": budget,
                             "n_sims": n_sims})


def advise(source, *, budget: int = 50, target: str | None = None, more: int = 3,
           seed: int = 0, out: str | Path | None = None, **options) -> dict:
    """At most ``budget`` items to send back for annotation, ranked by the expected reduction
    of the closest pairs' swap probability (``target="leaderboard"``) or of the expected label
    error (``"labels"``; None: leaderboard when the data compares models with
    ``unit="majority"``, else labels: :func:`audit.advice.advise_block`) from ``more``
    annotators each: :func:`run` with these ``advise`` options
    (:func:`audit.advice.advise_block`); the answer is ``results["advise"]``.

    With ``out`` the set also holds ``advice.csv`` (spreadsheet-safe cells) and
    ``advice.parquet`` (:func:`audit.advice.advise_frame`: ids as in the source, text
    excerpts, reasons, each pool's current labels). Every other keyword is :func:`run`'s.
    """
    return run(source, seed=seed, out=out, **options, advice_files=True,
               advise_options={"budget": budget, "target": target, "more": more})
