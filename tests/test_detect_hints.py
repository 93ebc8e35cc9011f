""""Cannot detect the format" for a table that is almost a long table says what it lacks
(:func:`audit.ingest.detect.missing_columns_hint`): the columns missing, names that differ only
in case, and how vote counts per item are read (``label.from_counts``)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from audit.cli import cli


def run(tmp_path, text):
    (tmp_path / "t.csv").write_text(text, encoding="utf-8")
    return CliRunner().invoke(cli, ["run", str(tmp_path / "t.csv"), "--out", str(tmp_path / "o")])


def test_a_table_of_vote_counts_points_to_from_counts(tmp_path):
    result = run(tmp_path, "item,n_toxic,n_ok,label\nq1,3,2,toxic\n")
    assert result.exit_code == 2
    assert "a long table needs the column 'annotator', which it lacks" in result.output
    assert ("a table of vote counts per item is read with a spec's label.from_counts"
            in result.output)


def test_names_differing_in_case_are_named(tmp_path):
    result = run(tmp_path, "Item,Annotator,label\nq1,a,1\n")
    assert result.exit_code == 2
    assert ("needs the columns 'item', 'annotator', which it lacks (names are matched exactly: "
            "it has 'Item' for 'item', 'Annotator' for 'annotator')") in result.output
    assert "vote counts" not in result.output  # it has an annotator column, named otherwise


@pytest.mark.parametrize("text", ["a,b\n1,2\n", "x;y;z\n1;2;3\n"])
def test_unrelated_tables_get_no_hint(tmp_path, text):
    result = run(tmp_path, text)
    assert result.exit_code == 2 and "a long table needs" not in result.output
