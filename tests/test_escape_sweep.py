"""An adversarial sweep of every output channel, through the real commands and renderers.

``test_escape_channels.py`` checks each escaper alone and ``test_ci_injection.py`` one fixed set
of hostile names through the CLI; this file throws arbitrary Unicode (hypothesis, with the
fragments attacks are made of: ``\\n::add-mask::``, ``##[``, ESC and OSC 8 sequences, bidi
overrides, ``=HYPERLINK(``, Markdown and HTML syntax) into every field, and holds each channel
to its invariant:

* HTML report, dataset card, terminal summary, ``plan`` / ``advise`` answers, ``check``'s text
  report and GitHub step summary, as pure functions of a full result (reliability, leaderboards,
  stability, judges, plan, advice, expectations and a baseline diff): every dataset and suite
  string (items, annotators, pools, models, texts, claims, the suite's name) renamed to an
  arbitrary string changes the text only, never the structure. The report's tags (charts
  included) and the card's and step summary's Markdown tokens are counted alike with plain
  names and with hostile ones; the card's YAML parses; the terminal output holds no control
  character and no workflow command.
* Messages on standard output and error, through the real commands: exit-2 errors that quote a
  value (a repeated judgment, a label outside the spec's set, both also under
  ``check --github --junit``), warnings, ``validate``'s listing, ``run --profile``: any value in
  any column gives exit 0, 1 or 2 (never 3), no control character, no workflow command but the
  tool's own annotation, and no line that a value's own line break starts.
* JSON (``results.json``, ``croissant.json``, ``--json``): written whatever a name holds (a file
  name that is not UTF-8 included), read back by :func:`json.loads` as the value written, and
  inert when printed (``check --json /dev/stdout`` in a CI log).
* JUnit XML (``check --junit``): parsed by :mod:`xml.etree` back to each string as
  :mod:`audit.escape.xml` shows it, and inert when printed (``--junit /dev/stdout``,
  ``cat junit.xml``): a data line break cannot start a line with ``::``, nor ``##[`` appear.
* ``advise --csv`` (data on standard output): the bytes of ``advice.csv`` for a file or a
  program, whatever the cells hold; inert where a person or a CI runner reads it (a terminal, a
  CI job's pipe), with a warning.
* ``items.csv`` (``run --items-csv``): no text cell or column name a spreadsheet would evaluate
  (``= + - @``, tab or CR first, not a plain number), and a program that reads the CSV and
  undoes the apostrophe (:func:`audit.escape.spreadsheet.unescape_cell`) gets exactly what
  ``items.parquet`` holds.

"Inert" is :func:`assert_inert_text`: what the Actions runner's parser (:mod:`actions_runner`)
and a terminal would act on. The regression tests failed before the fix each names (CHANGELOG,
2026-12-06 morning); ``AUDIT_FUZZ_EXAMPLES=250`` runs more examples of the slow properties.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from actions_runner import commands
from click.testing import CliRunner
from hypothesis import given, settings
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


# -- renderers of a full result: structure unchanged by any name -----------------------------------
#: The dataset and suite strings of :func:`full_results`: item ids, annotators, pools, models,
#: item texts, claims and the suite's name.
PLAIN = ([f"it{i:02d}" for i in range(30)] + [f"p{p}a{j}" for p in range(3) for j in range(3)]
         + ["p0", "p1", "p2", "m0", "m1", "m2", "m3"] + [f"tx{i}" for i in range(5)]
         + ["C0", "C1", "C2", "S0"])
FULL_SUITE = """suite: S0
expectations:
  - expect: models_in_set
    values: [m0, m1]
    claim: C0
  - expect: min_reliability
    pool: every
    min: 0.9
    claim: C1
  - expect: max_changed_label_share
    max: 0.0
    claim: C2
  - expect: labels_in_set
    values: [-1, 0, 1]
"""


def _full_rows(*, flip: bool = False) -> list[dict]:
    import random

    rng = random.Random(5)
    models = ["m0", "m1", "m2", "m3"]
    out = []
    for i in range(30):
        a, b = i % 4, (i % 4 + 1 + i % 3) % 4
        truth = rng.choice([-1, 1])
        for p in range(3):
            for j in range(3 if p < 2 else 1):  # p2: one annotator (its NaN notes)
                label = truth if rng.random() > 0.25 else rng.choice([-1, 0, 1])
                if flip and i < 8 and j == 0:
                    label = -label if label else 1
                out.append({"item": f"it{i:02d}", "annotator": f"p{p}a{j}", "pool": f"p{p}",
                            "model_a": models[a], "model_b": models[b], "label": label,
                            "text": f"tx{i % 5}"})
    return out


@pytest.fixture(scope="module")
def full_results(tmp_path_factory) -> dict:
    """``run``'s result (plan and advice included) with ``check --baseline``'s expectations and
    baseline blocks: every block a renderer reads, from the real commands."""
    d = tmp_path_factory.mktemp("full")
    new = write_jsonl(d / "new.jsonl", _full_rows())
    old = write_jsonl(d / "old.jsonl", [r for r in _full_rows(flip=True) if r["item"] != "it29"])
    (d / "s.yaml").write_text(FULL_SUITE, encoding="utf-8")
    ran = invoke("run", new, "--out", d / "run", "--bootstrap", 20, "--quiet")
    checked = invoke("check", new, "--suite", d / "s.yaml", "--baseline", old, "--out",
                     d / "check", "--bootstrap", 20, "--quiet")
    assert ran.exit_code == 0 and checked.exit_code == 1, ran.output + checked.output
    results = json.loads((d / "run" / "results.json").read_text("utf-8"))
    both = json.loads((d / "check" / "results.json").read_text("utf-8"))
    results.update(expectations=both["expectations"], baseline=both["baseline"])
    found = set()

    def walk(o):
        if isinstance(o, dict):
            found.update(k for k in o)
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)
        elif isinstance(o, str):
            found.add(o)

    walk(results)
    named = {"p0", "p1", "p2", "m0", "m1", "m2", "m3", "p0a0", "C0", "C1", "C2", "S0"}
    assert named <= found and {n for n in PLAIN if n.startswith(("it", "tx"))} & found, found
    results["_strings"] = found
    return results


def renamed(obj, names: dict):
    """``obj`` with every key and string equal to a key of ``names`` replaced by its value."""
    if isinstance(obj, dict):
        return {names.get(k, k) if isinstance(k, str) else k: renamed(v, names)
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [renamed(v, names) for v in obj]
    return names.get(obj, obj) if isinstance(obj, str) else obj


def _hostile_names(strings: set):
    """A distinct arbitrary name for each of :data:`PLAIN`, none equal to another string of the
    result (a name ``all`` would merge with the pooled leaderboard's key): printable enough to
    be a name (not only blanks), anything else allowed, lone surrogates included."""
    name = HOSTILE.filter(lambda v: v.strip() != "" and v not in strings)
    return st.lists(name, min_size=len(PLAIN), max_size=len(PLAIN), unique=True).map(
        lambda values: dict(zip(PLAIN, values)))


def _html_shape(results: dict):
    from collections import Counter

    from results_examples import parse_html

    from audit.escape import html as html_esc
    from audit.report.html import build_view, environment

    page = environment().get_template("report.html.j2").render(**build_view(results))
    tags, _ = parse_html(page)
    for tag, attrs in tags:
        assert not any(k.startswith("on") for k in attrs), (tag, attrs)
        for key in ("href", "src", "xlink:href", "action", "formaction"):
            assert attrs.get(key) in (None, "advice.csv") or attrs[key].startswith("#"), attrs
    assert not html_esc.HIDDEN.search(page)
    page.encode("utf-8")
    return Counter(tag for tag, _ in tags)


def _markdown_shape(text: str):
    """Counts of the Markdown token types of ``text`` as CommonMark with tables (markdown-it,
    as the Hub and GitHub parse it); text tokens aside, which an escape may split."""
    from collections import Counter

    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    counts = Counter()

    def walk(tokens):
        for tok in tokens:
            if tok.type not in ("text", "text_special"):
                counts[(tok.type, tok.tag, tok.info if tok.type == "html_block" else "")] += 1
            walk(tok.children or [])

    walk(parser.parse(text))
    return counts


def _card_shape(results: dict):
    import yaml

    from audit.report.card import check_card, render_card

    text = render_card(results)
    text.encode("utf-8")
    head, body = text.split("\n---\n", 1)
    assert isinstance(yaml.safe_load(head.removeprefix("---\n")), dict)
    assert check_card(text) == []
    return _markdown_shape(body)


def _terminal_text(results: dict) -> str:
    import io

    from rich.console import Console

    from audit.report.next_terminal import print_advice, print_plan
    from audit.report.summary import print_summary
    from audit.suites.baseline import text_lines as baseline_lines
    from audit.suites.outcomes import text_lines

    buf = io.StringIO()
    console = Console(file=buf, width=80, highlight=False, soft_wrap=True, emoji=False)
    print_summary(results, out="out", console=console)
    print_plan(results, out="out", console=console)
    print_advice(results, out="out", console=console)
    return (buf.getvalue() + "\n".join(baseline_lines(results["baseline"])) + "\n"
            + "\n".join(text_lines(results["expectations"])))


def _step_summary_shape(results: dict):
    from audit.suites.github import step_summary

    return _markdown_shape(step_summary(results["expectations"], baseline=results["baseline"],
                                        path="suites/s.yaml", report="out/report.html"))


RENDER = settings(max_examples=int(os.environ.get("AUDIT_FUZZ_EXAMPLES", 25)), deadline=None)


@RENDER
@given(st.data())
def test_any_name_changes_no_renderer_s_structure(full_results, data):
    plain = {k: v for k, v in full_results.items() if k != "_strings"}
    names = data.draw(_hostile_names(full_results["_strings"]))
    hostile = renamed(plain, names)
    assert _html_shape(hostile) == _html_shape(plain)
    assert _card_shape(hostile) == _card_shape(plain)
    assert _step_summary_shape(hostile) == _step_summary_shape(plain)
    printed = _terminal_text(hostile)
    printed.encode("utf-8")
    assert_inert_text(printed)


# -- messages: errors that quote a value, warnings, listings ---------------------------------------
CLI = settings(max_examples=int(os.environ.get("AUDIT_FUZZ_EXAMPLES", 15)), deadline=None)
_LABEL_SPEC = "label: {kind: nominal, order: [x, y]}\n"


def _message_runs(folder: Path, value: str) -> dict:
    """The commands whose messages quote ``value``: ``{name: (result, output)}``."""
    folder.mkdir(parents=True, exist_ok=True)
    dup = [{"item": value, "annotator": value, "pool": "p", "label": lab} for lab in "xy"]
    dup += [{"item": "i2", "annotator": a, "pool": "p", "label": "x"} for a in "ab"]
    bad_label = [{"item": f"i{i}", "annotator": a, "pool": "p",
                  "label": value if (i, a) == (3, "b") else "xy"[i % 2]}
                 for i in range(6) for a in "ab"]
    write_jsonl(folder / "dup.jsonl", dup)
    write_jsonl(folder / "label.jsonl", bad_label)
    (folder / "spec.yaml").write_text(_LABEL_SPEC, encoding="utf-8")
    (folder / "s.yaml").write_text("suite: s\nexpectations:\n  - expect: unique_judgments\n",
                                   encoding="utf-8")
    runs = {
        "repeated": ("validate", folder / "dup.jsonl"),
        "label": ("validate", folder / "label.jsonl", "--spec", folder / "spec.yaml"),
        "check": ("check", folder / "label.jsonl", "--spec", folder / "spec.yaml", "--suite",
                  folder / "s.yaml", "--github", "--junit", folder / "j.xml"),
    }
    return {name: invoke(*args) for name, args in runs.items()}


def _assert_messages_inert(result, *, annotations: int = 0):
    assert result.exit_code in (0, 1, 2), result.output
    assert "Traceback" not in result.output
    for stream in (result.stdout, result.stderr):
        assert not CONTROL.search(stream.replace("\n", "")), repr(stream)
        found = commands(stream)
        assert all(line.startswith("::error ") and parsed[0] == "error"
                   for line, parsed in found), found
        annotations -= len(found)
    assert annotations == 0, result.output


#: How every line a command prints on standard error starts: a message's first line, or an
#: indented line of its listing. A value's own line break would start a line with the value.
_MESSAGE_LINE = ("error: ", "warning: ", "info: ", "  ", "[")


@CLI
@given(HOSTILE)
def test_an_error_quoting_any_value_is_inert_and_keeps_its_lines(tmp_path_factory, value):
    import xml.etree.ElementTree as ET

    folder = tmp_path_factory.mktemp("messages")
    for name, result in _message_runs(folder, value).items():
        _assert_messages_inert(result, annotations=1 if name == "check" else 0)
        assert result.exit_code == 2, (name, result.output)  # both files are bad input
        lines = result.stderr.splitlines()
        assert sum(line.startswith("error: ") for line in lines) == 1, result.stderr
        assert all(line.startswith(_MESSAGE_LINE) for line in lines), result.stderr
    assert_inert_text((folder / "j.xml").read_text("utf-8"), breaks="\n\t")
    assert ET.parse(folder / "j.xml").find(".//error") is not None


@CLI
@given(HOSTILE)
def test_validate_and_run_print_any_name_inert(tmp_path_factory, value):
    folder = tmp_path_factory.mktemp("names")
    source = write_jsonl(folder / "d.jsonl", [
        {**row, "item": f"{row['item']}{value}", "annotator": f"{value}{row['annotator']}"}
        for row in preference_rows(8, models=("m0", value, f"{value}2"),
                                   pools=(value, "p1"), texts=[value])])
    for args in (("validate", source),
                 ("run", source, "--no-report", "--profile", "--bootstrap", 20)):
        result = invoke(*args)
        _assert_messages_inert(result)


# -- items.csv: formulas defused, values recoverable -----------------------------------------------
FORMULAS = ("=HYPERLINK(\"http://x\",\"y\")", "+cmd|' /C calc'!A0", "-2+3", "@SUM(1)", "\t=1",
            "\r=2", "'=x", "''-1", "-1", "+2.5", "-3e-2")


@CLI
@given(st.lists(st.one_of(st.sampled_from(FORMULAS), HOSTILE), min_size=4, max_size=4))
def test_items_csv_defuses_formulas_and_reads_back_as_items_parquet(tmp_path_factory, names):
    import csv
    import io

    import pandas as pd

    from audit.escape.spreadsheet import needs_prefix, unescape_cell

    folder = tmp_path_factory.mktemp("items")
    model, pool, item, text = names
    rows = [{**row, "item": f"{item}{row['item']}" if row["item"] != "it0" else item}
            for row in preference_rows(8, models=("m0", model, f"m{model}"),
                                       pools=(pool, f"q{pool}"), texts=[text])]
    result = invoke("run", write_jsonl(folder / "d.jsonl", rows), "--out", folder / "out",
                    "--items-csv", "--bootstrap", 20, "--quiet")
    if result.exit_code == 2:  # a name the loader refuses (NUL, lone surrogate, two pools alike)
        _assert_messages_inert(result)
        return
    assert result.exit_code == 0, result.output
    table = pd.read_parquet(folder / "out" / "items.parquet")
    with (folder / "out" / "items.csv").open(encoding="utf-8", newline="") as fh:
        header, *cells = list(csv.reader(fh))
    assert [unescape_cell(h) for h in header] == list(table.columns)
    assert not any(needs_prefix(h) for h in header)
    for i, column in enumerate(table.columns):
        values = table[column]
        if not (pd.api.types.is_object_dtype(values.dtype)
                or isinstance(values.dtype, pd.CategoricalDtype)
                or pd.api.types.is_string_dtype(values.dtype)):
            continue
        for row, value in zip(cells, values.astype(object)):
            if value is None or value is pd.NA or value != value:
                assert row[i] == "", (column, row[i])
                continue
            assert not needs_prefix(row[i]), (column, row[i])
            assert unescape_cell(row[i]) == str(value), (column, row[i], value)
