"""Columns with an empty header cell are read, as Spark reads them: a spreadsheet's empty
columns after the data (``item,annotator,label,,`` and ``,,`` on every line, what Excel writes
when cells past the data were once formatted) and pandas' unnamed index column (``to_csv``
without ``index=False``). Two or more of them were refused by the pandas engine as "repeated
column name(s) ''" (exit 2) while ``--engine spark`` read the file. Each is now named
``_c<i>`` (its 0-based position, Spark's name) and, like any column the canonical table does
not use, left out. Found by tests/test_fuzz_tables.py.

The pandas reader (a spec's ``read.skiprows`` or ``read.comment``, a separator longer than one
character, a file pyarrow cannot parse) named them ``Unnamed: <i>``, pandas' words, in every
message and for a spec's columns; it names them ``_c<i>`` too, and so does the message of a
format that cannot be detected (it said ``''``)."""

from __future__ import annotations

import warnings

import pytest
from click.testing import CliRunner

from audit.cli import cli
from audit.errors import InputError
from audit.ingest import load
from audit.ingest.readers import read_table

EXCEL = "item,annotator,label,,\r\n1,a,x,,\r\n1,b,y,,\r\n2,a,x,,\r\n"
INDEX = ",item,annotator,label\n0,1,a,x\n1,1,b,y\n2,2,a,x\n"


def judgments(path, engine="pandas"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = load(path, engine=engine).frame
    return sorted(zip(*(frame[c].astype(str) for c in ("item", "annotator", "label"))))


@pytest.mark.parametrize("text, names", [
    (EXCEL, ["item", "annotator", "label", "_c3", "_c4"]),
    ("item,annotator,label,,,\n1,a,x,,,\n1,b,y,,,\n2,a,x,,,\n",
     ["item", "annotator", "label", "_c3", "_c4", "_c5"]),
    (INDEX, ["_c0", "item", "annotator", "label"]),
])
def test_empty_header_cells_name_their_position(tmp_path, text, names):
    (tmp_path / "t.csv").write_text(text)
    assert list(read_table(tmp_path / "t.csv").columns) == names
    assert judgments(tmp_path / "t.csv") == [("1", "a", "x"), ("1", "b", "y"), ("2", "a", "x")]
    result = CliRunner().invoke(cli, ["validate", str(tmp_path / "t.csv")])
    assert result.exit_code == 0, result.output


def test_a_name_taken_by_a_column_is_still_repeated(tmp_path):
    (tmp_path / "t.csv").write_text("item,annotator,label,_c4,\n1,a,x,n,\n")
    with pytest.raises(InputError, match="repeated column name.*'_c4'"):
        read_table(tmp_path / "t.csv")


@pytest.mark.spark
def test_the_engines_read_the_same_judgments(spark, tmp_path):
    for i, text in enumerate((EXCEL, INDEX)):
        path = tmp_path / f"t{i}.csv"
        path.write_text(text)
        assert judgments(path, "spark") == judgments(path)


# -- the pandas reader (read.skiprows, read.comment, a longer separator) names them alike -----
#: A title line, then a header with two empty cells (position 2 and 3) before the label.
TITLED = "exported 2026-12-05\nitem,annotator,,,label\n1,a,,,x\n1,b,,,y\n2,a,,,x\n"
COMMENTED = "# exported 2026-12-05\nitem,annotator,,,label\n1,a,,,x\n# a note\n1,b,,,y\n2,a,,,x\n"


@pytest.mark.parametrize("text, options", [
    (TITLED, {"skiprows": 1}),
    (COMMENTED, {"comment": "#"}),
    (TITLED.replace(",", ";;"), {"skiprows": 1, "sep": ";;"}),
], ids=["skiprows", "comment", "two-character separator"])
def test_the_pandas_reader_names_empty_header_cells_by_position(tmp_path, text, options):
    # pandas named them 'Unnamed: 2', 'Unnamed: 3', where the pyarrow reader and Spark say
    # '_c2', '_c3': messages listed pandas' words, and a spec mapping '_c2' found nothing
    path = tmp_path / "t.csv"
    path.write_text(text)
    assert list(read_table(path, **options).columns) == [
        "item", "annotator", "_c2", "_c3", "label"]
    spec = tmp_path / "spec.yaml"
    read = ", ".join(f"{k}: {v!r}" for k, v in options.items())
    spec.write_text(f"read: {{{read}}}\ncolumns: {{label: lab}}\n")
    result = CliRunner().invoke(cli, ["validate", str(path), "--spec", str(spec)])
    assert result.exit_code == 2, result.output
    line = result.output.strip()
    assert "\n" not in line and str(path) in line and "column 'lab'" in line
    assert "columns present: 'item', 'annotator', '_c2', '_c3', 'label'" in line, line
    spec.write_text(f"read: {{{read}}}\n")  # the label column is found, the others left out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = load(path, spec=spec).frame
    assert sorted(zip(*(frame[c].astype(str) for c in ("item", "annotator", "label")))) == [
        ("1", "a", "x"), ("1", "b", "y"), ("2", "a", "x")]


def test_the_pandas_reader_names_a_missing_label_column_by_position(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("exported\nitem,annotator,,\n1,a,x,\n1,b,y,\n")
    spec = tmp_path / "spec.yaml"
    spec.write_text("read: {skiprows: 1}\n")
    result = CliRunner().invoke(cli, ["validate", str(path), "--spec", str(spec)])
    assert result.exit_code == 2, result.output
    assert ("column 'label': missing required column(s) 'label'; columns present: 'item', "
            "'annotator', '_c2', '_c3'") in result.output
    spec.write_text("read: {skiprows: 1}\ncolumns: {label: _c2}\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = load(path, spec=spec).frame
    assert list(frame["label"].astype(str)) == ["x", "y"]


@pytest.mark.parametrize("options", [{}, {"skiprows": 1}], ids=["pyarrow", "pandas"])
def test_a_header_written_unnamed_keeps_its_name(tmp_path, options):
    # what pandas writes back from a frame it read with an unnamed index: a real name
    path = tmp_path / "t.csv"
    path.write_text(("title\n" if options else "") + "Unnamed: 0,item,annotator,label,\n"
                    "0,1,a,x,\n")
    assert list(read_table(path, **options).columns) == [
        "Unnamed: 0", "item", "annotator", "label", "_c4"]


def test_the_pandas_reader_refuses_a_position_name_a_column_has(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("title\nitem,_c2,,label\n1,a,n,x\n")
    with pytest.raises(InputError, match="repeated column name.*'_c2'"):
        read_table(path, skiprows=1)


@pytest.mark.parametrize("options", [{}, {"skiprows": 1}, {"comment": "#"}],
                         ids=["pyarrow", "pandas-skiprows", "pandas-comment"])
def test_a_repeated_header_name_is_refused_by_every_reader(tmp_path, options):
    """pandas renamed the second ``label`` to ``label.1`` without a word, so the audit read the
    first and ignored the second (exit 0), where the pyarrow reader refuses the file."""
    path = tmp_path / "t.csv"
    path.write_text(("title\n" if "skiprows" in options else "# note\n" if options else "")
                    + "item,annotator,label,label\n1,a,x,y\n1,b,x,y\n")
    with pytest.raises(InputError, match=r"repeated column name\(s\) 'label'"):
        read_table(path, **options)


@pytest.mark.parametrize("options", [{}, {"skiprows": 1}], ids=["pyarrow", "pandas"])
def test_a_column_named_like_pandas_renaming_is_kept(tmp_path, options):
    path = tmp_path / "t.csv"
    path.write_text(("title\n" if options else "") + "item,annotator,label,label.1\n1,a,x,y\n")
    assert list(read_table(path, **options).columns) == ["item", "annotator", "label", "label.1"]


def test_format_detection_names_an_empty_header_cell_by_position(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("Item,annotator,,lab\n1,a,,x\n")
    result = CliRunner().invoke(cli, ["validate", str(path)])
    assert result.exit_code == 2, result.output
    assert "(columns: 'Item', 'annotator', '_c2', 'lab')" in result.output


@pytest.mark.spark
def test_the_engines_name_empty_header_cells_alike_with_comment_lines(spark, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(COMMENTED.replace(",,,label", ",,,").replace(",,,x", ",x,,")
                    .replace(",,,y", ",y,,"))
    spec = tmp_path / "spec.yaml"
    spec.write_text("read: {comment: '#'}\ncolumns: {label: _c2}\n")
    got = {}
    for engine in ("pandas", "spark"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            frame = load(path, spec=spec, engine=engine).frame
        got[engine] = sorted(zip(*(frame[c].astype(str) for c in ("item", "annotator",
                                                                   "label"))))
    assert got["pandas"] == got["spark"] == [("1", "a", "x"), ("1", "b", "y"), ("2", "a", "x")]
