"""The GitHub job summary stays under GitHub's 1 MiB limit whatever the names hold.

The Actions runner uploads none of a step's job summary when its file passes 1 MiB
("$GITHUB_STEP_SUMMARY upload aborted, supports content up to a size of 1024k"): a model named by
150,000 characters (a prompt pasted as an id, or a pull request's doing), quoted twice in a
failed expectation's message and written as ``&amp;`` five bytes a character, took the whole
summary page with it, the text a step wrote before included. Each string is now cut to
``SUMMARY_FIELD`` characters in the summary (saying the whole length), and the summary is cut at
a line so that the file never passes the limit, saying so; the annotations, the JUnit file and
results.json keep every name whole.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

from click.testing import CliRunner

from audit.cli import cli

LIMIT = 1024 * 1024
LONG = "m" + "&" * 150_000
MODELS = (LONG, "good", "other")


def table_rows(markdown: str) -> list[list[str]]:
    """The cells of every table row, rendered as GitHub renders (CommonMark with tables)."""
    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark").enable("table").render(markdown)
    return [re.findall(r"<t[dh]>(.*?)</t[dh]>", row, re.S)
            for row in re.findall(r"<tr>(.*?)</tr>", html, re.S)]


def write_inputs(folder):
    rows = []
    for i in range(12):
        a, b = MODELS[i % 3], MODELS[(i + 1) % 3]
        for j, label in enumerate((-1, 1) if i % 2 else (1, 1)):
            rows.append({"item": f"q{i}", "annotator": f"r{j}", "model_a": a, "model_b": b,
                         "label": label})
    data = folder / "prefs.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    suite = folder / "suite.yaml"
    suite.write_text("suite: s\nexpectations:\n  - expect: models_in_set\n    values: [good]\n"
                     "  - expect: labels_in_set\n    values: [-1, 0, 1]\n", encoding="utf-8")
    return data, suite


def test_a_long_name_keeps_the_summary_under_the_limit(tmp_path):
    data, suite = write_inputs(tmp_path)
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    result = CliRunner(env={"GITHUB_WORKSPACE": None, "GITHUB_STEP_SUMMARY": str(summary)}) \
        .invoke(cli, ["check", str(data), "--suite", str(suite), "--github", "--junit",
                      str(tmp_path / "j.xml"), "--bootstrap", "5"], catch_exceptions=False)
    assert result.exit_code == 1, result.output[-2000:]
    text = summary.read_text("utf-8")
    assert len(text.encode("utf-8")) <= LIMIT
    assert text.startswith("earlier step\n\n### annotation-audit check: s")
    rows = table_rows(text)
    assert [len(r) for r in rows] == [5, 5, 5] and rows[1][1] == "models_in_set"
    failed = text[text.index("**Failed**"):]
    assert "… (" in failed and "characters)" in failed
    # the annotation and the JUnit file keep the name whole
    [annotation] = [line for line in result.output.splitlines() if line.startswith("::error ")]
    assert LONG in annotation
    failure = ET.parse(tmp_path / "j.xml").getroot().find(".//failure")
    assert LONG in failure.get("message")


def test_the_summary_never_takes_the_file_past_the_limit(tmp_path):
    from audit.suites.github import SUMMARY_LIMIT, append_step_summary, fit_summary

    assert SUMMARY_LIMIT == LIMIT
    target = tmp_path / "sum.md"
    earlier = "x" * (LIMIT - 600) + "\n"
    target.write_text(earlier, encoding="utf-8")
    table = "### check\n\n| a | b |\n| --- | --- |\n" + "| é | 1 |\n" * 200
    append_step_summary(table, environ={"GITHUB_STEP_SUMMARY": str(target)})
    text = target.read_text("utf-8")
    assert text.startswith(earlier) and len(text.encode("utf-8")) <= LIMIT
    added = text[len(earlier):]
    assert added.startswith("\n### check\n") and "left out" in added
    rows = table_rows(added)
    assert all(len(r) == 2 for r in rows) and len(rows) < 201  # whole rows, the note not one
    # no room left even for the note: nothing is written
    full = tmp_path / "full.md"
    full.write_text("y" * (LIMIT - 10), encoding="utf-8")
    append_step_summary(table, environ={"GITHUB_STEP_SUMMARY": str(full)})
    assert full.read_text("utf-8") == "y" * (LIMIT - 10)
    # a summary that fits is written as it is
    assert fit_summary(table, LIMIT) == table


def test_an_error_summary_is_cut_too(tmp_path):
    from audit.suites.github import error_summary

    text = error_summary("bad value " + "<" * 500_000, title="bad input", file="a.csv", line=3)
    assert len(text.encode("utf-8")) < LIMIT
    assert text.startswith("### annotation-audit check: could not run (bad input)\n\na.csv, line 3")
    assert "(500,010 characters)" in text
