"""An adversarial sweep of every output channel, through the real commands and renderers.

``test_escape_channels.py`` checks each escaper alone and ``test_ci_injection.py`` one fixed set
of hostile names through the CLI; this file throws arbitrary Unicode (hypothesis, with the
fragments attacks are made of: ``\\n::add-mask::``, ``##[``, ESC and OSC 8 sequences, bidi
overrides, ``=HYPERLINK(``, Markdown and HTML syntax) into the fields the other two leave out,
and holds each channel to its invariant:

* ``advise --csv`` (data on standard output): the bytes of ``advice.csv`` for a file or a
  program, whatever the cells hold; inert where a person or a CI runner reads it (a terminal, a
  CI job's pipe), with a warning.
* JUnit XML (``check --junit``): parsed by :mod:`xml.etree` back to each string as
  :mod:`audit.escape.xml` shows it, and inert when printed (``--junit /dev/stdout``,
  ``cat junit.xml``): a data line break cannot start a line with ``::``, nor ``##[`` appear.
* JSON (``results.json``, ``croissant.json``, ``--json``): written whatever a name holds (a
  file name that is not UTF-8 included), read back by :func:`json.loads` as the value written,
  and inert when printed (``check --json /dev/stdout`` in a CI log): no raw control, bidi or
  invisible character, no line the Actions runner reads as a command.

Each regression test here failed before the fix it names (CHANGELOG, 2026-12-06 morning).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from actions_runner import commands
from hypothesis import strategies as st
from test_escape_channels import HOSTILE

from audit.cli import cli
from audit.escape import CONTROL
from audit.escape import json as json_esc
from audit.escape import xml as xml_esc

FAST = settings(max_examples=300, deadline=None)


def preference_rows(n_items: int = 12, *, models=("m0", "m1", "m2"), pools=("p0", "p1"),
                    texts=None) -> list[dict]:
    """Pairwise judgments: two pools of two annotators each on every item; labels vary enough
    for every statistic to be defined."""
    rows = []
    for i in range(n_items):
        a, b = i % len(models), (i + 1) % len(models)
        for p, pool in enumerate(pools):
            for j in range(2):
                label = (-1, 1, 0, 1, -1)[(i + p + j * (i % 2)) % 5]
                rows.append({"item": f"it{i}", "annotator": f"{pool}-a{j}", "pool": pool,
                             "model_a": models[a], "model_b": models[b], "label": label,
                             "text": (texts or ["prompt"])[i % len(texts or ["prompt"])]})
    return rows


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def assert_inert_text(text: str, *, breaks: str = "\n") -> None:
    """``text`` printed to a terminal or a CI log acts on neither: no :data:`CONTROL` character
    but ``breaks``, no line the Actions runner reads as a workflow command (either syntax)."""
    assert not CONTROL.search(text.translate({ord(c): None for c in breaks})), repr(text)
    assert commands(text) == [], commands(text)


# -- JSON ------------------------------------------------------------------------------------------
def _as_read(value):
    """``value`` as a JSON reader gets it back: adjacent surrogates that form a pair join."""
    if isinstance(value, str):
        return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    if isinstance(value, dict):
        return {_as_read(k): _as_read(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_read(v) for v in value]
    return value


@FAST
@given(st.dictionaries(HOSTILE, st.one_of(HOSTILE, st.lists(HOSTILE, max_size=3)), max_size=4))
def test_json_text_is_utf8_and_reads_back_as_written(data):
    dumped = json.dumps(data, indent=2, ensure_ascii=False)
    out = json_esc.text(dumped)
    out.encode("utf-8")  # a lone surrogate no longer makes the file unwritable
    assert json.loads(out) == _as_read(data)
    assert_inert_text(out)
    if not json_esc.RAW.search(dumped):
        assert out == dumped  # ordinary text: the bytes json.dumps wrote


def test_a_source_file_name_that_is_not_utf8_is_written_into_results_json(tmp_path):
    """A file name in Latin-1 (``caf\\xe9.jsonl``) is a string with a lone surrogate in Python;
    ``run --out`` wrote it raw into results.json's text, which cannot be encoded: exit 3 (an
    internal error), no output. The JSON now holds the surrogate as its escape."""
    name = os.fsdecode(b"caf\xe9")
    try:
        source = write_jsonl(tmp_path / f"{name}.jsonl", preference_rows())
    except (OSError, UnicodeEncodeError):
        pytest.skip("this file system refuses a file name that is not UTF-8")
    out = tmp_path / "out"
    result = invoke("run", source, "--out", out, "--bootstrap", 20, "--quiet")
    assert result.exit_code == 0, result.output
    from audit.results import read

    results = read(out / "results.json")  # checked against the manifest and its run id
    assert results["dataset"]["name"] == name and results["meta"]["source"] == str(source)
    assert '"caf\\udce9"' in (out / "results.json").read_text("utf-8")
    croissant = json.loads((out / "croissant.json").read_text("utf-8"))
    assert croissant["name"] == name
    assert "caf\\udce9" in (out / "report.html").read_text("utf-8")  # shown, as in the card
    assert "caf\\\\udce9" in (out / "dataset_card.md").read_text("utf-8")


def test_a_tag_flag_that_is_not_utf8_is_written_into_the_card_set(tmp_path):
    """``--tag`` with a byte that is not UTF-8 (``$'t\\x9b'`` in bash) was exit 3 for the same
    reason (the run id is a digest of results.json's text); the card's YAML holds the tag as an
    escape, which reads back as the flag gave it."""
    source = write_jsonl(tmp_path / "d.jsonl", preference_rows())
    tag = os.fsdecode(b"t\x9b")
    result = invoke("card", source, "--out", tmp_path / "card", "--bootstrap", 20, "--quiet",
                    "--tag", tag)
    assert result.exit_code == 0, result.output
    from audit.report.card import parse_card

    meta, _ = parse_card((tmp_path / "card" / "dataset_card.md").read_text("utf-8"))
    assert meta["tags"] == [tag]


HOSTILE_MODELS = ("m\u202e(reversed)", "m ##[add-mask]secret", "m\x9b31m\x85", "m\u2028::error::x",
                  "m\u200bzw\ufeff", "m\U000e0041tag", "m\x7f")
SUITE = ("suite: s\nexpectations:\n  - expect: models_in_set\n    values: [m0]\n"
         "    claim: \"claim \\u202e ##[add-mask]c\"\n")


def test_check_json_and_results_json_are_inert_when_printed(tmp_path):
    """``check --json /dev/stdout`` printed great_expectations' result with every name raw: a
    model named ``m ##[add-mask]secret`` was a legacy workflow command in a CI log (the runner
    reads ``##[`` anywhere in a line), a bidi override reordered the lines around it, a C1
    CSI (``\\x9b``) drove the terminal. Every JSON file now writes them as JSON escapes, so
    the values read back exactly and the text is inert."""
    source = write_jsonl(tmp_path / "d.jsonl", preference_rows(models=HOSTILE_MODELS))
    suite = tmp_path / "s.yaml"
    suite.write_text(SUITE, encoding="utf-8")
    result = invoke("check", source, "--suite", suite, "--json", tmp_path / "v.json",
                    "--out", tmp_path / "out", "--bootstrap", 20, "--quiet")
    assert result.exit_code == 1, result.output
    for path in (tmp_path / "v.json", tmp_path / "out" / "results.json",
                 tmp_path / "out" / "croissant.json", tmp_path / "out" / "croissant_rai.json"):
        text = path.read_text("utf-8")
        assert_inert_text(text)
        json.loads(text)
    validation = (tmp_path / "v.json").read_text("utf-8")
    assert "m ##\\u005b" + "add-mask]secret" in validation
    results = json.loads((tmp_path / "out" / "results.json").read_text("utf-8"))
    assert set(results["dataset"]["models"]) == set(HOSTILE_MODELS)  # exactly as written


# -- JUnit XML -------------------------------------------------------------------------------------
@FAST
@given(HOSTILE, HOSTILE)
def test_junit_reads_back_and_is_inert_when_printed(a, b):
    import xml.etree.ElementTree as ET

    from test_escape_channels import fake_validation

    from audit.suites.junit import junit_error_xml, junit_xml

    doc = junit_xml(fake_validation(a, b))
    assert_inert_text(doc, breaks="\n\t")
    failure = ET.fromstring(doc.encode("utf-8")).find(".//failure")
    assert xml_esc.attribute(a) in failure.get("message")
    assert xml_esc.text(a) in failure.text and xml_esc.text(b) in failure.text
    error = junit_error_xml(f"bad {a}", suite=b, name=f"check {a}", error_type="InputError",
                            file=b, line=2)
    assert_inert_text(error, breaks="\n\t")
    case = ET.fromstring(error.encode("utf-8")).find(".//testcase")
    assert case.get("classname") == xml_esc.attribute(b)
    assert case.find("error").text == xml_esc.text(f"bad {a}")


def test_check_junit_printed_in_a_ci_log_issues_no_command(tmp_path):
    """``check --junit /dev/stdout`` (or ``cat junit.xml`` in a CI step): a model named
    ``m\\n::add-mask::secret`` put the line ``::add-mask::secret`` into a ``<failure>`` body,
    and ``##[error]`` anywhere in a name was a legacy command. Both are now written as
    character references (``&#58;``, ``&#91;``), which a JUnit reader reads back as written."""
    import xml.etree.ElementTree as ET

    hostile = "m\n  ::add-mask::secret ##[error]x"
    source = write_jsonl(tmp_path / "d.jsonl", preference_rows(models=("m0", "m1", hostile)))
    suite = tmp_path / "s.yaml"
    suite.write_text("suite: s\nexpectations:\n  - expect: models_in_set\n    values: [m0]\n",
                     encoding="utf-8")
    junit = tmp_path / "junit.xml"
    result = invoke("check", source, "--suite", suite, "--junit", junit, "--bootstrap", 20,
                    "--quiet")
    assert result.exit_code == 1, result.output
    text = junit.read_text("utf-8")
    assert_inert_text(text)
    failure = ET.parse(junit).find(".//failure")
    assert hostile in failure.get("message") and hostile in failure.text


# -- advise --csv: data on standard output ---------------------------------------------------------
ADVICE_NAMES = ("a\x1b[31mred\x1b[0m", "b\n::add-mask::secret", "c ##[error]x", "d\u202erev",
                "=HYPERLINK(\"http://x\")")


def _advice_source(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "d.jsonl", preference_rows(
        20, models=ADVICE_NAMES[:3] + ("m3",), pools=("p\x1b]0;t\x07", ADVICE_NAMES[1]),
        texts=list(ADVICE_NAMES) + ["line one\n::stop-commands::tok\nline three"]))


def test_advise_csv_to_a_program_is_the_bytes_of_advice_csv(tmp_path):
    """click.echo removes ANSI sequences from text bound for a non-terminal, so
    ``advise --csv | tool`` deleted ``\\x1b[31m`` from a model name: the CSV a program read
    named a model nobody wrote. Outside a CI job a pipe, a file or a captured stream gets
    advice.csv's bytes exactly."""
    source = _advice_source(tmp_path)
    common = ("advise", source, "--bootstrap", 20, "--quiet", "--target", "labels")
    printed = CliRunner(env={"CI": None, "GITHUB_ACTIONS": None}).invoke(
        cli, [str(a) for a in (*common, "--csv")], catch_exceptions=False)
    written = invoke(*common, "--out", tmp_path / "o")
    assert printed.exit_code == 0 and written.exit_code == 0, printed.output + written.output
    assert printed.stdout.encode("utf-8") == (tmp_path / "o" / "advice.csv").read_bytes()
    assert "a\x1b[31mred" in printed.stdout


def _advise_process(source: Path, env: dict, stdout):
    import subprocess
    import sys

    exe = Path(sys.executable).with_name("annotation-audit")
    return subprocess.run([str(exe), "advise", str(source), "--bootstrap", "20", "--quiet",
                           "--target", "labels", "--csv"], stdout=stdout,
                          stderr=subprocess.PIPE, env=env, timeout=600, check=False)


def test_advise_csv_in_a_ci_log_is_inert_and_to_a_file_exact(tmp_path):
    """In a CI job, ``advise --csv`` printed its cells raw into the log: a text or pool holding
    ``\\n::add-mask::secret`` or ``\\n::stop-commands::tok`` was a workflow command the
    runner obeyed, ESC and OSC sequences reached the log viewer. Through the job's pipe each
    cell is now shown inert (one line per item, a warning naming the way to the exact bytes);
    redirected to a file it is still advice.csv's bytes."""
    import subprocess

    source = _advice_source(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_ACTIONS")}
    exact = _advise_process(source, env, subprocess.PIPE)  # a pipe outside CI: a program's
    assert exact.returncode == 0, exact.stderr
    assert b"a\x1b[31mred" in exact.stdout and commands(exact.stdout.decode("utf-8"))
    log = _advise_process(source, {**env, "GITHUB_ACTIONS": "true"}, subprocess.PIPE)
    assert log.returncode == 0, log.stderr
    shown = log.stdout.decode("utf-8")
    assert_inert_text(shown)
    assert "a\\x1b[31mred" in shown and "line one\\n::stop-commands::tok" in shown
    stderr = log.stderr.decode("utf-8")
    assert "warning: advise --csv:" in stderr and "--csv > advice.csv" in stderr
    assert_inert_text(stderr)
    import csv
    import io

    rows = list(csv.reader(io.StringIO(shown)))
    assert len(rows) == len(shown.splitlines())  # one line per item: no cell spans two
    with (tmp_path / "advice.csv").open("wb") as fh:
        to_file = _advise_process(source, {**env, "CI": "true"}, fh)
    assert to_file.returncode == 0 and b"warning: advise" not in to_file.stderr
    assert (tmp_path / "advice.csv").read_bytes() == exact.stdout


@FAST
@given(st.lists(HOSTILE, min_size=1, max_size=4), HOSTILE)
def test_advice_csv_shown_is_inert_one_line_per_row(cells, column):
    import csv
    import io

    import pandas as pd

    from audit.report.advice_table import csv_text

    frame = pd.DataFrame({"rank": range(1, len(cells) + 1), "item": cells,
                          f"{column}:count:1": [len(c) for c in cells]})
    frame = frame.map(lambda v: v.encode("utf-8", "replace").decode("utf-8")
                      if isinstance(v, str) else v)
    frame.columns = [c.encode("utf-8", "replace").decode("utf-8") for c in frame.columns]
    shown = csv_text(frame, shown=True)
    assert_inert_text(shown)
    rows = list(csv.reader(io.StringIO(shown)))
    assert len(rows) == len(cells) + 1 == len(shown.splitlines())
