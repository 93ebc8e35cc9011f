"""A line break inside a quoted id or label reads as the file writes it, or is refused by Spark.

pyarrow and pandas keep a quoted value's line breaks as the file holds them (``"q\\r\\n1"`` is
``q\\r\\n1``). Spark's multi-line CSV reader writes every line break of the file's own line end as
``\\n``, inside quoted values too: in a file whose lines end in ``\\r\\n``, ``q\\r\\n1`` was read
``q\\n1``; in one whose lines end in ``\\r``, ``\\r`` was read ``\\n`` and ``\\r\\n`` ``\\n\\n``;
with exit 0, an id the pandas engine (and a pools file) spells otherwise. No Spark option keeps
them, and ``\\n`` cannot be told from ``\\r\\n`` afterwards: such an id or label is exit 2 on
Spark, naming it, unless the file's lines end in ``\\n`` (then Spark reads it as written, and
both engines read the same). Texts keep Spark's reading.
"""

from __future__ import annotations

import warnings

import pytest
from click.testing import CliRunner

from audit.cli import cli
from audit.ingest import load

#: the file's line end, and the line breaks that quoted values hold
ENDS = {"lf": "\n", "crlf": "\r\n", "cr": "\r"}
BREAKS = {"crlf": "\r\n", "lf": "\n", "cr": "\r"}


def _file(tmp_path, end: str, *, item: str = "q1", label: str = "x", text: str = "plain",
          name: str = "t.csv"):
    sep = "\t" if name.endswith(".tsv") else ","
    rows = [["item", "annotator", "label", "text"], [f'"{item}"', "a", f'"{label}"', f'"{text}"'],
            [f'"{item}"', "b", "y", "z"], ["q2", "a", "x", "z"], ["q2", "b", "y", "z"]]
    path = tmp_path / name
    path.write_bytes("".join(sep.join(r) + end for r in rows).encode())
    return path


def _judgments(path, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = load(str(path), **options)
    f = table.frame
    return sorted(zip(*(f[c].astype(str) for c in ("item", "annotator", "label"))))


@pytest.mark.parametrize("end", ENDS)
@pytest.mark.parametrize("brk", BREAKS)
def test_the_pandas_engine_reads_the_value_as_the_file_writes_it(tmp_path, end, brk):
    value = f"a{BREAKS[brk]}b"
    path = _file(tmp_path, ENDS[end], item=value, label=value)
    assert (value, "a", value) in _judgments(path)


@pytest.mark.spark
@pytest.mark.parametrize("brk", BREAKS)
@pytest.mark.parametrize("column", ["item", "label"])
def test_lines_ending_in_lf_are_read_alike(spark, tmp_path, brk, column):
    """Spark reads a quoted value's line breaks as they are where lines end in ``\\n``."""
    value = f"a{BREAKS[brk]}b"
    path = _file(tmp_path, "\n", **{column: value})
    assert _judgments(path, engine="spark", keep_on_cluster=False) == _judgments(path)


@pytest.mark.spark
@pytest.mark.parametrize("end, brk", [("crlf", "crlf"), ("crlf", "lf"), ("cr", "cr"),
                                      ("cr", "crlf"), ("cr", "lf")])
@pytest.mark.parametrize("column", ["item", "label"])
@pytest.mark.parametrize("name", ["t.csv", "t.tsv"])
def test_spark_refuses_an_id_or_label_whose_line_break_it_rewrites(spark, tmp_path, end, brk,
                                                                     column, name):
    """Where lines end in ``\\r\\n`` or ``\\r``: exit 2 naming the file, the column and the
    judgment (exit 0 before, with the value rewritten); the pandas engine reads it."""
    value = f"a{BREAKS[brk]}b"
    path = _file(tmp_path, ENDS[end], name=name, **{column: value})
    assert (value if column == "item" else "q1", "a", value if column == "label" else "x") \
        in _judgments(path)
    res = CliRunner().invoke(cli, ["validate", str(path), "--engine", "spark"])
    assert res.exit_code == 2, res.output
    read = value.replace("\r\n", "\n" if end == "crlf" else "\n\n").replace("\r", "\n")
    item = read if column == "item" else "q1"
    assert (f"error: {path}, column {column!r}, item {item!r}, annotator 'a': a line break "
            f"inside a quoted id or label ({read!r} as Spark reads it): Spark's CSV reader "
            "writes the line breaks of a quoted value as '\\n' in a file whose lines end in "
            "'\\r\\n' or '\\r'") in " ".join(res.output.split("\n"))


@pytest.mark.spark
def test_a_lone_cr_in_a_crlf_file_is_read_as_written(spark, tmp_path):
    """Spark keeps a ``\\r`` that is not the file's line end: nothing to refuse."""
    path = _file(tmp_path, "\r\n", item="a\rb", label="c\rd")
    assert _judgments(path, engine="spark", keep_on_cluster=False) == _judgments(path)


@pytest.mark.spark
@pytest.mark.parametrize("end", ["crlf", "cr"])
def test_a_text_with_line_breaks_is_read(spark, tmp_path, end):
    """Texts matter less than ids and labels: read (Spark's ``\\n``), not refused."""
    path = _file(tmp_path, ENDS[end], text="two\r\nlines")
    assert _judgments(path, engine="spark", keep_on_cluster=False) == _judgments(path)


@pytest.mark.spark
def test_a_file_read_on_the_cluster_cannot_be_told_to_end_lines_in_lf(spark, tmp_path,
                                                                       monkeypatch):
    """A URL's line ends are not looked at: any id or label holding ``\\n`` is refused."""
    from audit.ingest.spark import read

    monkeypatch.setattr(read, "local_files", lambda source, kind: None, raising=False)
    path = _file(tmp_path, "\n", item="a\nb")
    res = CliRunner().invoke(cli, ["validate", str(path), "--engine", "spark"])
    assert res.exit_code == 2, res.output
    assert "a line break inside a quoted id or label" in res.output


@pytest.mark.spark
def test_a_folder_of_lf_and_crlf_files_is_checked(spark, tmp_path):
    """One file whose lines end in ``\\r\\n`` is enough."""
    folder = tmp_path / "lake"
    folder.mkdir()
    _file(folder, "\n", name="a.csv", item="a\nb")
    _file(folder, "\r\n", name="b.csv", item="q9")
    res = CliRunner().invoke(cli, ["validate", str(folder), "--engine", "spark"])
    assert res.exit_code == 2, res.output
    assert f"error: {folder / 'a.csv'}, column 'item', item 'a\\nb'" in res.output
