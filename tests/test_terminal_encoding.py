"""Terminal output on a standard output that is not UTF-8 (``LC_ALL=C`` with ``PYTHONUTF8=0``,
``PYTHONIOENCODING=ascii``, a Latin-1 locale): characters the encoding lacks (model names,
pools, our own '·' and '–') are written as Python escapes, never an exit 3
(:func:`audit.cli._encodable_streams`). Real processes: the console script sets its streams."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXE = Path(sys.executable).with_name("annotation-audit")
MODELS = ("модель-α", "模型-β")


@pytest.fixture
def table(tmp_path):
    rows = ["item,annotator,model_a,model_b,label"]
    rows += [f"q{i},a{j},{MODELS[0]},{MODELS[1]},{(i + j) % 3 - 1}"
             for i in range(6) for j in range(3)]
    path = tmp_path / "u.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _run(args, env):
    return subprocess.run([str(EXE), *map(str, args)], capture_output=True, timeout=300,
                          env={**os.environ, **env})


ENVS = {"ascii": {"PYTHONIOENCODING": "ascii"},
        "latin-1": {"PYTHONIOENCODING": "latin-1"},
        "C-locale": {"LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": ""}}
ENCODING = {"ascii": "ascii", "latin-1": "latin-1", "C-locale": "ascii"}


@pytest.mark.parametrize("name", ENVS)
@pytest.mark.parametrize("command", [["run", "--bootstrap", 20, "--no-report"], ["validate"]])
def test_unicode_names_on_a_narrow_stdout(table, name, command):
    proc = _run([command[0], table, *command[1:]], ENVS[name])
    assert proc.returncode == 0, proc.stderr.decode("ascii", "replace")
    out = proc.stdout.decode(ENCODING[name])  # nothing the stream could not hold
    assert "·" in out or "\\xb7" in out  # our own separator, or its escape
    if command[0] == "run":
        assert MODELS[0].encode(ENCODING[name], "backslashreplace").decode() in out


@pytest.mark.parametrize("name", ENVS)
def test_csv_on_stdout_stays_utf8(table, name):
    """advise --csv writes its bytes, UTF-8 as OUT/advice.csv, whatever the terminal."""
    proc = _run(["advise", table, "--bootstrap", 20, "--csv", "--target", "labels"], ENVS[name])
    assert proc.returncode == 0, proc.stderr.decode("ascii", "replace")
    proc.stdout.decode("utf-8")


@pytest.mark.parametrize("name", ENVS)
def test_help_and_schema_on_a_narrow_stdout(name):
    for args in (["--help"], ["schema"], ["run", "--help"]):
        proc = _run(args, ENVS[name])
        assert proc.returncode == 0, (args, proc.stderr)
