"""annotation-audit: audit human-annotation and preference datasets before release.

The pipeline reads like the package: :mod:`audit.load` (adapters) -> :mod:`audit.schema`
(validation) -> :mod:`audit.measure` (reliability, pool disagreement) -> :mod:`audit.rank`
(leaderboards and their stability) -> :mod:`audit.report` (terminal, JSON, HTML, card).

Public API: :func:`load`, :func:`run`. Imports are lazy so the CLI starts fast.
"""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["load", "run", "__version__"]


def load(source, **options):
    """Load ``source`` into a validated :class:`audit.table.AnnotationTable`; see :func:`audit.load.load`."""
    from .load import load as _load
    return _load(source, **options)


def run(source, **options):
    """Load, validate and measure ``source``; see :func:`audit.pipeline.run`."""
    from .pipeline import run as _run
    return _run(source, **options)
