"""The main job: load -> validate -> measure -> rank, into one result dict.

:func:`run` is what ``annotation-audit run`` calls; the CLI only parses flags and renders.
"""

from __future__ import annotations

import contextlib
import platform
from collections.abc import Callable
from pathlib import Path

from . import __version__
from .resample import Bootstrap
from .table import AnnotationTable

Step = Callable[[str], contextlib.AbstractContextManager]


@contextlib.contextmanager
def _quiet_step(name: str):
    yield


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
                unit: str = "judgment", step: Step = _quiet_step, **rank_options) -> dict:
    """Every analysis on an already loaded table."""
    from .measure import measure
    from .rank import rank

    results = {"meta": meta(table, bootstrap), "dataset": table.summary()}
    with step("reliability and pool disagreement"):
        results.update(measure(table, bootstrap=bootstrap, min_per_pool=min_per_pool))
    with step("leaderboards and stability"):
        results.update(rank(table, bootstrap=bootstrap, unit=unit, **rank_options))
    return results


def run(source, *, out: str | Path | None = None, seed: int = 0, n_bootstrap: int = 1000,
        min_per_pool: int = 2, unit: str = "judgment", report: bool = True,
        step: Step = _quiet_step, load_options: dict | None = None, engine: str = "pandas",
        spark_master: str | None = None, spark_conf: dict | None = None,
        **rank_options) -> dict:
    """Load ``source``, run every analysis, and (with ``out``) write ``out/results.json`` and,
    unless ``report=False``, the HTML report and dataset card.

    Parameters
    ----------
    source
        A path or hub name accepted by :func:`audit.load.load`.
    out
        Output folder; created if missing. The input is never written to.
    seed, n_bootstrap
        The bootstrap's seed and number of item resamples; written into ``meta``.
    report
        With ``out``: also write ``report.html`` (with its charts), ``dataset_card.md`` and
        ``croissant_rai.json`` (:func:`audit.report.write_reports`). ``False`` writes only
        ``results.json``, for a pure-analysis run.
    load_options
        Passed to :func:`audit.load.load` (``format``, ``spec``, ``pools``, ...).
    engine, spark_master, spark_conf
        ``engine="spark"`` runs the loading passes (read, map, validate, encode) on Spark
        (:mod:`audit.spark`); everything after them is the same code. Also accepted inside
        ``load_options``.

    Returns
    -------
    dict
        The result object (see :mod:`audit.results`).
    """
    from .load import load
    from .results import write

    options = {"engine": engine, "spark_master": spark_master, "spark_conf": spark_conf,
               **(load_options or {})}
    with step("loading and validating" + (" on Spark" if options["engine"] == "spark" else "")):
        table = load(source, **options)
    results = audit_table(table, bootstrap=Bootstrap(n_bootstrap, seed), min_per_pool=min_per_pool,
                          unit=unit, step=step, **rank_options)
    if out is not None:
        write(results, Path(out) / "results.json")
        if report:
            from .report import write_reports

            with step("writing the report and dataset card"):
                write_reports(results, out)
    return results
