"""A data file of a folder that cannot be read: a broken symbolic link (a DVC or git-annex file
not fetched), a FIFO. The folder's listing kept regular files only and pyarrow's and Spark's
discovery skip such entries, so the audit read the other files, exit 0, a split or a partition
short without a word. Each is now exit 2 naming the entry, on both engines."""

from __future__ import annotations

import os
import sys

import pytest
from click.testing import CliRunner

from audit.cli import cli

TABLE = "item,annotator,label\nq1,a,1\nq1,b,1\nq2,a,0\nq2,b,1\n"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX links and FIFOs")


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def one_error(result) -> str:
    assert result.exit_code == 2, result.output
    (line,) = [ln for ln in result.output.splitlines() if ln.startswith("error:")]
    return line


@pytest.fixture
def csv_folder(tmp_path):
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "a.csv").write_text(TABLE)
    os.symlink("b-not-fetched.csv", folder / "b.csv")
    return folder


@pytest.fixture
def parquet_folder(tmp_path):
    import pandas as pd

    folder = tmp_path / "p"
    folder.mkdir()
    pd.DataFrame({"item": ["1", "1"], "annotator": ["a", "b"], "label": ["x", "y"]}) \
        .to_parquet(folder / "part-0.parquet")
    os.symlink("part-9.parquet", folder / "part-1.parquet")
    return folder


def test_a_broken_link_in_a_folder_of_splits(csv_folder):
    line = one_error(invoke("validate", csv_folder))
    assert f"{csv_folder / 'b.csv'}" in line and "broken symbolic link (to b-not-fetched.csv)" \
        in line


def test_a_broken_part_of_a_parquet_dataset(parquet_folder):
    line = one_error(invoke("validate", parquet_folder))
    assert line == (f"error: {parquet_folder / 'part-1.parquet'}: is a broken symbolic link "
                    f"(to part-9.parquet), a part of the Parquet dataset {parquet_folder} that "
                    "cannot be read: fetch it or remove it")


def test_a_fifo_in_a_folder_of_splits(tmp_path):
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "a.csv").write_text(TABLE)
    os.mkfifo(folder / "b.csv")
    line = one_error(invoke("validate", folder))
    assert "b.csv" in line and "pipe or FIFO" in line


def test_a_broken_link_given_as_the_source(tmp_path):
    os.symlink("gone.csv", tmp_path / "t.csv")
    line = one_error(invoke("validate", tmp_path / "t.csv"))
    assert line.endswith("file not found: a broken symbolic link (to gone.csv)")


def test_hidden_broken_links_are_not_parts(parquet_folder):
    (parquet_folder / "part-1.parquet").unlink()
    os.symlink("nowhere", parquet_folder / "_SUCCESS.lock")
    os.symlink("nowhere", parquet_folder / ".part-1.parquet.crc")
    assert invoke("validate", parquet_folder, "--quiet").exit_code == 0


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_spark_refuses_them_too(spark, csv_folder, parquet_folder, kind):
    folder = csv_folder if kind == "csv" else parquet_folder
    args = ["--format", "table"] if kind == "parquet" else []
    line = one_error(invoke("validate", folder, "--engine", "spark", *args))
    assert "broken symbolic link" in line
