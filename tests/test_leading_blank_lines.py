"""A table file that starts with blank lines (a script that wrote a newline first, files
concatenated) is read as the readers read it: the blank lines are passed over and the header
is the first line that is not blank. Format detection looked at the first line only and found
no columns there: exit 2, "cannot detect the format", for a file that loads with a spec.
Found by tests/test_fuzz_tables.py."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from audit.cli import cli
from audit.ingest import detect_format, load

ROWS = [("1", "a", "x"), ("1", "b", "y"), ("2", "a", "x")]


def table_text(suffix: str, newline: str) -> str:
    if suffix == ".jsonl":
        lines = [json.dumps({"item": i, "annotator": a, "label": lab}) for i, a, lab in ROWS]
    else:
        sep = "\t" if suffix == ".tsv" else ","
        lines = [sep.join(("item", "annotator", "label"))] + [sep.join(r) for r in ROWS]
    return newline.join(lines) + newline


@pytest.mark.parametrize("suffix, blank", [
    (".csv", "{nl}"), (".csv", "{nl}{nl}"), (".tsv", "{nl}"), (".jsonl", "{nl}"),
    (".jsonl", "{nl}  {nl}"),  # JSON Lines passes over lines of spaces too
])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_blank_lines_before_the_first_record(tmp_path, suffix, newline, blank):
    path = tmp_path / f"t{suffix}"
    path.write_bytes((blank.format(nl=newline) + table_text(suffix, newline)).encode())
    assert detect_format(path) == "table"
    table = load(path)
    assert len(table.frame) == 3
    assert table.frame["annotator"].astype(str).tolist() == ["a", "b", "a"]
    result = CliRunner().invoke(cli, ["validate", str(path)])
    assert result.exit_code == 0, result.output


def test_a_file_of_blank_lines_is_still_empty(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("\n\n  \n")
    result = CliRunner().invoke(cli, ["validate", str(path)])
    assert result.exit_code == 2
    assert "the file is empty" in result.stderr
