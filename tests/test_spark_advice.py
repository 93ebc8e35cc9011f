"""The ``advise`` block and the advice frame of a table kept on the cluster
(:func:`audit.ingest.spark.advice.advise_from_cluster`, :func:`advise_frame_from_cluster`) equal
the pandas engine's (:func:`audit.advice.advise_block`, :func:`audit.advice.advise_frame`) of
the same file: numbers to 1e-12, the same items in the same order with the same rows, on the
PandaLM CSV and on a hostile multi-pool table (ids with leading zeros, Unicode and formula
characters; items judged on two pairs; a judge pool; one or two judgments per pool on a
three-point scale, so that many equally ranked units tie across the budget), both targets,
both board units."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import pandalm_table
from test_spark_aggregates import _differences

from audit.contract import columns as C

IDS = ["007", "7", "0", "Ж-1", "é", "=1+1", "a b", "ß", "😀", "-3"]
#: eight models: 28 pairs, more strata than the label model keeps apart (STRATA_MAX), so the
#: cluster keys the labels target's patterns by the strata's bins (binned_patterns)
MODELS = ["Model-α", "model-b", "Ж", "=cmd", "m 5", "07", "7", "z\u00e9"]


def hostile_frame(seed: int = 0) -> pd.DataFrame:
    """Three human pools and a judge pool on eight models; 260 items, 38 of them judged again
    on a second pair; labels -1 / 0 / 1 drawn from a Bradley-Terry model with an item effect."""
    rng = np.random.default_rng(seed)
    strength = np.linspace(1.0, -1.0, len(MODELS))
    names = [f"{IDS[k % len(IDS)]}-{k:03d}" if k >= len(IDS) else IDS[k] for k in range(260)]
    rows = []

    def judge(item, a, b, effect, pools):
        for pool, per in pools:
            for j in range(per):
                p_a = 1 / (1 + np.exp(strength[b] - strength[a] + effect))
                u = rng.random()
                label = 0 if u < 0.15 else (-1 if rng.random() < p_a else 1)
                rows.append({C.ITEM: item, C.ANNOTATOR: f"{pool}-{rng.integers(4)}",
                             C.POOL: pool, C.LABEL: label, C.MODEL_A: MODELS[a],
                             C.MODEL_B: MODELS[b], C.TEXT: f"prompt «{item}»"})

    for k, item in enumerate(names):
        a, b = rng.choice(len(MODELS), size=2, replace=False)
        effect = rng.normal(0, 0.8)
        judge(item, a, b, effect, [("crowd", 2), ("expert", 1), ("lab", 1), ("gpt", 1)])
        if k % 7 == 3:  # a second pair, shown the other way round
            c = (max(a, b) + 1) % len(MODELS)
            c = c if c not in (a, b) else (c + 1) % len(MODELS)
            judge(item, c, a, effect, [("crowd", 1), ("expert", 2)])
    frame = pd.DataFrame(rows)
    # one annotator judges an item once
    return frame.drop_duplicates([C.ITEM, C.ANNOTATOR]).reset_index(drop=True)


@pytest.fixture(scope="module", params=["pandalm", "hostile"])
def both_engines(request, spark, tmp_path_factory):
    """The pandas engine's table and the cluster's, from one file, with the boards' results
    the advice reads (leaderboards of each unit, from the pandas engine's ranking)."""
    from audit import load
    from audit.ingest.spark import load_spark
    from audit.rank import rank
    from audit.resample import Bootstrap

    root = tmp_path_factory.mktemp(request.param)
    src, spec = root / "data.csv", None
    if request.param == "pandalm":
        pandalm_table().frame.astype(str).to_csv(src, index=False)
    else:
        hostile_frame().to_csv(src, index=False)
        spec = root / "spec.yaml"
        spec.write_text("name: hostile\nlabel: {kind: preference, order: [-1, 0, 1]}\n"
                        "judge_pools: [gpt]\n")
        spec = str(spec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = load(str(src), spec=spec)
        boards = {unit: rank(table, bootstrap=Bootstrap(n_resamples=100, seed=1), sizes=(2,),
                             n_sims=10, unit=unit) for unit in ("majority", "judgment")}
        ct = load_spark(str(src), spark=spark, spec=spec, keep_on_cluster=True)
    yield request.param, table, ct, boards
    ct.release()


CASES = [("majority", "leaderboard", 7), ("majority", None, 100_000), ("majority", "labels", 9),
         ("judgment", None, 7), ("judgment", "leaderboard", 7), ("judgment", "labels", 0)]


def test_the_clusters_advice_equals_the_pandas_engines(both_engines):
    from audit.advice import advise_block, advise_frame
    from audit.advice.units import STRATA_MAX, read_units
    from audit.ingest.spark.advice import advise_frame_from_cluster, advise_from_cluster
    from audit.items import item_table

    name, table, ct, boards = both_engines
    items = item_table(table)  # as run passes it: the count columns even when nothing is listed
    ties = 0
    for unit, target, budget in CASES:
        results = boards[unit]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = advise_block(table, results, budget=budget, target=target, more=3, seed=2)
            got = advise_from_cluster(ct, results, budget=budget, target=target, more=3,
                                      seed=2)
        found = _differences(want, got)
        assert not found, f"{name} {unit} {target} {budget}: {found[:5]}"
        assert [e["item"] for e in got["items"]] == [e["item"] for e in want["items"]]
        assert [e["row"] for e in got["items"]] == [e["row"] for e in want["items"]]
        pd.testing.assert_frame_equal(advise_frame_from_cluster(ct, got),
                                      advise_frame(table, want, frame=items))
        red = [e["expected_reduction"] for e in got["items"]]
        ties += len(red) - len(set(red))
    listed = {(u, t): advise_block(table, boards[u], budget=5, target=t)["items"]
              for u, t in (("majority", "leaderboard"), ("judgment", None))}
    assert all(listed.values())  # both targets list items
    assert ties > 0  # equally ranked units, ordered by row, are compared
    if name == "hostile":  # rows counted within an item; ids sorted as text; a judge pool
        units = read_units(table)
        ids = list(dict.fromkeys(units.frame[C.ITEM]))
        assert units.frame[C.ITEM].duplicated().sum() >= 30
        assert ids == sorted(ids) and ids.index("007") < ids.index("7") and "😀" in ids
        assert "gpt" in units.pools and "gpt" not in units.counts
        assert int(units.stratum.max()) + 1 > STRATA_MAX  # the binned labels patterns


def test_the_cluster_never_collects_a_units_frame(both_engines, monkeypatch):
    """What reaches the driver: the patterns, ``budget`` listed units and one row per listed
    item's unit and bucket, never a frame of every unit."""
    from audit.advice import advise_block
    from audit.ingest.spark.advice import advise_from_cluster

    name, table, ct, boards = both_engines
    DataFrame = type(ct.coded)
    sizes = []
    to_pandas = DataFrame.toPandas

    def spy(self):
        out = to_pandas(self)
        sizes.append(len(out))
        return out

    monkeypatch.setattr(DataFrame, "toPandas", spy)
    results = boards["majority"]
    got = advise_from_cluster(ct, results, budget=4, target="leaderboard")
    n_units = advise_block(table, results, budget=4, target="leaderboard")["n_units"]
    assert len(got["items"]) == 4 and len(sizes) == 3
    patterns = sizes[0]
    assert patterns < n_units and sizes[1] == 4 and sizes[2] <= 2 * 4 + 5


def test_nothing_advised_on_the_cluster_prints_the_header_of_advice_csv(spark, tmp_path,
                                                                        monkeypatch):
    """``advise --csv`` with no item listed (4ddc699 on the pandas engine): a pairwise table
    audited on the cluster prints, byte for byte, its own ``advice.csv`` and the pandas
    engine's, the header with the text and every pool's count columns (a judge pool's too).
    Leaderboard target under the judgment unit: nothing is listed there."""
    import csv
    import io

    from click.testing import CliRunner

    import audit.ingest.spark.advice as cluster_advice
    from audit.cli import cli

    rows = ["item,annotator,pool,model_a,model_b,label,text"]
    rows += [f"0{i},{a},{pool},m{i % 3},m{(i + 1) % 3},{-1 if i % 2 else 1},prompt {i}"
             for i in range(30) for a, pool in (("a", "zz"), ("b", "zz"), ("c", "expert"),
                                                ("d", "expert"), ("g", "gpt"))]
    src, spec = tmp_path / "u.csv", tmp_path / "spec.yaml"
    src.write_text("\n".join(rows) + "\n", encoding="utf-8")
    spec.write_text("label: {kind: preference, order: [-1, 0, 1]}\njudge_pools: [gpt]\n")
    framed = []
    frame = cluster_advice.advise_frame_from_cluster
    monkeypatch.setattr(cluster_advice, "advise_frame_from_cluster",
                        lambda ct, block: framed.append(len(block["items"])) or frame(ct, block))
    common = ["advise", str(src), "--spec", str(spec), "--bootstrap", "20", "--target",
              "leaderboard", "--quiet"]
    printed = {}
    for engine in ("pandas", "spark"):
        result = CliRunner().invoke(cli, [*common, "--engine", engine, "--csv"])
        assert result.exit_code == 0, result.output
        printed[engine] = result.stdout
    result = CliRunner().invoke(cli, [*common, "--engine", "spark", "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    assert framed == [0, 0]  # the cluster's frame, for --csv and for advice.csv
    written = (tmp_path / "o" / "advice.csv").read_bytes()
    assert printed["spark"].encode("utf-8") == written == printed["pandas"].encode("utf-8")
    header = next(csv.reader(io.StringIO(printed["spark"])))
    assert header[8:] == ["text"] + [f"{p}:count:{k}" for p in ("expert", "gpt", "zz")
                                     for k in (-1, 0, 1)]
    assert len(printed["spark"].splitlines()) == 1
