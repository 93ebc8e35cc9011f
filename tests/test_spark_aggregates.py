"""The leaderboards' joint bootstrap patterns computed by Spark group-bys
(:func:`audit.ingest.spark.aggregates.joint_board_patterns`) equal the pandas engine's
(:func:`audit.rank.counts.joint_patterns` over :func:`audit.rank.counts.pair_units`) exactly:
the same patterns, frequencies, values and order, on PandaLM (three pools, one pair per item)
and on a table whose items are judged on several model pairs (their own patterns)."""

from __future__ import annotations


import numpy as np
import pandas as pd
import pytest
from conftest import pandalm_table
from rank_data import arena_raw, table_of

from audit.contract import columns as C
from audit.rank.counts import joint_patterns, pair_units, pairwise_votes




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


@pytest.mark.parametrize("unit", ["judgment", "majority"])
@pytest.mark.parametrize("which", ["pandalm", "several_pairs"])
def test_spark_boards_equal_the_pandas_engines_bit_for_bit(spark, which, unit):
    """Every board (win rates, Bradley-Terry, their resamples, items judged) from the cluster's
    :class:`BoardPatterns` equals :func:`pairwise_boards` of the judgments, under both units,
    with the boards rank() asks for: each pool's and every pool's (a sum under the judgment
    unit)."""
    from audit.ingest.spark.aggregates import spark_board_patterns
    from audit.rank.leaderboard import board_patterns, boards_from_patterns, pairwise_boards
    from audit.rank.shared import shared_stream
    from audit.resample import Bootstrap

    table = pandalm_table() if which == "pandalm" else _several_pairs_table()
    votes = pairwise_votes(table)
    pools_of = {p: (j,) for j, p in enumerate(votes.pools)}
    pools_of["all"] = tuple(range(len(votes.pools)))
    pools_of["first two"] = (0, 1)
    masks = {k: np.isin(votes.pool, v) for k, v in pools_of.items()}
    bootstrap = Bootstrap(n_resamples=200, seed=7)
    want = pairwise_boards(votes, masks, unit=unit, bootstrap=bootstrap,
                           stream=shared_stream(unit))
    frame = pd.DataFrame({"item": votes.item, "pool": votes.pool, "lo": votes.lo,
                          "hi": votes.hi, "outcome": votes.outcome}).sample(frac=1,
                                                                            random_state=5)
    bp = spark_board_patterns(spark.createDataFrame(frame), pools_of,
                              n_models=len(votes.models), unit=unit)
    mine = board_patterns(votes, masks, unit=unit)
    assert bp.sums == mine.sums and bp.base == mine.base and bp.judged == mine.judged
    assert (unit == "judgment") == ("all" in bp.sums)
    got = boards_from_patterns(bp, votes.models, bootstrap=bootstrap,
                               stream=shared_stream(unit))
    assert list(got) == list(want)
    for key in want:
        a, b = got[key], want[key]
        assert a.models == b.models and a.n_items == b.n_items and a.draw == b.draw, key
        for field in ("score", "samples", "n", "bt", "bt_samples"):
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field),
                                          err_msg=f"{key} {field}")


def test_sums_of_pool_boards_is_sums_of_boards_on_pool_unions():
    """The cluster's rule (pool sets and judgments per pool) decides as the pandas engine's
    (per-judgment masks) on every board layout over four pools of random sizes."""
    from itertools import combinations

    from audit.rank.shared import sums_of_boards, sums_of_pool_boards

    rng = np.random.default_rng(11)
    subsets = [c for r in (1, 2, 3, 4) for c in combinations(range(4), r)]
    for _ in range(300):
        sizes = rng.integers(1, 6, 4)
        pool = np.repeat(np.arange(4), sizes)
        chosen = rng.choice(len(subsets), size=rng.integers(1, 7), replace=False)
        pools_of = {f"b{j}": subsets[j] for j in chosen}
        masks = {k: np.isin(pool, v) for k, v in pools_of.items()}
        got = sums_of_pool_boards(pools_of, {p: int(n) for p, n in enumerate(sizes)})
        assert got == sums_of_boards(masks), (pools_of, sizes)


def _votes_frame(votes, seed):
    return pd.DataFrame({"item": votes.item, "pool": votes.pool, "lo": votes.lo, "hi": votes.hi,
                         "outcome": votes.outcome, "flipped": votes.flipped.astype(int)}
                        ).sample(frac=1, random_state=seed)


@pytest.mark.parametrize("which", ["pandalm", "several_pairs", "judged"])
def test_spark_unit_patterns_and_flipped_listing_equal_the_pandas_engines(spark, which):
    """The comparisons' patterns from the cluster equal :func:`unit_patterns` field for field;
    the flipped block assembled from the cluster's counts and its ordered, limited listing
    equals :func:`flipped_from_votes` (ids, A/B as shown, winners, texts); the judge alignment
    from the cluster's patterns equals the judgments' to 1e-12."""
    from test_rank_patterns import _close, judged_table

    from audit.ingest.spark.aggregates import spark_flipped_listing, spark_unit_patterns
    from audit.rank.exposure import flipped_block, flipped_from_votes
    from audit.rank.judge_alignment import alignment_from_patterns, alignment_from_votes
    from audit.rank.patterns import flipped_counts, unit_patterns
    from audit.resample import Bootstrap

    table = {"pandalm": pandalm_table, "several_pairs": _several_pairs_table,
             "judged": judged_table}[which]()
    votes = pairwise_votes(table)
    df = spark.createDataFrame(_votes_frame(votes, 8))
    got = spark_unit_patterns(df, votes.pools, n_models=len(votes.models))
    want = unit_patterns(votes)
    for field in ("pair", "counts", "freq", "item"):
        np.testing.assert_array_equal(getattr(got, field), getattr(want, field), err_msg=field)
    assert got.pools == want.pools
    humans = table.human_pools
    codes = [votes.pools.index(p) for p in humans]
    for limit in (3, 1000):
        listing = spark_flipped_listing(df, codes, n_models=len(votes.models), limit=limit)
        listed = [(str(votes.items[r.item]), votes.models[r.lo], votes.models[r.hi],
                   bool(r.shown), [getattr(r, f"o{c}") for c in codes])
                  for r in listing.itertuples()]
        count, compared = flipped_counts(got, humans)
        block = flipped_block(humans, listed, table.first_texts(listing["item"].to_numpy()),
                              count=count, n_compared=compared)
        expected = flipped_from_votes(table, votes, max_flipped=limit)
        assert block == expected
        assert len(block["items"]) == min(limit, count) and count > 0
    if table.judge_pools:
        bootstrap = Bootstrap(n_resamples=200, seed=2)
        _close(alignment_from_patterns(got, table.judge_pools, humans, bootstrap=bootstrap),
               alignment_from_votes(table, votes, bootstrap=bootstrap))


@pytest.mark.parametrize("which", ["pandalm", "several_pairs", "rating"])
def test_spark_dataset_counts_give_the_dataset_block(spark, which):
    """The ``dataset`` block from the cluster's counts equals ``table.summary()``."""
    from rank_data import RATING_SCALE, rating_raw

    from audit.contract.table import dataset_block
    from audit.ingest.spark.aggregates import spark_dataset_counts

    if which == "rating":
        table = table_of(rating_raw(n_items=150, n_models=4, seed=3), RATING_SCALE)
    else:
        table = pandalm_table() if which == "pandalm" else _several_pairs_table()
    f = table.frame
    columns = [C.ITEM, C.ANNOTATOR, C.POOL] + [c for c in (C.MODEL_A, C.MODEL_B, C.MODEL)
                                               if c in f.columns]
    frame = pd.DataFrame({c: f[c].cat.codes.to_numpy().astype(np.int64) for c in columns})
    names = {c: [str(x) for x in f[c].cat.categories] for c in columns}
    if table.is_pairwise:  # one dictionary for both sides, as the engine codes models
        models = sorted(set(names[C.MODEL_A]) | set(names[C.MODEL_B]))
        for c in (C.MODEL_A, C.MODEL_B):
            frame[c] = np.searchsorted(models, np.asarray(names[c], dtype=object))[frame[c]]
        model_columns = (C.MODEL_A, C.MODEL_B)
    else:
        models, model_columns = names[C.MODEL], (C.MODEL,)
    counts = spark_dataset_counts(spark.createDataFrame(frame.sample(frac=1, random_state=2)),
                                  names[C.POOL], models=models, model_columns=model_columns)
    assert counts == table.counts()
    assert dataset_block(counts, name=table.name, info=table.info, scale=table.scale,
                         pools=table.pools, judge_pools=table.judge_pools) == table.summary()


@pytest.mark.parametrize("unit", ["judgment", "majority"])
@pytest.mark.parametrize("which", ["pandalm", "judged"])
def test_rank_from_the_clusters_aggregates_equals_rank(spark, which, unit):
    """The whole rank block (leaderboards, method, stability, simulation, flipped items, judge
    alignment) from what a cluster returns (BoardPatterns, UnitPatterns, the flipped listing
    and its texts) equals :func:`audit.rank.rank` of the judgments: exactly, the judge
    alignment to 1e-12."""
    from test_rank_patterns import _close, judged_table

    from audit.ingest.spark.aggregates import (spark_board_patterns, spark_flipped_listing,
                                               spark_unit_patterns)
    from audit.rank import board_keys, rank, rank_from_patterns
    from audit.resample import Bootstrap

    table = pandalm_table() if which == "pandalm" else judged_table()
    votes = pairwise_votes(table)
    bootstrap = Bootstrap(n_resamples=200, seed=5)
    options = dict(bootstrap=bootstrap, unit=unit, n_sims=2000, max_flipped=7)
    want = rank(table, **options)
    df = spark.createDataFrame(_votes_frame(votes, 4))
    m = len(votes.models)
    pools_of = {key: tuple(votes.pools.index(p) for p in pools)
                for pools, key in board_keys(table).items()}
    bp = spark_board_patterns(df, pools_of, n_models=m, unit=unit)
    up = spark_unit_patterns(df, votes.pools, n_models=m)
    humans = table.human_pools
    codes = [votes.pools.index(p) for p in humans]
    rows = spark_flipped_listing(df, codes, n_models=m, limit=7)
    listed = [(str(votes.items[r.item]), votes.models[r.lo], votes.models[r.hi], bool(r.shown),
               [getattr(r, f"o{c}") for c in codes]) for r in rows.itertuples()]
    texts = table.first_texts(rows["item"].to_numpy())
    got = rank_from_patterns(table, bp, up, (listed, texts), models=votes.models, **options)
    assert got["stability"]["flipped_items"]["count"] > 0 or which == "judged"
    judges_got, judges_want = got.pop("judge_alignment"), want.pop("judge_alignment")
    assert got == want
    _close(judges_got, judges_want)
    assert bool(judges_want) == (which == "judged")


@pytest.mark.parametrize("which", ["pandalm", "several_pairs"])
def test_plan_from_the_clusters_aggregates_equals_plan_block(spark, which):
    """The plan block (leaderboard part from the comparisons' patterns, labels part from the
    items' (pools x labels) count patterns, both as a cluster returns them) equals
    :func:`plan_block` of the judgments, numbers to 1e-12."""
    from test_rank_patterns import _close
    from test_spark_measure import _coded_by_spark

    from audit.ingest.spark.aggregates import spark_unit_patterns
    from audit.ingest.spark.measure_aggregates import cluster_aggregates
    from audit.pipeline import audit_table
    from audit.planning import plan_block, plan_from_patterns
    from audit.resample import Bootstrap

    table = pandalm_table() if which == "pandalm" else _several_pairs_table()
    results = audit_table(table, bootstrap=Bootstrap(n_resamples=100), n_sims=1000)
    options = dict(models=(10, 20), stay=0.9, budget=5000, n_sims=2000, seed=3)
    want = plan_block(table, results, **options)
    votes = pairwise_votes(table)
    up = spark_unit_patterns(spark.createDataFrame(_votes_frame(votes, 6)), votes.pools,
                             n_models=len(votes.models))
    agg = cluster_aggregates(_coded_by_spark(spark, table), scale=table.scale,
                             pool_names=[str(p) for p in table.frame[C.POOL].cat.categories],
                             annotator_names=tuple(map(str,
                                                       table.frame[C.ANNOTATOR].cat.categories)))
    got = plan_from_patterns(table, results, up, (agg.item_pool_label, agg.weights,
                                                  agg.pool_names),
                             n_models=len(votes.models), **options)
    assert want["leaderboard"]["sizes"] and want["labels"]["pools"]
    _close(got, want)


@pytest.mark.parametrize("which", ["pandalm_csv", "text_csv"])
def test_judgments_kept_on_the_cluster_are_the_collected_tables(spark, which, tmp_path):
    """``load_spark(..., keep_on_cluster=True)``: the coded judgments on the cluster are the
    collected table's codes (item, annotator, pool, label, models), the votes frame is
    :func:`pairwise_votes`' arrays, and an item's name and first text come from the cluster's
    item frame; a repeated (item, annotator) is refused the same way."""
    from audit import load
    from audit.errors import SchemaError
    from audit.ingest.spark import load_spark

    table = pandalm_table()
    raw = table.frame.astype(str).copy()
    if which == "text_csv":  # a text on some items, empty on others, varying within an item
        raw[C.TEXT] = np.where(raw[C.ITEM].astype(int) % 3 == 0, "",
                               "t" + raw[C.ITEM] + np.where(raw[C.ANNOTATOR] == raw[C.ANNOTATOR]
                                                            .min(), "a", "b"))
    src = tmp_path / "t.csv"
    raw.to_csv(src, index=False)
    expected = load(str(src))
    kept = load_spark(str(src), spark=spark, keep_on_cluster=True)
    f = expected.frame
    assert kept.pools == tuple(map(str, f[C.POOL].cat.categories))
    assert kept.annotators == tuple(map(str, f[C.ANNOTATOR].cat.categories))
    got = kept.coded.toPandas().sort_values([C.ITEM, C.ANNOTATOR]).reset_index(drop=True)
    want = pd.DataFrame({C.ITEM: f[C.ITEM].cat.codes, C.ANNOTATOR: f[C.ANNOTATOR].cat.codes,
                         C.POOL: f[C.POOL].cat.codes, C.LABEL: expected.label_codes}
                        ).sort_values([C.ITEM, C.ANNOTATOR]).reset_index(drop=True)
    for col in want:
        np.testing.assert_array_equal(got[col].to_numpy(np.int64), want[col].to_numpy(np.int64))
    votes = pairwise_votes(expected)
    assert kept.models == votes.models
    v = kept.votes().toPandas().sort_values(["item", "pool", "lo", "hi", "outcome", "flipped"])
    w = pd.DataFrame({"item": votes.item, "pool": votes.pool, "lo": votes.lo, "hi": votes.hi,
                      "outcome": votes.outcome, "flipped": votes.flipped.astype(int)}
                     ).sort_values(["item", "pool", "lo", "hi", "outcome", "flipped"])
    np.testing.assert_array_equal(v.to_numpy(np.int64), w.to_numpy(np.int64))
    codes = [0, 3, 7, len(f[C.ITEM].cat.categories) - 1]
    looked = kept.item_texts(codes)
    assert [n for n, _ in looked] == [str(f[C.ITEM].cat.categories[c]) for c in codes]
    if which == "text_csv":
        assert [t for _, t in looked] == expected.first_texts(codes)
    kept.release()
    twice = pd.concat([raw, raw.iloc[:1]])
    twice.to_csv(tmp_path / "twice.csv", index=False)
    with pytest.raises(SchemaError):
        load_spark(str(tmp_path / "twice.csv"), spark=spark, keep_on_cluster=True)


def _differences(want, got, path="", tol=1e-12):
    """Paths where two result trees differ (numbers beyond ``tol``, NaN equal to NaN)."""
    import math

    if isinstance(want, dict) and isinstance(got, dict):
        if list(want) != list(got):
            return [f"{path}: keys {list(want)} != {list(got)}"]
        return [d for k in want for d in _differences(want[k], got[k], f"{path}.{k}", tol)]
    if isinstance(want, list) and isinstance(got, list):
        if len(want) != len(got):
            return [f"{path}: {len(want)} != {len(got)} entries"]
        return [d for j, (a, b) in enumerate(zip(want, got))
                for d in _differences(a, b, f"{path}[{j}]", tol)]
    if isinstance(want, float) or isinstance(got, float):
        if want is None or got is None:
            return [] if want is got else [f"{path}: {want} != {got}"]
        a, b = float(want), float(got)
        if (math.isnan(a) and math.isnan(b)) or abs(a - b) <= tol * max(1.0, abs(a)):
            return []
        return [f"{path}: {a!r} != {b!r}"]
    return [] if want == got else [f"{path}: {want!r} != {got!r}"]


@pytest.mark.parametrize("which", ["pandalm", "lake"])
def test_the_audit_from_the_clusters_aggregates_equals_the_pandas_engines(spark, which,
                                                                          tmp_path):
    """Every block of results.json (but ``meta``'s engine) from the judgments kept on the
    cluster (:func:`audit_cluster`: dataset, reliability, pool disagreement, within-pool,
    leaderboards, stability, flipped items, judge alignment, plan, advise) equals the pandas
    engine's audit of the same file, numbers to 1e-12."""
    import warnings

    from test_spark import _synthetic_dataset

    from audit import load
    from audit.ingest.spark import load_spark
    from audit.ingest.spark.cluster_audit import audit_cluster
    from audit.pipeline import audit_table, next_steps
    from audit.resample import Bootstrap
    from audit.results import json_form

    if which == "pandalm":
        spec = None
        table_src = tmp_path / "pandalm.csv"
        pandalm_table().frame.astype(str).to_csv(table_src, index=False)
        src = str(table_src)
    else:
        data, spec, _ = _synthetic_dataset(tmp_path, n_items=300)
        src, spec = str(data), str(spec)
    bootstrap = Bootstrap(n_resamples=100, seed=3)
    options = dict(n_sims=2000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = load(src, spec=spec)
        want = audit_table(table, bootstrap=bootstrap, **options)
        want.update(next_steps(table, want, seed=bootstrap.seed))
        ct = load_spark(src, spark=spark, spec=spec, keep_on_cluster=True)
        try:
            got = audit_cluster(ct, bootstrap=bootstrap, **options)
        finally:
            ct.release()
    want, got = json_form(want), json_form(got)
    want.pop("meta"), got.pop("meta")
    assert list(got) == list(want)
    found = _differences(want, got)
    assert not found, f"{len(found)} difference(s), first: {found[:5]}"
    assert want["stability"]["flipped_items"]["items"] and want["plan"]["leaderboard"]["sizes"]
    assert want["advise"]["items"]
