"""Which items to send back for annotation: the ``advise`` block, its table for an annotation
tool and its sentences (docs/advise.md).

The functions import numpy, pandas and scipy when called, so that importing this package (the
CLI does, to print ``--help``) loads none of them.
"""

from __future__ import annotations

ADVISE_DEFAULTS = {"budget": 50, "target": "leaderboard", "more": 3}
TARGETS = ("leaderboard", "labels")
#: The largest ``more`` (the predictive is enumerated: ``C(more + q - 1, q - 1)`` outcomes).
MORE_MAX = 10


def advise_block(table, results: dict, *, budget: int = 50, target: str | None = None,
                 more: int = 3, seed: int = 0, frame=None, max_cells: int | None = None
                 ) -> dict:
    """The ``advise`` block: at most ``budget`` items to re-annotate, ranked, each with its
    reasons and expected reduction.

    Parameters
    ----------
    table
        The canonical :class:`audit.contract.table.AnnotationTable`.
    results
        The audit's result dict (``leaderboards``, ``leaderboard_method`` and
        ``stability.closest_pairs`` are read for the leaderboard target); its JSON form works
        too.
    budget
        Items to list at most.
    target
        ``"leaderboard"`` (the summed swap probability of adjacent pairs) or ``"labels"``
        (expected wrong plurality labels); None: ``"leaderboard"`` when the data compares
        models on leaderboards that count one vote per item (``unit="majority"``), else
        ``"labels"`` (on a board that counts every judgment the leaderboard target lists
        nothing: in simulation no ranking of items steadied it more than random ones,
        docs/advise.md).
    more
        Extra judgments per re-annotated item that the reduction assumes.
    seed
        Recorded; the computation has no random step.
    frame
        The item table (:func:`audit.items.item_table`) when the caller has it already.
    max_cells
        None: always computed. Otherwise the leaderboard target is skipped, ``skipped`` saying
        how to get it, when its units times adjacent pairs exceed this (its arrays hold that
        many numbers each; ``run`` passes :data:`audit.advice.advise.RUN_MAX_CELLS`).

    Returns
    -------
    dict
        The block of :class:`audit.contract.results.advise.Advise`; ``items`` empty with
        ``skipped`` saying why when nothing can be advised.
    """
    from .advise import advise

    return advise(table, results, budget=budget, target=target, more=more, seed=seed,
                  frame=frame, max_cells=max_cells)


def on_cluster(table) -> bool:
    """Whether ``table`` is a :class:`audit.ingest.spark.coded.ClusterTable` (judgments kept on
    a Spark cluster), without importing the Spark engine when it is not."""
    return type(table).__name__ == "ClusterTable" and hasattr(table, "coded")


def advise_frame(table, block: dict, *, frame=None):
    """The advised items as a pandas DataFrame ready for an annotation tool
    (:func:`audit.advice.output.advice_frame`); for a table kept on a Spark cluster
    (:class:`audit.ingest.spark.coded.ClusterTable`), by a query of the listed items only
    (:func:`audit.ingest.spark.advice.advise_frame_from_cluster`)."""
    if on_cluster(table):
        from ..ingest.spark.advice import advise_frame_from_cluster
        from ..ingest.spark.failures import spark_failures

        with spark_failures(table.source):
            return advise_frame_from_cluster(table, block)
    from .output import advice_frame

    return advice_frame(table, block, frame=frame)


def advise_sentences(block: dict) -> list[str]:
    """One to three plain-text sentences (no markup) for the report's "What to do next"
    (:func:`audit.advice.output.sentences`)."""
    from .output import sentences

    return sentences(block)
