"""Names that differ only by a character that draws nothing read apart in every output channel.

A pool ``crowd`` beside ``crowd`` + U+200B (a zero-width space a copy from a web page brings), a
model id with a byte-order mark, a label spelled with Unicode tag characters (U+E0000-U+E007F:
invisible ASCII, "ASCII smuggling") or holding a noncharacter (U+FFFE): the audit counts them as
different names, as it must (ids are kept exactly as written), but every channel wrote them raw,
so the terminal's tables, the HTML report, the dataset card, the job summary, the workflow
annotations and the JUnit file showed two columns or rows under one name. They are now shown as
escapes (``crowd\\u200b``), as control and bidi characters already were
(:data:`audit.escape.CONTROL`); the zero-width joiner and non-joiner, which shape Persian, Indic
and emoji text, are left as written. JUnit also shows the bidi controls now, as the other
channels do: a suite named with U+202E no longer reorders the test names a CI server shows.

Each channel is read by its own reader: :mod:`html.parser`, markdown-it-py (CommonMark) and
:func:`yaml.safe_load`, the Actions runner's command parser (:mod:`actions_runner`) and
:mod:`xml.etree.ElementTree`; results.json, the exports and items.parquet keep every name as
written.
"""

from __future__ import annotations

import json
import random
import re
import xml.etree.ElementTree as ET

import pandas as pd
import pytest
import yaml
from actions_runner import commands
from click.testing import CliRunner
from results_examples import parse_html

from audit.cli import cli
from audit.escape import CONTROL, visible
from audit.escape import markdown as md
from audit.escape import xml as xml_esc

#: What must never reach a channel raw (written out here, not read from audit.escape): the
#: characters that draw nothing, the noncharacters, the tags, and the bidi controls.
HIDDEN = re.compile("[\xad\u180e\u200b\u2060-\u2064\u206a-\u206f\ufeff\ufff9-\ufffb"
                    "\ufdd0-\ufdef\ufffe\uffff\U000e0000-\U000e007f"
                    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
POOLS = ("crowd", "crowd\u200b", "crowd\ufeff")
MODELS = ("gpt", "gpt\u2060", "gpt\U000e0041\U000e0042", "m\ufffe", "m\xad", "good")
LABELS = ("yes", "yes\u200b")
SUITE_NAME = "prefs\u202e\u200bsuite"
JOINERS = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645 \U0001f469\u200d\U0001f4bb"  # kept


def shown(name: str) -> str:
    """How every channel shows ``name``."""
    return visible(name, CONTROL)


def rows(preference: bool):
    rng = random.Random(7)
    out = []
    for i in range(24):
        a = i % len(MODELS)
        b = (a + 1 + i % 2) % len(MODELS)
        for pool in POOLS:
            for j in range(2):
                row = {"item": f"q{i}", "annotator": f"{pool}-{j}", "pool": pool}
                if preference:
                    row.update(model_a=MODELS[a], model_b=MODELS[b], label=rng.choice([-1, 0, 1]))
                else:
                    row["label"] = rng.choice(LABELS + (JOINERS,))
                out.append(row)
    return out


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("invisible")
    for name, preference in (("pairs", True), ("labels", False)):
        (d / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n"
                                                 for r in rows(preference)), encoding="utf-8")
    (d / "suite.yaml").write_text(
        f"suite: {json.dumps(SUITE_NAME)}\nexpectations:\n"
        "  - expect: models_in_set\n    values: [good]\n"
        "  - expect: min_reliability\n    pool: every\n    min: 0.99\n", encoding="utf-8")
    return d


def invoke(*args, env=None):
    return CliRunner(env={"GITHUB_WORKSPACE": None, "GITHUB_STEP_SUMMARY": None, "COLUMNS": "250",
                          **(env or {})}).invoke(cli, [str(a) for a in args],
                                                 catch_exceptions=False)


@pytest.fixture(scope="module")
def checked(folder):
    summary = folder / "summary.md"
    result = invoke("check", folder / "pairs.jsonl", "--suite", folder / "suite.yaml", "--github",
                    "--junit", folder / "junit.xml", "--out", folder / "check_out",
                    "--bootstrap", 20, env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert result.exit_code == 1, result.output
    return result, summary


@pytest.fixture(scope="module")
def ran(folder):
    result = invoke("run", folder / "labels.jsonl", "--out", folder / "run_out",
                    "--bootstrap", 20, "--items-csv")
    assert result.exit_code == 0, result.output
    return result, folder / "run_out"


def test_terminal_shows_invisible_characters(checked, ran):
    for result in (checked[0], ran[0]):
        assert not HIDDEN.search(result.output), repr(result.output)
    out = ran[0].output
    assert "crowd\\u200b" in out and "crowd\\ufeff" in out


def test_workflow_annotations_show_them(checked):
    result, _ = checked
    found = [parsed for _, parsed in commands(result.output)]
    assert len(found) == 2
    data = " ".join(d for _, _, d in found)
    assert not HIDDEN.search(data)
    for model in MODELS[1:5]:
        assert shown(model) in data, model


def test_job_summary_shows_them(checked):
    from markdown_it import MarkdownIt

    _, summary = checked
    text = summary.read_text("utf-8")
    assert not HIDDEN.search(text)
    rendered = MarkdownIt("commonmark").enable(["table"]).render(text)
    assert shown(SUITE_NAME) in rendered  # a backslash-escaped backslash renders as one
    assert "gpt\\u2060" in rendered and "m\\ufffe" in rendered


def test_junit_shows_them_and_bidi_controls(checked, folder):
    root = ET.parse(folder / "junit.xml").getroot()
    values = [v for e in root.iter() for v in (*e.attrib.values(), e.text or "")]
    assert not any(HIDDEN.search(v) for v in values), [v for v in values if HIDDEN.search(v)]
    suite = root.find("testsuite")
    assert suite.get("name") == shown(SUITE_NAME) == "prefs\\u202e\\u200bsuite"
    failures = " ".join(f.get("message") for f in root.iter("failure"))
    assert shown("gpt\U000e0041\U000e0042") in failures and "crowd" in failures


def test_html_report_shows_them(checked, ran, folder):
    texts = {}
    for name, page in (("check", folder / "check_out" / "report.html"),
                       ("run", ran[1] / "report.html")):
        html = page.read_text("utf-8")
        assert not HIDDEN.search(html)
        tags, found = parse_html(html)
        assert not {t for t, _ in tags} & {"script", "img", "iframe"}
        texts[name] = " ".join(found)
        for pool in POOLS[1:]:
            assert shown(pool) in texts[name], pool
    for model in MODELS[1:5]:
        assert shown(model) in texts["check"], model
    assert "yes\\u200b" in texts["run"]
    assert JOINERS in texts["run"]  # joiners are part of the text they shape: as written


def test_card_shows_them(checked, ran, folder):
    from markdown_it import MarkdownIt

    for card in (folder / "check_out" / "dataset_card.md", ran[1] / "dataset_card.md"):
        text = card.read_text("utf-8")
        meta = yaml.safe_load(text.split("\n---\n", 1)[0].removeprefix("---\n"))
        assert isinstance(meta, dict)
        body = text.split("\n---\n", 1)[1]
        assert not HIDDEN.search(body)
        rendered = MarkdownIt("commonmark").enable(["table"]).render(body)
        cells = re.findall(r"<td>(.*?)</td>", rendered)
        for pool in POOLS[1:]:
            assert shown(pool) in cells, pool
            assert md.inline(pool) == shown(pool).replace("\\", "\\\\")


def test_data_outputs_keep_the_names_as_written(checked, ran, folder):
    results = json.loads((folder / "check_out" / "results.json").read_text("utf-8"))
    assert set(results["dataset"]["pools"]) == set(POOLS)
    assert set(results["dataset"]["models"]) == set(MODELS)
    items = pd.read_parquet(ran[1] / "items.parquet")
    assert {f"{p}:n" for p in POOLS} <= set(items.columns)
    csv = pd.read_csv(ran[1] / "items.csv", dtype=str, keep_default_na=False)
    assert {f"{p}:majority" for p in POOLS} <= set(csv.columns)


@pytest.mark.parametrize("text", ["a\u200bb", "\ufeff", "x\U000e0041", "n\ufffe", "s\xad",
                                  "w\u2060", "\ufdd0", "op\u2062", "\u206a"])
def test_every_channel_escaper_shows_them(text):
    from audit.escape import github as gh
    from audit.escape import html as html_esc
    from audit.escape import terminal
    from audit.suites.github import command

    for out in (terminal.text(text), html_esc.text(text), md.inline(text),
                xml_esc.attribute(text), xml_esc.text(text),
                gh.unescape_message(command("error", text).split("::", 2)[2])):
        assert not HIDDEN.search(out), (text, out)
        assert "\\u" in out or "\\x" in out or "\\U" in out


@pytest.mark.parametrize("text", ["\u200c", "\u200d", "a\ufe0f", "\U0001f469\u200d\U0001f4bb"])
def test_joiners_and_variation_selectors_are_left_as_written(text):
    from audit.escape import terminal

    assert terminal.text(text) == text and md.inline(text) == text
    assert xml_esc.text(text) == text


def test_card_yaml_writes_them_as_yaml_escapes(tmp_path):
    """The card's YAML header wrote a bidi control or a zero-width space raw, reordering or
    hiding part of the line for whoever reviews the card's source (a pull request on the Hub,
    an editor): they are written as YAML escapes (``\\u202E``), in double quotes. The default
    pretty_name, the dataset's name, is shown as the card's title shows it: the Hub displays
    the parsed value, where a raw U+202E would reorder the title (``prefs\\u202etxt.exe``
    reading as ``prefsexe.txt``); a --pretty-name holding one is refused."""
    from huggingface_hub import DatasetCard

    name = "prefs\u202etxt.exe \u200bJos\u00e9"
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows(False)),
                                      encoding="utf-8")
    (tmp_path / "spec.yaml").write_text(f"name: {json.dumps(name)}\n", encoding="utf-8")
    result = invoke("card", tmp_path / "t.jsonl", "--spec", tmp_path / "spec.yaml", "--out",
                    tmp_path / "out", "--bootstrap", 5)
    assert result.exit_code == 0, result.output
    text = (tmp_path / "out" / "dataset_card.md").read_text("utf-8")
    assert not HIDDEN.search(text)
    assert "pretty_name: prefs\\u202etxt.exe \\u200bJos\u00e9\n" in text
    assert DatasetCard(text).data.pretty_name == "prefs\\u202etxt.exe \\u200bJos\u00e9"
    assert not HIDDEN.search(DatasetCard(text).data.pretty_name)
    assert yaml.safe_load(md.front_matter({"tags": ["a\u2066b", "plain é"]})) == \
        {"tags": ["a\u2066b", "plain é"]}
    assert md.front_matter({"t": "plain é"}) == "t: plain é"  # only such strings are escaped
