"""Files whose lines end in a lone carriage return (an old Mac's line end, and some Excel
exports'): read as the lines they are, on both engines, and named by those lines.

pyarrow, pandas and Spark's readers end a line at ``\\n``, ``\\r\\n`` or a lone ``\\r``, so such a
file was read record by record; what looked at its lines itself did not: the pandas engine's
format detection took the whole file for its header line ("cannot detect the format", columns
``'label\\rq1'``), a byte that is not UTF-8 was named on line 1, a spreadsheet's ``sep=;`` line
was not recognised, a TSV value that had swallowed lines (a text starting with ``"``) was not
warned about, and the Spark engine named a long record after a lone ``\\r`` in a quoted value
one line too early. Each is checked against the same file with ``\\n`` line ends.
"""

from __future__ import annotations

import io
import warnings

import pytest
from click.testing import CliRunner

from audit.cli import cli
from audit.errors import SchemaError
from audit.ingest import load
from audit.ingest.common import LoadWarning
from audit.ingest.readers import text as T

#: ids, labels and a quoted value holding the separator, a quote and a line break, as lines
RECORDS = ["item{s}annotator{s}label{s}text",
           'q1{s}a{s}x{s}"hello{s} ""world"""',
           "q1{s}b{s}y{s}plain",
           'q2{s}a{s}x{s}"two{end}lines"',
           "q2{s}b{s}y{s}z"]


def _text(sep: str, end: str, records=RECORDS) -> str:
    return "".join(r.format(s=sep, end=end) + end for r in records)


def _write(folder, name: str, text: str):
    path = folder / name
    path.write_bytes(text.encode("utf-8"))
    return path


def _load(path, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load(str(path), **options)


def _read(table) -> tuple[list, list]:
    """The judgments, and the texts with their line breaks as ``\\n`` (Spark's reader writes a
    quoted line break so, whatever the file's line end)."""
    f = table.frame
    judgments = sorted(zip(*(f[c].astype(str) for c in ("item", "annotator", "label"))))
    texts = sorted(str(t).replace("\r\n", "\n").replace("\r", "\n") for t in f["text"])
    return judgments, texts


FILES = pytest.mark.parametrize("name, sep", [("t.csv", ","), ("t.tsv", "\t")],
                                ids=["csv", "tsv"])


@FILES
def test_a_file_of_bare_cr_lines_reads_as_its_lf_twin(tmp_path, name, sep):
    """Without a spec (the format detected from its header) and with one."""
    twin = _read(_load(_write(tmp_path, "lf-" + name, _text(sep, "\n"))))
    path = _write(tmp_path, name, _text(sep, "\r"))
    table = _load(path)
    assert _read(table) == twin
    assert twin[1] == sorted(['hello, "world"'.replace(",", sep), "plain", "two\nlines", "z"])
    assert table.info["rows_read"] == 4
    spec = tmp_path / "s.yaml"
    spec.write_text("columns: {item: item, annotator: annotator, label: label}\n")
    assert _read(_load(path, spec=str(spec))) == twin


@FILES
def test_the_format_is_detected_from_the_header_line(tmp_path, name, sep):
    """The header ends at its ``\\r``: ``label`` is its last column, not ``label\\rq1``."""
    records = ["{s}".join(r.split("{s}")[:3]) for r in RECORDS if "{end}" not in r]
    twin = _load(_write(tmp_path, "lf-" + name, _text(sep, "\n", records)))
    table = _load(_write(tmp_path, name, _text(sep, "\r", records)))
    assert table.frame[["item", "annotator", "label"]].astype(str).values.tolist() == \
        twin.frame[["item", "annotator", "label"]].astype(str).values.tolist()
    assert len(table.frame) == 3


@pytest.mark.parametrize("end", ["\r", "\n", "\r\n"], ids=["cr", "lf", "crlf"])
def test_messages_name_the_line(tmp_path, end):
    """A schema failure and a long record on line 7 (the quoted value takes lines 4 and 5)."""
    records = [*RECORDS, "q3{s}{s}x{s}z"]
    with pytest.raises(SchemaError, match=r"annotator.*\(line 7\)"):
        _load(_write(tmp_path, "t.csv", _text(",", end, records)))
    path = _write(tmp_path, "long.csv", _text(",", end, [*RECORDS, "q3{s}c{s}x{s}z{s}extra"]))
    res = CliRunner().invoke(cli, ["validate", str(path)])
    assert res.exit_code == 2, res.output
    assert f"{path}, line 7: a record has more cells than the header has names" in res.output


@pytest.mark.parametrize("end", ["\r", "\n", "\r\n"], ids=["cr", "lf", "crlf"])
def test_a_byte_that_is_not_utf8_is_named_by_its_line(tmp_path, end):
    path = tmp_path / "t.csv"
    path.write_bytes(_text(",", end).replace("plain", "pl\xe4in").encode("latin-1"))
    res = CliRunner().invoke(cli, ["validate", str(path)])
    assert res.exit_code == 2, res.output
    assert f"{path}: not UTF-8 text: invalid byte at byte offset" in res.output
    assert "(line 3);" in res.output, res.output


def test_the_line_of_a_bad_byte_is_counted_across_chunks(tmp_path, monkeypatch):
    """Lines counted in blocks of every size from 1 byte, so that a ``\\r\\n`` is cut between
    two blocks somewhere, against the lines Python's text reader makes (``newline=""``, as the
    ``csv`` module reads them) before the byte."""
    data = b"a\r\nb\rc\r\r\n\nd\r\ne\r\xff\n"
    at = data.index(b"\xff")
    lines = len(list(io.StringIO(data[:at].decode("ascii"), newline="")))  # ends in a break
    path = tmp_path / "t.csv"
    path.write_bytes(data)
    for size in range(1, len(data) + 1):
        monkeypatch.setattr(T, "CHUNK_BYTES", size)
        assert f"(line {lines + 1})" in str(T.utf8_error(path, bare_cr=True)), size
    assert "(line 5)" in str(T.utf8_error(path))  # \n alone: JSON, JSON Lines


def test_a_separator_hint_line_is_named(tmp_path):
    path = _write(tmp_path, "t.csv", "sep=;\ritem;annotator;label\rq1;a;x\rq1;b;y\r")
    res = CliRunner().invoke(cli, ["validate", str(path)])
    assert res.exit_code == 2, res.output
    assert "the first line 'sep=;' is a spreadsheet's separator hint" in res.output, res.output


def test_a_tsv_value_that_swallowed_cr_lines_is_warned_about(tmp_path):
    """A text starting with '"' in a TSV written without quoting takes the lines after it into
    one value, as with ``\\n`` line ends, where the warning names the option that reads it."""
    path = _write(tmp_path, "t.tsv", 'item\tannotator\tlabel\ttext\rq1\ta\tx\t"quoted start\r'
                                     'q1\tb\ty\tplain\rq2\ta\tx\tend"\rq2\tb\ty\tz\r')
    with pytest.warns(LoadWarning, match=r"hold a line break .*line 2.*read: \{quote: none\}"):
        load(str(path))


@pytest.mark.spark
@pytest.mark.parametrize("name, sep, spec", [
    ("t.csv", ",", None), ("t.tsv", "\t", None),
    ("t.tsv", "\t", "read: {quote: none, comment: '#'}\n"),
], ids=["csv", "tsv", "tsv-quote-none-comment"])
def test_both_engines_read_bare_cr_lines_alike(spark, tmp_path, name, sep, spec):
    records = RECORDS if spec is None else [  # '"' a character, '#' lines comments
        RECORDS[0], 'q1{s}a{s}x{s}"open', "# a comment", 'q1{s}b{s}y{s}z"', "q2{s}a{s}x{s}plain"]
    options = {}
    if spec:
        (tmp_path / "s.yaml").write_text(spec)
        options["spec"] = str(tmp_path / "s.yaml")
    path = _write(tmp_path, name, _text(sep, "\r", records))
    pandas_read = _read(_load(path, **options))
    assert _read(_load(path, engine="spark", keep_on_cluster=False, **options)) == pandas_read
    assert _read(_load(_write(tmp_path, "lf-" + name, _text(sep, "\n", records)),
                       **options)) == pandas_read


@pytest.mark.spark
@pytest.mark.parametrize("end", ["\r", "\n"], ids=["cr", "lf"])
def test_both_engines_name_the_line_of_a_long_record(spark, tmp_path, end):
    """After a quoted value holding a lone ``\\r`` in a file of either line end: that ``\\r``
    ends a line on both engines (Spark counted ``\\n`` alone where the file had one)."""
    records = [RECORDS[0], 'q1{s}a{s}x{s}"a\rb"', *RECORDS[2:3], "q3{s}c{s}x{s}z{s}extra"]
    path = _write(tmp_path, "long.csv", _text(",", end, records))
    for engine in ("pandas", "spark"):
        res = CliRunner().invoke(cli, ["validate", str(path), "--engine", engine])
        assert res.exit_code == 2, (engine, res.output)
        assert f"{path}, line 5: a record has more cells" in res.output, (engine, res.output)
