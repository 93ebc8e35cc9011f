"""PandaLM adapter: counts, sign convention and pair split checked against the raw JSON."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest

from audit.contract import columns as C
from audit.ingest import LoadWarning, detect_format, load
from conftest import shared_data

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "data" / "pandalm" / "testset-v1.json"
RAW_TO_SIGN = {1: -1, 2: 1, 0: 0}


def _raw(path):
    return json.loads(Path(path).read_text(encoding="utf-8"))


def test_shipped_copy_is_byte_identical_to_the_source():
    # git blob hash recorded in data/README.md and the data's PROVENANCE.md
    data = SHIPPED.read_bytes()
    blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    assert blob == "4d6d2d4ddafb0dda8415b00dce6633f5ebcfec1b"
    assert data == shared_data("pandalm_testset/testset-v1.json").read_bytes()


def test_detected_as_pandalm():
    assert detect_format(SHIPPED) == "pandalm"


def test_counts_per_pool_match_the_raw_file():
    raw = _raw(SHIPPED)
    table = load(SHIPPED)
    summary = table.summary()
    assert set(summary["pools"]) == {"annotator1", "annotator2", "annotator3"}
    for ann in ("annotator1", "annotator2", "annotator3"):
        expected_items = {str(r["idx"]) for r in raw if r.get(ann) is not None}
        pool = summary["pools"][ann]
        assert pool["n_items"] == len(expected_items)
        assert pool["n_annotations"] == sum(1 for r in raw if r.get(ann) is not None)
        assert pool["n_annotators"] == 1
    assert summary["n_items"] == len(raw) == 999
    assert summary["n_annotations"] == 2997


def test_labels_follow_the_sign_convention():
    raw = _raw(SHIPPED)
    f = load(SHIPPED).frame
    for ann in ("annotator1", "annotator2", "annotator3"):
        expected = Counter(RAW_TO_SIGN[r[ann]] for r in raw)
        got = Counter(int(v) for v in f.loc[f[C.ANNOTATOR] == ann, C.LABEL])
        assert got == expected
    # published counts (PROVENANCE.md): annotator1 {2: 475, 1: 427, 0: 97}
    got = Counter(int(v) for v in f.loc[f[C.ANNOTATOR] == "annotator1", C.LABEL])
    assert got == {1: 475, -1: 427, 0: 97}


def test_every_judgment_carries_its_record_and_pair():
    raw = {str(r["idx"]): r for r in _raw(SHIPPED)}
    f = load(SHIPPED).frame
    for row in f.sample(300, random_state=0).itertuples():
        rec = raw[row.item]
        a, b = rec["cmp_key"].split("_")
        assert (row.model_a, row.model_b) == (a, b)
        assert int(row.label) == RAW_TO_SIGN[rec[row.annotator]]
    models = set(f[C.MODEL_A].astype(str)) | set(f[C.MODEL_B].astype(str))
    assert models == {"llama-7b", "bloom-7b", "cerebras-gpt-6.7B", "opt-7b", "pythia-6.9b"}


def test_pools_mapping_overrides_and_names_unknown_annotators():
    with pytest.warns(LoadWarning, match=r"1 annotator\(s\).*'unknown'"):
        table = load(SHIPPED, pools={"annotator1": "lab", "annotator2": "lab"})
    assert table.summary()["pools"]["lab"]["n_annotations"] == 1998
    assert table.summary()["pools"]["unknown"]["n_annotators"] == 1


def test_bad_cmp_key_and_raw_label_are_schema_failures(tmp_path):
    from audit.errors import SchemaError

    recs = _raw(SHIPPED)[:4]
    recs[1]["cmp_key"] = "llama-7b"          # no '_'
    recs[2]["annotator3"] = 7                # not 0, 1, 2
    src = tmp_path / "pandalm_bad.json"
    src.write_text(json.dumps(recs))
    with pytest.raises(SchemaError) as err:
        load(src, format="pandalm")
    fails = err.value.failures
    assert {"model_a", "model_b"} <= set(fails["column"])
    assert set(fails.loc[fails["column"] == "model_a", "index"]) == {str(recs[1]["idx"])}
    lab = fails[fails["column"] == "label"]
    assert lab["index"].tolist() == [str(recs[2]["idx"])] and "7" in str(lab["failure_case"].iloc[0])
