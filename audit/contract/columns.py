"""Column names of the canonical annotation table: the one data contract.

Every adapter produces, and every analysis consumes, one long table with one row per judgment.
No module outside this one spells a column name as a string literal.

=============  ==========================================================================
column         meaning
=============  ==========================================================================
``item``       the thing judged (a tweet, a comparison, an MT-Bench cell); categorical
``annotator``  who judged it; categorical
``pool``       the annotator pool (crowd / expert, target / control group, a judge model)
``label``      the judgment, coded on the dataset's :class:`audit.contract.labels.LabelScale`
``model_a``    pairwise data: the model whose response is "A" (negative labels favour it)
``model_b``    pairwise data: the model whose response is "B" (positive labels favour it)
``model``      rating data: the system whose output was scored
=============  ==========================================================================

Optional item-level columns carried along when the source has them: ``category``, ``turn``,
``text`` (a short excerpt, for listing exposed items).
"""

from __future__ import annotations

ITEM = "item"
ANNOTATOR = "annotator"
POOL = "pool"
LABEL = "label"
MODEL_A = "model_a"
MODEL_B = "model_b"
MODEL = "model"
CATEGORY = "category"
TURN = "turn"
TEXT = "text"

REQUIRED = (ITEM, ANNOTATOR, POOL, LABEL)
PAIRWISE = (MODEL_A, MODEL_B)
EXTRAS = (CATEGORY, TURN, TEXT)
ID_COLUMNS = (ITEM, ANNOTATOR, POOL, MODEL_A, MODEL_B, MODEL)
#: Every column of the contract, in the order adapters keep them.
COLUMNS = REQUIRED + PAIRWISE + (MODEL,) + EXTRAS

#: Pool name used when a source names no pools.
DEFAULT_POOL = "all"
#: Key of the leaderboard (and of suite ``pool:`` choices) of every human pool together.
#:
#: It has the same spelling as :data:`DEFAULT_POOL` on purpose: a source that names no pools
#: has one human pool, ``"all"``, and its board of every human pool is that same pool, so the
#: two keys coincide in ``results.json``. A source that names several pools may not name one
#: of them ``"all"`` (:func:`audit.rank.rank` rejects it), so the key stays unambiguous.
EVERY_HUMAN_POOL = "all"
#: Length of the text excerpt kept per item.
EXCERPT_CHARS = 200
