"""MT-Bench adapter on the hand-made hub-download fixture: pair normalisation, winners, pools, repeats."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pandas as pd
import pytest

from audit.contract import columns as C
from audit.errors import InputError
from audit.ingest import LoadWarning, detect_format, load

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "mtbench"


def raw_split(split):
    return pd.read_parquet(FIXTURE / "data" / f"{split}-00000-of-00001.parquet")


def expected(splits=("human", "gpt4_pair")):
    """{(item, annotator): (pool, label)} from the raw rows, in plain Python; the last repeat wins."""
    out = {}
    for split in splits:
        for rec in raw_split(split).to_dict("records"):
            a, b = rec["model_a"], rec["model_b"]
            w = rec["winner"]
            label = -1 if w == "model_a" else 1 if w == "model_b" else 0
            if a > b:                      # put the pair in sorted order, flip the winner
                a, b, label = b, a, -label
            judge = rec["judge"]
            if isinstance(judge, str) and judge.startswith("["):
                judge = ast.literal_eval(judge)
            if isinstance(judge, str):
                annotator, pool = judge, judge.rsplit("_", 1)[0]
            else:
                annotator, pool = "/".join(judge), judge[0]
            item = f"q{rec['question_id']}/t{rec['turn']}/{a}|{b}"
            out[(item, annotator)] = (pool, label)
    return out


def observed(table):
    f = table.frame
    return {(i, a): (p, int(v)) for i, a, p, v in zip(
        f[C.ITEM].astype(str), f[C.ANNOTATOR].astype(str), f[C.POOL].astype(str), f[C.LABEL])}


def counts(judgments):
    stats = defaultdict(lambda: [set(), 0, set()])
    for (item, ann), (pool, _) in judgments.items():
        stats[pool][0].add(item)
        stats[pool][1] += 1
        stats[pool][2].add(ann)
    return {p: (len(s[0]), s[1], len(s[2])) for p, s in stats.items()}


def load_quiet(source, **kw):
    with pytest.warns(LoadWarning, match=r"1 repeated judgment.*author_2"):
        return load(source, **kw)


def test_both_splits_match_the_raw_rows():
    assert detect_format(FIXTURE) == "mt-bench"
    table = load_quiet(FIXTURE)
    exp = expected()
    assert observed(table) == exp
    got = {p: (v["n_items"], v["n_annotations"], v["n_annotators"])
           for p, v in table.summary()["pools"].items()}
    assert got == counts(exp)
    assert set(got) == {"author", "expert", "gpt-4"}
    assert table.judge_pools == ("gpt-4",)
    assert table.human_pools == ["author", "expert"]
    n_raw = len(raw_split("human")) + len(raw_split("gpt4_pair"))
    assert len(table.frame) == n_raw - 1          # the repeated author_2 judgment


def test_pair_normalisation_flips_the_winner_by_hand():
    # human row 22: model_a=gpt-4, model_b=alpaca-13b, winner=model_a, author_2, q81 turn 1.
    # Sorted pair is (alpaca-13b, gpt-4): gpt-4 becomes model_b, so "gpt-4 better" is +1.
    # author_2 judged the same cell at row 0 (a tie); the later judgment is the one kept.
    rows = raw_split("human")
    assert rows.loc[22, ["model_a", "model_b", "winner", "judge"]].tolist() == \
        ["gpt-4", "alpaca-13b", "model_a", "author_2"]
    f = load_quiet(FIXTURE).frame
    hit = f[(f[C.ITEM] == "q81/t1/alpaca-13b|gpt-4") & (f[C.ANNOTATOR] == "author_2")]
    assert len(hit) == 1
    assert (hit[C.MODEL_A].iloc[0], hit[C.MODEL_B].iloc[0]) == ("alpaca-13b", "gpt-4")
    assert int(hit[C.LABEL].iloc[0]) == 1
    assert hit.index[0] == "human/22"
    # vicuna vs claude, expert_3 says model_b (claude) -> sorted (claude-v1, vicuna) -> -1
    hit = f[(f[C.ITEM] == "q81/t1/claude-v1|vicuna-13b-v1.2") & (f[C.ANNOTATOR] == "expert_3")]
    assert int(hit[C.LABEL].iloc[0]) == -1
    # tie variants are ties
    hit = f[(f[C.ITEM] == "q81/t1/claude-v1|vicuna-13b-v1.2") & (f[C.ANNOTATOR] == "author_4")]
    assert int(hit[C.LABEL].iloc[0]) == 0


def test_gpt4_judge_string_form_and_turn_extras():
    f = load_quiet(FIXTURE).frame
    gpt = f[f[C.POOL] == "gpt-4"]
    assert set(gpt[C.ANNOTATOR].astype(str)) == {
        "gpt-4/pair-v2", "gpt-4/pair-v2-multi-turn", "gpt-4/pair-math-v1",
        "gpt-4/pair-math-v1-multi-turn"}
    assert set(f[C.TURN].astype(str)) == {"1", "2"}
    row = f[f[C.ITEM] == "q101/t1/gpt-3.5-turbo|gpt-4"].iloc[0]
    assert row[C.TEXT].startswith("Imagine you are participating in a race")


def test_one_split():
    table = load_quiet(FIXTURE, split="human")
    assert observed(table) == expected(("human",))
    assert table.judge_pools == ()
    table = load(FIXTURE, split="gpt4_pair")
    assert observed(table) == expected(("gpt4_pair",))
    assert table.judge_pools == ("gpt-4",)


def test_save_to_disk_with_list_judges_gives_the_same_table(tmp_path):
    datasets = pytest.importorskip("datasets")
    gpt = raw_split("gpt4_pair")
    gpt["judge"] = gpt["judge"].map(ast.literal_eval)          # the list form
    dd = datasets.DatasetDict({"human": datasets.Dataset.from_pandas(raw_split("human")),
                               "gpt4_pair": datasets.Dataset.from_pandas(gpt)})
    out = tmp_path / "mtbench_disk"
    dd.save_to_disk(str(out))
    assert detect_format(out) == "mt-bench"
    assert observed(load_quiet(out)) == observed(load_quiet(FIXTURE))


def test_unknown_winner_is_reported_with_its_row(tmp_path):
    from audit.errors import SchemaError

    rows = raw_split("gpt4_pair")
    rows.loc[3, "winner"] = "error"
    (tmp_path / "data").mkdir()
    rows.to_parquet(tmp_path / "data" / "gpt4_pair-00000-of-00001.parquet")
    with pytest.raises(SchemaError, match="error") as err:
        load(tmp_path, format="mt-bench")
    assert err.value.failures["index"].tolist() == ["gpt4_pair/3"]


def test_absent_split_and_hub_offline(monkeypatch):
    with pytest.raises(InputError, match="'human', 'gpt4_pair'"):
        load(FIXTURE, split="train")
    datasets = pytest.importorskip("datasets")
    monkeypatch.setattr(datasets, "load_dataset",
                        lambda *a, **k: (_ for _ in ()).throw(ConnectionError("offline")))
    with pytest.raises(InputError, match=r"(?s)hub.*local path"):
        load("lmsys/mt_bench_human_judgments")
