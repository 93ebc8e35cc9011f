"""MultiPref adapter on the hand-made fixture: JSONL, save_to_disk folder, aspects, mess, hub offline."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pandas as pd
import pytest

from audit.contract import columns as C
from audit.errors import InputError, SchemaError
from audit.ingest import detect_format, load

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "multipref" / "multipref_sample.jsonl"
SIGN = {"A-is-clearly-better": -2, "A-is-slightly-better": -1, "Tie": 0,
        "B-is-slightly-better": 1, "B-is-clearly-better": 2}
POOLS = {"normal_worker_annotations": "crowd", "expert_worker_annotations": "expert"}


def rows():
    return [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines() if line]


def expected(aspect="overall_pref"):
    """{(comparison_id, evaluator): (pool, label)} and per-pool (items, judgments, annotators)."""
    judgments, stats = {}, defaultdict(lambda: [set(), 0, set()])
    for row in rows():
        for col, pool in POOLS.items():
            for d in row[col]:
                judgments[(row["comparison_id"], d["evaluator"])] = (pool, SIGN[d[aspect]])
                s = stats[pool]
                s[0].add(row["comparison_id"])
                s[1] += 1
                s[2].add(d["evaluator"])
    return judgments, {p: (len(s[0]), s[1], len(s[2])) for p, s in stats.items()}


def observed(table):
    f = table.frame
    got = {(i, a): (p, int(v)) for i, a, p, v in zip(f[C.ITEM].astype(str), f[C.ANNOTATOR].astype(str),
                                                      f[C.POOL].astype(str), f[C.LABEL])}
    counts = {p: (v["n_items"], v["n_annotations"], v["n_annotators"])
              for p, v in table.summary()["pools"].items()}
    return got, counts


def save_to_disk(tmp_path) -> Path:
    datasets = pytest.importorskip("datasets")
    ds = datasets.Dataset.from_list(rows())
    out = tmp_path / "multipref_disk"
    ds.save_to_disk(str(out))
    return out


def test_jsonl_counts_and_labels_match_the_raw_rows():
    assert detect_format(FIXTURE) == "multipref"
    table = load(FIXTURE)
    judgments, counts = expected()
    got, got_counts = observed(table)
    assert got == judgments
    assert got_counts == counts == {"crowd": (12, 24, 4), "expert": (12, 24, 4)}
    assert table.scale.values == (-2, -1, 0, 1, 2)
    assert table.scale.display(-2) == "A-is-clearly-better"


def test_items_carry_models_category_and_text():
    f = load(FIXTURE).frame
    first = rows()[0]
    row = f[f[C.ITEM] == first["comparison_id"]].iloc[0]
    assert (row[C.MODEL_A], row[C.MODEL_B]) == (first["model_a"], first["model_b"])
    assert row[C.CATEGORY] == first["category"] and row[C.TEXT] == first["text"]


def test_save_to_disk_folder_gives_the_same_table(tmp_path):
    folder = save_to_disk(tmp_path)
    assert detect_format(folder) == "multipref"
    a, b = load(FIXTURE), load(folder)
    assert observed(a) == observed(b)
    # datasets unifies the dict keys (missing ones become None); the table does not change
    pd.testing.assert_frame_equal(a.frame.reset_index(drop=True), b.frame.reset_index(drop=True))


@pytest.mark.parametrize("aspect", ["helpful_pref", "truthful_pref"])
def test_other_aspects(aspect):
    got, _ = observed(load(FIXTURE, aspect=aspect))
    assert got == expected(aspect)[0]


def test_missing_aspect_key_is_a_schema_failure_naming_the_comparison():
    # one crowd dict of mp-0003 has no harmless_pref
    with pytest.raises(SchemaError) as err:
        load(FIXTURE, aspect="harmless_pref")
    fails = err.value.failures
    assert fails["index"].tolist() == ["mp-0003"]
    assert fails["column"].tolist() == ["label"] and "not null" in fails["check"].iloc[0]
    assert "mp-0003" in str(err.value)


def test_missing_evaluator_is_a_schema_failure_naming_the_comparison(tmp_path):
    data = rows()
    del data[4]["expert_worker_annotations"][1]["evaluator"]
    src = tmp_path / "mp.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in data))
    with pytest.raises(SchemaError) as err:
        load(src)
    fails = err.value.failures
    assert fails.loc[fails["column"] == "annotator", "index"].tolist() == [data[4]["comparison_id"]]


def test_unknown_label_name_is_reported_with_its_raw_value(tmp_path):
    data = rows()
    data[2]["normal_worker_annotations"][0]["overall_pref"] = "A-is-much-better"
    src = tmp_path / "mp.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in data))
    with pytest.raises(SchemaError, match="A-is-much-better") as err:
        load(src, format="multipref")
    assert err.value.failures["index"].tolist() == [data[2]["comparison_id"]]


def test_aspect_absent_everywhere_is_an_input_error():
    with pytest.raises(InputError, match=r"'honest_pref'.*aspects present:.*'overall_pref'"):
        load(FIXTURE, aspect="honest_pref")


def test_parquet_and_json_files_in_the_row_shape(tmp_path):
    pq = tmp_path / "mp.parquet"
    pd.DataFrame(rows()).to_parquet(pq)
    js = tmp_path / "mp.json"
    js.write_text(json.dumps(rows()))
    base = observed(load(FIXTURE))
    assert observed(load(pq)) == base
    assert observed(load(js)) == base


def test_hub_name_offline_is_an_input_error(monkeypatch):
    datasets = pytest.importorskip("datasets")

    def unreachable(*args, **kwargs):
        raise ConnectionError("Couldn't reach 'allenai/multipref' on the Hub (LocalEntryNotFoundError)")

    monkeypatch.setattr(datasets, "load_dataset", unreachable)
    assert detect_format("allenai/multipref") == "multipref"
    with pytest.raises(InputError, match=r"(?s)hub.*unreachable.*local path"):
        load("allenai/multipref")


def test_options_that_do_not_apply_are_refused():
    with pytest.raises(InputError, match="--pools does not apply to the multipref format"):
        load(FIXTURE, pools={"w_hopeful_curie": "x"})
