"""LeWiDi adapter: per-pool counts and label tallies checked against the raw files (plain json.load).

The raw side is computed here independently: one judgment per aligned (annotator, label) of a
record (2023) or per entry of the ``annotations`` object (2025), item id ``<split>/<key>``.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict

import pytest

from audit.contract import columns as C
from audit.errors import InputError
from audit.ingest import LoadWarning, detect_format, load
from conftest import shared_data

SPLITS = ("train", "dev", "test")


def raw_judgments(folder: str, dataset: str, splits=SPLITS):
    """[(item, annotator, label, group)] from the raw files, in file order; last repeat wins."""
    out = {}
    for split in splits:
        path = shared_data(f"{folder}/{dataset}_{split}.json")
        for key, rec in json.loads(path.read_text(encoding="utf-8")).items():
            ann = rec["annotations"]
            if isinstance(ann, dict):
                pairs = list(ann.items())
                groups = [None] * len(pairs)
            else:
                pairs = list(zip(rec["annotators"].split(","), ann.split(",")))
                info = rec.get("other_info") or {}
                g = info.get("annotators group")
                groups = [info[x] for x in g.split(",")] if g else [None] * len(pairs)
            for (a, lab), grp in zip(pairs, groups):
                out[(f"{split}/{key}", a)] = (lab, grp)
    return out


def per_pool(judgments: dict, pool_of):
    stats = defaultdict(lambda: {"items": set(), "n": 0, "annotators": set()})
    for (item, ann), (lab, grp) in judgments.items():
        s = stats[pool_of(ann, grp)]
        s["items"].add(item)
        s["n"] += 1
        s["annotators"].add(ann)
    return {p: (len(s["items"]), s["n"], len(s["annotators"])) for p, s in stats.items()}


def table_per_pool(table):
    return {p: (v["n_items"], v["n_annotations"], v["n_annotators"])
            for p, v in table.summary()["pools"].items()}


def table_judgments(table):
    f = table.frame
    return {(i, a): str(v) for i, a, v in zip(f[C.ITEM].astype(str), f[C.ANNOTATOR].astype(str),
                                               f[C.LABEL].astype(str))}


def test_hs_brexit_two_pools_from_the_data():
    folder = shared_data("lewidi2023/HS-Brexit")
    assert detect_format(folder) == "lewidi"
    table = load(folder)
    raw = raw_judgments("lewidi2023/HS-Brexit", "HS-Brexit")
    expected = per_pool(raw, lambda a, g: g)
    assert table_per_pool(table) == expected
    assert set(expected) == {"target group", "control group"}
    assert expected["target group"] == (1120, 3360, 3)
    assert table.scale.kind.value == "nominal" and table.scale.values == (0, 1)
    assert table_judgments(table) == {k: lab for k, (lab, _) in raw.items()}


def test_hs_brexit_one_file_and_one_split():
    dev = shared_data("lewidi2023/HS-Brexit/HS-Brexit_dev.json")
    t_file = load(dev)
    t_split = load(dev.parent, split="dev")
    raw = raw_judgments("lewidi2023/HS-Brexit", "HS-Brexit", splits=("dev",))
    assert table_per_pool(t_file) == table_per_pool(t_split) == per_pool(raw, lambda a, g: g)
    assert all(i.startswith("dev/") for i in t_file.frame[C.ITEM].astype(str))


def test_md_agreement_sparse_with_hundreds_of_annotators():
    folder = shared_data("lewidi2023/MD-Agreement")
    with pytest.warns(LoadWarning, match=r"1 repeated judgment.*test/2038.*Ann448"):
        table = load(folder)
    raw = raw_judgments("lewidi2023/MD-Agreement", "MD-Agreement")
    assert table_per_pool(table) == per_pool(raw, lambda a, g: "all")
    n_items, n_judgments, n_annotators = table_per_pool(table)["all"]
    assert n_annotators > 800
    # the published per-split totals (PROVENANCE.md) less the one repeated judgment
    assert n_judgments == 32960 + 5520 + 15285 - 1
    assert table_judgments(table) == {k: lab for k, (lab, _) in raw.items()}
    domains = {rec["other_info"]["domain"] for split in SPLITS for rec in json.loads(
        shared_data(f"lewidi2023/MD-Agreement/MD-Agreement_{split}.json").read_text()).values()}
    assert set(table.frame[C.CATEGORY].astype(str)) == domains and len(domains) == 3


def test_convabuse_is_ordinal_with_user_turn_text():
    folder = shared_data("lewidi2023/ConvAbuse")
    table = load(folder)
    raw = raw_judgments("lewidi2023/ConvAbuse", "ConvAbuse")
    assert table_per_pool(table) == per_pool(raw, lambda a, g: "all")
    assert table.scale.kind.value == "ordinal"
    assert table.scale.values == (-3, -2, -1, 0, 1)
    assert Counter(int(v) for v in table.frame[C.LABEL]) == Counter(int(v) for v, _ in raw.values())
    dev = json.loads(shared_data("lewidi2023/ConvAbuse/ConvAbuse_dev.json").read_text())
    first_key, first = next(iter(dev.items()))
    row = table.frame[table.frame[C.ITEM] == f"dev/{first_key}"].iloc[0]
    assert row[C.TEXT] == json.loads(first["text"])["user"][:200]
    assert row[C.CATEGORY] == first["other_info"]["bot"]


def _meta(relpath):
    text = shared_data(relpath).read_text(encoding="utf-8")
    return json.loads(re.sub(r",(\s*})", r"\1", text))


def test_paraphrase_pools_by_nationality_from_the_metadata_file():
    folder = shared_data("lewidi2025/Paraphrase")
    meta_path = folder / "Paraphrase_annotators_meta.json"
    meta = _meta("lewidi2025/Paraphrase/Paraphrase_annotators_meta.json")
    table = load(folder, pools=meta_path, pool_column="Nationality")
    raw = raw_judgments("lewidi2025/Paraphrase", "Paraphrase")
    expected = per_pool(raw, lambda a, g: meta[a]["Nationality"])
    assert table_per_pool(table) == expected == {"Chinese": (500, 1500, 3), "German": (500, 500, 1)}
    assert table.scale.kind.value == "ordinal" and table.scale.values == tuple(range(-5, 6))
    assert table_judgments(table) == {k: lab for k, (lab, _) in raw.items()}


def test_csc_sparse_with_annotators_missing_from_the_metadata():
    folder = shared_data("lewidi2025/CSC")
    meta = _meta("lewidi2025/CSC/CSC_annotators_meta.json")
    raw = raw_judgments("lewidi2025/CSC", "CSC", splits=("dev", "test"))
    absent = {a for _, a in raw} - set(meta)
    assert absent, "the published CSC metadata lacks some annotators"
    with pytest.warns(LoadWarning, match=rf"{len(absent)} annotator\(s\).*'unknown'"):
        table = load(folder, pools=folder / "CSC_annotators_meta.json", pool_column="Gender")
    # the metadata writes 'nan' for 17 annotators' gender: no value, the pool 'missing'
    expected = per_pool(raw, lambda a, g: ("unknown" if a not in meta else "missing"
                                           if meta[a]["Gender"] == "nan" else meta[a]["Gender"]))
    assert table_per_pool(table) == expected and "nan" not in expected
    assert table.scale.values == (1, 2, 3, 4, 5, 6)
    per_item = Counter(i for i, _ in raw)
    assert min(per_item.values()) < max(per_item.values())      # sparse: items differ in size


def test_varierrnli_reads_the_annotations_object_and_keeps_multi_labels():
    folder = shared_data("lewidi2025/VariErrNLI")
    table = load(folder)
    raw = raw_judgments("lewidi2025/VariErrNLI", "VariErrNLI")
    assert table_per_pool(table) == per_pool(raw, lambda a, g: "all")
    assert table_judgments(table) == {k: lab for k, (lab, _) in raw.items()}
    assert "entailment,neutral" in table.scale.values
    assert table.scale.kind.value == "nominal"


def test_unknown_pool_column_lists_the_fields():
    folder = shared_data("lewidi2025/Paraphrase")
    with pytest.raises(InputError, match=r"'Nationalty'.*'Age'.*'Education'.*'Gender'.*'Nationality'"):
        load(folder, pools=folder / "Paraphrase_annotators_meta.json", pool_column="Nationalty")


def test_kind_override_keeps_declared_values():
    from audit.ingest.adapters.lewidi import load_lewidi

    table = load_lewidi(shared_data("lewidi2025/Paraphrase/Paraphrase_dev.json"), kind="interval")
    assert table.scale.kind.value == "interval" and table.scale.values == tuple(range(-5, 6))


def test_split_errors_name_the_split():
    folder = shared_data("lewidi2025/CSC")
    with pytest.raises(InputError, match="no 'train' split"):
        load(folder, split="train")
    with pytest.raises(InputError, match="'validation'"):
        load(folder, format="lewidi", split="validation")


def test_pool_column_alone_uses_the_datasets_metadata_file():
    folder = shared_data("lewidi2025/CSC")
    with pytest.warns(LoadWarning, match="'unknown'"):
        alone = load(folder, pool_column="Gender")
    with pytest.warns(LoadWarning, match="'unknown'"):
        explicit = load(folder, pools=folder / "CSC_annotators_meta.json", pool_column="Gender")
    assert table_per_pool(alone) == table_per_pool(explicit)
    assert alone.info["pools_from"] == str(folder / "CSC_annotators_meta.json")
    # no folding: Prolific's placeholders stay as written; the text 'nan' is no value
    assert {"missing", "DATA_EXPIRED", "CONSENT_REVOKED"} <= set(alone.pools)
    assert "nan" not in set(alone.pools)


def test_a_text_nested_past_the_parser_s_depth_is_kept_as_text():
    """A text field that looks like a JSON conversation but nests past the parser's recursion
    limit is shown as the text it is (it used to raise RecursionError: exit 3)."""
    from audit.ingest.adapters.lewidi import _one_text

    deep = '{"user": ' + "[" * 100_000 + "]" * 100_000 + "}"
    assert _one_text(deep) == deep
    assert _one_text('{"user": "hi", "bot": "hello"}') == "hi"
