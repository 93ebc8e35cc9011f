"""Ids typed float (what pandas writes for an int id column that once held a NaN) name the same
items and annotators as the same ids in a CSV, on both engines, in ``--pools`` and in
``check --baseline``: one rule, :mod:`audit.contract.ids`."""

from __future__ import annotations

import decimal
import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.cli import cli
from audit.contract import columns as C
from audit.contract.ids import float_text, id_text, id_texts
from audit.contract.schema import string_categorical
from audit.errors import InputError, SchemaError
from audit.ingest import load
from audit.ingest.pools import resolve_pools

D = decimal.Decimal
EXACT = 2 ** 53


def _load(path, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load(str(path), **options)


def _ids(table, column):
    return sorted(map(str, table.frame[column].cat.categories))


def _pools_of(table) -> dict[str, str]:
    f = table.frame
    return dict(sorted({(str(a), str(p)) for a, p in zip(f[C.ANNOTATOR], f[C.POOL])}))


def _judgments(n_items=4, n_annotators=3) -> pd.DataFrame:
    rows = [(i, a, (i + a) % 2) for i in range(1, n_items + 1) for a in range(1, n_annotators + 1)]
    return pd.DataFrame(rows, columns=[C.ITEM, C.ANNOTATOR, C.LABEL])


@pytest.fixture
def pair(tmp_path):
    """The same judgments as a CSV (ids 1, 2, ...) and as Parquet with float ids (1.0, 2.0,
    ..., as pandas keeps an int column once it held a NaN)."""
    frame = _judgments()
    csv, parquet = tmp_path / "ids.csv", tmp_path / "ids.parquet"
    frame.to_csv(csv, index=False)
    frame.astype({C.ITEM: float, C.ANNOTATOR: float}).to_parquet(parquet, index=False)
    pools = tmp_path / "pools.csv"
    pools.write_text("annotator,pool\n1,a\n2,a\n3,b\n")
    return {"csv": csv, "parquet": parquet, "pools": pools}


# -- the rule ------------------------------------------------------------------------------------
@pytest.mark.parametrize("value, text", [
    (1.0, "1"), (-0.0, "0"), (0.0, "0"), (-3.0, "-3"), (1.5, "1.5"), (0.1, "0.1"),
    (1e-05, "1e-05"), (12345678.5, "12345678.5"), (1e20, "1e+20"),
    (float(EXACT - 1), str(EXACT - 1)), (float(EXACT), "9007199254740992.0"),
    (float("inf"), "inf"), (float("-inf"), "-inf"), (float("nan"), None),
    (np.float32(2.0), "2"), (np.float32(0.1), "0.10000000149011612"), (np.float64(7.0), "7"),
    (7, "7"), (np.int64(-7), "-7"), (2 ** 70, str(2 ** 70)), (True, "True"),
    (np.bool_(False), "False"), ("007", "007"), ("1.0", "1.0"), (" a ", " a "), ("", ""),
    (D("1.00"), "1"), (D("2.50"), "2.5"), (D("-0.00"), "0"), (D("1E-8"), "0.00000001"),
    (D("1E+2"), "100"), (D("123456789012345678901234.000"), "123456789012345678901234"),
    (D("NaN"), None), (None, None), (pd.NA, None)])
def test_one_id_value_as_text(value, text):
    assert id_text(value) == text


def test_many_values_at_once_write_what_one_value_writes():
    values = np.array([1.0, -0.0, 1.5, 1e20, EXACT, EXACT + 2.0, np.inf, np.nan, 1e-5, -7.0])
    assert list(id_texts(values)) == [float_text(v) for v in values]
    assert list(id_texts(np.array([3, -1]))) == ["3", "-1"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-(EXACT - 1), EXACT - 1), min_size=1, max_size=40),
       st.integers(0, 40))
def test_int_ids_and_the_same_ids_as_whole_floats_are_the_same_ids(ints, nan_at):
    """An int id column, the same ids as floats (with a NaN among them, as pandas upcasts) and
    the same ids as a CSV's text give the same categories and the same codes."""
    as_int = string_categorical(pd.Series(ints, dtype=np.int64))
    floats = pd.Series(ints, dtype=np.float64)
    as_float = string_categorical(floats)
    as_text = string_categorical(pd.Series([str(i) for i in ints]).astype("category"))
    for other in (as_float, as_text):
        assert list(other.categories) == list(as_int.categories)
        assert np.array_equal(np.asarray(other.codes), np.asarray(as_int.codes))
    at = min(nan_at, len(ints))
    with_nan = string_categorical(pd.concat([floats[:at], pd.Series([np.nan]), floats[at:]],
                                            ignore_index=True))
    codes = np.asarray(with_nan.codes)
    assert codes[at] == -1
    assert list(with_nan.categories) == list(as_int.categories)
    assert np.array_equal(np.delete(codes, at), np.asarray(as_int.codes))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=30))
def test_a_float_column_writes_each_value_as_the_rule_does(values):
    cat = string_categorical(pd.Series(values, dtype=np.float64))
    got = [None if c < 0 else cat.categories[c] for c in np.asarray(cat.codes)]
    assert got == [float_text(v) for v in values]


def test_a_mixed_object_column_writes_each_value_by_its_own_type():
    cat = string_categorical(pd.Series([1, 1.0, "1", True, D("1.0"), "007", 7, None],
                                       dtype=object))
    got = [None if c < 0 else cat.categories[c] for c in np.asarray(cat.codes)]
    assert got == ["1", "1", "1", "True", "1", "007", "7", None]


def test_dates_keep_the_text_pandas_writes():
    cat = string_categorical(pd.Series(pd.to_datetime(["2024-01-02", "2024-01-01"])))
    assert list(cat.categories) == ["2024-01-01 00:00:00", "2024-01-02 00:00:00"]


# -- loading, pools, baseline on the pandas engine ----------------------------------------------
def test_parquet_float_ids_are_the_csvs_ids(pair):
    csv, parquet = _load(pair["csv"]), _load(pair["parquet"])
    assert _ids(parquet, C.ITEM) == _ids(csv, C.ITEM) == ["1", "2", "3", "4"]
    assert _ids(parquet, C.ANNOTATOR) == _ids(csv, C.ANNOTATOR) == ["1", "2", "3"]


def test_leading_zeros_in_a_csv_stay_text(tmp_path):
    path = tmp_path / "zeros.csv"
    path.write_text("item,annotator,label\n007,1,a\n7,1,b\n007,2,b\n7,2,a\n")
    assert _ids(_load(path), C.ITEM) == ["007", "7"]


def test_a_pools_file_matches_float_annotators(pair):
    table = _load(pair["parquet"], pools=str(pair["pools"]))
    assert _pools_of(table) == {"1": "a", "2": "a", "3": "b"}


def test_a_spec_pools_map_with_number_keys_matches_float_and_text_ids(pair, tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text("pools:\n  map:\n    1: a\n    2.0: a\n    '3': b\n")
    for source in (pair["parquet"], pair["csv"]):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no annotator left in the 'unknown' pool
            table = load(str(source), spec=str(spec))
        assert _pools_of(table) == {"1": "a", "2": "a", "3": "b"}


def test_pools_records_with_float_keys_and_a_mapping_match(pair, tmp_path):
    records = tmp_path / "pools.json"
    records.write_text(json.dumps([{"annotator": 1.0, "pool": "a"}, {"annotator": 2.0, "pool": "a"},
                                   {"annotator": 3.0, "pool": "b"}]))
    assert resolve_pools(str(records)) == {"1": "a", "2": "a", "3": "b"}
    table = _load(pair["csv"], pools={1.0: "a", np.float64(2.0): "a", 3: "b"})
    assert _pools_of(table) == {"1": "a", "2": "a", "3": "b"}


def test_mapping_keys_writing_one_id_with_two_pools_are_refused():
    with pytest.raises(InputError, match=r"annotator '1' is given more than one pool"):
        resolve_pools({1: "a", "1": "b"})
    with pytest.raises(InputError, match=r"missing \(null or NaN\)"):
        resolve_pools({math.nan: "a"})


def test_check_baseline_matches_parquet_float_ids_against_the_csv(pair, tmp_path):
    suite = tmp_path / "suite.yaml"
    suite.write_text("expectations:\n  - expect: max_removed_item_share\n    max: 0\n"
                     "  - expect: max_changed_label_share\n    max: 0\n")
    result = CliRunner().invoke(cli, ["check", str(pair["csv"]), "--suite", str(suite),
                                      "--baseline", str(pair["parquet"]), "--bootstrap", "20",
                                      "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "items added 0, removed 0" in result.output
    assert "judgments added 0, removed 0, relabelled 0" in result.output


# -- both engines write the same ids ------------------------------------------------------------
MESSY = [1.0, 2.0, -0.0, 1.5, 1e20, EXACT + 2.0, 12345678.5, 1e-05, 0.1, np.inf, -7.0, 5e-324,
         2.82879384806159e17]


def _messy_parquet(tmp_path):
    """Float items (every kind of float) and decimal annotators."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    items, anns, labels = [], [], []
    for i, x in enumerate(MESSY):
        for a in (D("1.00"), D("2.50"), D("-0.00"), D("0.00000001")):
            items.append(x)
            anns.append(a)
            labels.append(i % 3)
    table = pa.table({C.ITEM: pa.array(items, pa.float64()),
                      C.ANNOTATOR: pa.array(anns, pa.decimal128(20, 8)),
                      C.LABEL: pa.array(labels, pa.int64())})
    path = tmp_path / "messy.parquet"
    pq.write_table(table, path)
    return path


def test_both_engines_write_messy_ids_the_same(spark, tmp_path):
    path = _messy_parquet(tmp_path)
    pandas_table = _load(path)
    spark_table = _load(path, engine="spark")
    assert _ids(pandas_table, C.ITEM) == sorted(float_text(x) for x in MESSY)
    assert _ids(pandas_table, C.ANNOTATOR) == ["0", "0.00000001", "1", "2.5"]
    for column in (C.ITEM, C.ANNOTATOR):
        assert _ids(spark_table, column) == _ids(pandas_table, column)


def test_both_engines_match_csv_ids_pools_and_baseline(spark, pair, tmp_path):
    csv = _load(pair["csv"], engine="spark")
    parquet = _load(pair["parquet"], engine="spark", pools=str(pair["pools"]))
    for column in (C.ITEM, C.ANNOTATOR):
        assert _ids(parquet, column) == _ids(csv, column)
    assert _pools_of(parquet) == {"1": "a", "2": "a", "3": "b"}
    jsonl = tmp_path / "ids.jsonl"
    jsonl.write_text("".join(json.dumps({C.ITEM: float(i), C.ANNOTATOR: float(a), C.LABEL: lab})
                             + "\n" for i, a, lab in _judgments().itertuples(index=False)))
    for engine in ("pandas", "spark"):
        assert _ids(_load(jsonl, engine=engine), C.ITEM) == ["1", "2", "3", "4"]
    suite = tmp_path / "suite.yaml"
    suite.write_text("expectations:\n  - expect: max_removed_item_share\n    max: 0\n")
    result = CliRunner().invoke(cli, ["check", str(pair["csv"]), "--suite", str(suite),
                                      "--baseline", str(pair["parquet"]), "--engine", "spark",
                                      "--bootstrap", "20", "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "items added 0, removed 0" in result.output


def test_a_nan_id_is_a_missing_id_on_both_engines(spark, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    frame = _judgments()
    items = [math.nan] + frame[C.ITEM].astype(float).tolist()[1:]
    path = tmp_path / "nan.parquet"  # a NaN, not a null (pandas would write NaN as null)
    pq.write_table(pa.table({C.ITEM: pa.array(items, pa.float64(), from_pandas=False),
                             C.ANNOTATOR: frame[C.ANNOTATOR], C.LABEL: frame[C.LABEL]}), path)
    assert pq.read_table(path).column(C.ITEM).null_count == 0
    for engine in ("pandas", "spark"):
        with pytest.raises(SchemaError) as err:
            _load(path, engine=engine)
        assert set(err.value.failures["column"]) == {C.ITEM}, engine


def test_spark_writes_random_floats_as_the_rule_does(spark):
    from audit.ingest.spark.ids import id_columns

    rng = np.random.default_rng(5)
    values = np.concatenate([rng.normal(size=100) * 10.0 ** rng.integers(-12, 25, size=100),
                             np.round(rng.normal(size=50) * 1e6),
                             rng.integers(-EXACT, EXACT, size=20).astype(float),
                             [EXACT - 1.0, -(EXACT - 1.0), EXACT, 2.0 ** 63, 1e300, -0.0]])
    df = spark.createDataFrame([(float(v), float(v)) for v in values], "key double, item double")
    got = {r["key"]: r["item"] for r in id_columns(df, [C.ITEM]).collect()}
    assert got == {float(v): float_text(float(v)) for v in values}


def test_boolean_ids_are_true_and_false_on_both_engines(spark, tmp_path):
    frame = pd.DataFrame({C.ITEM: [1, 1, 2, 2], C.ANNOTATOR: [True, False, True, False],
                          C.LABEL: ["x", "y", "y", "y"]})
    path = tmp_path / "bools.parquet"
    frame.to_parquet(path, index=False)
    for engine in ("pandas", "spark"):
        assert _ids(_load(path, engine=engine), C.ANNOTATOR) == ["False", "True"], engine


def test_spark_keeps_its_own_text_past_the_driver_bound(spark, monkeypatch):
    """A float id column with more distinct non-whole values than the driver collects
    (``DRIVER_TEXTS``: timestamps used as ids in a lake) is not collected: those ids keep
    Spark's text, with a warning naming the column, and stay distinct; whole floats and NaN
    follow the rule as below the bound."""
    from audit.errors import AuditWarning
    from audit.ingest.spark import ids

    monkeypatch.setattr(ids, "DRIVER_TEXTS", 3)
    values = [0.5, 1.25, 1e20, 12345678.5, 2.0, float("nan")]
    df = spark.createDataFrame([(float(v), float(v)) for v in values], "key double, item double")
    with pytest.warns(AuditWarning, match=r"column 'item': more than 3 distinct float ids"):
        out = ids.id_columns(df, [C.ITEM])
    got = {r["key"]: r["item"] for r in out.collect() if not math.isnan(r["key"])}
    assert got[2.0] == "2" and got[0.5] == "0.5"
    assert got[1e20] == "1.0E20"  # Spark's, not the pandas engine's '1e+20'
    assert len(set(got.values())) == len(got)
    assert [r["item"] for r in out.collect() if math.isnan(r["key"])] == [None]
    monkeypatch.setattr(ids, "DRIVER_TEXTS", 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", AuditWarning)
        got = {r["key"]: r["item"] for r in ids.id_columns(df, [C.ITEM]).collect()
               if not math.isnan(r["key"])}
    assert got[1e20] == "1e+20" and got[12345678.5] == "12345678.5"
