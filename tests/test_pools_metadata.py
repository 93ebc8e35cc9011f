"""Pools wherever the data keeps them (issue 12, item 5).

* every ``other_info`` shape that names annotator groups (HS-Brexit's aligned string, a list, an
  ``{annotator: group}`` object, ``other_info`` itself as that object), checked judgment by
  judgment against pools written out by hand;
* metadata keyed with or without the data's id prefix (``17`` for ``Ann17``), with a notice;
* ``pool_column`` on any metadata field (text, numbers, lists, objects, booleans, missing);
* ``min_pool_annotators``: tiny and placeholder pools folded into ``other``, counted, reported,
  no judgment dropped (checked against an independent count, and as a hypothesis property).
"""

from __future__ import annotations

import json
import re
import warnings
from collections import Counter

import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.contract import columns as C
from audit.cli import cli
from audit.errors import InputError
from audit.ingest import LoadWarning, load
from audit.ingest.pools import (MISSING_POOL, OTHER_POOL, UNKNOWN_POOL, fold_pools, match_keys,
                              pool_name)
from conftest import shared_data


# -- helpers ---------------------------------------------------------------------------------------
def write_lewidi(folder, records: dict, *, name="Toy", split="train"):
    """Write ``records`` as a LeWiDi file ``<name>_<split>.json`` in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}_{split}.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def rec2023(annotators, labels, other_info=None):
    rec = {"text": "t", "annotation task": "hate speech detection",
           "annotators": ",".join(annotators), "annotations": ",".join(map(str, labels))}
    if other_info is not None:
        rec["other_info"] = other_info
    return rec


def rec2025(annotations: dict, other_info=None):
    rec = {"text": {"a": "x"}, "annotation task": "sarcasm detection",
           "annotators": ",".join(annotations), "annotations": annotations}
    if other_info is not None:
        rec["other_info"] = other_info
    return rec


def pools_by_judgment(table) -> dict:
    f = table.frame
    return {(str(i), str(a)): str(p) for i, a, p in zip(f[C.ITEM], f[C.ANNOTATOR], f[C.POOL])}


def quiet_load(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LoadWarning)
        return load(*args, **kwargs)


# -- pool names ------------------------------------------------------------------------------------
@pytest.mark.parametrize("value, name", [
    ("Male", "Male"), ("  Male ", "Male"), (26, "26"), (26.0, "26"), (2.5, "2.5"), (-0.0, "0"),
    (True, "true"), (False, "false"), (["en", "de"], '["en","de"]'),
    ({"b": 1, "a": "x"}, '{"a":"x","b":1}'), ("007", "007"),
    (None, MISSING_POOL), ("", MISSING_POOL), ("  ", MISSING_POOL), (float("nan"), MISSING_POOL),
    ([], MISSING_POOL), ({}, MISSING_POOL), (pd.NA, MISSING_POOL),
    ("nan", MISSING_POOL), (" NaN ", MISSING_POOL), ("<NA>", MISSING_POOL), ("None", "None"),
    ("NA", "NA"), ("nano", "nano"), ("DATA_EXPIRED", "DATA_EXPIRED"),
])
def test_pool_name_is_one_deterministic_text(value, name):
    assert pool_name(value) == name


json_scalars = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=5)


@settings(suppress_health_check=[HealthCheck.too_slow])  # text strategies, on a busy machine
@given(st.dictionaries(st.text(min_size=1, max_size=4), json_scalars, min_size=1, max_size=6),
       st.randoms(use_true_random=False))
def test_pool_name_of_an_object_ignores_key_order_and_round_trips(obj, rnd):
    items = list(obj.items())
    rnd.shuffle(items)
    assert pool_name(dict(items)) == pool_name(obj)
    assert json.loads(pool_name(obj)) == obj


# -- matching ids to keys --------------------------------------------------------------------------
@given(st.sets(st.integers(0, 10**5), min_size=1, max_size=30), st.data())
def test_match_keys_pairs_each_number_with_and_without_the_prefix(numbers, data):
    keyed = data.draw(st.sets(st.sampled_from(sorted(numbers))))
    ids = [f"Ann{n}" for n in sorted(numbers)]
    got = match_keys(ids, [str(n) for n in keyed])
    assert got == {f"Ann{n}": str(n) for n in keyed}
    back = match_keys([str(n) for n in sorted(numbers)], [f"Ann{n}" for n in keyed])
    assert back == {str(n): f"Ann{n}" for n in keyed}


def test_match_keys_exact_first_leading_zeros_kept_ambiguity_refused():
    assert match_keys(["Ann1", "Ann2"], ["Ann1", "1", "2"]) == {"Ann1": "Ann1", "Ann2": "2"}
    assert match_keys(["Ann007"], ["7"]) == {}
    assert match_keys(["Ann7"], ["007"]) == {}
    assert match_keys(["A1", "B1"], ["1"]) == {}                # one key, two ids: neither
    assert match_keys(["Ann1"], ["1", "ann_1"]) == {}           # two keys fit: neither
    assert match_keys(["Ann17"], ["annotator_17"]) == {"Ann17": "annotator_17"}
    assert match_keys(["Ann17"], ["group17"]) == {}             # another prefix is another id
    assert match_keys(["worker"], ["1"]) == {}


# -- other_info shapes (LeWiDi 2023 and 2025) ------------------------------------------------------
HS = {"annotators group": "group1,group1,group2", "group1": "target group",
      "group2": "control group"}
OTHER_INFO_SHAPES = {
    "hs-brexit string": HS,
    "aligned list": {"annotators group": ["group_a", "group_a", "group_b"]},
    "list of tokens resolved": {"annotator_groups": ["g1", "g1", "g2"], "g1": "group_a",
                                "g2": "group_b"},
    "mapping in a group field": {"annotators group": {"Ann1": "group_a", "Ann2": "group_a",
                                                      "Ann3": "group_b"}},
    "other_info is the mapping": {"Ann1": "group_a", "Ann2": "group_a", "Ann3": "group_b",
                                  "domain": "BLM"},
}


@pytest.mark.parametrize("shape", sorted(OTHER_INFO_SHAPES))
def test_every_other_info_shape_gives_the_groups(tmp_path, shape):
    info = OTHER_INFO_SHAPES[shape]
    write_lewidi(tmp_path, {"1": rec2023(["Ann1", "Ann2", "Ann3"], [0, 1, 1], info),
                            "2": rec2023(["Ann1", "Ann2", "Ann3"], [1, 1, 0], info)})
    with warnings.catch_warnings():
        warnings.simplefilter("error", LoadWarning)        # exact matches: not a word
        table = load(tmp_path)
    a, b = (("target group", "control group") if shape == "hs-brexit string" else
            ("group_a", "group_b"))
    assert pools_by_judgment(table) == {
        (f"train/{i}", ann): pool for i in ("1", "2")
        for ann, pool in (("Ann1", a), ("Ann2", a), ("Ann3", b))}
    assert table.info["pools_from"] == "other_info"


def test_2025_annotations_object_with_a_plain_group_mapping(tmp_path):
    groups = {"Ann3": "group_a", "Ann10": "group_b"}
    write_lewidi(tmp_path, {"a": rec2025({"Ann3": "2", "Ann10": "5"}, groups),
                            "b": rec2025({"Ann10": "1", "Ann3": "6"}, groups)}, split="dev")
    table = load(tmp_path)
    assert pools_by_judgment(table) == {("dev/a", "Ann3"): "group_a", ("dev/a", "Ann10"): "group_b",
                                        ("dev/b", "Ann3"): "group_a", ("dev/b", "Ann10"): "group_b"}


def test_group_mapping_keyed_by_number_is_matched_with_a_notice(tmp_path):
    info = {"annotators group": {"1": "group_a", "2": "group_b"}}
    write_lewidi(tmp_path, {"1": rec2023(["Ann1", "Ann2"], [0, 1], info),
                            "2": rec2023(["Ann2", "Ann1"], [1, 1], info)})
    with pytest.warns(LoadWarning, match=r"4 judgment\(s\).* by number.*'Ann1' is the key '1'"):
        table = load(tmp_path)
    assert Counter(pools_by_judgment(table).values()) == {"group_a": 2, "group_b": 2}


def test_annotators_without_a_group_are_unknown_and_counted(tmp_path):
    write_lewidi(tmp_path, {
        "1": rec2023(["Ann1", "Ann2", "Ann3"], [0, 1, 1],
                     {"annotators group": {"Ann1": "group_a", "Ann2": "group_b"}}),
        "2": rec2023(["Ann1", "Ann3"], [1, 0], {"domain": "x"}),
    })
    with pytest.warns(LoadWarning, match=r"2 annotator\(s\) \(3 judgment\(s\)\) have no annotator "
                                         r"group.*'Ann3', 'Ann1'.*'unknown'"):
        table = load(tmp_path)
    assert pools_by_judgment(table) == {
        ("train/1", "Ann1"): "group_a", ("train/1", "Ann2"): "group_b",
        ("train/1", "Ann3"): UNKNOWN_POOL, ("train/2", "Ann1"): UNKNOWN_POOL,
        ("train/2", "Ann3"): UNKNOWN_POOL}


def test_other_info_without_groups_keeps_one_pool(tmp_path):
    write_lewidi(tmp_path, {"1": rec2023(["Ann1", "Ann2"], [0, 1], {"domain": "BLM",
                                                                   "group7": "x"})})
    table = load(tmp_path)
    assert set(table.frame[C.POOL].astype(str)) == {C.DEFAULT_POOL}
    assert "pools_from" not in table.info


def test_a_group_list_of_the_wrong_length_names_the_record(tmp_path):
    write_lewidi(tmp_path, {"9": rec2023(["Ann1", "Ann2"], [0, 1],
                                         {"annotators group": ["g1", "g2", "g1"]})})
    with pytest.raises(InputError, match=r"key '9'.*differ in length"):
        load(tmp_path)


def test_pools_argument_wins_over_other_info(tmp_path):
    write_lewidi(tmp_path, {"1": rec2023(["Ann1", "Ann2"], [0, 1], HS | {
        "annotators group": "group1,group2"})})
    table = load(tmp_path, pools={"Ann1": "x", "Ann2": "y"})
    assert pools_by_judgment(table) == {("train/1", "Ann1"): "x", ("train/1", "Ann2"): "y"}


# -- metadata files: keys, fields, values ----------------------------------------------------------
META = {
    "Ann1": {"Gender": "Female", "Age": 26, "Langs": ["zh", "en"], "Score": 2.5, "Native": True,
             "Job": {"field": "nlp", "level": 2}},
    "Ann2": {"Gender": "Male", "Age": 26.0, "Langs": ["en"], "Score": None, "Native": False,
             "Job": {"level": 2, "field": "nlp"}},
    "Ann3": {"Gender": "", "Age": 41, "Langs": [], "Score": 3, "Native": True},
}
EXPECTED_FIELD_POOLS = {
    "Gender": {"Ann1": "Female", "Ann2": "Male", "Ann3": MISSING_POOL},
    "Age": {"Ann1": "26", "Ann2": "26", "Ann3": "41"},
    "Langs": {"Ann1": '["zh","en"]', "Ann2": '["en"]', "Ann3": MISSING_POOL},
    "Score": {"Ann1": "2.5", "Ann2": MISSING_POOL, "Ann3": "3"},
    "Native": {"Ann1": "true", "Ann2": "false", "Ann3": "true"},
    "Job": {"Ann1": '{"field":"nlp","level":2}', "Ann2": '{"field":"nlp","level":2}',
            "Ann3": MISSING_POOL},
}


def toy_2025(folder, meta, *, meta_name="Toy_annotators_meta.json"):
    write_lewidi(folder, {str(k): rec2025({"Ann1": "1", "Ann2": str(k % 6 + 1), "Ann3": "4",
                                           "Ann4": "2"}) for k in range(1, 5)})
    (folder / meta_name).write_text(json.dumps(meta), encoding="utf-8")
    return folder / meta_name


@pytest.mark.parametrize("field", sorted(EXPECTED_FIELD_POOLS))
def test_pool_column_on_any_metadata_field(tmp_path, field):
    meta_path = toy_2025(tmp_path, META)
    expected = EXPECTED_FIELD_POOLS[field]
    n_missing = sum(v == MISSING_POOL for v in expected.values())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", LoadWarning)
        table = load(tmp_path, pools=meta_path, pool_column=field)
    texts = [str(w.message) for w in caught]
    assert any(re.search(r"1 annotator\(s\) \(4 judgment\(s\)\).*'Ann4'.*'unknown'", t)
               for t in texts)
    assert any(f"{n_missing} annotator(s) have no {field!r}" in t for t in texts) == bool(n_missing)
    assert {a: p for (_, a), p in pools_by_judgment(table).items()} == expected | {
        "Ann4": UNKNOWN_POOL}


def test_a_metadata_value_written_nan_is_missing_and_counted(tmp_path):
    """CSC's metadata writes ``"Gender": "nan"`` where it has no value: that is the pool
    ``missing``, as a null is, in the warning with its count, never a pool named ``nan``."""
    meta = {"Ann1": {"Gender": "Female"}, "Ann2": {"Gender": "nan"}, "Ann3": {"Gender": None},
            "Ann4": {"Gender": "NaN"}}
    meta_path = toy_2025(tmp_path, meta)
    with pytest.warns(LoadWarning, match=r"3 annotator\(s\) have no 'Gender' \(e\.g\. 'Ann2', "
                                         r"'Ann3', 'Ann4'; 2 written as the text 'NaN', 'nan', "
                                         r"which is read as no value\); their pool is 'missing'"):
        table = load(tmp_path, pools=meta_path, pool_column="Gender")
    assert {a: p for (_, a), p in pools_by_judgment(table).items()} == {
        "Ann1": "Female", "Ann2": MISSING_POOL, "Ann3": MISSING_POOL, "Ann4": MISSING_POOL}
    csv = tmp_path / "pools.csv"
    csv.write_text("annotator,pool\nAnn1,Female\nAnn2,nan\nAnn3,\nAnn4,None\n", encoding="utf-8")
    with pytest.warns(LoadWarning, match=r"2 annotator\(s\) have no 'pool'.*1 written as the "
                                         r"text 'nan'"):
        table = load(tmp_path, pools=csv)
    assert {a: p for (_, a), p in pools_by_judgment(table).items()} == {
        "Ann1": "Female", "Ann2": MISSING_POOL, "Ann3": MISSING_POOL, "Ann4": "None"}
    with pytest.warns(LoadWarning, match=r"^pools: 1 annotator\(s\) have no pool.*'Ann2'"):
        table = load(tmp_path, pools={"Ann1": "a", "Ann2": "nan", "Ann3": "b", "Ann4": "b"})
    assert pools_by_judgment(table)[("train/1", "Ann2")] == MISSING_POOL


def test_an_other_info_group_with_no_value_is_missing_and_counted(tmp_path):
    write_lewidi(tmp_path, {
        "1": rec2023(["Ann1", "Ann2", "Ann3"], [0, 1, 1],
                     {"annotators group": ["g1", None, "nan"]}),
        "2": rec2023(["Ann1", "Ann2"], [1, 0], {"annotators group": {"Ann1": "g1", "Ann2": ""}}),
        "3": rec2023(["Ann1", "Ann4"], [1, 0], {"annotators group": ["g1", "missing"]}),
    })
    with pytest.warns(LoadWarning, match=r"3 judgment\(s\)' annotator groups in other_info have "
                                         r"no value.*'Ann2'.*their pool is 'missing'"):
        table = load(tmp_path)
    got = pools_by_judgment(table)
    assert got == {("train/1", "Ann1"): "g1", ("train/1", "Ann2"): MISSING_POOL,
                   ("train/1", "Ann3"): MISSING_POOL, ("train/2", "Ann1"): "g1",
                   ("train/2", "Ann2"): MISSING_POOL, ("train/3", "Ann1"): "g1",
                   ("train/3", "Ann4"): MISSING_POOL}


def test_csc_gender_has_no_pool_named_nan():
    """LeWiDi 2025's CSC metadata writes ``nan`` for 17 annotators' gender and age."""
    folder = shared_data("lewidi2025/CSC")
    for field in ("Gender", "Age"):
        with pytest.warns(LoadWarning, match=rf"17 annotator\(s\) have no '{field}'.*17 written "
                                             r"as the text 'nan'"):
            table = load(folder, pool_column=field)
        pools = set(table.frame[C.POOL].astype(str))
        assert "nan" not in pools and MISSING_POOL in pools


def test_pool_column_alone_reads_the_datasets_own_metadata(tmp_path):
    toy_2025(tmp_path, META)
    table = quiet_load(tmp_path, pool_column="Gender")
    assert table.info["pools_from"].endswith("Toy_annotators_meta.json")
    assert Counter(pools_by_judgment(table).values()) == {
        "Female": 4, "Male": 4, MISSING_POOL: 4, UNKNOWN_POOL: 4}


def test_pool_column_alone_without_a_metadata_file_says_so(tmp_path):
    write_lewidi(tmp_path, {"1": rec2023(["Ann1", "Ann2"], [0, 1])})
    with pytest.raises(InputError, match=r"Toy_annotators_meta.json beside the data.*--pools"):
        load(tmp_path, pool_column="Gender")


def test_metadata_keyed_without_the_prefix_matches_with_one_notice(tmp_path):
    meta = {k.removeprefix("Ann"): v for k, v in META.items()}
    meta_path = toy_2025(tmp_path, meta)
    with pytest.warns(LoadWarning) as caught:
        table = load(tmp_path, pools=meta_path, pool_column="Gender")
    notices = [str(w.message) for w in caught if "by number" in str(w.message)]
    assert len(notices) == 1
    assert re.search(r"3 of 4 annotator id\(s\) matched .* by number.*'Ann1' is the key '1'.*"
                     r"0 matched exactly", notices[0])
    assert {a: p for (_, a), p in pools_by_judgment(table).items()} == (
        EXPECTED_FIELD_POOLS["Gender"] | {"Ann4": UNKNOWN_POOL})


def test_paraphrase_metadata_rekeyed_by_number_gives_the_same_pools(tmp_path):
    folder = shared_data("lewidi2025/Paraphrase")
    meta_path = folder / "Paraphrase_annotators_meta.json"
    text = re.sub(r",(\s*})", r"\1", meta_path.read_text(encoding="utf-8"))
    rekeyed = {k.removeprefix("Ann"): v for k, v in json.loads(text).items()}
    assert set(rekeyed) == {"1", "2", "3", "4"}
    (tmp_path / "meta.json").write_text(json.dumps(rekeyed), encoding="utf-8")
    for field in ("Nationality", "Age"):
        before = pools_by_judgment(load(folder, pools=meta_path, pool_column=field))
        with pytest.warns(LoadWarning, match=r"4 of 4 annotator id\(s\) matched .*by number"):
            after = load(folder, pools=tmp_path / "meta.json", pool_column=field)
        assert pools_by_judgment(after) == before
        assert UNKNOWN_POOL not in after.pools


# -- folding tiny pools ----------------------------------------------------------------------------
def judgments_with_pools(pool_of: dict, n_items=3) -> pd.DataFrame:
    rows = [{C.ITEM: f"i{i}", C.ANNOTATOR: a, C.LABEL: (i + k) % 2, C.POOL: p}
            for i in range(n_items) for k, (a, p) in enumerate(pool_of.items())]
    return pd.DataFrame(rows)


POOL_OF = {"a1": "Male", "a2": "Male", "a3": "Female", "a4": "Female", "a5": "Female",
           "a6": "72", "a7": "nan", "a8": "DATA_EXPIRED", "a9": "unknown", "a10": "Gpt"}


def test_min_pool_annotators_folds_tiny_and_placeholder_pools(tmp_path):
    path = tmp_path / "t.csv"
    judgments_with_pools(POOL_OF).to_csv(path, index=False)
    with pytest.warns(LoadWarning, match=r"--min-pool-annotators 2: folded 4 pool\(s\) into "
                                         r"'other'.*'72' \(1 annotator\(s\), 3 judgment\(s\)\).*"
                                         r"4 annotator\(s\), 12 judgment\(s\) in all, none dropped"):
        table = load(path, min_pool_annotators=2)
    got = pools_by_judgment(table)
    assert len(got) == 30
    assert {a: p for (_, a), p in got.items()} == {
        "a1": "Male", "a2": "Male", "a3": "Female", "a4": "Female", "a5": "Female",
        "a6": OTHER_POOL, "a7": OTHER_POOL, "a8": OTHER_POOL, "a9": UNKNOWN_POOL,
        "a10": OTHER_POOL}
    report = table.info["pools_folded"]
    assert report["min_annotators"] == 2 and report["into"] == OTHER_POOL
    assert {f["pool"]: (f["reason"], f["n_annotators"], f["n_judgments"])
            for f in report["pools"]} == {
        "72": ("fewer than 2 annotators", 1, 3), "DATA_EXPIRED": ("placeholder", 1, 3),
        "Gpt": ("fewer than 2 annotators", 1, 3), "nan": ("placeholder", 1, 3)}
    assert (report["n_annotators"], report["n_judgments"]) == (4, 12)

    summary = table.summary()
    assert summary["pools_folded"] == report
    assert summary["pools"][OTHER_POOL]["n_annotations"] == report["n_judgments"]
    assert summary["rows_read"] == summary["n_annotations"] == 30


def test_no_folding_by_default_and_placeholders_only_at_one(tmp_path):
    raw = judgments_with_pools(POOL_OF)
    same, info = fold_pools(raw, None, source="t")
    assert same is raw and info == {}
    with pytest.warns(LoadWarning, match=r"--min-pool-annotators 1: folded 2 pool\(s\)"):
        folded, info = fold_pools(raw, 1, source="t")
    assert {f["pool"] for f in info["pools_folded"]["pools"]} == {"nan", "DATA_EXPIRED"}
    assert len(folded) == len(raw)


def test_judge_pools_are_never_folded(tmp_path):
    path = tmp_path / "t.csv"
    judgments_with_pools(POOL_OF).to_csv(path, index=False)
    (tmp_path / "s.yaml").write_text("judge_pools: [Gpt]\n", encoding="utf-8")
    table = quiet_load(path, spec=tmp_path / "s.yaml", min_pool_annotators=2)
    assert "Gpt" in table.pools and "Gpt" in table.judge_pools
    assert "Gpt" not in {f["pool"] for f in table.info["pools_folded"]["pools"]}


def test_a_pool_named_other_is_not_merged_with_the_folded_ones():
    raw = judgments_with_pools({"a1": "other", "a2": "other", "a3": "x", "a4": "y", "a5": "y"})
    with pytest.warns(LoadWarning, match="into 'other \\(folded\\)'"):
        folded, info = fold_pools(raw, 2, source="t")
    assert info["pools_folded"]["into"] == "other (folded)"
    assert Counter(folded[C.POOL]) == {"other": 6, "other (folded)": 3, "y": 6}


def test_nothing_to_fold_is_recorded_without_a_warning():
    raw = judgments_with_pools({"a1": "p", "a2": "p", "a3": "q", "a4": "q"})
    with warnings.catch_warnings():
        warnings.simplefilter("error", LoadWarning)
        out, info = fold_pools(raw, 2, source="t")
    assert out is raw and info["pools_folded"]["pools"] == []


pool_names = st.sampled_from(["A", "B", "C", "D", "nan", "DATA_EXPIRED", "", "unknown", "other"])


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text("abc", min_size=1, max_size=3), pool_names, min_size=1,
                       max_size=12),
       st.integers(1, 4), st.integers(1, 3))
def test_folding_conserves_judgments_and_follows_the_rule(pool_of, n, n_items):
    raw = judgments_with_pools(pool_of, n_items=n_items)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LoadWarning)
        out, info = fold_pools(raw, n, source="t")
    report = info["pools_folded"]
    holders = Counter(pool_of.values())
    placeholder = {"nan", "DATA_EXPIRED", ""}
    should_fold = {p for p, k in holders.items()
                   if p != UNKNOWN_POOL and (p in placeholder or k < n)}
    assert {f["pool"] for f in report["pools"]} == should_fold
    assert len(out) == len(raw)
    assert (out[[C.ITEM, C.ANNOTATOR, C.LABEL]].to_numpy() ==
            raw[[C.ITEM, C.ANNOTATOR, C.LABEL]].to_numpy()).all()
    into = report["into"]
    for a, p in pool_of.items():
        got = set(out.loc[out[C.ANNOTATOR] == a, C.POOL])
        assert got == ({into} if p in should_fold else {p})
    assert report["n_judgments"] == sum(n_items for p in pool_of.values() if p in should_fold)
    assert report["n_annotators"] == sum(p in should_fold for p in pool_of.values())
    if should_fold:
        assert into == ("other (folded)" if "other" in set(holders) - should_fold else "other")


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_min_pool_annotators_must_be_a_whole_number_from_one(tmp_path, bad):
    path = tmp_path / "t.csv"
    judgments_with_pools(POOL_OF).to_csv(path, index=False)
    with pytest.raises(InputError, match="min_pool_annotators.*whole number >= 1"):
        load(path, min_pool_annotators=bad)


def test_formats_and_engines_without_folding_refuse_it_by_name():
    with pytest.raises(InputError, match="--min-pool-annotators does not apply to the pandalm"):
        load("x.json", format="pandalm", min_pool_annotators=2)
    with pytest.raises(InputError, match="--min-pool-annotators does not apply with --engine spark"):
        load("x.csv", engine="spark", min_pool_annotators=2)


def test_cli_min_pool_annotators(tmp_path):
    path = tmp_path / "t.csv"
    judgments_with_pools(POOL_OF).to_csv(path, index=False)
    runner = CliRunner()
    ok = runner.invoke(cli, ["validate", str(path), "--min-pool-annotators", "2"])
    assert ok.exit_code == 0, ok.output
    assert "folded 4 pool(s) into 'other'" in ok.output
    assert re.search(r"other\s*│\s*4\s*│\s*12", ok.output)
    plain = runner.invoke(cli, ["validate", str(path)])
    assert plain.exit_code == 0 and "folded" not in plain.output
    bad = runner.invoke(cli, ["validate", str(path), "--min-pool-annotators", "0"])
    assert bad.exit_code == 2 and "--min-pool-annotators" in bad.output
    out = tmp_path / "out"
    run = runner.invoke(cli, ["run", str(path), "--min-pool-annotators", "2", "--bootstrap", "5",
                              "--no-report", "--quiet", "--out", str(out)])
    assert run.exit_code == 0, run.output
    pools = json.loads((out / "results.json").read_text())["dataset"]["pools"]
    assert pools[OTHER_POOL]["n_annotators"] == 4 and pools[OTHER_POOL]["n_annotations"] == 12


# -- ids with surrounding blanks: a file's keys are stripped, the data's ids are not ----------
def test_match_keys_matches_an_id_with_blanks_to_its_stripped_key():
    assert match_keys([" ann1", "b\u00a0", "c"], ["ann1", "b", "c"]) == {
        " ann1": "ann1", "b\u00a0": "b", "c": "c"}
    assert match_keys(["ann1", "ann1 "], ["ann1"]) == {"ann1": "ann1", "ann1 ": "ann1"}
    assert match_keys(["Ann 7 "], ["7", "Ann 7"]) == {"Ann 7 ": "Ann 7"}  # before by number


def test_a_rater_sheet_written_with_the_data_ids_names_their_pools(tmp_path):
    # the data's '\xa0pad' and the pools file's '\xa0pad' (read as 'pad') left the annotator
    # in pool 'unknown', "not in the pools mapping" (found by tests/test_fuzz_tables.py)
    data = tmp_path / "t.csv"
    data.write_text("item,annotator,label\n1,\u00a0pad,x\n1,b ,y\n2,\u00a0pad,x\n2,b ,x\n",
                    encoding="utf-8")
    pools = tmp_path / "pools.csv"
    pools.write_text("annotator,pool\n\u00a0pad,crowd\nb ,expert\n", encoding="utf-8")
    with pytest.warns(UserWarning, match="2 of 2 annotator id.s. matched the pools mapping by "
                                         "number or without surrounding blanks"):
        table = load(data, pools=pools)
    got = dict(zip(table.frame["annotator"].astype(str), table.frame["pool"].astype(str)))
    assert got == {"\u00a0pad": "crowd", "b ": "expert"}


@pytest.mark.spark
def test_the_spark_engine_matches_ids_with_blanks_alike(spark, tmp_path):
    data = tmp_path / "t.csv"
    data.write_text("item,annotator,label\n1,\u00a0pad,x\n1,b ,y\n2,\u00a0pad,x\n2,b ,x\n",
                    encoding="utf-8")
    pools = tmp_path / "pools.csv"
    pools.write_text("annotator,pool\n\u00a0pad,crowd\nb ,expert\n", encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = load(data, pools=pools, engine="spark")
    got = dict(zip(table.frame["annotator"].astype(str), table.frame["pool"].astype(str)))
    assert got == {"\u00a0pad": "crowd", "b ": "expert"}


# -- every pools file format reads its keys as the CSV does: without surrounding blanks -------
#: One rater sheet, written with the data's own ids (blanks kept), in each format --pools reads.
_SHEET = {"\u00a0pad": "crowd", "b ": "expert", " c": "crowd"}
_SHEET_DATA = ("item,annotator,label\n1,\u00a0pad,x\n1,b ,y\n1,c,x\n"
               "2,\u00a0pad,x\n2,b ,x\n2,c,y\n")


def _sheet(tmp_path, fmt):
    """The rater sheet as a ``fmt`` file, and the pool_column it needs."""
    records = [{"annotator": a, "pool": p} for a, p in _SHEET.items()]
    path = tmp_path / f"pools.{fmt.split('-')[0]}"
    if fmt in ("csv", "tsv"):
        sep = "," if fmt == "csv" else "\t"
        path.write_text("annotator" + sep + "pool\n"
                        + "".join(f"{a}{sep}{p}\n" for a, p in _SHEET.items()), encoding="utf-8")
    elif fmt == "json":  # {annotator: pool}
        path.write_text(json.dumps(_SHEET), encoding="utf-8")
    elif fmt == "json-meta":  # {annotator: {field: value}}, LeWiDi's metadata
        path = tmp_path / "pools_meta.json"
        path.write_text(json.dumps({a: {"Group": p} for a, p in _SHEET.items()}),
                        encoding="utf-8")
        return path, "Group"
    elif fmt == "json-records":  # [{annotator, pool}, ...]
        path = tmp_path / "pools_records.json"
        path.write_text(json.dumps(records), encoding="utf-8")
    elif fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    elif fmt == "parquet":
        pd.DataFrame.from_records(records).to_parquet(path, index=False)
    elif fmt == "yaml":  # keys quoted: YAML would drop their blanks otherwise
        path.write_text("".join(f"{json.dumps(a)}: {p}\n" for a, p in _SHEET.items()),
                        encoding="utf-8")
    elif fmt == "xlsx":  # a rater sheet kept as a workbook
        import openpyxl

        book = openpyxl.Workbook()
        book.active.append(["annotator", "pool"])
        for a, p in _SHEET.items():
            book.active.append([a, p])
        book.save(path)
    return path, None


_SHEET_FORMATS = ["csv", "tsv", "json", "json-meta", "json-records", "jsonl", "parquet", "yaml",
                  "xlsx"]
_SHEET_POOLS = {"\u00a0pad": "crowd", "b ": "expert", "c": "crowd"}


@pytest.mark.parametrize("fmt", _SHEET_FORMATS)
def test_every_pools_file_format_reads_its_keys_without_surrounding_blanks(tmp_path, fmt):
    # a JSON object's keys (and a metadata object's) were kept as written: the data's 'c' was
    # not the key ' c', pool 'unknown', where the same sheet as a CSV named its pool
    data = tmp_path / "t.csv"
    data.write_text(_SHEET_DATA, encoding="utf-8")
    pools, column = _sheet(tmp_path, fmt)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = load(data, pools=pools, pool_column=column)
    said = [str(w.message) for w in caught]
    assert any("2 of 3 annotator id(s) matched the pools mapping by number or without "
               "surrounding blanks, not exactly" in s for s in said), said
    assert not any("not in the pools mapping" in s for s in said), said
    got = dict(zip(table.frame["annotator"].astype(str), table.frame["pool"].astype(str)))
    assert got == _SHEET_POOLS


@pytest.mark.parametrize("text", ['{"c": "x", " c": "y"}',
                                  '{"c": {"g": "x"}, "c\\u00a0": {"g": "y"}}'])
def test_json_keys_that_differ_only_by_blanks_with_two_pools_name_the_key(tmp_path, text):
    data = tmp_path / "t.csv"
    data.write_text(_SHEET_DATA, encoding="utf-8")
    pools = tmp_path / "pools.json"
    pools.write_text(text, encoding="utf-8")
    run = CliRunner().invoke(cli, ["validate", str(data), "--pools", str(pools), "--quiet"]
                             + (["--pool-column", "g"] if '"g"' in text else []))
    assert run.exit_code == 2, run.output
    line = run.output.strip()
    assert "\n" not in line and str(pools) in line
    assert re.search(r"key ' c'|key 'c\\xa0'", line), line
    assert "annotator 'c' is given more than one pool ('x' and 'y')" in line


@pytest.mark.spark
@pytest.mark.parametrize("fmt", _SHEET_FORMATS)
def test_the_spark_engine_reads_every_pools_file_format_alike(spark, tmp_path, fmt):
    data = tmp_path / "t.csv"
    data.write_text(_SHEET_DATA, encoding="utf-8")
    pools, column = _sheet(tmp_path, fmt)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = load(data, pools=pools, pool_column=column, engine="spark")
    said = [str(w.message) for w in caught]
    assert any("2 of 3 annotator id(s) matched the pools mapping by number or without "
               "surrounding blanks, not exactly" in s for s in said), said
    got = dict(zip(table.frame["annotator"].astype(str), table.frame["pool"].astype(str)))
    assert got == _SHEET_POOLS


@pytest.mark.parametrize("text, words", [
    ("[a, b]\n", "expected a YAML mapping of annotator: pool"),
    ("a: [\n", "invalid YAML at line 2"),
    ("a: !!python/object:os.system x\n", "tag"),
    # empty: was exit 3 (construct(None)); a key given twice: was the last one, exit 0
    ("", "the pools file is empty; expected a YAML mapping"),
    ("# pools\n# to do\n", "the pools file is empty; expected a YAML mapping"),
    ("a: crowd\nb: crowd\na: expert\n", "key 'a': line 3: key 'a' is given twice (first on line 1)"),
    ("a: {g: x,\n    g: y}\n", "key 'a.g': line 2: key 'g' is given twice (first on line 1)"),
])
def test_a_yaml_pools_file_that_is_no_mapping_names_the_problem(tmp_path, text, words):
    data = tmp_path / "t.csv"
    data.write_text(_SHEET_DATA, encoding="utf-8")
    (tmp_path / "pools.yaml").write_text(text, encoding="utf-8")
    run = CliRunner().invoke(cli, ["validate", str(data), "--pools", str(tmp_path / "pools.yaml"),
                                   "--quiet"])
    assert run.exit_code == 2 and words in run.output and "pools.yaml" in run.output, run.output
