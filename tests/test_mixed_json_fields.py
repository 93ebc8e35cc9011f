"""JSON fields whose values mix numbers and text (``"item": 1`` in one record, ``"item": "q2"``
in another), read by both engines.

The pandas engine reads each value with its JSON type (``json.loads``) and writes ids by
:mod:`audit.contract.ids` and labels by :func:`audit.contract.labels.label_text`: ``7.0`` is
``7``, ``1.50`` is ``1.5``, ``1e2`` is ``100``, ``true`` is ``True``, the text ``"7.0"`` stays
``7.0``. Spark inferred such a field as text holding each number as the file writes it (``7.0``,
``1.50``, ``1e2``, ``true``): ids differed between the engines and from a CSV ``--pools`` file's,
labels became other categories. The expected texts are written out here by hand, and the two
engines' tables and ``results.json`` are compared.
"""

from __future__ import annotations

import json
import warnings

import pytest
from click.testing import CliRunner

from audit.cli import cli
from audit.contract import columns as C
from audit.ingest import load
from tests.test_spark import assert_same_results

pytestmark = pytest.mark.spark

#: (JSON text of a value, its id text, its label text): by hand, from the rule's docstrings.
VALUES = [
    ("1", "1", "1"), ("7.0", "7", "7"), ('"7.0"', "7.0", "7.0"), ("1.50", "1.5", "1.5"),
    ("1e2", "100", "100"), ("-0.0", "0", "0"), ("0.1", "0.1", "0.1"),
    ("1.5e-5", "1.5e-05", "1.5e-05"), ("12345678.5", "12345678.5", "12345678.5"),
    ("9007199254740993", "9007199254740993", "9007199254740993"),
    ("123456789012345678901234567890", "123456789012345678901234567890",
     "123456789012345678901234567890"),
    ("1e20", "1e+20", "100000000000000000000"), ("true", "True", "True"),
    ("false", "False", "False"), ('"q2"', "q2", "q2"), ('"007"', "007", "007"),
]


def _quiet_load(path, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load(path, **options)


def _rows(table, columns):
    f = table.frame
    return sorted(tuple(str(v) for v in row) for row in f[list(columns)].itertuples(index=False))


def _write_records(path, records, *, array=False):
    if array:
        path.write_text("[\n" + ",\n".join(records) + "\n]\n", encoding="utf-8")
    else:
        path.write_text("".join(r + "\n" for r in records), encoding="utf-8")
    return path


def _id_records():
    """Each value of :data:`VALUES` as an item, an annotator and a pool (each of the three
    columns mixing types), judged by two annotators with text ids."""
    records = []
    for n, (value, _, _) in enumerate(VALUES):
        records.append(f'{{"item": {value}, "annotator": {value}, "pool": {value}, '
                       f'"label": "x"}}')
        for other in ("a", "b"):
            label = "xy"[(n + len(other)) % 2]
            records.append(f'{{"item": {value}, "annotator": "{other}", "pool": "p", '
                           f'"label": "{label}"}}')
    return records


@pytest.mark.parametrize("array", [False, True], ids=["jsonl", "json-array"])
def test_ids_mixing_numbers_and_text_are_the_rules_on_both_engines(spark, tmp_path, array):
    path = _write_records(tmp_path / ("ids.json" if array else "ids.jsonl"), _id_records(),
                          array=array)
    expected = sorted({(i, i, i, "x") for _, i, _ in VALUES}
                      | {(i, a, "p", "xy"[(n + len(a)) % 2]) for n, (_, i, _) in
                         enumerate(VALUES) for a in ("a", "b")})
    columns = (C.ITEM, C.ANNOTATOR, C.POOL, C.LABEL)
    for engine in ("pandas", "spark"):
        assert _rows(_quiet_load(path, engine=engine), columns) == expected, engine


def test_labels_mixing_numbers_and_text_are_the_rules_on_both_engines(spark, tmp_path):
    records = []
    for n, (value, _, _) in enumerate(VALUES):
        for annotator in ("a", "b"):
            records.append(f'{{"item": "i{n}", "annotator": "{annotator}", "label": {value}}}')
    path = _write_records(tmp_path / "labels.jsonl", records)
    expected = sorted((f"i{n}", a, lab) for n, (_, _, lab) in enumerate(VALUES)
                      for a in ("a", "b"))
    for engine in ("pandas", "spark"):
        table = _quiet_load(path, engine=engine)
        assert _rows(table, (C.ITEM, C.ANNOTATOR, C.LABEL)) == expected, engine
        assert sorted(map(str, table.scale.values)) == sorted({lab for _, _, lab in VALUES})


def test_model_ids_mixing_numbers_and_text_are_the_rules_on_both_engines(spark, tmp_path):
    records = [json.dumps({"item": f"q{n}", "annotator": ann, "model_a": a, "model_b": b,
                           "label": lab})
               for n, (a, b) in enumerate([(1.0, "gpt"), ("gpt", 2.50), (1.0, 2.50),
                                           ("1.0", 1.0)])
               for ann, lab in (("x", "A"), ("y", "B"), ("z", "tie"))]
    path = _write_records(tmp_path / "pairs.jsonl", records)
    columns = (C.ITEM, C.ANNOTATOR, C.MODEL_A, C.MODEL_B, C.LABEL)
    pandas_rows = _rows(_quiet_load(path), columns)
    assert {r[2] for r in pandas_rows} | {r[3] for r in pandas_rows} == {"1", "gpt", "2.5",
                                                                         "1.0"}
    assert _rows(_quiet_load(path, engine="spark"), columns) == pandas_rows


@pytest.mark.parametrize("canon, field", [(C.ITEM, C.CATEGORY), (C.ANNOTATOR, C.TURN),
                                          (C.LABEL, C.TEXT), (C.POOL, C.TEXT)])
def test_a_column_named_like_another_canonical_one_keeps_its_entrys_rule(spark, tmp_path,
                                                                          canon, field):
    """``columns: {item: category}``: the ids come from a JSON field named like the extra
    column ``category``. Spark gave each source column the role of every canonical column
    naming it, the unmapped ``category`` last, so the ids were written as extra text (``7.0``
    where the pandas engine writes the id ``7``; a label ``1e20`` as ``1e+20``). The entry's
    role wins now: the engines agree, with the values of :data:`VALUES`."""
    records = []
    for n, (value, _, _) in enumerate(VALUES):
        for k in range(2):  # each value judged twice: by two annotators, or on two items
            row = {C.ITEM: f"i{n}", C.ANNOTATOR: "ab"[k], C.POOL: "p", C.LABEL: "xy"[(n + k) % 2]}
            if canon == C.ANNOTATOR:
                row[C.ITEM] = f"i{k}"
            if canon == C.POOL:
                row[C.ANNOTATOR] = f"a{n}"
                row[C.ITEM] = f"i{k}"
            row[canon] = "__value__"
            row[field] = row.pop(canon)
            records.append(json.dumps(row).replace('"__value__"', value))
    path = _write_records(tmp_path / "named.jsonl", records)
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"columns: {{{canon}: {field}}}\n", encoding="utf-8")
    expected = sorted({(i if canon != C.LABEL else lab) for _, i, lab in VALUES})
    for engine in ("pandas", "spark"):
        table = _quiet_load(path, spec=spec, engine=engine)
        assert sorted(map(str, table.frame[canon].cat.categories)) == expected, engine


def test_a_csv_pools_file_names_the_pools_of_float_annotators_on_both_engines(spark, tmp_path):
    records = [json.dumps({"item": item, "annotator": ann, "label": lab})
               for item in ("q1", 2, 3.0)
               for ann, lab in ((7.0, "x"), ("a", "y"), (8, "x"))]
    path = _write_records(tmp_path / "judgments.jsonl", records)
    pools = tmp_path / "pools.csv"
    pools.write_text("annotator,pool\n7,crowd\na,expert\n8,crowd\n", encoding="utf-8")
    for engine in ("pandas", "spark"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            table = load(path, pools=str(pools), engine=engine)
        assert not [str(w.message) for w in caught if "not in the pools mapping"
                    in str(w.message)], engine
        assert _rows(table, (C.ANNOTATOR, C.POOL)) == sorted(
            [("7", "crowd")] * 3 + [("a", "expert")] * 3 + [("8", "crowd")] * 3), engine
        assert _rows(table, (C.ITEM,)) == sorted([("2",)] * 3 + [("3",)] * 3 + [("q1",)] * 3)


def test_results_json_is_the_same_on_both_engines(spark, tmp_path):
    """A rating table whose item, annotator and label fields mix numbers and text: the two
    engines' results.json agree to 1e-12 (every value but ``meta``)."""
    records = []
    for item in range(12):
        item_id = float(item) if item % 3 == 0 else item if item % 3 == 1 else f"q{item}"
        for k, ann in enumerate((1.0, "b", 3, "d")):
            score = (item + 2 * k) % 5 + 1
            label = float(score) if (item + k) % 2 else str(score) if item % 4 else score
            records.append(json.dumps({"item": item_id, "annotator": ann,
                                       "pool": "crowd" if k < 2 else 2.0, "label": label}))
    path = _write_records(tmp_path / "ratings.jsonl", records)
    spec = tmp_path / "spec.yaml"
    spec.write_text("label: {kind: ordinal, order: [1, 2, 3, 4, 5]}\n", encoding="utf-8")
    results = {}
    for engine in ("pandas", "spark"):
        out = tmp_path / engine
        run = CliRunner().invoke(cli, ["run", str(path), "--spec", str(spec), "--engine", engine,
                                       "--bootstrap", "50", "--seed", "3", "--no-report",
                                       "--quiet", "--out", str(out)])
        assert run.exit_code == 0, run.output
        results[engine] = json.loads((out / "results.json").read_text())
    assert results["spark"]["dataset"]["pools"].keys() == {"crowd", "2"}
    assert results["spark"]["dataset"]["n_annotators"] == 4
    assert_same_results(results["pandas"], results["spark"])


def test_past_the_driver_bound_json_numbers_keep_sparks_text_with_a_warning(spark, tmp_path,
                                                                           monkeypatch):
    from audit.errors import AuditWarning
    from audit.ingest.spark import ids

    monkeypatch.setattr(ids, "DRIVER_TEXTS", 2)
    records = [json.dumps({"item": item, "annotator": ann, "label": "x"})
               for item in (0.5, 1.25, 12345678.5, 2.0, "q")
               for ann in ("a", "b")]
    path = _write_records(tmp_path / "many.jsonl", records)
    with pytest.warns(AuditWarning, match=r"column\(s\) 'item': more than 2 distinct JSON "
                                          r"numbers in fields that also hold text"):
        table = load(path, engine="spark")
    got = {r[0] for r in _rows(table, (C.ITEM,))}
    assert got == {"0.5", "1.25", "1.23456785E7", "2", "q"}  # distinct; whole ones by the rule


def test_only_fields_mixing_types_are_read_as_variants(spark, tmp_path):
    """A field of text only stays a text column (read as before, at no cost per value); a
    field holding a number, a boolean or an object beside text is a VARIANT."""
    import pyspark.sql.types as T

    from audit.ingest.spark.read import read_json

    path = _write_records(tmp_path / "t.jsonl", [
        '{"item": "q1", "annotator": "a", "label": 1, "pool": "p", "text": "t"}',
        '{"item": 2, "annotator": "b", "label": true, "pool": null, "text": {"x": 1}}',
        '{"item": "q3", "annotator": "c", "label": "x", "pool": "p", "text": "u"}'])
    types = {f.name: type(f.dataType) for f in read_json(spark, str(path),
                                                          multiline=False).schema.fields}
    assert types == {"item": T.VariantType, "annotator": T.StringType,
                     "label": T.VariantType, "pool": T.StringType, "text": T.VariantType}
