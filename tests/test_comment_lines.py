"""``read: {comment: "#"}`` skips lines that start with the character, and only those.

pandas' own ``comment`` option also cuts every other line at the character: the label ``C#``
was read as ``C`` and ``q1,b,#3`` as an empty label, with exit 0. The Spark engine and every
message's line numbers (:class:`audit.ingest.readers.lines.RecordLines`) already read comment
lines as whole lines; the pandas engine now does too (``WithoutCommentLines``).

A line that starts inside a quoted value is more of that value, whatever it starts with: a
text's line ``# not a comment`` was dropped from the value (exit 0), and a ``#`` line holding
the closing quote left the quote open (exit 2 "EOF inside string"), on the pandas engine and
in every message's line numbers; the Spark engine's reader already read such values whole."""

from __future__ import annotations

import csv
import io
import warnings

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.cli import cli
from audit.errors import SchemaError
from audit.ingest import load

ROWS = ("item,annotator,label,text\n"
        "# exported by the annotation tool\n"
        "q1,a,C#,plain\n"
        "q1,b,C,\"a # inside quotes\"\n"
        "#q9,z,ignored,a comment line that looks like a record\n"
        "q2,a,F#,x # y\n"
        "q2,b,F#,\"two\nlines # here\"\n")


def _load(path, spec, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load(str(path), spec=str(spec), **options)


def _judgments(table):
    f = table.frame
    return sorted(zip(f["item"].astype(str), f["annotator"].astype(str), f["label"].astype(str)))


@pytest.fixture
def files(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(ROWS, encoding="utf-8")
    spec = tmp_path / "s.yaml"
    spec.write_text("read: {comment: '#'}\n", encoding="utf-8")
    return path, spec


def test_a_comment_character_inside_a_record_is_data(files):
    table = _load(*files)
    assert _judgments(table) == [("q1", "a", "C#"), ("q1", "b", "C"), ("q2", "a", "F#"),
                                 ("q2", "b", "F#")]
    assert table.info["rows_read"] == 4


def test_skipped_lines_then_comment_lines(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes("\ufeffsep=,\r\n# note\r\nitem,annotator,label\r\n# more\r\nq1,a,x#1\r\n"
                     "q1,b,x#2\r\n".encode())
    spec = tmp_path / "s.yaml"
    spec.write_text("read: {skiprows: 1, comment: '#'}\n", encoding="utf-8")
    assert _judgments(_load(path, spec)) == [("q1", "a", "x#1"), ("q1", "b", "x#2")]


def test_a_separator_of_two_characters(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("item;;annotator;;label\n# c\nq1;;a;;C#\nq1;;b;;C\n", encoding="utf-8")
    spec = tmp_path / "s.yaml"
    spec.write_text("read: {sep: ';;', comment: '#'}\n", encoding="utf-8")
    assert _judgments(_load(path, spec)) == [("q1", "a", "C#"), ("q1", "b", "C")]


@pytest.mark.spark
def test_both_engines_read_the_same_judgments(files, spark):
    assert _judgments(_load(*files, engine="spark", keep_on_cluster=False)) == \
        _judgments(_load(*files))


# -- a line starting with the comment character inside a quoted value --------------------------
# line 3 continues a text, line 6 (a '#' alone) one too, line 9 holds a label's closing quote,
# line 10 is a comment after a closed value, line 12 continues a value with '""' in it
QUOTED = ('item,annotator,label,text\n'                          # 1
          '# exported by the annotation tool\n'                  # 2  comment
          'q1,a,x,"first line\n# not a comment\nlast"\n'        # 3-5
          'q1,b,y,"first\n#\nlast"\n'                           # 6-8
          'q2,a,"C\n# sharp",plain\n'                            # 9-10
          '# a comment after a closed value, with, commas\n'     # 11 comment
          'q2,b,y,"say ""hi""\n# ""still"" in it"\n'             # 12-13
          '#q9,z,ignored,a comment line that looks like a record\n')  # 14 comment
QUOTED_TEXTS = ["first line\n# not a comment\nlast", "first\n#\nlast", "plain",
                'say "hi"\n# "still" in it']


@pytest.fixture
def quoted(tmp_path):
    path = tmp_path / "q.csv"
    path.write_text(QUOTED, encoding="utf-8")
    spec = tmp_path / "s.yaml"
    spec.write_text("read: {comment: '#'}\n", encoding="utf-8")
    return path, spec


def _texts(table):
    return sorted(table.frame["text"].astype(str))


def test_a_line_of_a_quoted_value_starting_with_the_comment_character_is_data(quoted):
    table = _load(*quoted)
    assert _judgments(table) == [("q1", "a", "x"), ("q1", "b", "y"), ("q2", "a", "C\n# sharp"),
                                 ("q2", "b", "y")]
    assert _texts(table) == sorted(QUOTED_TEXTS)
    assert table.info["rows_read"] == 4


@pytest.mark.parametrize("text, line", [
    (QUOTED.replace("q2,b,y,", "q2,,y,"), 12),
    (QUOTED + 'q3,,y,"z\n# w"\n', 15),
], ids=["after-a-hash-line-closing-a-value", "last"])
def test_the_line_of_a_record_after_them_is_named(quoted, text, line):
    """A schema failure names the line its record starts on: comment lines and the lines of
    quoted values, '#' ones too, are counted."""
    path, spec = quoted
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SchemaError, match=rf"annotator.*\(line {line}\)"):
        _load(path, spec)


#: The record on lines 12-13 (after a '#' line closing a value) with a cell past the header.
LONG = QUOTED.replace('in it"\n', 'in it",extra\n')


def test_a_long_record_after_them_is_refused_naming_its_line(quoted):
    path, spec = quoted
    path.write_text(LONG, encoding="utf-8")
    res = CliRunner().invoke(cli, ["validate", str(path), "--spec", str(spec)])
    assert res.exit_code == 2, res.output
    assert (f"{path}, line 12: a record has more cells than the header has names (5 against "
            "4; past them: 'extra')") in res.output, res.output


def test_without_quoting_every_line_starting_with_the_character_is_a_comment(tmp_path):
    """``quote: none``: no value is quoted, so the line after a text starting with '"' is not
    inside it: a comment line is skipped."""
    path = tmp_path / "t.tsv"
    path.write_text('item\tannotator\tlabel\ttext\nq1\ta\tx\t"open\n# a comment\n'
                    'q1\tb\ty\tz"\n', encoding="utf-8")
    spec = tmp_path / "s.yaml"
    spec.write_text("read: {comment: '#', quote: none}\n", encoding="utf-8")
    table = _load(path, spec)
    assert _judgments(table) == [("q1", "a", "x"), ("q1", "b", "y")]
    assert _texts(table) == ['"open', 'z"']


_CELL = st.text(st.sampled_from(['a', '#', '"', ',', '\n', ' ', 'é']), max_size=6)


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(rows=st.lists(st.tuples(_CELL, _CELL), min_size=1, max_size=6),
       comments=st.lists(st.booleans(), min_size=7, max_size=7))
def test_records_written_by_the_csv_module_read_back_unchanged(tmp_path_factory, rows,
                                                                comments):
    """Rows written by Python's ``csv`` writer (quoting the values that need it), with a
    comment line before any of them, read back as written: ids and labels only from the
    records, every value whole."""
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["item", "annotator", "label", "text"])
    for k, (label, text) in enumerate(rows):
        if comments[k]:
            out.write("# comment, with, commas\n")
        writer.writerow([f"i{k}", "a", f"L{label}", text])
    folder = tmp_path_factory.mktemp("csv")
    path, spec = folder / "t.csv", folder / "s.yaml"
    path.write_text(out.getvalue(), encoding="utf-8")
    spec.write_text("read: {comment: '#'}\n", encoding="utf-8")
    frame = _load(path, spec).frame.sort_values("item", key=lambda c: c.str[1:].astype(int))
    assert list(frame["label"].astype(str)) == [f"L{label}" for label, _ in rows]
    assert [t if isinstance(t, str) else "" for t in frame["text"]] == [t for _, t in rows]


@pytest.mark.spark
def test_both_engines_read_quoted_values_whole(quoted, spark):
    pandas_table = _load(*quoted)
    spark_table = _load(*quoted, engine="spark", keep_on_cluster=False)
    assert _judgments(spark_table) == _judgments(pandas_table)
    assert _texts(spark_table) == _texts(pandas_table) == sorted(QUOTED_TEXTS)


@pytest.mark.spark
def test_both_engines_name_the_line_of_a_long_record_after_them(quoted, spark):
    path, spec = quoted
    path.write_text(LONG, encoding="utf-8")
    for engine in ("pandas", "spark"):
        res = CliRunner().invoke(cli, ["validate", str(path), "--spec", str(spec),
                                       "--engine", engine])
        assert res.exit_code == 2, (engine, res.output)
        assert f"{path}, line 12: a record has more cells" in res.output, (engine, res.output)


@pytest.mark.spark
def test_both_engines_without_quoting_skip_every_comment_line(tmp_path, spark):
    path = tmp_path / "t.tsv"
    path.write_text('item\tannotator\tlabel\ttext\nq1\ta\tx\t"open\n# a comment\n'
                    'q1\tb\ty\tz"\n', encoding="utf-8")
    spec = tmp_path / "s.yaml"
    spec.write_text("read: {comment: '#', quote: none}\n", encoding="utf-8")
    spark_table = _load(path, spec, engine="spark", keep_on_cluster=False)
    assert _judgments(spark_table) == _judgments(_load(path, spec))
    assert _texts(spark_table) == ['"open', 'z"']
