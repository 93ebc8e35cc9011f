"""Preference labels written as the winning model's name, on Spark (:mod:`audit.ingest.winner`).

The rules are the pandas engine's, decided by the same :func:`audit.ingest.winner.decide` on a
:class:`~audit.ingest.winner.Tally` counted here by one group-by (rows per distinct label and
what it names on its row: a few rows per distinct label come back, never the judgments); that
pass runs only when some distinct label may name a model (text that is no number and no tie
word) or is a tie word, which a model may be called (``Both-7B``: a look-alike); numbers are
compared too when the reading is declared or some label may name a model. The labels read are then rewritten by a column expression (``-1`` for a label that is its
row's ``model_a``, ``1`` for ``model_b``), so a table kept on the cluster stays there.
"""

from __future__ import annotations

import numpy as np

from ...contract import columns as C
from ...contract.labels import parse_number
from ...errors import InputError
from .. import infer, winner
from ..winner import BOTH, N_SIDES, NEITHER, SIDE_A, SIDE_B, WRITTEN, Conflict, Tally

#: The name of the side column of the tally's group-by.
_SIDE = "__audit_side"


def _sides(candidates: list):
    """What each row's label names (:data:`audit.ingest.winner.NEITHER` ...), as a column: the
    label compared with the row's model ids as text, as written; a label not among
    ``candidates`` (the labels compared) names neither."""
    from pyspark.sql import functions as F

    label, a, b = F.col(C.LABEL), F.col(C.MODEL_A), F.col(C.MODEL_B)
    is_a = F.coalesce(label == a, F.lit(False))
    is_b = F.coalesce(label == b, F.lit(False))
    return (F.when(~label.isin(candidates), F.lit(NEITHER))
            .when(is_a & is_b, F.lit(BOTH)).when(is_a, F.lit(SIDE_A)).when(is_b, F.lit(SIDE_B))
            .otherwise(F.lit(NEITHER)))


def model_names(df, texts: list) -> set:
    """Which of ``texts`` are model ids in ``df``'s model_a / model_b (one small job; only on
    the way to exit 2, for :func:`audit.ingest.winner.names_hint`)."""
    from pyspark.sql import functions as F

    if not texts or not all(c in df.columns for c in C.PAIRWISE):
        return set()
    ids = df.select(F.explode(F.array(*(F.col(c) for c in C.PAIRWISE))).alias("id"))
    return {r["id"] for r in ids.where(F.col("id").isin(list(texts))).distinct().collect()}


def read_names(df, distinct: list, *, spec, source: str):
    """``(df, distinct, reading)``: the canonical frame with the labels naming a model read as
    ``-1`` / ``1`` (a column expression), its distinct labels as they then are (None kept), and
    the :class:`~audit.ingest.winner.Reading`; ``df`` and ``distinct`` as they are and None
    when the reading does not apply.

    Raises
    ------
    InputError
        A :class:`~audit.ingest.winner.Conflict`, naming one of its judgments by file, item
        and annotator, as schema failures name them (:mod:`.validate`).
    """
    from pyspark.sql import functions as F

    declared = winner.mode(spec, df.columns, source=source)
    present = [v for v in distinct if v is not None]
    names = [v for v in present if infer.may_name_a_model(v)]
    candidates = [*names, *(v for v in present if infer.is_tie(v))]
    if declared or names:  # look-alike numbers (see audit.ingest.winner.decide)
        candidates += [v for v in present if parse_number(v) is not None]
    if declared is None or not candidates:
        return df, distinct, None
    at = {v: i for i, v in enumerate(present)}
    counts = np.zeros((len(present), N_SIDES), dtype=np.int64)
    for r in (df.where(F.col(C.LABEL).isNotNull())
              .groupBy(C.LABEL, _sides(candidates).alias(_SIDE)).count().collect()):
        counts[at[r[C.LABEL]], r[_SIDE]] += int(r["count"])
    tally = Tally(tuple(present), counts)
    outcome = winner.decide(tally, declared=declared, order=spec.label_order)
    if outcome is None:
        return df, distinct, None
    if isinstance(outcome, Conflict):
        raise _conflict(df, outcome, candidates, source=source)
    side = _sides(candidates)
    label = F.col(C.LABEL)
    df = df.withColumn(C.LABEL, F.when(side == SIDE_A, F.lit(WRITTEN[SIDE_A]))
                       .when(side == SIDE_B, F.lit(WRITTEN[SIDE_B])).otherwise(label))
    return df, tally.after(distinct), outcome


def _conflict(df, conflict: Conflict, candidates: list, *, source: str) -> InputError:
    """The InputError of ``conflict``, naming one of its judgments."""
    from pyspark.sql import functions as F

    from .validate import example_judgments

    side = _sides(candidates)
    hit = F.lit(False)
    for label, sides in conflict.pairs.items():
        hit = hit | ((F.col(C.LABEL) == F.lit(label)) & side.isin(list(sides)))
    rows = example_judgments(df, C.LABEL, "", hit, (C.LABEL, C.MODEL_A, C.MODEL_B))
    label, model_a, model_b = rows["failure_case"].iloc[0]
    return InputError(conflict.message(label, model_a, model_b), path=source, column=C.LABEL,
                      row=rows["index"].iloc[0])

