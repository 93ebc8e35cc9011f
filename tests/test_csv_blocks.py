"""Reading a CSV in blocks: the table is the one a single block gives, whatever line breaks
quoted values hold and wherever blocks end; and the categorical frame is the one pandas makes of
the text. A value holding a carriage return may have been cut by pyarrow at a block end
(:func:`test_a_carriage_return_cut_at_a_block_end_is_read_again`): such a file is read again
as one block.

pyarrow finds block ends following the quotes (``newlines_in_values``); ending them at any line
break would be faster, but pyarrow then drops or splits a quoted value cut by a block end
without an error (:func:`test_blocks_ending_at_any_line_break_lose_values`), which is why the
reader does not. The reference is pyarrow's read of the whole file as one block; the categorical
frame is compared with ``pd.Categorical`` of the plain text (categories, codes and the codes'
integer width).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow.csv as pcsv
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.ingest.readers import tables
from audit.ingest.readers.tables import read_csv

HEADER = ("item", "annotator", "label")
CELLS = ["7", "007", "", "NA", "a,b", 'say "hi"', "line\nbreak", "cr\r\nlf", "lone\rcr", "é",
         "模型", "x" * 40]
cell = st.one_of(st.sampled_from(CELLS),
                 st.text(st.characters(blacklist_categories=("Cs",),
                                       blacklist_characters="\x00"), max_size=8))


def _field(value: str) -> str:
    if any(ch in value for ch in (",", '"', "\n", "\r")):
        return '"' + value.replace('"', '""') + '"'
    return value


def _write(path, rows, *, end="\n") -> None:
    text = "".join(",".join(_field(v) for v in row) + end for row in [list(HEADER), *rows])
    path.write_bytes(text.encode("utf-8"))


def _reference(path, names=HEADER) -> list[list]:
    """The quote-following read of ``path``: every cell as text, empty cells missing."""
    table = pcsv.read_csv(path, parse_options=pcsv.ParseOptions(newlines_in_values=True),
                          convert_options=pcsv.ConvertOptions(
                              column_types={n: "string" for n in names}, null_values=[""],
                              strings_can_be_null=True, quoted_strings_can_be_null=True))
    return [table.column(n).to_pylist() for n in names]


def _cells(frame: pd.DataFrame) -> list[list]:
    return [[None if pd.isna(v) else str(v) for v in frame[c].tolist()] for c in frame.columns]


def _check_categorical(frame: pd.DataFrame) -> None:
    """Each column is the categorical pandas makes of its text: sorted categories, the same
    codes, in the integer width pandas picks."""
    for c in frame.columns:
        ours = frame[c].array
        theirs = pd.Categorical(frame[c].astype(object).where(frame[c].notna(), None))
        assert list(ours.categories) == sorted(ours.categories)
        assert list(ours.categories) == list(theirs.categories)
        assert ours.codes.dtype == theirs.codes.dtype
        np.testing.assert_array_equal(ours.codes, theirs.codes)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.data_too_large,
                                                                  HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.lists(cell, min_size=3, max_size=3), min_size=1, max_size=120),
       block=st.integers(64, 600), crlf=st.booleans())
def test_small_blocks_read_what_one_block_reads(tmp_path, monkeypatch, rows, block, crlf):
    """Blocks of a few rows, so that many block ends fall next to quoted line breaks."""
    monkeypatch.setattr(tables, "_BLOCK_BYTES", block)
    path = tmp_path / "judgments.csv"
    _write(path, rows, end="\r\n" if crlf else "\n")
    expected = _reference(path)
    coded = read_csv(path, categorical=True)
    plain = read_csv(path, categorical=False)
    assert _cells(coded) == _cells(plain) == expected
    if isinstance(coded["item"].dtype, pd.CategoricalDtype):  # else a row longer than a
        _check_categorical(coded)  # block, which pyarrow refuses: pandas' text columns


def test_a_carriage_return_cut_at_a_block_end_is_read_again(tmp_path, monkeypatch):
    """pyarrow 25 reads a quoted ``\r\n`` whose ``\r`` ends a block as ``\r`` alone,
    without an error; a file with a carriage return in a value is read again as one block,
    or by pandas when it is too large for one."""
    path = tmp_path / "cr.csv"
    head = b"a,b\n" + b"x,y\n" * 12
    path.write_bytes(head + b'p,"cr\r\nlf"\n' + b"x,y\n" * 3)
    block = len(head) + len(b'p,"cr\r')
    cut = pcsv.read_csv(path, parse_options=pcsv.ParseOptions(newlines_in_values=True),
                        read_options=pcsv.ReadOptions(block_size=block))
    assert "cr\rlf" in cut.column("b").to_pylist()  # the reason for the check
    monkeypatch.setattr(tables, "_BLOCK_BYTES", block)
    for categorical in (True, False):
        frame = read_csv(path, categorical=categorical)
        assert frame["b"].tolist()[12] == "cr\r\nlf"
        assert isinstance(frame["b"].dtype, pd.CategoricalDtype) is categorical
    monkeypatch.setattr(tables, "_MAX_BLOCK_BYTES", block)  # too large for one block
    frame = read_csv(path, categorical=True)
    assert frame["b"].tolist()[12] == "cr\r\nlf"
    assert not isinstance(frame["b"].dtype, pd.CategoricalDtype)  # pandas' text columns


def test_blocks_ending_at_any_line_break_lose_values(tmp_path):
    """Why the reader follows the quotes: ending blocks at any line break (pyarrow's
    ``newlines_in_values=False``) reads this file's first value as ``break"``, without an
    error. Should a pyarrow release read it right, the faster way could be reconsidered."""
    path = tmp_path / "cut.csv"
    path.write_bytes(b'item,annotator,label\n"line\nbreak",x,y\n')
    fast = pcsv.read_csv(path, parse_options=pcsv.ParseOptions(newlines_in_values=False),
                         read_options=pcsv.ReadOptions(block_size=30))
    assert fast.column("item").to_pylist() == ['break"']
    assert read_csv(path)["item"].tolist() == ["line\nbreak"]


@pytest.mark.parametrize("n_ids", [1, 126, 127, 128, 32_766, 32_767, 40_000])
def test_codes_in_the_width_pandas_gives(tmp_path, monkeypatch, n_ids):
    """Around the widths' limits (int8 below 127 categories, int16 below 32,767, then int32),
    with missing cells, over several blocks."""
    monkeypatch.setattr(tables, "_BLOCK_BYTES", 1 << 14)
    rng = np.random.default_rng(n_ids)
    ids = np.concatenate([np.arange(n_ids), rng.integers(0, n_ids, 2_000)])
    rows = [[f"i{v}", "" if k % 7 == 0 else f"a{v % 5}", "1"] for k, v in enumerate(ids)]
    path = tmp_path / "wide.csv"
    _write(path, rows)
    frame = read_csv(path, categorical=True)
    assert len(frame["item"].cat.categories) == n_ids
    assert frame["annotator"].isna().sum() == sum(1 for k in range(len(ids)) if k % 7 == 0)
    _check_categorical(frame)
