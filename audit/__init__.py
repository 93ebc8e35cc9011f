"""annotation-audit: audit human-annotation and preference datasets before release.

The pipeline reads like the package: :mod:`audit.ingest` (adapters) -> :mod:`audit.contract.schema`
(validation) -> :mod:`audit.measure` (reliability, pool disagreement) -> :mod:`audit.rank`
(leaderboards and their stability) -> :mod:`audit.report` (terminal, JSON, HTML, card).

Public API: :func:`load` (:func:`audit.ingest.load`), :func:`run` (:func:`audit.pipeline.run`),
and what to do next: :func:`plan` (:func:`audit.pipeline.plan`: the items a leaderboard of K models
needs to keep its order) and :func:`advise` (:func:`audit.pipeline.advise`: which items to send
back for annotation). All take a path, a hub name, a pandas ``DataFrame`` or a ``datasets.Dataset`` /
``DatasetDict``, and the CLI's options as keywords (``spec=`` a YAML path or a dict)::

    import audit
    table = audit.load(df, spec={"label": {"kind": "ordinal", "order": [1, 2, 3, 4, 5]}})
    results = audit.run("ratings.csv", spec="spec.yaml", seed=0, out="reports/ratings")
    audit.plan("ratings.csv", spec="spec.yaml", models=(10, 20), stay=0.9)["plan"]
    audit.advise("ratings.csv", spec="spec.yaml", budget=50, out="reports/advice")["advise"]

A misspelt keyword is a ``TypeError`` before anything is read. Imports are lazy so the CLI
starts fast: ``audit.run``, ``audit.plan`` and ``audit.advise`` are the functions of
:mod:`audit.pipeline` themselves, imported on first use.
"""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["advise", "load", "plan", "run", "__version__"]


def load(source, **options):
    """Load ``source`` into a validated :class:`audit.contract.table.AnnotationTable`; see :func:`audit.ingest.load`."""
    from .ingest import load as _load
    return _load(source, **options)


def __getattr__(name: str):
    if name in ("run", "plan", "advise"):
        from . import pipeline

        return getattr(pipeline, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
