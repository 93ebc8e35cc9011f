"""Typed columns as users' tools write them (Parquet, Feather / Arrow IPC, JSON Lines, a
``datasets`` dataset), read as the equivalent CSV on both engines.

A CSV is the reference: its ids are text exactly as written. A typed column whose values have
a text (:mod:`audit.contract.ids`) gives the same canonical table and results as a CSV holding
that text; a value that has none (a list, a mapping, bytes that are not UTF-8) is exit 2 in
one line naming the file, the column and the row; a type Spark does not read is one exit-2
line naming the column. The expected texts are written out here by hand, from the rule.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from audit.cli import cli
from audit.contract import columns as C
from audit.ingest import load
from audit.pipeline import run
from benchmarks.compare import result_differences

COLUMNS = (C.ITEM, C.ANNOTATOR, C.POOL, C.MODEL, C.LABEL)
UTC = dt.timezone.utc


def base() -> dict[str, list]:
    """A rating table: 6 items, each of one of 2 models, judged 1..5 by 4 annotators in 2
    pools (every id text, labels integers)."""
    rows = {c: [] for c in COLUMNS}
    for i in range(6):
        for a in range(4):
            rows[C.ITEM].append(f"i{i}")
            rows[C.ANNOTATOR].append(f"a{a}")
            rows[C.POOL].append(f"p{a // 2}")
            rows[C.MODEL].append(f"m{i % 2}")
            rows[C.LABEL].append(1 + (i * 3 + a * (i % 3) + a // 2) % 5)
    return rows


def with_column(column: str, values: dict, *, source: dict | None = None) -> list:
    """``column`` of :func:`base` (or ``source``) with each value replaced through
    ``values``."""
    return [values[v] for v in (source or base())[column]]


def write_parquet(path, columns: dict, types: dict | None = None, **options):
    types = types or {}
    table = pa.table({c: arrow_array(v, types.get(c)) for c, v in columns.items()})
    pq.write_table(table, path, **options)
    return path


def arrow_array(values: list, dtype):
    """``values`` as an Arrow array of ``dtype``; aware timestamps from their instants
    (pyarrow 25 reads an aware datetime's wall clock as UTC once pandera is imported)."""
    if dtype is not None and pa.types.is_timestamp(dtype) and dtype.tz is not None:
        micros = [pd.Timestamp(v).value // 1000 for v in values]
        return pa.array(micros, pa.int64()).cast(dtype)
    return pa.array(values, type=dtype)


def write_csv(path, columns: dict):
    frame = pd.DataFrame({c: pd.Series(v, dtype=object) for c, v in columns.items()})
    frame.to_csv(path, index=False)
    return path


def quiet_load(path, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load(path, **options)


def rows(table) -> list[tuple]:
    f = table.frame
    present = [c for c in COLUMNS if c in f.columns]
    return sorted(tuple(None if pd.isna(v) else str(v) for v in r)
                  for r in f[present].itertuples(index=False))


def audited(path, **options) -> dict:
    from audit.results import jsonable

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = jsonable(run(path, n_bootstrap=50, seed=3, report=False, **options))
    results.pop("meta")
    results["dataset"].pop("name")
    return results


def invoke(*args) -> tuple[int, str]:
    result = CliRunner().invoke(cli, [*map(str, args), "--quiet"])
    return result.exit_code, result.output


def one_error_line(output: str) -> str:
    """The one error line of a refused command (warnings may come before it)."""
    assert "Traceback" not in output and "internal error" not in output, output
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, output
    return errors[0]


# -- ids and labels with a text: the CSV's table ----------------------------------------------
#: (name, column, Arrow type, base value -> typed value, typed value -> the CSV's text: by
#: hand from audit.contract.ids' rule).
STAMPS = [dt.datetime(2024, 1, 1, tzinfo=UTC), dt.datetime(2024, 1, 2, 12, 30, 0, 500000, UTC),
          dt.datetime(2024, 1, 3, 23, 59, 59, 1, UTC), dt.datetime(2024, 1, 4, 8, tzinfo=UTC),
          dt.datetime(2024, 1, 5, 9, 15, tzinfo=UTC), dt.datetime(2024, 1, 6, tzinfo=UTC)]
STAMP_TEXTS = ["2024-01-01 00:00:00+00:00", "2024-01-02 12:30:00.500000+00:00",
               "2024-01-03 23:59:59.000001+00:00", "2024-01-04 08:00:00+00:00",
               "2024-01-05 09:15:00+00:00", "2024-01-06 00:00:00+00:00"]
NAIVE = [s.replace(tzinfo=None) for s in STAMPS]
NAIVE_TEXTS = [t.removesuffix("+00:00") for t in STAMP_TEXTS]
ITEMS = [f"i{i}" for i in range(6)]
ANNOTATORS = [f"a{i}" for i in range(4)]
TYPED = [
    ("timestamp-utc", C.ITEM, pa.timestamp("us", tz="UTC"), dict(zip(ITEMS, STAMPS)),
     dict(zip(STAMPS, STAMP_TEXTS))),
    ("timestamp-paris", C.ITEM, pa.timestamp("us", tz="Europe/Paris"),
     {f"i{i}": pd.Timestamp(2024, 7, i + 1, 14, tz="Europe/Paris") for i in range(6)},
     {pd.Timestamp(2024, 7, i + 1, 14, tz="Europe/Paris"): f"2024-07-0{i + 1} 12:00:00+00:00"
      for i in range(6)}),
    ("timestamp-naive", C.ANNOTATOR, pa.timestamp("us"), dict(zip(ANNOTATORS, NAIVE)),
     dict(zip(NAIVE, NAIVE_TEXTS))),
    ("date32", C.POOL, pa.date32(), {"p0": dt.date(2024, 2, 29), "p1": dt.date(1999, 12, 31)},
     {dt.date(2024, 2, 29): "2024-02-29", dt.date(1999, 12, 31): "1999-12-31"}),
    ("binary", C.ANNOTATOR, pa.binary(), {a: f"00{a}é".encode() for a in ANNOTATORS},
     {f"00{a}é".encode(): f"00{a}é" for a in ANNOTATORS}),
    ("large_binary", C.MODEL, pa.large_binary(), {"m0": b"gpt-4", "m1": b"007"},
     {b"gpt-4": "gpt-4", b"007": "007"}),
    ("decimal", C.MODEL, pa.decimal128(6, 2), {"m0": decimal.Decimal("1.50"),
                                               "m1": decimal.Decimal("2.00")},
     {decimal.Decimal("1.50"): "1.5", decimal.Decimal("2.00"): "2"}),
    ("uint64", C.ITEM, pa.uint64(), {f"i{i}": 2**63 + i for i in range(6)},
     {2**63 + i: str(2**63 + i) for i in range(6)}),
    ("large_string", C.POOL, pa.large_string(), {"p0": "001", "p1": "1"},
     {"001": "001", "1": "1"}),
    ("dictionary", C.ITEM, pa.dictionary(pa.int8(), pa.string()),
     {f"i{i}": f"00{i}" for i in range(6)}, {f"00{i}": f"00{i}" for i in range(6)}),
]


def typed_source(tmp_path, name, column, dtype, typed, text):
    """The Parquet file of :func:`base` with ``column`` typed, and the CSV of its texts."""
    columns = base()
    values = with_column(column, typed)
    parquet = write_parquet(tmp_path / f"{name}.parquet", {**columns, column: values},
                            {column: dtype})
    (tmp_path / "csv").mkdir(exist_ok=True)
    csv = write_csv(tmp_path / "csv" / f"{name}.csv",
                    {**columns, column: [text[v] for v in values]})
    return parquet, csv


@pytest.mark.parametrize("name, column, dtype, typed, text", TYPED, ids=[t[0] for t in TYPED])
def test_typed_ids_read_as_the_csv_of_their_text(tmp_path, name, column, dtype, typed, text):
    parquet, csv = typed_source(tmp_path, name, column, dtype, typed, text)
    expected = rows(quiet_load(csv))
    assert {r[COLUMNS.index(column)] for r in expected} == {text[v] for v in typed.values()}
    assert rows(quiet_load(parquet)) == expected


def test_a_timestamp_is_written_by_itself_not_by_its_column():
    """pandas writes a column of timestamps all at midnight as dates, and every one with the
    precision of the finest (``00:00:00.000``): the same instant was another id in another
    file. Each is now written alone, with a time zone in UTC."""
    from audit.contract.ids import id_text, id_texts

    midnight = pd.DatetimeIndex(["2024-01-03", "2024-01-04"])
    mixed = pd.DatetimeIndex(["2024-01-03", "2024-01-04 12:30:00.5", None,
                              "2024-01-05 00:00:00.000000001"])
    assert list(id_texts(midnight)) == ["2024-01-03 00:00:00", "2024-01-04 00:00:00"]
    assert list(id_texts(mixed)) == ["2024-01-03 00:00:00", "2024-01-04 12:30:00.500000",
                                     None, "2024-01-05 00:00:00.000000001"]
    paris = mixed.tz_localize("Europe/Paris")
    assert list(id_texts(paris)) == ["2024-01-02 23:00:00+00:00",
                                     "2024-01-04 11:30:00.500000+00:00", None,
                                     "2024-01-04 23:00:00.000000001+00:00"]
    assert [id_text(v) for v in paris] == list(id_texts(paris))
    assert id_text(dt.date(2024, 1, 3)) == "2024-01-03"
    assert id_text(np.datetime64("2024-01-03T05:00")) == "2024-01-03 05:00:00"
    assert id_text("café".encode()) == "café"


def test_typed_labels_read_as_the_csvs(tmp_path):
    """Decimal ratings (1.50), bytes and 16-bit floats as labels: the CSV's labels."""
    columns = base()
    halves = {v: decimal.Decimal(v) / 2 + decimal.Decimal("0.00") for v in range(1, 6)}
    cases = {"decimal": (pa.decimal128(6, 2), halves, {d: str(d) for d in halves.values()}),
             "float16": (pa.float16(), {v: np.float16(v / 2) for v in range(1, 6)},
                         {np.float16(v / 2): repr(v / 2) for v in range(1, 6)}),
             "binary": (pa.binary(), {v: str(v).encode() for v in range(1, 6)},
                        {str(v).encode(): str(v) for v in range(1, 6)})}
    for name, (dtype, typed, text) in cases.items():
        values = with_column(C.LABEL, typed)
        parquet = write_parquet(tmp_path / f"{name}.parquet", {**columns, C.LABEL: values},
                                {C.LABEL: dtype})
        csv = write_csv(tmp_path / f"{name}.csv",
                        {**columns, C.LABEL: [text[v] for v in values]})
        assert rows(quiet_load(parquet)) == rows(quiet_load(csv)), name
        assert not result_differences(audited(csv), audited(parquet)), name


def test_typed_columns_give_the_csvs_results(tmp_path):
    """Every role typed at once (a timestamp item, binary annotators, date pools, decimal
    models): results.json is the CSV's."""
    columns, text = base(), base()
    for name, column, dtype, typed, texts in (TYPED[0], TYPED[4], TYPED[3], TYPED[6]):
        columns[column] = with_column(column, typed)
        text[column] = [texts[v] for v in columns[column]]
    types = {C.ITEM: TYPED[0][2], C.ANNOTATOR: TYPED[4][2], C.POOL: TYPED[3][2],
             C.MODEL: TYPED[6][2]}
    parquet = write_parquet(tmp_path / "t.parquet", columns, types)
    csv = write_csv(tmp_path / "t.csv", text)
    found = result_differences(audited(csv), audited(parquet))
    assert not found, found[:5]


# -- the contract that held before: kept ------------------------------------------------------
def test_dictionaries_row_groups_nulls_and_empty_files_read_as_the_csvs(tmp_path):
    """What pandas writes for categoricals (a dictionary with unused entries and nulls, a new
    dictionary in each row group), nullable integers, null-typed columns and a file of no
    rows: the CSV's table, or the CSV's refusal."""
    columns = base()
    n = len(columns[C.ITEM])
    words = sorted(set(columns[C.ANNOTATOR])) + ["zz-unused", "aa-unused"]
    codes = [words.index(a) for a in columns[C.ANNOTATOR]]
    unused = pa.DictionaryArray.from_arrays(pa.array(codes, pa.int8()), pa.array(words))
    chunks = [pa.DictionaryArray.from_arrays(
        pa.array([sorted(set(part), reverse=bool(k % 2)).index(v) for v in part], pa.int8()),
        pa.array(sorted(set(part), reverse=bool(k % 2)) + [f"unused{k}"]))
        for k, part in enumerate(columns[C.ITEM][i:i + 5] for i in range(0, n, 5))]
    table = pa.table({**columns, C.ANNOTATOR: unused, C.ITEM: pa.chunked_array(chunks),
                      "notes": pa.nulls(n)})
    pq.write_table(table, tmp_path / "dict.parquet", row_group_size=5)
    csv = write_csv(tmp_path / "dict.csv", {**columns, "notes": [None] * n})
    assert rows(quiet_load(tmp_path / "dict.parquet")) == rows(quiet_load(csv))

    frame = pd.DataFrame(columns)
    frame[C.POOL] = pd.Categorical(frame[C.POOL], categories=["p0", "p1", "never"])
    frame[C.ITEM] = pd.array([int(i[1:]) for i in columns[C.ITEM]], dtype="Int64")
    frame.to_parquet(tmp_path / "pandas.parquet")
    csv = write_csv(tmp_path / "pandas.csv",
                    {**columns, C.ITEM: [i[1:] for i in columns[C.ITEM]]})
    assert rows(quiet_load(tmp_path / "pandas.parquet")) == rows(quiet_load(csv))

    frame.loc[5, C.ITEM] = pd.NA
    frame.to_parquet(tmp_path / "null.parquet")
    code, out = invoke("validate", tmp_path / "null.parquet")
    assert code == 2 and "column 'item': not null failed" in out and "source row 5" in out, out

    write_parquet(tmp_path / "empty.parquet", {c: v[:0] for c, v in columns.items()})
    code, out = invoke("validate", tmp_path / "empty.parquet")
    assert code == 2 and "the table is empty" in one_error_line(out)


# -- values without a text: exit 2 naming the place --------------------------------------------
REFUSED = [
    ("list-item", C.ITEM, pa.list_(pa.string()), lambda v: [v], "source row 0",
     "ids must be single values", "list"),
    ("struct-annotator", C.ANNOTATOR, pa.struct([("id", pa.string())]), lambda v: {"id": v},
     "source row 0", "ids must be single values", "mapping (a struct)"),
    ("list-model", C.MODEL, pa.list_(pa.string()), lambda v: [v], "source row 0",
     "ids must be single values", "list"),
    ("bytes-pool", C.POOL, pa.binary(), lambda v: b"\xff" + v.encode(), "source row 0",
     "bytes that are not UTF-8 text", "b'\\xffp0'"),
    ("bytes-item", C.ITEM, pa.binary(), lambda v: b"\xfe" + v.encode(), "source row 0",
     "bytes that are not UTF-8 text", "b'\\xfei0'"),
    ("bytes-label", C.LABEL, pa.binary(), lambda v: b"\xc3" + str(v).encode(), "source row 0",
     "bytes that are not UTF-8 text", "b'\\xc31'"),
]


@pytest.mark.parametrize("name, column, dtype, make, where, words, shown", REFUSED,
                         ids=[r[0] for r in REFUSED])
def test_a_value_without_text_is_exit_2_naming_file_column_and_row(tmp_path, name, column,
                                                                    dtype, make, where, words,
                                                                    shown):
    """Before: a list or a struct id was read as its Python text (``['i0']``), ids no other
    file holds and Spark wrote otherwise (``[i0]``); bytes that are not UTF-8 were ids like
    ``b'\\xffp0'``, or exit 3 as an item."""
    columns = base()
    path = write_parquet(tmp_path / f"{name}.parquet",
                         {**columns, column: [make(v) for v in columns[column]]},
                         {column: dtype})
    for command in ("validate", "run"):
        extra = ("--bootstrap", "50", "--no-report") if command == "run" else ()
        code, out = invoke(command, path, *extra)
        line = one_error_line(out)
        assert code == 2, out
        assert str(path) in line and f"column {column!r}" in line and where in line, line
        assert words in line and shown in line, line


def test_a_pairwise_table_is_refused_before_its_model_names_are_read(tmp_path):
    """Labels naming the winning model are read against model_a / model_b before validation:
    bytes that are not UTF-8 there were exit 3 (UnicodeDecodeError), and a list as the winner
    was refused without naming the file."""
    n = 12
    common = {C.ITEM: [f"i{k // 3}" for k in range(n)],
              C.ANNOTATOR: [f"a{k % 3}" for k in range(n)], C.MODEL_A: ["x"] * n}
    binary = write_parquet(tmp_path / "bytes.parquet",
                           {**common, C.MODEL_B: [b"\xffy"] * n, C.LABEL: ["x", "y", "x"] * 4},
                           {C.MODEL_B: pa.binary()})
    line = one_error_line(invoke("validate", binary)[1])
    assert f"{binary}, column 'model_b', source row 0: bytes that are not UTF-8 text" in line
    winner = write_parquet(tmp_path / "winner.parquet",
                           {**common, C.MODEL_B: ["y"] * n, "winner": [["x"]] * n},
                           {"winner": pa.list_(pa.string())})
    line = one_error_line(invoke("validate", winner)[1])
    assert (f"{winner}, column 'label', source row 0: labels must be single values (text, a "
            "number, a boolean or a date); this one is a list") in line


def test_bytes_that_are_not_utf8_in_a_text_column_are_exit_2_as_on_spark(tmp_path):
    """An extra column (``text``) of binary values: UTF-8 ones read as their text, others
    were written ``b'\\xfe...'`` into the items and the report, exit 0, where Spark refuses
    them; a list there (a conversation's turns) is still read."""
    columns = base()
    texts = [f"{i} said" for i in columns[C.ITEM]]
    good = write_parquet(tmp_path / "good.parquet",
                         {**columns, C.TEXT: [t.encode() for t in texts]}, {C.TEXT: pa.binary()})
    assert set(quiet_load(good).frame[C.TEXT].astype(str)) == set(texts)
    bad = write_parquet(tmp_path / "bad.parquet",
                        {**columns, C.TEXT: [b"\xfe" + t.encode() for t in texts]},
                        {C.TEXT: pa.binary()})
    line = one_error_line(invoke("validate", bad)[1])
    assert (f"{bad}, column 'text', source row 0: bytes that are not UTF-8 text "
            "(b'\\xfei0 said')") in line
    turns = write_parquet(tmp_path / "turns.parquet", {**columns, C.TEXT: [[t] for t in texts]},
                          {C.TEXT: pa.list_(pa.string())})
    assert invoke("validate", turns)[0] == 0


def test_a_list_in_one_json_lines_record_is_exit_2_naming_its_line(tmp_path):
    records = [{c: v[k] for c, v in base().items()} for k in range(24)]
    records[4][C.ITEM] = [records[4][C.ITEM]]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    line = one_error_line(invoke("validate", path)[1])
    assert f"{path}, column 'item', line 5: ids must be single values" in line
    assert "this one is a list of type list: ['i1']" in line


# -- Feather / Arrow IPC ---------------------------------------------------------------------
def test_feather_and_arrow_ipc_files_read_as_parquet(tmp_path):
    """Before, a ``.feather`` or ``.arrow`` file was read as text: exit 2, "not UTF-8 text:
    NUL bytes in the first line"."""
    parquet, csv = typed_source(tmp_path, "t", *TYPED[0][1:])
    table = pq.read_table(parquet)
    feather.write_feather(table, tmp_path / "t.feather")
    with ipc.new_file(tmp_path / "t.arrow", table.schema) as writer:
        writer.write_table(table)
    with ipc.new_stream(tmp_path / "t.arrows", table.schema) as writer:  # datasets' cache
        writer.write_table(table)
    expected = rows(quiet_load(csv))
    results = audited(parquet)
    for name in ("t.feather", "t.arrow", "t.arrows"):
        assert rows(quiet_load(tmp_path / name)) == expected, name
        assert not result_differences(results, audited(tmp_path / name)), name
        assert invoke("validate", tmp_path / name)[0] == 0

    feather.write_feather(pa.table({"question": ["q"], "worker": ["w"]}), tmp_path / "x.feather")
    line = one_error_line(invoke("validate", tmp_path / "x.feather")[1])
    assert "cannot detect the format" in line and "(columns: 'question', 'worker')" in line
    (tmp_path / "junk.feather").write_text("item,annotator,label\n", encoding="utf-8")
    line = one_error_line(invoke("validate", tmp_path / "junk.feather")[1])
    assert f"{tmp_path / 'junk.feather'}: cannot read as Arrow IPC (Feather)" in line


# -- datasets ----------------------------------------------------------------------------------
def test_classlabel_columns_read_as_their_names(tmp_path):
    """A ``datasets`` ClassLabel holds each label's position among its names: the labels were
    0..4 where the dataset (and a CSV export of it) shows ``bad`` .. ``great``; ``-1`` is its
    "no label", now a missing label."""
    datasets = pytest.importorskip("datasets")
    columns = base()
    names = ["bad", "poor", "fair", "good", "great"]
    features = datasets.Features({c: datasets.Value("string") for c in columns if c != C.LABEL})
    features[C.LABEL] = datasets.ClassLabel(names=names)
    features[C.ANNOTATOR] = datasets.Value("binary")
    data = {**columns, C.LABEL: [v - 1 for v in columns[C.LABEL]],
            C.ANNOTATOR: [a.encode() for a in columns[C.ANNOTATOR]]}
    dataset = datasets.Dataset.from_dict(data, features=features)
    dataset.save_to_disk(str(tmp_path / "ds"))
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"label: {{kind: ordinal, order: {names}}}\n", encoding="utf-8")
    csv = write_csv(tmp_path / "t.csv", {**columns,
                                         C.LABEL: [names[v - 1] for v in columns[C.LABEL]]})
    expected = rows(quiet_load(csv, spec=str(spec)))
    assert rows(quiet_load(tmp_path / "ds", spec=str(spec))) == expected
    assert rows(quiet_load(dataset, spec=str(spec))) == expected

    data[C.LABEL][3] = -1
    datasets.Dataset.from_dict(data, features=features).save_to_disk(str(tmp_path / "ds2"))
    code, out = invoke("validate", tmp_path / "ds2", "--spec", spec)
    assert code == 2 and "column 'label': not null failed" in out and "train/3" in out, out


def test_an_ordinal_classlabel_without_order_is_offered_its_own_order(tmp_path):
    """``label: {kind: ordinal}`` without an order on a ClassLabel column listed the names
    alphabetically (``bad, fair, good, great, poor``); the refusal now offers the ClassLabel's
    own order, and the line that declares it, which then reads (on disk and in memory)."""
    datasets = pytest.importorskip("datasets")
    columns = base()
    names = ["bad", "poor", "fair", "good", "great"]
    features = datasets.Features({c: datasets.Value("string") for c in columns if c != C.LABEL})
    features[C.LABEL] = datasets.ClassLabel(names=names)
    data = {**columns, C.LABEL: [v - 1 for v in columns[C.LABEL]]}
    dataset = datasets.Dataset.from_dict(data, features=features)
    dataset.save_to_disk(str(tmp_path / "ds"))
    spec = tmp_path / "spec.yaml"
    spec.write_text("label: {kind: ordinal}\n", encoding="utf-8")
    code, out = invoke("validate", tmp_path / "ds", "--spec", spec)
    line = one_error_line(out)
    assert code == 2 and "column 'label'" in line, out
    offered = 'order: ["bad", "poor", "fair", "good", "great"]}'
    assert line.endswith(offered), line
    spec.write_text("label: {kind: ordinal, " + offered + "\n", encoding="utf-8")
    for source in (tmp_path / "ds", dataset):
        table = quiet_load(source, spec=str(spec))
        assert list(table.scale.values) == names


# -- Spark ---------------------------------------------------------------------------------
def spark_run(path, *options) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = run(str(path), n_bootstrap=50, seed=3, report=False, engine="spark",
                      **dict(options))
    return results


@pytest.mark.spark
def test_typed_columns_read_alike_on_both_engines(spark, tmp_path):
    """Timestamps (UTC with fractions; naive), dates, binary ids, decimal, uint64 past 2**63
    and large_string ids, a dictionary model column: one table and one results.json on both
    engines. Before, Spark wrote a timestamp in the session's time zone without its offset
    (``2024-01-02 12:30:00.5``), another id than the pandas engine's."""
    from audit.results import jsonable

    from tests.test_spark import assert_same_results

    first, second = base(), base()
    first[C.ITEM] = with_column(C.ITEM, dict(zip(ITEMS, STAMPS)))
    first[C.ANNOTATOR] = with_column(C.ANNOTATOR, {a: f"00{a}é".encode() for a in ANNOTATORS})
    first[C.POOL] = with_column(C.POOL, {"p0": dt.date(2024, 2, 29), "p1": dt.date(1999, 1, 1)})
    first[C.MODEL] = [f"0{m}" for m in first[C.MODEL]]
    first[C.LABEL] = [decimal.Decimal(v) / 2 for v in first[C.LABEL]]
    types_first = {C.ITEM: pa.timestamp("us", tz="UTC"), C.ANNOTATOR: pa.binary(),
                   C.POOL: pa.date32(), C.MODEL: pa.dictionary(pa.int8(), pa.string()),
                   C.LABEL: pa.decimal128(6, 2)}
    second[C.ITEM] = with_column(C.ITEM, {f"i{i}": 2**63 + i for i in range(6)})
    second[C.ANNOTATOR] = with_column(C.ANNOTATOR, dict(zip(ANNOTATORS, NAIVE)))
    second[C.POOL] = with_column(C.POOL, {"p0": "001", "p1": "1"})
    types_second = {C.ITEM: pa.uint64(), C.ANNOTATOR: pa.timestamp("us"),
                    C.POOL: pa.large_string(), C.LABEL: pa.int8()}
    for name, columns, types in (("first", first, types_first),
                                 ("second", second, types_second)):
        path = write_parquet(tmp_path / f"{name}.parquet", columns, types)
        pandas_table, spark_table = quiet_load(path), quiet_load(path, engine="spark")
        assert rows(spark_table) == rows(pandas_table), name
        results = {}
        for engine in ("pandas", "spark"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                results[engine] = jsonable(run(str(path), n_bootstrap=50, seed=3,
                                               report=False, engine=engine))
        assert_same_results(results["pandas"], results["spark"])
    texts = {r[0] for r in rows(quiet_load(tmp_path / "first.parquet", engine="spark"))}
    assert texts == set(STAMP_TEXTS)
    texts = {r[1] for r in rows(quiet_load(tmp_path / "second.parquet", engine="spark"))}
    assert texts == set(NAIVE_TEXTS[:4])


@pytest.mark.spark
def test_a_value_without_text_is_exit_2_on_spark(spark, tmp_path):
    """Before: a list column was read as ids such as ``[i0]``, bytes that are not UTF-8 as
    U+FFFD or exit 3, and a JSON array in one record's label as the label ``[4]``."""
    columns = base()
    lists = write_parquet(tmp_path / "lists.parquet",
                          {**columns, C.ITEM: [[v] for v in columns[C.ITEM]]},
                          {C.ITEM: pa.list_(pa.string())})
    line = one_error_line(invoke("validate", lists, "--engine", "spark")[1])
    assert (f"{lists}, column 'item': ids must be single values (text, a number, a boolean "
            "or a date); the column holds a list of type array<string> in every row") in line
    binary = write_parquet(tmp_path / "bytes.parquet",
                           {**columns, C.ANNOTATOR: [b"\xff" + a.encode()
                                                     for a in columns[C.ANNOTATOR]]},
                           {C.ANNOTATOR: pa.binary()})
    code, out = invoke("validate", binary, "--engine", "spark")
    line = one_error_line(out)
    assert code == 2 and f"{binary}, column 'annotator', file " in line, line
    assert "item 'i0', annotator '\ufffda0'" in line
    assert "bytes that are not UTF-8 text (b'\\xffa0')" in line
    records = [{c: v[k] for c, v in columns.items()} for k in range(24)]
    records[4][C.LABEL] = [records[4][C.LABEL]]
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    spec = tmp_path / "spec.yaml"
    spec.write_text("label: {kind: nominal}\n", encoding="utf-8")
    code, out = invoke("validate", jsonl, "--spec", spec, "--engine", "spark")
    line = one_error_line(out)
    assert code == 2 and "column 'label', file " in line and "item 'i1', annotator 'a0'" in line
    assert "labels must be single values" in line and "this one is a list (an array): [4]" \
        in line


@pytest.mark.spark
def test_what_spark_does_not_read_is_one_exit_2_line_naming_the_column(spark, tmp_path):
    """16-bit floats, nanosecond timestamps (``DataFrame.to_parquet`` of a datetime column)
    and times of day were "Spark cannot read it: [PARQUET_TYPE_ILLEGAL] Illegal Parquet type:
    INT64 (TIMESTAMP(NANOS,false))", which names no column; a Feather file, a ``datasets``
    folder (read before as JSON: "not UTF-8 text: NUL bytes") are the pandas engine's."""
    columns = base()
    half = write_parquet(tmp_path / "half.parquet",
                         {**columns, C.LABEL: [np.float16(v) for v in columns[C.LABEL]]},
                         {C.LABEL: pa.float16()})
    frame = pd.DataFrame(columns)
    frame[C.ITEM] = (pd.to_datetime([dt.datetime(2024, 1, int(i[1:]) + 1, 9)
                                     for i in frame[C.ITEM]]) + pd.Timedelta(1, "ns"))
    frame.to_parquet(tmp_path / "nanos.parquet")
    clock = write_parquet(tmp_path / "clock.parquet",
                          {**columns, C.ITEM: [dt.time(9, int(i[1:])) for i in columns[C.ITEM]]},
                          {C.ITEM: pa.time64("us")})
    for path, column, words in ((half, "label", "16-bit floats (float16)"),
                                (tmp_path / "nanos.parquet", "item",
                                 "timestamps in nanoseconds"),
                                (clock, "item", "times of day (time64[us])")):
        code, out = invoke("validate", path, "--engine", "spark")
        line = one_error_line(out)
        assert code == 2 and f"{path}, column {column!r}: Spark cannot read it: it holds " \
            f"{words}" in line, line
        assert invoke("validate", path)[0] == 0  # the pandas engine reads them
    feather.write_feather(pq.read_table(half), tmp_path / "t.feather")
    line = one_error_line(invoke("validate", tmp_path / "t.feather", "--engine", "spark")[1])
    assert "Spark does not read Arrow IPC (Feather) files; the pandas engine does" in line
    datasets = pytest.importorskip("datasets")
    datasets.Dataset.from_dict({c: list(map(str, v)) for c, v in columns.items()}
                               ).save_to_disk(str(tmp_path / "ds"))
    line = one_error_line(invoke("validate", tmp_path / "ds", "--engine", "spark")[1])
    assert "a datasets save_to_disk folder (Arrow IPC files) is read by the pandas engine" \
        in line


@pytest.mark.spark
def test_a_label_null_in_every_row_is_not_null_failures_on_spark(spark, tmp_path):
    """A null-typed label column (all null), or a CSV's empty one: Spark said "the table is
    empty: no judgments to audit" of 24 judgments; both engines list not-null failures."""
    columns = base()
    n = len(columns[C.ITEM])
    parquet = tmp_path / "t.parquet"
    pq.write_table(pa.table({**columns, C.LABEL: pa.nulls(n)}), parquet)
    csv = write_csv(tmp_path / "t.csv", {**columns, C.LABEL: [None] * n})
    for path in (parquet, csv):
        for engine in ("pandas", "spark"):
            code, out = invoke("validate", path, "--engine", engine)
            assert code == 2 and "column 'label': not null failed" in out, (engine, out)
            assert "the table is empty" not in out
