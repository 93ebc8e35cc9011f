"""A byte that is not UTF-8 is refused by both engines, in the same words.

The pandas engine refuses such a file (exit 2, naming the byte's offset and line:
:func:`audit.ingest.readers.text.utf8_error`). Spark's CSV reader put U+FFFD for the byte and read
on with exit 0: the annotator ``Zo\\xeb`` (Windows-1252) became ``Zo\\ufffd``, matching nothing in a
pools file (and two different bad names became one); its JSON reader made the record one it could
not parse, read as empty ids (schema failures). A local file is now checked on the driver before
Spark reads it; a file Spark reads on the cluster (``s3a://``, here a local file the driver is told
it cannot see) is refused by a value holding U+FFFD or bytes that are not UTF-8, found in the
pass that counts the judgments.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from audit.cli import cli

#: (file name, its bytes): a byte of Windows-1252 in an id or a label, CSV / TSV / JSON(L)
FILES = {
    "annotator.csv": b"item,annotator,label\nq1,Zo\xeb,x\nq1,b,y\nq2,Zo\xeb,x\nq2,b,y\n",
    "label.tsv": b"item\tannotator\tlabel\nq1\ta\tx\nq1\tb\ty\xe9\nq2\ta\tx\nq2\tb\ty\n",
    "item.csv": b"item,annotator,label\r\nq1,a,x\r\nq\xff1,b,y\r\n",
    "annotator.jsonl": (b'{"item": "q1", "annotator": "Zo\xeb", "label": "x"}\n'
                        b'{"item": "q1", "annotator": "b", "label": "y"}\n'),
    "label.json": (b'[{"item": "q1", "annotator": "a", "label": "x"},\n'
                   b' {"item": "q1", "annotator": "b", "label": "y\xe9"}]\n'),
}
CASES = pytest.mark.parametrize("name", list(FILES))


def _write(folder, name: str, data: bytes):
    path = folder / name
    path.write_bytes(data)
    return path


def _error(path, engine: str, *options) -> str:
    res = CliRunner().invoke(cli, ["validate", str(path), "--engine", engine, *options])
    assert res.exit_code == 2, (engine, res.output)
    return next(line for line in res.output.splitlines() if line.startswith("error:"))


@CASES
def test_the_pandas_engine_names_the_byte(tmp_path, name):
    path = _write(tmp_path, name, FILES[name])
    assert _error(path, "pandas").startswith(
        f"error: {path}: not UTF-8 text: invalid byte at byte offset ")


@pytest.mark.spark
@CASES
def test_spark_refuses_it_in_the_pandas_engines_words(spark, tmp_path, name):
    path = _write(tmp_path, name, FILES[name])
    assert _error(path, "spark") == _error(path, "pandas")


@pytest.mark.spark
def test_a_folder_a_glob_and_a_file_url_name_the_file_and_line(spark, tmp_path):
    folder = tmp_path / "lake"
    folder.mkdir()
    _write(folder, "a.csv", b"item,annotator,label\nq1,a,x\nq1,b,y\n")
    bad = _write(folder, "b.csv", FILES["annotator.csv"])
    words = _error(bad, "pandas").split(": ", 2)[2]
    assert "(line 2)" in words
    for source in (folder, folder / "*.csv", f"file://{folder}/b.csv"):
        assert _error(source, "spark") == f"error: {bad}: {words}", source


@pytest.mark.spark
def test_utf16_text_is_named_as_the_pandas_engine_names_it(spark, tmp_path):
    """ASCII in UTF-16 without a byte-order mark is valid UTF-8 byte by byte (every other byte
    NUL): the pandas engine names it by its NULs, and Spark read garbled column names."""
    path = _write(tmp_path, "t.csv", "item,annotator,label\nq1,a,x\n".encode("utf-16-le"))
    assert "UTF-16" in _error(path, "pandas")
    assert _error(path, "spark") == _error(path, "pandas")


@pytest.fixture
def on_the_cluster(monkeypatch):
    """Sources read as Spark reads a URL whose bytes the driver cannot see (``s3a://``).
    (``raising=False``: where there is no such check, the test fails on what Spark reads.)"""
    from audit.ingest.spark import read

    monkeypatch.setattr(read, "local_files", lambda source, kind: None, raising=False)


@pytest.mark.spark
@pytest.mark.parametrize("name, column, judgment", [
    ("annotator.csv", "annotator", "item 'q1', annotator 'Zo\ufffd'"),
    ("label.tsv", "label", "item 'q1', annotator 'b'"),
    ("item.csv", "item", "item 'q\ufffd1', annotator 'b'"),
])
def test_a_file_read_on_the_cluster_is_refused_by_its_replacement_character(
        spark, tmp_path, on_the_cluster, name, column, judgment):
    path = _write(tmp_path, name, FILES[name])
    assert _error(path, "spark") == (
        f"error: {path}, column {column!r}, {judgment}: not UTF-8 text, or text holding U+FFFD: "
        "a value holds bytes that are not UTF-8, or U+FFFD, the character Spark's CSV reader "
        "puts for such a byte (a file read on the cluster is not checked byte by byte, as a "
        "local file is); save the file as UTF-8")


@pytest.mark.spark
def test_a_json_lines_file_read_on_the_cluster_is_refused_by_its_bad_bytes(
        spark, tmp_path, on_the_cluster):
    """Spark's JSON reader keeps such a record's text, bytes and all, in its column for the
    records it cannot parse."""
    path = _write(tmp_path, "t.jsonl", FILES["annotator.jsonl"])
    error = _error(path, "spark")
    assert error.startswith(f"error: {path}") and (
        ": not UTF-8 text, or text holding U+FFFD: a record Spark's reader could not parse "
        "holds bytes that are not UTF-8") in error


@pytest.mark.spark
def test_a_file_read_on_the_cluster_is_refused_by_a_bad_byte_in_any_column(
        spark, tmp_path, on_the_cluster):
    """Not only the ids and labels: a text the audit carries, and a column no spec maps."""
    path = _write(tmp_path, "t.csv", b"item,annotator,label,text,note\nq1,a,x,fine,ok\n"
                                     b"q1,b,y,caf\xe9,ok\nq2,a,x,fine,n\xe9e\n")
    assert _error(path, "spark").startswith(f"error: {path}, column 'text', item 'q1'")


@pytest.mark.spark
@pytest.mark.parametrize("cluster", [False, True], ids=["local", "on-the-cluster"])
def test_utf8_text_reads_alike_on_both_engines(spark, tmp_path, monkeypatch, cluster):
    """Guards: non-ASCII UTF-8 ids and labels are read, the same on both engines; a local
    file that holds U+FFFD itself is UTF-8, and read (on the cluster it cannot be told from a
    byte Spark replaced, and is refused saying so)."""
    import warnings

    from audit.ingest import load
    from audit.ingest.spark import read

    data = "item,annotator,label\nq1,Zoë,x\nq1,Ω,ÿ\nq2,Zoë,x\nq2,Ω,\ufffd\n".encode()
    path = _write(tmp_path, "t.csv", data)
    if cluster:
        monkeypatch.setattr(read, "local_files", lambda source, kind: None, raising=False)
        assert "holding U+FFFD" in _error(path, "spark")
        path = _write(tmp_path, "t.csv", data.replace("\ufffd".encode(), b"y"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tables = [load(str(path)), load(str(path), engine="spark", keep_on_cluster=False)]
    judgments = [sorted(zip(*(t.frame[c].astype(str) for c in ("item", "annotator", "label"))))
                 for t in tables]
    assert judgments[0] == judgments[1]
    assert ("q1", "Zoë", "x") in judgments[1]
