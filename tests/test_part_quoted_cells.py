"""A cell quoted in part (``"ab"cd``: a quote closed before the cell ends) reads the same on
both engines, in its ids and labels.

RFC 4180 does not allow such a cell. The pandas engine's readers are lenient and agree with one
another: pyarrow (its first reader), pandas' C parser and the ``csv`` module all read the quoted
part and then the rest (``abcd``); checking every file's quoting for the pandas engine would cost
a pass over its bytes (0.6 s for the 383 MB CSV of 10M judgments, against a 4.4 s read), so it
keeps that reading. Spark's reader kept the quotes (``"ab"cd``), with exit 0: an id or label the
pandas engine (and a pools file) spells otherwise. Spark now reads such an id or label as the
pandas engine does; one it cannot (more than two quotes: which was the quoted part cannot be
told) is exit 2 naming it. A value quoted whole that starts with a quote (the text ``"ab"cd``
written with its quotes doubled) is read as written by both, as before. Texts keep Spark's
reading.
"""

from __future__ import annotations

import csv
import io
import warnings

import pytest
from click.testing import CliRunner

from audit.cli import cli
from audit.ingest import load
from tests.test_quoted_line_breaks import _judgments


def _write(tmp_path, rows, *, name: str = "t.csv"):
    sep = "\t" if name.endswith(".tsv") else ","
    path = tmp_path / name
    path.write_bytes("".join(sep.join(r) + "\n" for r in rows).encode())
    return path


#: an item, an annotator and a label quoted in part, as the pandas engine's readers read them
ROWS = [["item", "annotator", "label"], ['"q1"x', "a", '"y"z'], ['"q1"x', '"b" c', "y"],
        ["q2", "a", '"x,1"2'], ["q2", '"b" c', "y"]]
READ = [("q1x", "a", "yz"), ("q1x", "b c", "y"), ("q2", "a", "x,12"), ("q2", "b c", "y")]


@pytest.mark.parametrize("name", ["t.csv", "t.tsv"])
def test_the_pandas_engine_reads_as_its_readers_do(tmp_path, name):
    """pyarrow, pandas' C parser and the ``csv`` module read such a cell alike."""
    import pandas as pd
    import pyarrow.csv as pcsv

    path = _write(tmp_path, ROWS, name=name)
    sep = "\t" if name.endswith(".tsv") else ","
    data = path.read_bytes()
    arrow = pcsv.read_csv(io.BytesIO(data), parse_options=pcsv.ParseOptions(delimiter=sep))
    c_parser = pd.read_csv(io.BytesIO(data), sep=sep, dtype=str)
    module = list(csv.reader(io.StringIO(data.decode(), newline=""), delimiter=sep))[1:]
    expected = [tuple(r) for r in [["q1x", "a", "yz"], ["q1x", "b c", "y"], ["q2", "a", "x,12"],
                                   ["q2", "b c", "y"]]]
    assert [tuple(r.values()) for r in arrow.to_pylist()] == expected
    assert [tuple(r) for r in c_parser.values.tolist()] == expected
    assert [tuple(r) for r in module] == expected
    assert _judgments(path) == READ


@pytest.mark.spark
@pytest.mark.parametrize("name", ["t.csv", "t.tsv"])
def test_spark_reads_ids_and_labels_as_the_pandas_engine(spark, tmp_path, name):
    path = _write(tmp_path, ROWS, name=name)
    assert _judgments(path, engine="spark", keep_on_cluster=False) == READ


@pytest.mark.spark
def test_spark_reads_them_so_on_the_cluster_path(spark, tmp_path):
    """A pairwise table kept on the cluster: its items and models read as pandas reads them."""
    rows = [["item", "annotator", "model_a", "model_b", "label"],
            ['"q1"x', "a", '"m1"a', "m2", "-1"], ['"q1"x', "b", '"m1"a', "m2", "1"]]
    path = _write(tmp_path, rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kept = load(str(path), engine="spark", keep_on_cluster=True)
        table = load(str(path))
    items = sorted(r["name"] for r in kept.items.collect())
    assert items == sorted(table.frame["item"].unique()) == ["q1x"]
    assert list(kept.models) == sorted(table.frame["model_a"].unique().tolist() + ["m2"]) \
        == ["m1a", "m2"]


@pytest.mark.spark
def test_a_value_quoted_whole_that_starts_with_a_quote_is_read_as_written(spark, tmp_path):
    """``\"\"\"ab\"\"cd\"`` is the text ``"ab"cd`` (RFC 4180): read so by both engines, where
    no cell of the file is quoted in part, though Spark's reading of it looks like one."""
    rows = [["item", "annotator", "label"], ['"""q1""x"', "a", '"""y"""'], ['"""q1""x"', "b", "y"],
            ["q2", "a", "x"], ["q2", "b", "y"]]
    path = _write(tmp_path, rows)
    assert _judgments(path) == [('"q1"x', "a", '"y"'), ('"q1"x', "b", "y"), ("q2", "a", "x"),
                                ("q2", "b", "y")]
    assert _judgments(path, engine="spark", keep_on_cluster=False) == _judgments(path)


@pytest.mark.spark
@pytest.mark.parametrize("cell, spark_reads", [('"a""b"c', '"a"b"c'), ('"ab"c"d', '"ab"c"d')])
def test_a_cell_spark_cannot_read_back_is_refused(spark, tmp_path, cell, spark_reads):
    """More than two quotes in Spark's reading: which was the quoted part cannot be told."""
    path = _write(tmp_path, [["item", "annotator", "label"], ["q1", "a", cell], ["q1", "b", "y"]])
    assert _judgments(path)[0][2] == next(csv.reader([cell]))[0]  # the pandas engine reads it
    res = CliRunner().invoke(cli, ["validate", str(path), "--engine", "spark"])
    assert res.exit_code == 2, res.output
    assert (f"error: {path}, column 'label', item 'q1', annotator 'a': a value quoted in part "
            f"({spark_reads!r} as Spark reads it: a quote closed before the cell ends") \
        in res.output


@pytest.mark.spark
def test_texts_keep_sparks_reading(spark, tmp_path):
    """A text quoted in part does not change how the ids and labels are read, nor refuse."""
    rows = [["item", "annotator", "label", "text"], ["q1", "a", "x", '"Great" answer'],
            ["q1", "b", "y", "plain"]]
    path = _write(tmp_path, rows)
    assert _judgments(path, engine="spark", keep_on_cluster=False) == _judgments(path) == \
        [("q1", "a", "x"), ("q1", "b", "y")]
