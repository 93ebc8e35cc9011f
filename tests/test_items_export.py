"""The per-item table, ``items.parquet`` (issue 15, item 4).

Counts, shares, unanimity and means are checked against an independent pandas ``groupby`` on the
loaded frame for PandaLM, HS-Brexit, the WMT zh-en sample and a MultiPref-shaped fixture; the
majority label against a per-row re-implementation of the median tie rule written from its
description; the flip flags against ``results.json``'s flipped-item count. A hypothesis property
checks that row order (and the A/B orientation a judgment shows the pair in) changes nothing, and
that the table is byte-for-byte the same whatever order the judgments come in.
"""

from __future__ import annotations

import csv
import io
import json
import warnings
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.contract import columns as C
from audit.cli import cli
from audit.escape.spreadsheet import (TRIGGERS, escape_cell, escape_column, needs_prefix,
                                      unescape_cell)
from audit.items import CLASSES, N_JUDGMENTS, item_table, write_items
from audit.contract.labels import WINNER_NAMES, LabelKind, LabelScale
from audit.ingest import load
from audit.rank import flipped_items
from audit.contract.table import build_table

ROOT = Path(__file__).resolve().parent.parent
PANDALM = ROOT / "data" / "pandalm" / "testset-v1.json"
WMT = ROOT / "data" / "wmt23_zhen_mqm"
HS_BREXIT = ROOT.parent / "shared" / "data" / "lewidi2023" / "HS-Brexit"
MULTIPREF = ROOT / "tests" / "fixtures" / "multipref" / "multipref_sample.jsonl"
WINNERS = LabelScale(LabelKind.PREFERENCE, (-1, 0, 1), WINNER_NAMES)


def quiet_load(source, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load(source, **options)


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def table_of(raw: pd.DataFrame, scale: LabelScale = WINNERS, *, judge_pools=()):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build_table(raw.reset_index(drop=True), scale, name="t", source="t",
                           judge_pools=judge_pools)


def label_names(table) -> list[str]:
    return [table.scale.display(v) for v in table.scale.values]


def reference_counts(table) -> pd.DataFrame:
    """(item, pool) x label judgment counts by pandas groupby on the loaded frame."""
    f = table.frame
    frame = pd.DataFrame({"item": f[C.ITEM].astype(str).to_numpy(),
                          "pool": f[C.POOL].astype(str).to_numpy(),
                          "label": [table.scale.display(v) for v in f[C.LABEL]]})
    return frame.groupby(["item", "pool", "label"]).size().unstack("label", fill_value=0)


def reference_majority(counts: list[int], *, ordered: bool) -> int | None:
    """The median tie rule as :data:`audit.measure.disagreement.TIE_BREAKS` words it, per row."""
    top = max(counts)
    if top == 0:
        return None
    tied = [i for i, c in enumerate(counts) if c == top]
    if len(tied) == 1:
        return tied[0]
    if not ordered:
        return None
    m = len(tied)
    lo, hi = tied[(m - 1) // 2], tied[m // 2]
    if (lo + hi) % 2 == 0:
        return (lo + hi) // 2
    centre2 = len(counts) - 1
    if lo + hi == centre2:
        return None
    return (lo + hi + 1) // 2 if lo + hi < centre2 else (lo + hi) // 2


def likert_table():
    from rank_data import RATING_SCALE, rating_raw

    return table_of(rating_raw(n_items=200, pools=("crowd", "expert", "judge")), RATING_SCALE,
                    judge_pools=("judge",))


def wide_nominal_table():
    """40 categories: more than CATEGORY_LIMIT, so the sparse path (no count columns)."""
    rng = np.random.default_rng(3)
    n = 600
    raw = pd.DataFrame({C.ITEM: [f"i{k}" for k in rng.integers(0, 120, n)],
                        C.ANNOTATOR: [f"a{k}" for k in range(n)],
                        C.POOL: rng.choice(["p", "q"], n),
                        C.LABEL: [f"c{k:02d}" for k in rng.integers(0, 4, n) * 10 // 4]})
    return table_of(raw, LabelScale(LabelKind.NOMINAL, tuple(f"c{k:02d}" for k in range(40))))


def crowded_table(n_labels: int, per_item: int, *, seed: int, ids=None):
    """An ordinal table whose items have up to ``per_item`` judgments per pool, drawn from a few
    neighbouring labels so that ties for the plurality are common: with 5 labels and 30
    judgments the count vectors are told apart by sorting their keys, with 31 labels by
    comparing them whole (their keys would overflow), not by the lookup table of the usual
    handful of judgments."""
    rng = np.random.default_rng(seed)
    ids = ids if ids is not None else [f"i{k}" for k in range(25)]
    rows = []
    for k, item in enumerate(ids):
        centre = rng.integers(0, n_labels)
        for pool in ("p", "q"):
            for a in range(rng.integers(1, per_item + 1)):
                label = int(np.clip(centre + rng.integers(-1, 2), 0, n_labels - 1))
                rows.append({C.ITEM: item, C.ANNOTATOR: f"{pool}{a}", C.POOL: pool,
                             C.LABEL: label})
    return table_of(pd.DataFrame(rows), LabelScale(LabelKind.ORDINAL, tuple(range(n_labels))))


SOURCES = {"pandalm": PANDALM, "hs_brexit": HS_BREXIT, "multipref": MULTIPREF,
           "likert": likert_table, "wide_nominal": wide_nominal_table,
           "many_judgments": lambda: crowded_table(5, 30, seed=1),
           "many_labels": lambda: crowded_table(31, 12, seed=2),
           "one_item": lambda: crowded_table(5, 4, seed=3, ids=["\u00e9\u9879 0"])}


# -- counts, shares, majority, unanimity against pandas ------------------------------------------
@pytest.mark.parametrize("source", list(SOURCES))
def test_counts_shares_majority_unanimity_equal_a_groupby(source):
    source = SOURCES[source]
    if isinstance(source, Path) and not source.exists():
        pytest.skip(f"{source} is not on this machine")
    table = quiet_load(source) if isinstance(source, Path) else source()
    items = item_table(table)
    wide = len(table.scale.values) > 31
    ref = reference_counts(table)
    labels = label_names(table)
    ordered = table.scale.kind is not LabelKind.NOMINAL
    assert items[C.ITEM].is_unique  # one pair per item in these datasets
    assert items[C.ITEM].tolist() == sorted(set(table.frame[C.ITEM].astype(str)))
    assert int(items["n_judgments"].sum()) == len(table.frame)
    indexed = items.set_index(C.ITEM)
    n_checked = 0
    for pool in table.pools:
        want = ref.xs(pool, level="pool").reindex(columns=labels, fill_value=0)
        others = indexed.index.difference(want.index)
        assert indexed.loc[others, f"{pool}:n"].eq(0).all()
        n = want.sum(axis=1)
        assert (indexed.loc[want.index, f"{pool}:n"].to_numpy() == n.to_numpy()).all()
        if wide:
            assert not any(c.startswith(f"{pool}:count:") for c in items.columns)
        else:
            got = indexed[[f"{pool}:count:{lab}" for lab in labels]]
            assert (got.loc[want.index].to_numpy() == want.to_numpy()).all()
            assert (got.loc[others].to_numpy() == 0).all()
            shares = indexed.loc[want.index, [f"{pool}:share:{lab}" for lab in labels]]
            np.testing.assert_allclose(shares.to_numpy(),
                                       want.to_numpy() / n.to_numpy()[:, None], rtol=1e-12)
        unanimous = (want > 0).sum(axis=1) == 1
        got_unanimous = indexed.loc[want.index, f"{pool}:unanimous"].astype(bool).to_numpy()
        assert (got_unanimous == unanimous.to_numpy()).all()
        assert indexed.loc[others, f"{pool}:unanimous"].isna().all()
        majority = [reference_majority(list(row), ordered=ordered) for row in want.to_numpy()]
        expected = [labels[m] if m is not None else None for m in majority]
        got_majority = indexed.loc[want.index, f"{pool}:majority"].astype(object)
        assert [None if pd.isna(x) else x for x in got_majority] == expected
        n_checked += len(want)
    assert n_checked == len(ref)


def test_wmt_ratings_get_mean_sd_and_n_per_pool():
    table = quiet_load(WMT)
    items = item_table(table)
    f = table.frame
    frame = pd.DataFrame({"item": f[C.ITEM].astype(str).to_numpy(),
                          "model": f[C.MODEL].astype(str).to_numpy(),
                          "pool": f[C.POOL].astype(str).to_numpy(),
                          "score": f[C.LABEL].astype(float).to_numpy()})
    ref = frame.groupby(["item", "model", "pool"])["score"].agg(["count", "mean", "std"])
    indexed = items.set_index([C.ITEM, C.MODEL])
    assert not any(":count:" in c or c.endswith(":majority") for c in items.columns)
    for pool in table.pools:
        want = ref.xs(pool, level="pool")
        got = indexed.loc[want.index]
        assert (got[f"{pool}:n"].to_numpy() == want["count"].to_numpy()).all()
        np.testing.assert_allclose(got[f"{pool}:mean"], want["mean"], rtol=1e-12)
        np.testing.assert_allclose(got[f"{pool}:sd"], want["std"], rtol=1e-9)  # NaN below 2
    a, b = table.pools
    diff = indexed[f"{b}:mean"] - indexed[f"{a}:mean"]
    np.testing.assert_allclose(indexed[f"{a} vs {b}:mean_diff"], diff)


# -- winners, flips and classes ------------------------------------------------------------------
@pytest.mark.parametrize("source", [PANDALM, MULTIPREF], ids=lambda p: p.stem)
def test_flip_flags_count_the_results_flipped_items(source):
    table = quiet_load(source)
    items = item_table(table)
    block = flipped_items(table, max_flipped=3)
    assert int(items["flipped"].sum()) == block["count"] == block["n_flipped"]
    assert block["truncated"] == (block["count"] > 3)
    listed = {e["item"] for e in block["items"]}
    assert listed <= set(items.loc[items["flipped"].astype(bool), C.ITEM])


def test_winner_flip_and_class_by_hand():
    """Item by item, the class rules of the module docstring in their order of precedence."""
    rows = []

    def add(item, pool, labels, a="m1", b="m2"):
        rows.extend({C.ITEM: item, C.ANNOTATOR: f"{pool}{i}", C.POOL: pool, C.LABEL: lab,
                     C.MODEL_A: a, C.MODEL_B: b} for i, lab in enumerate(labels))

    add("agree", "crowd", [-1, -1]); add("agree", "expert", [-1, 0, -1])
    add("flip", "crowd", [-1, -1, 1]); add("flip", "expert", [1])
    add("differ", "crowd", [0]); add("differ", "expert", [1, 1])
    add("alone", "crowd", [1])
    add("split", "crowd", [-1, 1]); add("split", "expert", [1])  # A vs B -> tie: not opposite
    add("judge_only", "crowd", [-1]); add("judge_only", "expert", [-1])
    add("judge_only", "gpt", [1])
    # one judgment shows the pair the other way round: its -1 (A = m2) is a vote for m1 here
    add("mirrored", "crowd", [1]); add("mirrored", "expert", [-1], a="m2", b="m1")
    items = item_table(table_of(pd.DataFrame(rows), judge_pools=("gpt",))).set_index(C.ITEM)
    cls = items["crowd vs expert:class"].to_dict()
    assert cls == {"agree": "agree", "flip": "opposite_winner", "differ": "differ",
                   "alone": "not_shared", "split": "differ", "judge_only": "agree",
                   "mirrored": "agree"}
    assert items.loc["split", ["crowd:winner", "crowd:majority"]].tolist() == ["tie", "tie"]
    assert items["flipped"].astype(bool).to_dict() == {k: k == "flip" for k in cls}
    assert items.loc["judge_only", "crowd vs gpt:class"] == "opposite_winner"
    assert bool(items.loc["judge_only", "crowd vs gpt:flip"])
    assert items.loc["mirrored", ["model_a", "model_b"]].tolist() == ["m1", "m2"]
    assert items.loc["mirrored", ["expert:count:A", "expert:count:B"]].tolist() == [0, 1]
    meta = items.attrs["annotation_audit"]
    assert meta["judge_pools"] == ["gpt"] and meta["human_pools"] == ["crowd", "expert"]
    assert set(meta["classes"]) == set(CLASSES)
    assert meta["columns"]["gpt:winner"] == {"field": "winner", "pool": "gpt"}


def test_flipped_is_null_with_one_human_pool():
    raw = pd.DataFrame({C.ITEM: ["i", "i"], C.ANNOTATOR: ["a", "b"], C.POOL: ["crowd", "gpt"],
                        C.LABEL: [-1, 1], C.MODEL_A: "m1", C.MODEL_B: "m2"})
    table = table_of(raw, judge_pools=("gpt",))
    items = item_table(table)
    assert items["flipped"].isna().all() and flipped_items(table)["n_flipped"] is None
    assert items.loc[0, "crowd vs gpt:class"] == "opposite_winner"


def test_a_nominal_tie_has_no_majority():
    raw = pd.DataFrame({C.ITEM: ["i", "i", "i"], C.ANNOTATOR: ["a", "b", "c"],
                        C.POOL: ["p", "p", "q"], C.LABEL: ["x", "y", "x"]})
    items = item_table(table_of(raw, LabelScale(LabelKind.NOMINAL, ("x", "y"))))
    assert pd.isna(items.loc[0, "p:majority"]) and items.loc[0, "q:majority"] == "x"
    assert items.loc[0, "p vs q:class"] == "no_majority" and "flipped" not in items.columns


def test_a_nominal_label_on_pairs_is_never_mirrored():
    raw = pd.DataFrame({C.ITEM: ["i", "i"], C.ANNOTATOR: ["a", "b"], C.POOL: ["p", "q"],
                        C.LABEL: ["safe", "safe"], C.MODEL_A: ["m1", "m2"],
                        C.MODEL_B: ["m2", "m1"]})
    items = item_table(table_of(raw, LabelScale(LabelKind.NOMINAL, ("safe", "unsafe"))))
    assert items.loc[0, ["p:count:safe", "q:count:safe"]].tolist() == [1, 1]
    assert items.loc[0, "p vs q:class"] == "agree"


def test_pool_names_that_would_share_a_column_are_refused():
    from audit.errors import InputError

    raw = pd.DataFrame({C.ITEM: ["i", "i"], C.ANNOTATOR: ["a", "b"], C.POOL: ["x", "x:count"],
                        C.LABEL: ["n", "m"]})
    with pytest.raises(InputError, match="'x:count:n'.*rename the pool"):
        item_table(table_of(raw, LabelScale(LabelKind.NOMINAL, ("m", "n"))))


# -- row order invariance (hypothesis) -----------------------------------------------------------
def canonical(items: pd.DataFrame) -> pd.DataFrame:
    """Rows sorted by item, each pair shown as (smaller, larger) model with A/B swapped to match."""
    out = items.set_index(C.ITEM).sort_index().astype(object)
    swap = out["model_a"] > out["model_b"]
    pairs = [(c, c.replace(":A", ":B")) for c in out.columns if c.endswith(":A")]
    for a, b in [*pairs, ("model_a", "model_b")]:
        out.loc[swap, [a, b]] = out.loc[swap, [b, a]].to_numpy()
    for c in [c for c in out.columns if c.endswith(":winner") or c.endswith(":majority")]:
        out.loc[swap, c] = out.loc[swap, c].map({"A": "B", "B": "A"}).fillna(out.loc[swap, c])
    return out.where(out.notna(), None)


judgments = st.lists(
    st.tuples(st.integers(0, 5), st.integers(0, 3), st.sampled_from(["crowd", "expert", "gpt"]),
              st.sampled_from([-1, 0, 1]), st.booleans()),
    min_size=2, max_size=40)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(judgments, st.randoms(use_true_random=False))
def test_row_order_and_orientation_change_nothing(rows, rnd):
    pair = {i: (f"m{i % 3}", f"m{i % 3 + 1}") for i in range(6)}
    raw = pd.DataFrame(
        [{C.ITEM: f"0{i}", C.ANNOTATOR: f"{p}{j}", C.POOL: p,
          C.LABEL: -lab if swap else lab,
          C.MODEL_A: pair[i][swap], C.MODEL_B: pair[i][not swap]}
         for i, j, p, lab, swap in rows]).drop_duplicates([C.ITEM, C.ANNOTATOR, C.POOL])
    order = list(range(len(raw)))
    rnd.shuffle(order)
    first = item_table(table_of(raw, judge_pools=("gpt",)))
    second = item_table(table_of(raw.iloc[order], judge_pools=("gpt",)))
    assert sorted(first.columns) == sorted(second.columns)
    pd.testing.assert_frame_equal(canonical(first), canonical(second[first.columns]))
    shuffled = item_table(table_of(raw.sample(frac=1, random_state=rnd.randrange(2 ** 32)),
                                   judge_pools=("gpt",)))
    pd.testing.assert_frame_equal(first, shuffled)  # same rows, orientation and order


def test_a_unit_is_shown_as_most_of_its_judgments_show_it():
    """``model_a`` is the model most judgments put first (the lower name on a tie), and the
    rows come in item-id order, not the order the judgments came in."""
    shown = [("z", "m2", "m1", 1), ("z", "m2", "m1", 0), ("z", "m1", "m2", 1),  # 2 of 3: m2 first
             ("a", "m1", "m2", 1), ("a", "m2", "m1", -1),                        # a tie: m1 first
             ("k", "m2", "m1", -1)]                                              # one: m2 first
    raw = pd.DataFrame([{C.ITEM: i, C.ANNOTATOR: f"r{n}", C.POOL: "crowd", C.LABEL: lab,
                         C.MODEL_A: a, C.MODEL_B: b} for n, (i, a, b, lab) in enumerate(shown)])
    items = item_table(table_of(raw))
    assert items[C.ITEM].tolist() == ["a", "k", "z"]
    assert items[C.MODEL_A].tolist() == ["m1", "m2", "m2"]
    assert items[C.MODEL_B].tolist() == ["m2", "m1", "m1"]
    counts = items.filter(like="crowd:count:").to_numpy()
    labels = [c.rsplit(":", 1)[1] for c in items.filter(like="crowd:count:").columns]
    # oriented counts: item a, both prefer m2 (B of m1 vs m2, A of m2 vs m1): B twice
    assert dict(zip(labels, counts[0])) == {"A": 0, "tie": 0, "B": 2}
    # item z shown as (m2, m1): the (m1, m2) judgment's B (m2) is read as A
    assert dict(zip(labels, counts[2])) == {"A": 1, "tie": 1, "B": 1}


# -- files: parquet exact, CSV spreadsheet-safe ---------------------------------------------------
HOSTILE = ("item,annotator,pool,label\n007,a,crowd,-1\n007,b,=HYPERLINK(\"x\"),+cmd\n"
           "0010,a,crowd,+cmd\n名前 ü,b,=HYPERLINK(\"x\"),-1\n@SUM(1),a,crowd,-1\n"
           "\"multi\nline\",a,crowd,+cmd\n")


def test_ids_with_leading_zeros_unicode_and_formulas_round_trip(tmp_path):
    src = tmp_path / "t.csv"
    src.write_text(HOSTILE, encoding="utf-8")
    result = invoke("run", src, "--out", tmp_path / "o", "--bootstrap", 5, "--quiet",
                    "--items-csv")
    assert result.exit_code == 0, result.output
    ids = ["0010", "007", "@SUM(1)", "multi\nline", "名前 ü"]
    items = pd.read_parquet(tmp_path / "o" / "items.parquet")
    assert items[C.ITEM].tolist() == ids  # exactly as written, in code-point order
    pool = '=HYPERLINK("x")'
    majority = items[f"{pool}:majority"]
    assert majority.iloc[1] == "+cmd" and pd.isna(majority.iloc[0])
    assert items.attrs["annotation_audit"]["pools"] == [pool, "crowd"]
    manifest = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert {"items.parquet", "items.csv"} <= set(manifest["files"])

    text = (tmp_path / "o" / "items.csv").read_text(encoding="utf-8")
    cells = list(csv.reader(io.StringIO(text)))
    header, body = cells[0], cells[1:]
    assert all(not needs_prefix(c) for row in cells for c in row)  # nothing a sheet would run
    assert [row[0] for row in body] == ["0010", "007", "'@SUM(1)", "multi\nline", "名前 ü"]
    assert f"'{pool}:n" in header and "crowd:count:-1" in header
    majority = body[1][header.index("crowd:majority")]
    assert majority == "-1"  # a plain number is left as it is
    assert body[1][header.index(f"'{pool}:majority")] == "'+cmd"
    back = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    back = back.rename(columns=unescape_cell).map(unescape_cell)
    assert back[C.ITEM].tolist() == ids
    assert back[f"{pool}:majority"].tolist()[:2] == ["", "+cmd"]


def test_items_csv_needs_out(tmp_path):
    src = tmp_path / "t.csv"
    src.write_text(HOSTILE, encoding="utf-8")
    result = invoke("run", src, "--items-csv", "--quiet", "--bootstrap", 5)
    assert result.exit_code == 2 and "--out" in result.output


def test_no_report_writes_no_items_unless_asked(tmp_path):
    src = tmp_path / "t.csv"
    src.write_text(HOSTILE, encoding="utf-8")
    assert invoke("run", src, "--out", tmp_path / "a", "--no-report", "--quiet",
                  "--bootstrap", 5).exit_code == 0
    assert not (tmp_path / "a" / "items.parquet").exists()
    assert invoke("run", src, "--out", tmp_path / "b", "--no-report", "--items-csv", "--quiet",
                  "--bootstrap", 5).exit_code == 0
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == [
        "items.csv", "items.parquet", "manifest.json", "results.json"]


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_spreadsheet_escape_is_safe_and_reversible(text):
    escaped = escape_cell(text)
    assert unescape_cell(escaped) == text
    assert not needs_prefix(escaped)
    if escaped and escaped[0] in TRIGGERS:  # left alone only as a plain number
        assert float(escaped) == float(text)
    column = escape_column(pd.Series([text, None], dtype=object))
    assert column.iloc[0] == escaped and column.iloc[1] is None


@pytest.mark.parametrize("text", ["'=", "''=1+1", "'+", "'-5x", "'abc", "''", "'12"])
def test_a_text_that_already_begins_with_an_apostrophe_reads_back_as_written(text):
    """Found by the property test above: ``'=`` was left alone on writing and read back as
    ``=``. Apostrophes before a trigger now get one more."""
    escaped = escape_cell(text)
    assert unescape_cell(escaped) == text
    assert escape_column(pd.Series([text], dtype=object)).iloc[0] == escaped


def test_write_items_keeps_attrs_through_parquet(tmp_path):
    table = quiet_load(MULTIPREF)
    items = item_table(table)
    assert write_items(items, tmp_path) == ["items.parquet"]
    back = pd.read_parquet(tmp_path / "items.parquet")
    assert back.attrs == json.loads(json.dumps(items.attrs))
    pd.testing.assert_frame_equal(back, items, check_dtype=False)


def test_datasets_reads_the_file_as_plain_columns(tmp_path):
    datasets = pytest.importorskip("datasets")
    items = item_table(quiet_load(MULTIPREF))
    write_items(items, tmp_path)
    ds = datasets.Dataset.from_parquet(str(tmp_path / "items.parquet"),
                                       cache_dir=str(tmp_path / "cache"))
    assert ds.num_rows == len(items) and ds.column_names == list(items.columns)
    assert ds["crowd:winner"] == items["crowd:winner"].astype(object).tolist()
    assert ds["item"] == items["item"].tolist()


# -- the README recipe -----------------------------------------------------------------------------
def test_readme_recipe_filters_and_weights_pairs(tmp_path):
    table = quiet_load(MULTIPREF)
    write_items(item_table(table), tmp_path)
    path = tmp_path / "items.parquet"

    recipe = (ROOT / "docs" / "items.md").read_text(encoding="utf-8")
    code = recipe.split("```python\n", 1)[1].split("```", 1)[0]
    assert '"reports/multipref/items.parquet"' in code
    scope = {}
    exec(code.replace('"reports/multipref/items.parquet"', repr(str(path))), scope)
    items, strict, soft = scope["items"], scope["strict"], scope["soft"]

    f = table.frame
    sign = np.sign(f[C.LABEL].astype(int).to_numpy())
    ref = pd.DataFrame({"item": f[C.ITEM].astype(str).to_numpy(),
                        "pool": f[C.POOL].astype(str).to_numpy(), "sign": sign})
    winner = (ref.groupby(["item", "pool"])["sign"].agg(
        lambda s: "A" if (s < 0).sum() > max((s == 0).sum(), (s > 0).sum())
        else "B" if (s > 0).sum() > max((s == 0).sum(), (s < 0).sum()) else "tie"))
    winner = winner.unstack("pool")
    keep = winner.nunique(axis=1).eq(1) & winner.notna().all(axis=1) & winner.iloc[:, 0].ne("tie")
    assert sorted(strict["item"]) == sorted(winner.index[keep])
    ref_b = winner.loc[strict["item"]].iloc[:, 0].eq("B").to_numpy()
    chosen = np.where(ref_b, strict["model_b"], strict["model_a"])
    assert (strict["chosen"].to_numpy() == chosen).all()
    assert (strict["chosen"] != strict["rejected"]).all()
    assert not items.set_index("item").loc[strict["item"], "flipped"].any()
    pooled = ref[ref.sign != 0].groupby("item")["sign"].agg(lambda s: (s > 0).mean())
    got = soft.set_index("item")["p_b"]
    np.testing.assert_allclose(got.loc[pooled.index], pooled, rtol=1e-12)
    assert len(got) == len(pooled) and soft["weight"].between(0, 1).all()
    assert len(strict) > 0 and len(soft) > len(strict)


# -- every rule is documented -------------------------------------------------------------------
def test_classes_are_exhaustive_and_documented():
    import audit.items as items_module

    for name in CLASSES:
        assert f'``"{name}"``' in items_module.__doc__
    table = quiet_load(MULTIPREF)
    items = item_table(table)
    for a, b in combinations(table.pools, 2):
        assert set(items[f"{a} vs {b}:class"]) <= set(CLASSES)


@pytest.mark.parametrize("source", ["pandalm", "likert"])
def test_items_written_in_chunks_are_the_file_written_whole(source, tmp_path):
    """:func:`write_item_chunks` (the Spark engine's streamed writer) of the table cut into
    chunks of 97 rows: one row group per chunk, and the same frame, attrs, key-value metadata
    and CSV bytes as :func:`write_items` of the whole; a chunk whose column types differ from
    the first's is an internal error, not a cast."""
    import pyarrow.parquet as pq

    from audit.errors import InternalError
    from audit.items import write_item_chunks

    table = quiet_load(PANDALM) if source == "pandalm" else likert_table()
    items = item_table(table)
    whole, chunked = tmp_path / "whole", tmp_path / "chunked"
    whole.mkdir(), chunked.mkdir()
    write_items(items, whole, csv=True)
    chunks = [items.iloc[i:i + 97] for i in range(0, len(items), 97)]
    assert write_item_chunks(chunks, chunked, csv=True) == ["items.parquet", "items.csv"]
    a, b = pd.read_parquet(whole / "items.parquet"), pd.read_parquet(chunked / "items.parquet")
    pd.testing.assert_frame_equal(a, b)
    assert a.attrs == b.attrs
    meta = pq.read_metadata(chunked / "items.parquet")
    assert meta.num_row_groups == len(chunks) > 1
    assert meta.metadata == pq.read_metadata(whole / "items.parquet").metadata
    assert (whole / "items.csv").read_bytes() == (chunked / "items.csv").read_bytes()
    other = chunks[1].copy()
    other[N_JUDGMENTS] = other[N_JUDGMENTS].astype(float)
    with pytest.raises(InternalError, match="other column types"):
        write_item_chunks([chunks[0], other], tmp_path)
    with pytest.raises(InternalError, match="no chunk"):
        write_item_chunks([], tmp_path)
