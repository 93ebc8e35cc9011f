"""``read: {comment: "#"}`` skips lines that start with the character, and only those.

pandas' own ``comment`` option also cuts every other line at the character: the label ``C#``
was read as ``C`` and ``q1,b,#3`` as an empty label, with exit 0. The Spark engine and every
message's line numbers (:class:`audit.ingest.readers.lines.RecordLines`) already read comment
lines as whole lines; the pandas engine now does too (``WithoutCommentLines``)."""

from __future__ import annotations

import warnings

import pytest

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
