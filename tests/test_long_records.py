"""Records with more cells than the header has names (pandas engine).

pyarrow refuses a ragged file and pandas re-reads it to name the line; pandas made the first
column the index when every record had one cell more (every column shifted one to the left:
``q1,a1,1,2`` under ``item,annotator,label`` loaded item ``a1``, annotator ``1``, label ``2``,
exit 0), and with ``index_col=False`` it drops the extra cells with only a warning. A record
with a cell past the names (empty ones too, as on Spark) is now exit 2 naming its line.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import audit
from audit.cli import cli
from audit.errors import InputError


def _judgments(table):
    f = table.frame
    return sorted(zip(f["item"].astype(str), f["annotator"].astype(str),
                      f["label"].astype(str)))


@pytest.mark.parametrize("body, line", [
    ("q1,a1,1,2\nq1,b1,2,2\n", 2),  # every record long: the shift that passed silently
    ("q1,a1,1\nq1,b1,2,extra\n", 3),  # one long record after a good one
    ('q1,a1,"one\ntwo"\nq1,b1,2,9\n', 4),  # after a value spanning two lines
    ("q1,a1,1\nq1,b1,2,,\n", 3),  # extra cells, empty
])
def test_a_cell_past_the_header_is_refused_naming_its_line(tmp_path, body, line):
    path = tmp_path / "t.csv"
    path.write_text("item,annotator,label\n" + body)
    with pytest.raises(InputError, match="more cells than the header has names") as err:
        audit.load(path)
    assert f"line {line}" in str(err.value) and "t.csv" in str(err.value)
    result = CliRunner().invoke(cli, ["validate", str(path)])
    assert result.exit_code == 2 and f"line {line}:" in result.output, result.output


def test_empty_cells_past_the_header_are_refused_too_as_on_spark(tmp_path):
    """A separator at the end of every data line but not of the header: the header names one
    column fewer than the file holds; refused as the Spark engine refuses it (the engines
    agree), and the header with the name added reads the same judgments as without them."""
    plain = tmp_path / "plain.csv"
    plain.write_text("item,annotator,label\nq1,a,x\nq1,b,y\nq2,a,x\nq2,b,x\n")
    trailing = tmp_path / "trailing.csv"
    trailing.write_text("item,annotator,label\nq1,a,x,\nq1,b,y,\nq2,a,x,\nq2,b,x,\n")
    with pytest.raises(InputError, match="line 2") as err:
        audit.load(trailing)
    assert "past them: ''" in str(err.value)
    named = tmp_path / "named.csv"
    named.write_text(trailing.read_text().replace("label\n", "label,note\n", 1))
    assert _judgments(audit.load(named)) == _judgments(audit.load(plain))


def test_a_long_record_is_named_past_skipped_and_commented_lines(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text("exported by a tool\n# a comment\nitem\tannotator\tlabel\nq1\ta\tx\n"
                    "# another\nq1\tb\ty\tz\n")
    (tmp_path / "s.yaml").write_text("read: {skiprows: 1, comment: '#'}\n")
    with pytest.raises(InputError, match="line 6") as err:
        audit.load(path, spec=tmp_path / "s.yaml")
    assert "'z'" in str(err.value)
