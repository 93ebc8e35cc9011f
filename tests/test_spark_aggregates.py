"""The leaderboards' joint bootstrap patterns computed by Spark group-bys
(:func:`audit.ingest.spark.aggregates.joint_board_patterns`) equal the pandas engine's
(:func:`audit.rank.counts.joint_patterns` over :func:`audit.rank.counts.pair_units`) exactly:
the same patterns, frequencies, values and order, on PandaLM (three pools, one pair per item)
and on a table whose items are judged on several model pairs (their own patterns)."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest
from conftest import pandalm_table
from rank_data import arena_raw, table_of

from audit.contract import columns as C
from audit.rank.counts import joint_patterns, pair_units, pairwise_votes


@pytest.fixture(scope="module")
def spark():
    try:
        import pyspark  # noqa: F401

        from audit.ingest.spark import get_session

        return get_session("local[2]")
    except Exception as err:
        if os.environ.get("AUDIT_REQUIRE_SPARK"):
            raise
        pytest.skip(f"Spark unavailable: {err}")


def _several_pairs_table():
    """300 items on one pair, and 40 of them judged again on a second pair by other people."""
    raw = arena_raw(n_items=300, n_models=6, pools=("crowd", "expert", "authors"), per_pool=2,
                    seed=4)
    again = arena_raw(n_items=40, n_models=6, pools=("crowd", "expert"), per_pool=3, seed=9)
    again[C.ANNOTATOR] = "re-" + again[C.ANNOTATOR]
    same = again[C.MODEL_A] + again[C.MODEL_B]
    first = raw.drop_duplicates(C.ITEM).set_index(C.ITEM)
    clash = (first.loc[again[C.ITEM], C.MODEL_A] + first.loc[again[C.ITEM], C.MODEL_B]).to_numpy()
    again = again[same.to_numpy() != clash]  # a different pair than the item's first
    return table_of(pd.concat([raw, again], ignore_index=True))


def _expected(votes, boards):
    m = len(votes.models)
    units = [pair_units(votes, np.isin(votes.pool, b), unit="judgment") for b in boards]
    return joint_patterns([(u.item, u.lo * m + u.hi,
                            np.column_stack([2 * u.counts[:, 0] + u.counts[:, 1],
                                             2 * u.counts[:, 2] + u.counts[:, 1]]))
                           for u in units], len(votes.items))


@pytest.mark.parametrize("which", ["pandalm", "several_pairs"])
def test_spark_joint_patterns_equal_the_pandas_engines(spark, which):
    from audit.ingest.spark.aggregates import joint_board_patterns

    table = pandalm_table() if which == "pandalm" else _several_pairs_table()
    votes = pairwise_votes(table)
    n_pools = len(votes.pools)
    boards = [(p,) for p in range(n_pools)] + [tuple(range(n_pools)), (0, n_pools - 1)]
    frame = pd.DataFrame({"item": votes.item, "pool": votes.pool, "lo": votes.lo,
                          "hi": votes.hi, "outcome": votes.outcome})
    frame = frame.sample(frac=1, random_state=3)  # the cluster's order is not the table's
    got, got_codes = joint_board_patterns(spark.createDataFrame(frame), boards,
                                          n_models=len(votes.models))
    want, want_codes = _expected(votes, boards)
    assert want.counts.max() > 1  # single-pair items share patterns
    if which == "several_pairs":  # and multi-pair items are patterns of several units
        assert (np.bincount(want.member) > 1).sum() >= 20
    np.testing.assert_array_equal(got_codes, want_codes)
    for field in ("counts", "member", "group", "values"):
        np.testing.assert_array_equal(getattr(got, field), getattr(want, field), err_msg=field)
    assert got.n_groups == want.n_groups
    np.testing.assert_array_equal(got.full_sample(), want.full_sample())
