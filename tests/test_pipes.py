"""A data file that is a pipe, a FIFO or a device (``<(zcat data.csv.gz)``, ``mkfifo``,
``/dev/null``): refused by name, exit 2, before anything opens it. Data files are read more than
once (format, columns, table), and a pipe read again is empty: that was told as "the file is
empty (no header row)" or a parse error, and a FIFO nobody writes to waited for ever. A spec,
read once, may still come from a pipe (:func:`audit.ingest.sources.existing_path`)."""

from __future__ import annotations

import os
import sys

import pytest
from click.testing import CliRunner

from audit.cli import cli

TABLE = "item,annotator,label\nq1,a,1\nq1,b,1\nq2,a,0\nq2,b,1\nq3,a,1\nq3,b,0\n"
POOLS = "annotator,pool\na,x\nb,y\n"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX pipes and FIFOs")


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def pipe():
    """``pipe(text)``: a /dev/fd path reading ``text`` from a pipe, as ``<(...)`` gives."""
    opened = []

    def make(text: str) -> str:
        read, write = os.pipe()
        os.write(write, text.encode())
        os.close(write)
        opened.append(read)
        return f"/dev/fd/{read}"

    yield make
    for fd in opened:
        os.close(fd)


def one_error(result) -> str:
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.output.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    return lines[0]


@pytest.mark.parametrize("fmt", ["auto", "table"])
def test_a_pipe_as_source(pipe, fmt):
    path = pipe(TABLE)
    line = one_error(invoke("validate", path, "--format", fmt))
    assert line == (f"error: {path}: is a pipe or FIFO, not a regular file: data is read more "
                    "than once; write it to a file and give that")


def test_a_pipe_as_pools(pipe, tmp_path):
    (tmp_path / "t.csv").write_text(TABLE)
    path = pipe(POOLS)
    line = one_error(invoke("validate", tmp_path / "t.csv", "--pools", path))
    assert path in line and "pipe or FIFO" in line


def test_a_fifo_without_a_writer_is_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "judgments.csv"
    os.mkfifo(fifo)
    line = one_error(invoke("validate", fifo))  # opening it would block for ever
    assert str(fifo) in line and "pipe or FIFO" in line


def test_dev_null_is_a_device():
    line = one_error(invoke("validate", os.devnull))
    assert "is a device, not a regular file" in line


def test_a_spec_from_a_pipe_is_still_read(pipe, tmp_path):
    (tmp_path / "t.csv").write_text(TABLE)
    spec = pipe("columns:\n  item: item\n  annotator: annotator\n  label: label\n")
    result = invoke("validate", tmp_path / "t.csv", "--spec", spec, "--quiet")
    assert result.exit_code == 0, result.output
