"""A spec's ``columns`` mapping a source column named like a canonical column to another
canonical column: ``{item: annotator, annotator: item}`` (a swap) or ``{item: annotator,
annotator: worker}`` (a chain). Each entry reads the column it names, whatever that column's
own name, all at once, on both engines; before, the two columns were dropped as "shadowed" and
the message was "missing required column(s) 'item', 'annotator'" with both in the columns
present. A column taken by another entry and needed under its own name says so."""

from __future__ import annotations

import warnings

import pytest

from audit.contract import columns as C
from audit.errors import InputError
from audit.ingest import load

# the file's 'item' column holds annotators, its 'annotator' column items
SWAPPED = "item,annotator,label\nu1,i1,a\nu2,i1,b\nu1,i2,a\nu2,i2,a\nu1,i3,b\nu2,i3,b\n"
# the file's 'annotator' column holds items, 'worker' annotators, 'item' a batch number
CHAINED = ("item,annotator,worker,label\n7,i1,u1,a\n7,i1,u2,b\n7,i2,u1,a\n7,i2,u2,a\n"
           "7,i3,u1,b\n7,i3,u2,b\n")
EXPECTED = {("i1", "u1", "a"), ("i1", "u2", "b"), ("i2", "u1", "a"), ("i2", "u2", "a"),
            ("i3", "u1", "b"), ("i3", "u2", "b")}


def judgments(table) -> set:
    frame = table.frame.astype(str)
    return set(zip(frame[C.ITEM], frame[C.ANNOTATOR], frame[C.LABEL]))


def write(tmp_path, data: str, spec: str):
    (tmp_path / "d.csv").write_text(data)
    (tmp_path / "spec.yaml").write_text(spec)
    return tmp_path / "d.csv", tmp_path / "spec.yaml"


def quiet_load(data, *, spec, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load(data, spec=spec, **options)


CASES = [(SWAPPED, "columns: {item: annotator, annotator: item}\n"),
         (CHAINED, "columns: {item: annotator, annotator: worker}\n")]


@pytest.mark.parametrize("data, spec", CASES, ids=["swap", "chain"])
def test_each_entry_reads_the_column_it_names(tmp_path, data, spec):
    data, spec = write(tmp_path, data, spec)
    table = quiet_load(data, spec=spec)
    assert judgments(table) == EXPECTED


def test_a_column_read_as_another_says_so(tmp_path):
    """The 'annotator' column is read as items, and no entry names the annotators: the message
    says where the column of that name went, not only that it is missing."""
    data, spec = write(tmp_path, SWAPPED, "columns: {item: annotator}\n")
    with pytest.raises(InputError) as err:
        quiet_load(data, spec=spec)
    assert "missing required column(s) 'annotator'" in str(err.value)
    assert str(err.value).endswith("; column 'annotator' is read as 'item' (columns.item)")


@pytest.mark.spark
@pytest.mark.parametrize("data, spec", CASES, ids=["swap", "chain"])
def test_spark_reads_them_as_pandas(spark, tmp_path, data, spec):
    data, spec = write(tmp_path, data, spec)
    assert judgments(quiet_load(data, spec=spec, engine="spark")) == EXPECTED


@pytest.mark.spark
def test_spark_says_where_the_column_went(spark, tmp_path):
    data, spec = write(tmp_path, SWAPPED, "columns: {item: annotator}\n")
    with pytest.raises(InputError) as err:
        quiet_load(data, spec=spec, engine="spark")
    assert str(err.value).endswith("; column 'annotator' is read as 'item' (columns.item)")
