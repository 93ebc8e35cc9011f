"""Excel workbooks (``.xlsx``) read as the tables they hold (:mod:`audit.ingest.readers.workbooks`).

Each workbook is written with openpyxl the way a spreadsheet keeps annotation sheets (ids typed
as text or shown with leading zeros by a ``000`` format, Unicode names, whole numbers stored as
doubles, wide rater columns with ``#N/A``); what is read is checked against the same table
written as CSV, and the plain cells against pandas' own reader (``pandas.read_excel``).
"""

from __future__ import annotations

import datetime as dt
import json

import openpyxl
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from audit.cli import cli
from audit.contract import columns as C
from audit.errors import InputError
from audit.ingest import load
from audit.ingest.readers.workbooks import SheetRows, _number, read_workbook

HEADER = ["item", "annotator", "pool", "label"]
# ids as a spreadsheet holds them: 007 typed as text, 010 as the number 10 shown by a 000
# format, Unicode names; labels as numbers (1.0 stored for 1) and one as text
ROWS = [["007", "Jürgen", "crowd", 1], ["007", "Zoë", "expert", 2.0], ["007", "ann 3", "crowd", 1],
        [10, "Jürgen", "crowd", 3], [10, "Zoë", "expert", 3], [10, "ann 3", "crowd", 2],
        ["中文", "Jürgen", "crowd", 1], ["中文", "Zoë", "expert", "1"], ["中文", "ann 3", "crowd", 2]]
AS_TEXT = [["007", "Jürgen", "crowd", "1"], ["007", "Zoë", "expert", "2"],
           ["007", "ann 3", "crowd", "1"], ["010", "Jürgen", "crowd", "3"],
           ["010", "Zoë", "expert", "3"], ["010", "ann 3", "crowd", "2"],
           ["中文", "Jürgen", "crowd", "1"], ["中文", "Zoë", "expert", "1"],
           ["中文", "ann 3", "crowd", "2"]]
SPEC = "label: {kind: ordinal}\n"


def workbook(path, rows=ROWS, header=HEADER, *, title="Judgments", formats=None, before=(),
             after_blank=0, more_sheets=()):
    """Write ``rows`` under ``header`` to one sheet; ``formats``: {(row, col): number format}
    (0-based over ``rows``); ``before``: rows written above the header."""
    book = openpyxl.Workbook()
    ws = book.active
    ws.title = title
    for r in before:
        ws.append(r)
    ws.append(header)
    top = ws.max_row
    for r in rows:
        ws.append(r)
    for (i, j), fmt in (formats or {}).items():
        ws.cell(row=top + 1 + i, column=j + 1).number_format = fmt
    for k in range(after_blank):  # formatted rows below the data, as a styled table leaves
        ws.cell(row=ws.max_row + 1, column=1).number_format = "0.00"
    for name in more_sheets:
        book.create_sheet(name).append(["x"])
    book.save(path)
    return path


def csv_of(path, rows=AS_TEXT, header=HEADER):
    pd.DataFrame(rows, columns=header).to_csv(path, index=False)
    return path


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture
def spec(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC, encoding="utf-8")
    return path


def test_a_workbook_reads_as_the_same_table_written_as_csv(tmp_path, spec):
    xlsx = workbook(tmp_path / "ratings.xlsx", formats={(3, 0): "000", (4, 0): "000",
                                                        (5, 0): "000"})
    csv = csv_of(tmp_path / "ratings.csv")
    a, b = load(xlsx, spec=spec), load(csv, spec=spec)
    cols = [C.ITEM, C.ANNOTATOR, C.POOL, C.LABEL]
    pd.testing.assert_frame_equal(a.frame[cols].astype(str).reset_index(drop=True),
                                  b.frame[cols].astype(str).reset_index(drop=True))
    assert sorted(a.frame[C.ITEM].astype(str).unique()) == ["007", "010", "中文"]
    outs = []
    for src in (xlsx, csv):
        result = run("run", src, "--spec", spec, "--out", tmp_path / src.suffix[1:],
                     "--bootstrap", 50, "--seed", 1, "--no-report", "--quiet")
        assert result.exit_code == 0, result.output
        outs.append(json.loads((tmp_path / src.suffix[1:] / "results.json").read_text()))
    for key in ("reliability", "pool_disagreement", "dataset"):
        assert _without_sources(outs[0][key]) == _without_sources(outs[1][key])


def _without_sources(value):
    """A results section without the fields that name the file it was read from."""
    if isinstance(value, dict):
        return {k: _without_sources(v) for k, v in value.items()
                if k not in ("source", "name", "sha256", "path", "bytes")}
    if isinstance(value, list):
        return [_without_sources(v) for v in value]
    return value


def test_plain_cells_read_as_pandas_reads_them(tmp_path):
    """An independent reader of the same cells: ``pandas.read_excel`` with every column as text
    (no number formats, no error values: the cells both read alike)."""
    rows = [["q1", "a", 1, 1.5], ["q2", "b", 2, -0.25], ["q3", "ç", 30, 4], ["q4", "d", 4, 2.5e-3]]
    path = workbook(tmp_path / "plain.xlsx", rows, header=["item", "annotator", "n", "label"])
    ours = read_workbook(path)
    theirs = pd.read_excel(path, dtype=str, engine="openpyxl")
    assert list(ours.columns) == list(theirs.columns)
    for col in ours.columns:
        assert ours[col].tolist() == theirs[col].tolist(), col


@given(st.one_of(st.integers(-10 ** 12, 10 ** 12), st.floats(allow_nan=False, allow_infinity=False,
                                                            min_value=-1e300, max_value=1e300)))
def test_a_number_reads_back_as_excel_shows_it(x):
    text = _number(x, "General")
    assert float(text) == pytest.approx(float(x), rel=1e-14, abs=0)
    if float(x).is_integer() and abs(x) < 2 ** 53:
        assert text == str(int(x))  # never 7.0
    if isinstance(x, float):
        assert len(text.replace("-", "").replace(".", "").lstrip("0").split("e")[0]) <= 17


def test_number_formats_and_cell_types():
    assert _number(7, "000") == "007" and _number(7.0, "00000") == "00007"
    assert _number(1234, "000") == "1234" and _number(-7, "000") == "-7"
    assert _number(7, "0.00") == "7" and _number(0.1 + 0.2, "General") == "0.3"
    assert _number(1e20, "General") == "1e+20"


def test_dates_booleans_and_the_sheet_rows(tmp_path):
    rows = [["q1", "a", "crowd", True], ["q1", "b", "crowd", False],
            [dt.datetime(2024, 1, 31), "a", "crowd", dt.datetime(2024, 1, 31, 9, 30)]]
    frame = read_workbook(workbook(tmp_path / "types.xlsx", rows))
    assert frame["label"].tolist() == ["TRUE", "FALSE", "2024-01-31 09:30:00"]
    assert frame["item"].tolist()[2] == "2024-01-31"
    assert isinstance(frame.attrs["rows"], SheetRows)
    assert frame.attrs["rows"].names([0, 2, -1, 3, "x"]) == {
        0: "row 2 of sheet 'Judgments'", 2: "row 4 of sheet 'Judgments'"}


def test_rows_above_the_header_and_formatted_rows_below_the_data(tmp_path):
    path = workbook(tmp_path / "titled.xlsx", before=[["Ratings, round 2"], []], after_blank=30)
    # the title row is not the header: skiprows says so; the blank row after it is skipped
    frame = read_workbook(path, skiprows=1)
    assert list(frame.columns) == HEADER and len(frame) == len(ROWS)
    assert frame.attrs["rows"].names([0]) == {0: "row 4 of sheet 'Judgments'"}


def test_an_empty_row_inside_the_data_is_a_counted_empty_record(tmp_path, spec):
    rows = ROWS[:3] + [[None, None, None, None]] + ROWS[3:]
    table = load(workbook(tmp_path / "gap.xlsx", rows), spec=spec)
    summary = table.summary()
    assert summary["n_annotations"] == len(ROWS)
    (dropped,) = table.info["dropped"]
    assert dropped["n"] == 1 and "completely empty record" in dropped["rule"]


def test_error_values_name_their_cell_or_read_as_missing_when_listed(tmp_path):
    rows = [["q1", "a", "crowd", 1], ["q1", "b", "crowd", "#N/A"], ["q2", "a", "crowd", 2]]
    path = workbook(tmp_path / "errors.xlsx", rows)
    with pytest.raises(InputError, match=r"cell D3 holds the error value #N/A.*na_values") as e:
        read_workbook(path)
    assert str(e.value.row) == "row 3 of sheet 'Judgments'"
    frame = read_workbook(path, na_values=["#N/A"])
    assert frame["label"].isna().tolist() == [False, True, False]


def test_wide_rater_columns_with_na(tmp_path):
    """A wide sheet (one column per rater) whose unjudged cells hold #N/A: listed as missing,
    they are counted as unjudged cells, the other judgments read."""
    header = ["segment", "rater1", "rater2", "rater3"]
    rows = [["s1", 1, 2, "#N/A"], ["s2", 3, 3, 3], ["s3", "#N/A", 1, 2]]
    path = workbook(tmp_path / "wide.xlsx", rows, header=header)
    (tmp_path / "wide.yaml").write_text(
        "layout: wide\ncolumns: {item: segment}\nannotator_columns: [rater1, rater2, rater3]\n"
        "label: {kind: ordinal}\nread: {na_values: ['#N/A']}\n", encoding="utf-8")
    table = load(path, spec=tmp_path / "wide.yaml")
    assert table.summary()["n_annotations"] == 7
    assert sum(d["n"] for d in table.info["dropped"]) == 2


def test_a_formula_without_a_saved_value_names_its_cell(tmp_path):
    rows = [["q1", "a", "crowd", 1], ["q1", "b", "crowd", "=B2*2"]]
    path = workbook(tmp_path / "formula.xlsx", rows)
    with pytest.raises(InputError, match=r"cell D3 holds the formula '=B2\*2' without a saved"):
        read_workbook(path)


def test_sheets_are_chosen_by_name_and_the_others_named(tmp_path, spec):
    path = workbook(tmp_path / "book.xlsx", more_sheets=("Notes",))
    with pytest.warns(UserWarning, match=r"read sheet 'Judgments', the first visible sheet of "
                                         r"cells; the others: 'Notes'; read: \{sheet: NAME\}"):
        read_workbook(path)
    assert list(read_workbook(path, sheet="Notes").columns) == ["x"]
    assert list(read_workbook(path, sheet=1).columns) == ["x"]  # by position
    years = workbook(tmp_path / "years.xlsx", title="2024", more_sheets=("0",))
    assert list(read_workbook(years, sheet=0).columns) == ["x"]  # the sheet named 0 first
    with pytest.raises(InputError, match=r"no sheet 'Data' in the workbook; its sheets: "
                                         r"'Judgments', 'Notes'") as e:
        read_workbook(path, sheet="Data")
    assert e.value.key == "read.sheet"
    (tmp_path / "sheet.yaml").write_text(SPEC + "read: {sheet: Judgments}\n", encoding="utf-8")
    assert load(path, spec=tmp_path / "sheet.yaml").summary()["n_annotations"] == len(ROWS)


def test_read_keys_that_describe_text_are_refused_for_a_workbook(tmp_path):
    path = workbook(tmp_path / "book.xlsx")
    (tmp_path / "sep.yaml").write_text(SPEC + "read: {sep: ';'}\n", encoding="utf-8")
    result = run("run", path, "--spec", tmp_path / "sep.yaml", "--out", tmp_path / "o")
    assert result.exit_code == 2
    assert "read.sep describes a delimited text file" in result.output
    csv = csv_of(tmp_path / "t.csv")
    (tmp_path / "sheet.yaml").write_text(SPEC + "read: {sheet: Judgments}\n", encoding="utf-8")
    result = run("run", csv, "--spec", tmp_path / "sheet.yaml", "--out", tmp_path / "o2")
    assert result.exit_code == 2 and "read.sheet names a sheet of an Excel workbook" in result.output


def test_repeated_and_empty_headers(tmp_path):
    path = workbook(tmp_path / "dup.xlsx", [["q1", "a", 1, 2]],
                    header=["item", "annotator", "label", "label"])
    with pytest.raises(InputError, match=r"repeated column name 'label' \(cells C1 and D1"):
        read_workbook(path)
    path = workbook(tmp_path / "trail.xlsx", [["q1", "a", 1, None, None]],
                    header=["item", "annotator", "label", None, None])
    assert list(read_workbook(path).columns) == ["item", "annotator", "label"]


def test_a_bad_label_is_named_by_its_row_on_the_sheet(tmp_path, spec):
    rows = ROWS[:4] + [["q9", "Zoë", "expert", "lots"]] + ROWS[4:]
    result = run("run", workbook(tmp_path / "bad.xlsx", rows), "--spec", spec,
                 "--out", tmp_path / "o")
    assert result.exit_code == 2
    assert "row 6 of sheet 'Judgments'" in result.output  # header row 1, fifth record


@pytest.mark.parametrize("name, words", [
    ("old.xls", "an Excel 97-2003 workbook, which annotation-audit does not read"),
    ("calc.ods", "an OpenDocument spreadsheet, which annotation-audit does not read"),
])
def test_other_spreadsheets_say_how_to_save_them(tmp_path, name, words):
    (tmp_path / name).write_bytes(b"PK\x03\x04 not really")
    result = run("run", tmp_path / name, "--out", tmp_path / "o")
    assert result.exit_code == 2 and words in result.output and ".xlsx" in result.output


def test_a_workbook_saved_as_csv_says_what_it_is(tmp_path):
    path = workbook(tmp_path / "ratings.xlsx")
    renamed = tmp_path / "ratings.csv"
    renamed.write_bytes(path.read_bytes())
    result = run("run", renamed, "--out", tmp_path / "o")
    assert result.exit_code == 2
    assert "an Excel workbook (a zip archive), not text: rename it to end in .xlsx" in result.output
    assert "unzip" not in result.output


def test_not_a_workbook(tmp_path):
    (tmp_path / "broken.xlsx").write_bytes(b"item,annotator,label\n")
    result = run("run", tmp_path / "broken.xlsx", "--out", tmp_path / "o")
    assert result.exit_code == 2 and "cannot read as an Excel workbook" in result.output


def test_format_detection_reads_only_the_header(tmp_path):
    from audit.ingest.detect import detect_format

    assert detect_format(workbook(tmp_path / "t.xlsx", before=[[]])) == "table"
    odd = workbook(tmp_path / "odd.xlsx", header=["a", "b", "c", "d"])
    result = run("run", odd, "--out", tmp_path / "o")
    assert result.exit_code == 2 and "columns: 'a', 'b', 'c', 'd'" in result.output


def test_the_spark_engine_says_a_workbook_is_read_by_pandas(tmp_path):
    from audit.ingest.spark.read import source_kind  # decided before any Spark job runs

    with pytest.raises(InputError, match=r"an Excel workbook \(at most 1,048,576 rows a sheet\) "
                                         r"is read by the pandas engine: drop --engine spark"):
        source_kind(str(workbook(tmp_path / "t.xlsx")))


def test_export_reads_a_workbook(tmp_path, spec):
    path = workbook(tmp_path / "t.xlsx", formats={(3, 0): "000", (4, 0): "000", (5, 0): "000"})
    result = run("export", path, tmp_path / "out", "--spec", spec)
    assert result.exit_code == 0, result.output
    exported = pd.read_parquet(next((tmp_path / "out").rglob("*.parquet")))
    assert sorted(exported[C.ITEM].astype(str).unique()) == ["007", "010", "中文"]


def test_a_rater_sheet_for_pools_may_be_a_workbook(tmp_path):
    book = openpyxl.Workbook()
    book.active.append(["annotator", "pool"])
    for name, pool in [("Jürgen", "crowd"), ("Zoë", "expert"), ("ann 3", "crowd")]:
        book.active.append([name, pool])
    book.save(tmp_path / "raters.xlsx")
    rows = [r[:2] + r[3:] for r in AS_TEXT]
    data = csv_of(tmp_path / "j.csv", rows, header=["item", "annotator", "label"])
    table = load(data, pools=tmp_path / "raters.xlsx")
    pools = table.frame.groupby(C.ANNOTATOR, observed=True)[C.POOL].first().astype(str).to_dict()
    assert pools == {"Jürgen": "crowd", "Zoë": "expert", "ann 3": "crowd"}


def test_a_table_placed_away_from_a1_and_a_wrong_stored_size(tmp_path):
    """A table at C3 (a margin left and above, as people lay sheets out), and the same file
    whose stored size (``<dimension ref="A1"/>``, as some writers leave it) is wrong: both read
    every cell, the margin is no column, and rows keep their numbers on the sheet."""
    import re
    import zipfile

    book = openpyxl.Workbook()
    ws = book.active
    for i, row in enumerate([["item", "annotator", "label"], ["q1", "a", 1], ["q1", "b", 2]]):
        for j, v in enumerate(row):
            ws.cell(row=3 + i, column=3 + j, value=v)
    for j, v in enumerate(["q2", "a", 3]):
        ws.cell(row=8, column=3 + j, value=v)
    book.save(tmp_path / "offset.xlsx")
    with zipfile.ZipFile(tmp_path / "offset.xlsx") as src, \
            zipfile.ZipFile(tmp_path / "dimension.xlsx", "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            if name == "xl/worksheets/sheet1.xml":
                data = re.sub(rb'<dimension ref="[^"]*"/>', b'<dimension ref="A1"/>', data)
            dst.writestr(name, data)
    for name in ("offset.xlsx", "dimension.xlsx"):
        frame = read_workbook(tmp_path / name)
        assert list(frame.columns) == ["item", "annotator", "label"], name
        assert frame["label"].tolist()[:2] == ["1", "2"] and frame["label"].tolist()[4] == "3"
        assert frame.attrs["rows"].names([0, 4]) == {0: "row 4 of sheet 'Sheet'",
                                                     4: "row 8 of sheet 'Sheet'"}


def test_a_title_row_read_as_the_header_says_how_to_skip_it(tmp_path):
    path = workbook(tmp_path / "titled.xlsx", before=[["Ratings, round 2"]])
    with pytest.raises(InputError, match=r"the header cells B1, C1, D1 of sheet 'Judgments' are "
                                         r"empty over columns that hold values.*if row 1 is a "
                                         r"title above the header, read: \{skiprows: 1\}"):
        read_workbook(path)


def test_chart_sheets_hidden_sheets_and_encrypted_workbooks(tmp_path):
    """A chart sheet first in the tabs (no cells: it was exit 3) and a hidden look-up sheet
    are not the data; the first visible sheet of cells is, and the warning says what the
    others are. An encrypted workbook (an OLE file, not a zip) says so."""
    from openpyxl.chart import BarChart, Reference

    book = openpyxl.Workbook()
    ws = book.active
    ws.title = "Data"
    for row in [HEADER] + ROWS:
        ws.append(row)
    chart = book.create_chartsheet("Chart", 0)
    bars = BarChart()
    bars.add_data(Reference(ws, min_col=4, min_row=1, max_row=4))
    chart.add_chart(bars)
    hidden = book.create_sheet("Lookup", 1)
    hidden.append(["annotator", "pool"])
    hidden.sheet_state = "hidden"
    book.save(tmp_path / "charts.xlsx")
    with pytest.warns(UserWarning, match=r"read sheet 'Data', the first visible sheet of cells; "
                                         r"the others: 'Chart' \(a chart\), 'Lookup' \(hidden\)"):
        frame = read_workbook(tmp_path / "charts.xlsx")
    assert list(frame.columns) == HEADER and len(frame) == len(ROWS)
    assert list(read_workbook(tmp_path / "charts.xlsx", sheet="Lookup").columns) == [
        "annotator", "pool"]
    with pytest.raises(InputError, match=r"sheet 'Chart' is a chart, not a sheet of cells"):
        read_workbook(tmp_path / "charts.xlsx", sheet=0)
    from audit.ingest.detect import detect_format

    assert detect_format(tmp_path / "charts.xlsx") == "table"
    (tmp_path / "locked.xlsx").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504))
    result = run("run", tmp_path / "locked.xlsx", "--out", tmp_path / "o")
    assert result.exit_code == 2 and "an encrypted (password-protected) workbook" in result.output


def _merged_sheet(path, merges, rows, header=HEADER):
    book = openpyxl.Workbook()
    ws = book.active
    ws.title = "Judgments"
    ws.append(header)
    for r in rows:
        ws.append(r)
    for ref in merges:
        ws.merge_cells(ref)
    book.save(path)
    return path


def test_an_id_merged_down_its_rows_reads_as_the_sheet_shows_it(tmp_path, spec):
    """An item id (and its text) merged down the rows of its judgments, as sheets keep them:
    read in each row, with a warning counting the ranges; the same table with the id in every
    row reads the same canonical table and results."""
    rows = [["q1", "a", "crowd", 1], [None, "b", "expert", 2], [None, "c", "crowd", 1],
            ["q2", "a", "crowd", 3], [None, "b", "expert", 3], [None, "c", "crowd", 2]]
    path = _merged_sheet(tmp_path / "merged.xlsx", ["A2:A4", "A5:A7"], rows)
    with pytest.warns(UserWarning, match=r"sheet 'Judgments': read 2 merged ranges within one "
                                         r"column \(A2:A4, A5:A7\) as the sheet shows them"):
        frame = read_workbook(path)
    assert frame["item"].tolist() == ["q1"] * 3 + ["q2"] * 3
    filled = [[r[0] or ("q1" if i < 3 else "q2")] + r[1:] for i, r in enumerate(rows)]
    plain = workbook(tmp_path / "plain.xlsx", filled)
    with pytest.warns(UserWarning):
        ours = load(path, spec=spec)
    theirs = load(plain, spec=spec)
    pd.testing.assert_frame_equal(ours.frame, theirs.frame)


def test_merged_ranges_that_are_not_filled(tmp_path):
    """A range over several columns (a note across a wide sheet's raters) keeps its value in
    its first cell; an otherwise empty row inside a merged id stays an empty record; a merged
    header over columns holding values is named as merged."""
    header = ["segment", "rater1", "rater2", "rater3"]
    rows = [["s1", 1, 2, 3], [None, "n/a", None, None], [None, None, None, None],
            ["s2", 3, 3, 3]]
    path = _merged_sheet(tmp_path / "wide.xlsx", ["A2:A4", "B3:D3"], rows, header=header)
    with pytest.warns(UserWarning, match=r"read 1 merged range within one column \(A2:A4\).*"
                                         r"1 merged over several columns \(B3:D3\) hold"):
        frame = read_workbook(path)
    assert frame["segment"].tolist()[:2] == ["s1", "s1"] and pd.isna(frame["segment"][2])
    assert frame.iloc[1, 1:].tolist()[0] == "n/a" and frame.iloc[1, 2:].isna().all()
    assert frame.iloc[2].isna().all()

    header_merged = _merged_sheet(tmp_path / "head.xlsx", ["B1:D1"],
                                  [["s1", 1, 2, 3], ["s2", 3, 3, 3]],
                                  header=["segment", "ratings", None, None])
    with pytest.raises(InputError, match=r"header cells C1, D1 .* inside the merged range "
                                         r"B1:D1: unmerge it and name each column"):
        read_workbook(header_merged)


def test_merged_ranges_are_found_in_any_namespace_prefix_and_across_blocks():
    """The scan of the sheet's XML (openpyxl's read-only sheets do not keep merged ranges)
    finds a range written with a namespace prefix, and one split across two 1 MiB blocks."""
    import io

    from audit.ingest.readers.workbooks import _merged_ranges

    class Sheet:
        def __init__(self, xml):
            self.xml = xml

        def _get_source(self):
            return io.BytesIO(self.xml)

    body = b"<x:row>" + b"<x:c t='inlineStr'><x:is><x:t>&lt;mergeCell ref=\"Z9:Z10\"/&gt;</x:t></x:is></x:c>" + b"</x:row>"
    pad = b" " * ((1 << 20) - 40 - len(body))
    xml = body + pad + b'<x:mergeCells><x:mergeCell ref="A2:A4"/><mergeCell ref="C7:E7"/></x:mergeCells>'
    assert [r[4] for r in _merged_ranges(Sheet(xml))] == ["A2:A4", "C7:E7"]
    assert _merged_ranges(Sheet(xml))[0][:4] == (1, 2, 1, 4)
    assert _merged_ranges(object()) == []
