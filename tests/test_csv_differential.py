"""The dictionary-encoded CSV read (issue 17: pyarrow, ids as categoricals) reads exactly what the
plain text read and pandas' own reader read, on files written the way users write them.

Three readers of one file must agree cell for cell: ``read_csv(categorical=True)`` (what the
loader uses), ``read_csv(categorical=False)`` (pyarrow, plain strings) and ``pandas.read_csv``
with every column as text and only empty cells missing (the documented rule). Hypothesis writes
the files: quoted fields holding the separator, quotes and newlines, CRLF line ends, a UTF-8
byte-order mark, leading zeros, spreadsheet numbers (``1,5``, ``1.000,5``, `` 2 ``), ``NA`` /
``null`` / ``None`` (labels, not missing), empty cells (missing), Unicode and control
characters; and enough rows that pyarrow reads them in several blocks.
"""

from __future__ import annotations

import io

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.ingest.readers.tables import read_csv

MESSY = ["007", "7", "0", "00", "1,5", "1.000,5", " 2 ", "+1", "1e0", "NA", "null", "None", "nan",
         "TRUE", "", "A", "tie", "B", "é", "模型", "😀", 'say "hi"', "a,b", "line\nbreak",
         "cr\r\nlf", "tab\there", "=1+1", "  ", "-0"]

cell = st.one_of(st.sampled_from(MESSY),
                 st.text(st.characters(blacklist_categories=("Cs",),
                                       blacklist_characters="\x00"), max_size=6))


def _field(value: str, sep: str) -> str:
    """One field as RFC 4180 writes it: quoted (quotes doubled) when it holds the separator, a
    quote, a line feed or a carriage return. Python's ``csv`` writer quotes a carriage return
    only when its line terminator holds one, so with ``\n`` line ends it leaves a bare ``\r``
    in an unquoted field, which every reader takes for a line break (pandas' C reader then
    shifts the fields of the row): an ambiguous file, not the one the rows describe."""
    if any(ch in value for ch in (sep, '"', "\n", "\r")):
        return '"' + value.replace('"', '""') + '"'
    return value


def _write(rows: list[list[str]], header: list[str], *, crlf: bool, bom: bool, sep: str) -> bytes:
    end = "\r\n" if crlf else "\n"
    text = "".join(sep.join(_field(v, sep) for v in row) + end for row in [header, *rows])
    data = text.encode("utf-8")
    return (b"\xef\xbb\xbf" + data) if bom else data


def _as_text(frame: pd.DataFrame) -> list[list]:
    """Cells as Python strings, missing as None, column by column."""
    return [[None if pd.isna(v) else str(v) for v in frame[c].tolist()] for c in frame.columns]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.data_too_large])
@given(rows=st.lists(st.lists(cell, min_size=3, max_size=3), min_size=1, max_size=40),
       crlf=st.booleans(), bom=st.booleans(), sep=st.sampled_from([",", "\t", ";"]))
def test_three_readers_agree_cell_for_cell(tmp_path_factory, rows, crlf, bom, sep):
    header = ["item", "annotator", "label"]
    path = tmp_path_factory.mktemp("csv") / "judgments.csv"
    path.write_bytes(_write(rows, header, crlf=crlf, bom=bom, sep=sep))
    coded = read_csv(path, sep=sep, categorical=True)
    plain = read_csv(path, sep=sep, categorical=False)
    theirs = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, na_values=[""],
                         encoding="utf-8-sig")
    assert list(coded.columns) == list(plain.columns) == header
    assert _as_text(coded) == _as_text(plain)
    assert _as_text(coded) == _as_text(theirs)
    for c in coded.columns:
        if isinstance(coded[c].dtype, pd.CategoricalDtype):
            cats = coded[c].cat.categories
            assert cats.is_unique and not cats.hasnans


@pytest.mark.parametrize("n_rows", [1, 70_000])
def test_many_blocks_one_dictionary(tmp_path, n_rows):
    """Past pyarrow's block size the blocks' dictionaries are unified: the same id keeps one
    category, and ids first seen in a late block are not lost."""
    ids = [f"{i % 997:05d}" for i in range(n_rows)]
    late = ["late-only"] if n_rows > 1 else []
    path = tmp_path / "big.csv"
    path.write_text("item,label\n" + "".join(f"{i},{i[-1]}\n" for i in ids + late),
                    encoding="utf-8")
    coded = read_csv(path, categorical=True)
    assert coded["item"].tolist() == ids + late
    assert coded["item"].cat.categories.is_unique
    assert coded["item"].iloc[0] == "00000"  # leading zeros kept
