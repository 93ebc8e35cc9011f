"""Generic tables: a wide CSV mapped by a YAML spec, a long CSV needing none, pools, round trips."""

from __future__ import annotations

import csv
import shutil
from collections import defaultdict
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.contract import columns as C
from audit.errors import InputError, SchemaError
from audit.ingest import LoadWarning, detect_format, load
from audit.ingest.pools import read_pools
from audit.ingest.readers import read_table

TABLES = Path(__file__).resolve().parent / "fixtures" / "table"
WIDE, SPEC, LONG, POOLS = (TABLES / n for n in ("ratings_wide.csv", "ratings_wide.yaml",
                                                "long.csv", "pools.csv"))


def csv_rows(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def per_pool(judgments):
    stats = defaultdict(lambda: [set(), 0, set()])
    for (item, ann), (pool, _) in judgments.items():
        stats[pool][0].add(item)
        stats[pool][1] += 1
        stats[pool][2].add(ann)
    return {p: (len(s[0]), s[1], len(s[2])) for p, s in stats.items()}


def observed(table):
    f = table.frame
    got = {(i, a): (p, str(v)) for i, a, p, v in zip(
        f[C.ITEM].astype(str), f[C.ANNOTATOR].astype(str), f[C.POOL].astype(str), f[C.LABEL])}
    counts = {p: (v["n_items"], v["n_annotations"], v["n_annotators"])
              for p, v in table.summary()["pools"].items()}
    return got, counts


def test_wide_csv_via_spec():
    pools = {r["annotator"]: r["group"] for r in csv_rows(POOLS)}
    exp = {}
    for row in csv_rows(WIDE):
        for rater in ("r1", "r2", "r3"):
            if row[rater] != "":
                label = "1" if row[rater] == "bad" else row[rater]
                exp[(row["tweet_id"], rater)] = (pools[rater], label)
    table = load(WIDE, spec=SPEC)
    got, counts = observed(table)
    assert got == exp
    assert counts == per_pool(exp)
    assert table.name == "demo-ratings"
    assert table.scale.kind.value == "ordinal" and table.scale.values == (1, 2, 3, 4, 5)
    assert table.scale.display(5) == "great"
    assert table.is_rating
    f = table.frame
    assert set(f[C.MODEL].astype(str)) == {r["system"] for r in csv_rows(WIDE)}
    assert f.loc[f[C.ITEM] == "t003", C.TEXT].iloc[0] == 'Translate "good morning" into French'
    # the source row of each judgment is its 0-based data row
    assert f[(f[C.ITEM] == "t003") & (f[C.ANNOTATOR] == "r1")].index.tolist() == [2]


def test_long_csv_needs_no_spec():
    assert detect_format(LONG) == "table"
    exp = {(r["item"], r["annotator"]): (r["pool"], r["label"]) for r in csv_rows(LONG)}
    table = load(LONG)
    got, counts = observed(table)
    assert got == exp
    assert counts == per_pool(exp)
    assert table.scale.kind.value == "nominal"
    assert "NA" in table.scale.values          # "NA" is a label here, not a missing value
    assert set(table.frame[C.CATEGORY].astype(str)) == {"review", "news", "forum"}


def test_pools_file_overrides_the_pool_column():
    with pytest.warns(LoadWarning, match=r"4 annotator\(s\).*'unknown'"):
        table = load(LONG, pools=POOLS, pool_column="group")
    assert set(table.pools) == {"unknown"}        # long.csv's ids are not r1..r3
    mapping = {"ann_a": "g1", "ann_b": "g1", "ann_c": "g2", "ann_d": "g2"}
    got, _ = observed(load(LONG, pools=mapping))
    assert got == {(r["item"], r["annotator"]): (mapping[r["annotator"]], r["label"])
                   for r in csv_rows(LONG)}


def test_pool_column_of_the_data(tmp_path):
    src = tmp_path / "t.csv"
    src.write_text("item,annotator,label,team\n1,a,x,red\n1,b,y,blue\n2,a,x,red\n2,b,x,blue\n")
    table = load(src, pool_column="team")
    assert set(table.pools) == {"red", "blue"}
    with pytest.raises(InputError, match="'squad'"):
        load(src, pool_column="squad")


def test_pools_files():
    assert read_pools(POOLS, pool_column="group") == {"r1": "expert", "r2": "crowd", "r3": "crowd"}
    with pytest.raises(InputError, match=r"no column 'pool'.*'annotator', 'group'"):
        read_pools(POOLS)


def test_pools_json_forms(tmp_path):
    plain = tmp_path / "p.json"
    plain.write_text('{"a": "x", "b": "y"}')
    assert read_pools(plain) == {"a": "x", "b": "y"}
    meta = tmp_path / "m.json"
    meta.write_text('{"a": {"Team": "x", "Age": "3",}, "b": {"Team": "y", "Age": "4",},}')
    assert read_pools(meta, pool_column="Team") == {"a": "x", "b": "y"}
    with pytest.raises(InputError, match=r"needs --pool-column; fields: 'Age', 'Team'"):
        read_pools(meta)
    with pytest.raises(InputError, match=r"no field 'Tam'.*'Age', 'Team'"):
        read_pools(meta, pool_column="Tam")


def test_tsv_jsonl_parquet_give_the_same_table(tmp_path):
    frame = read_table(LONG)
    base = observed(load(LONG))
    tsv = tmp_path / "long.tsv"
    frame.to_csv(tsv, sep="\t", index=False)
    jsonl = tmp_path / "long.jsonl"
    frame.to_json(jsonl, orient="records", lines=True)
    pq = tmp_path / "long.parquet"
    frame.to_parquet(pq)
    for path in (tsv, jsonl, pq):
        assert detect_format(path) == "table"
        assert observed(load(path)) == base


def test_read_only_input_loads(tmp_path):
    src = tmp_path / "long.csv"
    shutil.copy(LONG, src)
    src.chmod(0o444)
    assert observed(load(src)) == observed(load(LONG))


# -- round trip ------------------------------------------------------------------------------------
# an id of whitespace only is a missing id (tests/test_blank_ids.py): ids hold something else
_text = st.text(st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\ufeff")
                | st.sampled_from(["\n", "\t", ",", '"', " "]), min_size=1,
                max_size=8).filter(str.strip)
_label = st.text("abcxyzABC", min_size=1, max_size=3)


@st.composite
def long_tables(draw):
    items = draw(st.lists(_text, min_size=1, max_size=5, unique=True))
    annotators = draw(st.lists(_text, min_size=1, max_size=4, unique=True))
    cells = draw(st.lists(st.tuples(st.sampled_from(items), st.sampled_from(annotators)),
                          min_size=1, max_size=15, unique=True))
    labels = draw(st.lists(_label, min_size=len(cells), max_size=len(cells)))
    return pd.DataFrame({C.ITEM: [c[0] for c in cells], C.ANNOTATOR: [c[1] for c in cells],
                         C.LABEL: labels})


@pytest.mark.filterwarnings("ignore::audit.errors.DegenerateDataWarning")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(frame=long_tables())
def test_long_csv_round_trips(tmp_path_factory, frame):
    path = tmp_path_factory.mktemp("rt") / "t.csv"
    frame.to_csv(path, index=False)
    back = read_table(path)
    pd.testing.assert_frame_equal(back, frame, check_dtype=False)
    table = load(path, format="table")
    f = table.frame
    got = pd.DataFrame({C.ITEM: f[C.ITEM].astype(str), C.ANNOTATOR: f[C.ANNOTATOR].astype(str),
                        C.LABEL: f[C.LABEL].astype(str)}).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, frame)
    assert f.index.tolist() == list(range(len(frame)))


# -- the CSV readers agree: pyarrow as text, pyarrow dictionary-encoded, pandas -------------------
_cell = st.none() | st.sampled_from(["007", "7", "NA", "null", "nan", "1,5", "1.000,5", " a ",
                                     "\u00e4", "a\u0308", "\U0001F600", '"q"', "x\ny", "\r", "#c"]) \
    | st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\ufeff\x00"),
              min_size=1, max_size=5)


def _as_lists(frame: pd.DataFrame) -> dict:
    return {c: [None if pd.isna(v) else v for v in frame[c].astype(object)] for c in frame}


@settings(max_examples=80, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.lists(_cell, min_size=3, max_size=3), min_size=1, max_size=20),
       sep=st.sampled_from([",", "\t", ";"]), quote_all=st.booleans())
def test_csv_readers_agree_cell_for_cell(tmp_path_factory, rows, sep, quote_all):
    """Dictionary-encoded reading (what the loader uses) gives the same text, cell for cell, as
    reading text and as pandas (the fallback); only empty cells are missing."""
    path = tmp_path_factory.mktemp("agree") / "t.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, delimiter=sep, lineterminator="\r\n",
                            quoting=csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL)
        writer.writerow(["item", "annotator", "label"])
        writer.writerows([["" if v is None else v for v in row] for row in rows])
    expected = {c: [row[i] for row in rows] for i, c in enumerate(["item", "annotator", "label"])}
    coded = read_table(path, sep=sep, categorical=True)
    assert all(isinstance(coded[c].dtype, pd.CategoricalDtype) for c in coded)
    assert _as_lists(coded) == expected
    assert _as_lists(read_table(path, sep=sep)) == expected
    assert _as_lists(read_table(path, sep=sep, skiprows=0)) == expected  # pandas-only option


def test_categorical_reading_keeps_na_values_and_header_only_files(tmp_path):
    src = tmp_path / "t.csv"
    src.write_text("item,annotator,label\n1,a,NA\n1,b,n/a\n2,a,\n")
    frame = read_table(src, categorical=True, na_values=["n/a"])
    assert _as_lists(frame) == {"item": ["1", "1", "2"], "annotator": ["a", "b", "a"],
                                "label": ["NA", None, None]}
    assert list(frame["label"].cat.codes) == [0, -1, -1]
    src.write_text("item,annotator,label\n")
    empty = read_table(src, categorical=True)
    assert list(empty.columns) == ["item", "annotator", "label"] and len(empty) == 0


def test_a_file_pyarrow_cannot_parse_is_read_by_pandas(tmp_path):
    """A short row (pyarrow refuses it) is read by pandas as missing cells: the loader names the
    row, as before the reader was dictionary-encoded."""
    src = tmp_path / "ragged.csv"
    src.write_text("item,annotator,label\n1,a,x\n1,b\n2,a,y\n2,b,x\n")
    frame = read_table(src, categorical=True)
    assert _as_lists(frame) == {"item": ["1", "1", "2", "2"], "annotator": ["a", "b", "a", "b"],
                                "label": ["x", None, "y", "x"]}
    with pytest.raises(SchemaError) as err:
        load(src)
    fails = err.value.failures
    assert fails[["column", "check", "index"]].values.tolist() == [["label", "not null", 1]]


@pytest.mark.filterwarnings("ignore::audit.ingest.common.LoadWarning")
def test_dictionary_encoded_load_gives_the_text_load(tmp_path):
    """The table loaded from a CSV equals the one loaded from the same text as a plain frame
    (every column an object column of strings), row order and categories included."""
    src = tmp_path / "t.csv"
    src.write_text("item,annotator,label,model_a,model_b\n"
                   "b,\u00e4,2,m2,m1\nb,a\u0308,-1,m2,m1\n10,\u00e4,0,m1,m3\n9,z,1,m3,m1\n"
                   "10,Z,-2,m1,m3\n09,z,1,m1,m2\n")
    from_csv = load(src)
    from_text = load(read_table(src), name="t")
    pd.testing.assert_frame_equal(from_csv.frame, from_text.frame)
    assert from_csv.summary() == from_text.summary()


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(st.characters(blacklist_categories=("Cs",),
                                      blacklist_characters="\ufeff\x00\r\n\",\t;"),
                        min_size=1, max_size=4), min_size=1, max_size=30))
def test_categorical_reading_sorts_categories_as_python_sorts_text(tmp_path_factory, ids):
    """The reader sorts each dictionary in UTF-8 byte order; that is code-point order, as
    Python's ``sorted`` (astral characters after U+FFFF, ``Z`` before ``a``, ``é`` after ``z``)."""
    path = tmp_path_factory.mktemp("sort") / "t.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows([["id"], *([i] for i in ids)])
    frame = read_table(path, categorical=True)
    assert list(frame["id"].cat.categories) == sorted(set(ids))
    assert list(frame["id"].astype(object)) == ids


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.lists(st.none() | st.sampled_from(["nan", "b", "a" * 5 + "x", "a" * 5 + "y", "a" * 5,
                                             "\u00e9", "z\x00", "z", "Z"]),
                min_size=1, max_size=30),
       st.sampled_from([None, 5, 200]), st.booleans())
def test_extra_columns_are_the_strings_as_written(values, chars, as_category):
    """An extra column (text cut to ``chars``) is ``pd.Categorical`` of its strings, whether it
    arrives as a categorical (the CSV reader) or as text; texts equal once cut are one category,
    a missing value stays missing (code -1) while the text ``nan`` is kept as written."""
    from audit.contract.table import extra_categorical

    column = pd.Series(values, dtype=object)
    if as_category:  # as the Arrow reader builds it (pandas' astype would merge "z" and "z\0")
        seen = sorted({v for v in values if v is not None})
        column = pd.Series(pd.Categorical.from_codes(
            [-1 if v is None else seen.index(v) for v in values],
            categories=pd.Index(seen, dtype=object)))
    # the reference, value by value in plain Python: str(), cut, None kept apart
    texts = [None if v is None else (str(v) if chars is None else str(v)[:chars])
             for v in values]
    categories = sorted({t for t in texts if t is not None})
    got = extra_categorical(column, chars=chars)
    assert list(got.categories) == categories
    assert list(got.codes) == [-1 if t is None else categories.index(t) for t in texts]
