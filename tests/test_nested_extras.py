"""A list or mapping in an extra column (``text``, ``category``, ``turn``): compact JSON with
sorted keys, the same on both engines (:func:`audit.contract.ids.nested_text`,
:func:`audit.ingest.spark.typed.extra_text`).

Before, a Parquet list reached the outputs as numpy's text of an array (``['p' 'q']``, and
``[0 1 2 ... 1197 1198 1199]`` past 1,000 elements: values nobody wrote), a struct as a
Python dict's ``repr``, and Spark wrote ``[p, q]`` and ``{1}`` (the field names lost), so the
same file gave two different texts. The expected texts are written out by hand.
"""

from __future__ import annotations

import json
import warnings

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.contract import columns as C
from audit.contract.ids import nested_text
from audit.ingest import load

TURNS = pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))
TURN_ROWS = [{"role": "user", "content": 'héllo "q"'}, {"role": "assistant", "content": None}]
TURN_TEXT = '[{"content":"héllo \\"q\\"","role":"user"},{"content":null,"role":"assistant"}]'


def write(path) -> None:
    """Four judgments of two items: ``text`` a list of turns (struct fields in the order
    role, content; a null inside), ``category`` a map with keys out of order, and ``turn`` a
    list of 1,200 integers in every row (numpy elides arrays past 1,000 elements)."""
    pq.write_table(pa.table({
        C.ITEM: ["i1", "i1", "i2", "i2"], C.ANNOTATOR: ["a", "b", "a", "b"],
        C.LABEL: ["x", "y", "x", "x"],
        C.TEXT: pa.array([TURN_ROWS, TURN_ROWS, [], []], TURNS),
        C.CATEGORY: pa.array([[("z", 1.5), ("a", 2.0)]] * 2 + [None] * 2,
                             pa.map_(pa.string(), pa.float64())),
        C.TURN: pa.array([list(range(1200))] * 4, pa.list_(pa.int64())),
    }), path)


def write_jsonl(path) -> None:
    """The same shape as JSON Lines records, keys in the file's own (unsorted) order."""
    with open(path, "w", encoding="utf-8") as f:
        for item, annotator, label in (("i1", "a", "x"), ("i1", "b", "y"), ("i2", "a", "x"),
                                       ("i2", "b", "x")):
            f.write(json.dumps({C.ITEM: item, C.ANNOTATOR: annotator, C.LABEL: label,
                                C.TEXT: [{"role": "user", "content": "hé"}],
                                C.CATEGORY: {"z": 1, "a": None}}, ensure_ascii=False) + "\n")


def extras(path, **options) -> list[tuple]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = load(str(path), **options).frame
    present = [c for c in (C.ITEM, C.ANNOTATOR, *C.EXTRAS) if c in frame.columns]
    return sorted(tuple(None if v != v or v is None else str(v) for v in row)
                  for row in frame[present].itertuples(index=False))


def test_lists_structs_and_maps_read_as_compact_json_with_sorted_keys(tmp_path):
    write(tmp_path / "t.parquet")
    rows = extras(tmp_path / "t.parquet")
    numbers = "[" + ",".join(map(str, range(1200))) + "]"
    assert rows[0] == ("i1", "a", '{"a":2.0,"z":1.5}', numbers, TURN_TEXT[:C.EXCERPT_CHARS])
    assert rows[2] == ("i2", "a", None, numbers, "[]")
    assert "..." not in rows[0][3]


def test_json_lines_records_read_alike_whatever_their_key_order(tmp_path):
    write_jsonl(tmp_path / "t.jsonl")
    rows = extras(tmp_path / "t.jsonl")
    assert rows[0] == ("i1", "a", '{"a":null,"z":1}', '[{"content":"hé","role":"user"}]')


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2**62, 2**62) | st.text(max_size=5)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=4), children, max_size=4),
    max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(st.lists(JSON_VALUES, max_size=4) | st.dictionaries(st.text(max_size=4), JSON_VALUES,
                                                            max_size=4))
def test_nested_text_is_the_value_as_sorted_compact_json(value):
    """Any JSON array or object is written as ``json.dumps`` writes it with sorted keys and no
    spaces, and reads back as itself."""
    text = nested_text(value)
    assert text == json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert json.loads(text) == value


def test_numpy_arrays_and_parquet_maps_are_plain_json():
    import numpy as np

    assert nested_text(np.array(["p", "q"], dtype=object)) == '["p","q"]'
    assert nested_text(np.array([1, 2], dtype=np.int64)) == "[1,2]"
    assert nested_text([("b", np.array([1])), ("a", None)]) == '{"a":null,"b":[1]}'


@pytest.mark.spark
def test_both_engines_write_the_same_text(spark, tmp_path):
    write(tmp_path / "t.parquet")
    write_jsonl(tmp_path / "t.jsonl")
    for name in ("t.parquet", "t.jsonl"):
        assert extras(tmp_path / name, engine="spark") == extras(tmp_path / name), name
