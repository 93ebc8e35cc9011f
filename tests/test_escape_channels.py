"""Every output channel's escaper against arbitrary strings (hypothesis): what it promises, checked
by an independent reader of that channel.

* GitHub workflow commands: read back by a port of the Actions runner's parser
  (:mod:`actions_runner`): the data and properties come back exactly, and no other text can be
  a command.
* JUnit XML: parsed by :mod:`xml.etree.ElementTree` and by junitparser.
* Terminal: rendered by rich; no control character survives.
* Dataset card: the Markdown rendered by markdown-it-py (CommonMark) shows the string as text; the
  YAML front matter read by :func:`yaml.safe_load` and by huggingface_hub gives it back.
* HTML report: parsed by :mod:`html.parser`; the string is text, never a tag or attribute.

The strings mix arbitrary Unicode (controls and lone surrogates included) with the fragments
attacks are made of: ``\\n::error::``, ``%0A``, ``##[add-mask]``, ``[/x]``, ESC sequences, bidi
overrides, Markdown and HTML syntax.
"""

from __future__ import annotations

import copy
import html
import io
import re
import xml.etree.ElementTree as ET

import pytest
import yaml
from actions_runner import (could_start_command, parse_legacy, parse_v2, unescape_data,
                            unescape_property)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from junitparser import Failure, JUnitXml
from results_examples import parse_html

from audit.escape import CONTROL, visible
from audit.escape import github as gh
from audit.escape import html as html_esc
from audit.escape import markdown as md
from audit.escape import terminal
from audit.escape import xml as xml_esc
from audit.suites import github as judge_github
from audit.suites.junit import junit_error_xml, junit_xml

FRAGMENTS = ("::", "\n::error::forged", "\n::add-mask::secret", "\n::stop-commands::tok",
             "::warning file=x,line=1::w", "%0A", "%0D", "%25", "%", "%3A", "%2C", "\r", "\n",
             "\r\n", "##[add-mask]x", "##[", "#", "[bold]", "[/x]", "[/]", "[link=http://x]",
             "\\", "\\[", "]", "\x1b[31m", "\x1b]0;title\x07", "\x08", "\x00", "\x7f", "\x85",
             "\x9b", "\u2028", "\u2029", "\u202e", "\u2066", "\ufeff", "\ud800", "\udfff",
             "\ufffe", "\uffff", "\U0001f600", ":", ",", "=", " ", "\t", "\xa0", "\u3000",
             "<script>", "</textarea>", "<!-- annotation-audit:end -->", "&amp;", "&#x41;",
             "[x](javascript:alert(1))", "![i](x)", "|", "*", "_", "`", "~~", "$x$", "- ",
             "1. ", "+ ", "> ", "# ", "---", "===", "    ", ":smile:", "{{7*7}}", "'", '"')
ANY_CHAR = st.characters(exclude_categories=())  # every code point, lone surrogates included
HOSTILE = st.lists(st.one_of(st.text(ANY_CHAR, max_size=6), st.sampled_from(FRAGMENTS)),
                   max_size=8).map("".join)
PROPERTY_VALUE = HOSTILE.filter(lambda v: v != "" and v == v.strip() and not v.startswith("="))
FAST = settings(max_examples=300, deadline=None)
SLOW = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# -- GitHub workflow commands -------------------------------------------------------------------------
@FAST
@given(HOSTILE)
def test_github_message_round_trips_through_the_runner(s):
    out = gh.message(s)
    assert "\r" not in out and "\n" not in out
    assert unescape_data(out) == s
    assert gh.unescape_message(out) == s


@FAST
@given(HOSTILE)
def test_github_property_round_trips_through_the_runner(s):
    out = gh.prop(s)
    assert not set(out) & set("\r\n:,")
    assert unescape_property(out) == s
    assert gh.unescape_property(out) == s


@FAST
@given(HOSTILE, PROPERTY_VALUE, PROPERTY_VALUE)
def test_github_command_is_one_command_whatever_it_holds(data, file, title):
    line = gh.command("error", data, file=file, line=3, title=title)
    assert "\r" not in line and "\n" not in line
    assert parse_v2(line) == ("error", {"file": file, "line": "3", "title": title}, data)


@FAST
@given(HOSTILE, HOSTILE)
def test_judge_annotation_shows_controls_and_keeps_line_breaks(message, title):
    line = judge_github.command("error", message, file="s.yaml", line=1, title=f"t{title}")
    name, props, data = parse_v2(line)
    assert name == "error" and props["file"] == "s.yaml"
    assert "\x1b" not in line and not CONTROL.search(data.replace("\n", "").replace("\r", "")
                                                        .replace("\t", ""))
    assert data.count("\n") == message.count("\n")  # a multi-line message stays multi-line


@FAST
@given(HOSTILE, st.sampled_from(["", " ", "\t", "x ", "FAIL  ", "      claim: ", "pass  a  ("]))
def test_defused_text_is_never_a_command(s, prefix):
    out = terminal.text(s)
    assert not could_start_command(out)
    line = prefix + out
    assert "\n" not in line and "\r" not in line
    assert parse_v2(line) is None and parse_legacy(line) is None


def test_defuse_examples():
    assert gh.defuse("::error::x") == "\\::error::x"
    assert gh.defuse("a ::b") == "a \\::b" and gh.defuse("std::vector") == "std::vector"
    assert gh.defuse("x##[add-mask]y") == "x##\\[add-mask]y"
    assert terminal.text("m\n::error::forged") == "m\\n::error::forged"


# -- JUnit XML --------------------------------------------------------------------------------------
@FAST
@given(HOSTILE)
def test_xml_values_parse_back_exactly(s):
    root = ET.Element("case", name=xml_esc.attribute(s))
    ET.SubElement(root, "failure", message=xml_esc.attribute(s)).text = xml_esc.text(s)
    parsed = ET.fromstring(xml_esc.document(root).encode("utf-8"))
    assert parsed.get("name") == xml_esc.attribute(s)
    assert parsed[0].get("message") == xml_esc.attribute(s)
    assert parsed[0].text == xml_esc.text(s) or (parsed[0].text is None and xml_esc.text(s) == "")


@FAST
@given(HOSTILE)
def test_xml_escaping_changes_only_what_xml_cannot_hold(s):
    if not xml_esc.NOT_XML.search(s):
        assert xml_esc.attribute(s) == s
        assert xml_esc.text(s) == s.replace("\r", "\\r")
    assert visible(s, xml_esc.NOT_XML) == xml_esc.attribute(s)


def fake_validation(*names: str) -> dict:
    """A validation result whose suite title, path and failure messages hold ``names``."""
    cfg = {"type": "expect_column_values_to_be_in_set", "kwargs": {"value_set": ["good"]},
           "meta": {"annotation_audit": {"title": f"models_in_set {names[0]}",
                                         "expect": "models_in_set", "line": 4,
                                         "batch": "models", "claim": names[-1],
                                         "description": f"every model is one of {names[0]}"}}}
    failed = {"success": False, "expectation_config": cfg, "meta": {},
              "exception_info": {"raised_exception": False},
              "result": {"unexpected_count": len(names), "element_count": 9,
                         "partial_unexpected_list": list(names),
                         "partial_unexpected_index_list": list(names)}}
    passed = {**failed, "success": True, "result": {"unexpected_count": 0, "element_count": 9}}
    return {"success": False, "suite_name": names[0], "statistics": {},
            "meta": {"annotation_audit": {"suite": f"suites/{names[-1]}.yaml"}},
            "results": [failed, passed]}


@SLOW
@given(HOSTILE, HOSTILE)
def test_junit_file_parses_with_junitparser(tmp_path_factory, a, b):
    path = tmp_path_factory.mktemp("junit") / "j.xml"
    path.write_text(junit_xml(fake_validation(a, b)), encoding="utf-8")
    ET.parse(path)
    suites = list(JUnitXml.fromfile(str(path)))
    cases = list(suites[0])
    assert len(cases) == 2
    failure = next(r for r in cases[0].result if isinstance(r, Failure))
    assert xml_esc.attribute(a) in failure.message and xml_esc.attribute(b) in failure.message
    error = junit_error_xml(f"bad {a}", suite=b, name=f"check {a}", error_type="InputError",
                            file=b, line=2)
    ET.fromstring(error.encode("utf-8"))


# -- terminal -----------------------------------------------------------------------------------------
@FAST
@given(HOSTILE)
def test_terminal_text_has_no_control_characters(s):
    out = terminal.text(s)
    assert not CONTROL.search(out)
    out.encode("utf-8")  # lone surrogates are shown, so the line can be written


@FAST
@given(HOSTILE)
def test_rich_renders_escaped_markup_as_the_text(s):
    from rich.text import Text

    shown = terminal.text(s)
    assert Text.from_markup(f"[bold]{terminal.markup(s)}[/bold]", emoji=False).plain == shown
    alone = Text.from_markup(terminal.markup(s), emoji=False).plain
    trailing = len(shown) - len(shown.rstrip("\\"))  # a trailing run of backslashes shows
    assert alone == shown + "\\" * trailing  # doubled when nothing follows it (see markup())


@SLOW
@given(HOSTILE, HOSTILE)
def test_summary_prints_any_name_inert(preference_results, name, pool):
    from rich.console import Console

    from audit.report.summary import print_summary

    results = copy.deepcopy(preference_results)
    ds = results["dataset"]
    ds["name"] = name
    ds["pools"] = {pool: ds["pools"]["crowd"], f"{pool}2": ds["pools"]["expert"]}
    results["reliability"]["by_pool"] = {pool: results["reliability"]["by_pool"]["crowd"]}
    results["within_pool"] = [{**results["within_pool"][0], "pool": pool}]
    results["leaderboards"] = {pool: [{**row, "model": f"{pool}{row['model']}"}
                                      for row in results["leaderboards"]["crowd"]]}
    results["stability"]["pool_pairs"] = [{**results["stability"]["pool_pairs"][0],
                                           "pool_a": pool, "pool_b": name}]
    buf = io.StringIO()
    console = Console(file=buf, width=60, highlight=False, soft_wrap=True, emoji=False)
    print_summary(results, out=f"out/{name}", console=console)
    printed = buf.getvalue()
    assert not CONTROL.search(printed.replace("\n", ""))
    for line in printed.split("\n"):
        assert parse_v2(line) is None and parse_legacy(line) is None, line


@FAST
@given(HOSTILE)
def test_terminal_lines_keep_only_their_own_line_breaks(s):
    message = f"error: file.csv: bad value {s}\n  column 'x': {s}"
    out = terminal.lines(message)
    assert out.count("\n") == message.count("\n")  # LF ends a line; any other break is shown
    for line in out.split("\n"):
        assert not CONTROL.search(line) and parse_v2(line) is None and parse_legacy(line) is None


# -- dataset card: Markdown body --------------------------------------------------------------------
def _markdown():
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable(["table", "strikethrough"])


def _shown(s: str) -> str:
    """What a card should show for ``s``: its words on one line, control characters escaped."""
    return visible(" ".join(s.split()), CONTROL)


def _inner_text(rendered: str, tag: str) -> list[str]:
    return [html.unescape(m) for m in re.findall(rf"<{tag}[^>]*>(.*?)</{tag}>", rendered, re.S)]


@FAST
@given(HOSTILE)
def test_markdown_inline_renders_as_the_text(s):
    out = md.inline(s)
    assert "\n" not in out and "\r" not in out and "<" not in out and not CONTROL.search(out)
    shown = _shown(s)
    renderer = _markdown()
    if shown:  # an empty paragraph renders nothing
        assert _inner_text(renderer.render(out), "p") == [shown]
        assert _inner_text(renderer.render(f"- {out}"), "li") == [shown]
        assert _inner_text(renderer.render(f"prefix {out}"), "p") == [f"prefix {shown}"]
        assert _inner_text(renderer.render(f"# Card for {out}"), "h1") == [f"Card for {shown}"]
    table = renderer.render(f"| pool | n |\n|---|---:|\n| {out} | 3 |\n")
    assert _inner_text(table, "td")[0] == shown and len(_inner_text(table, "td")) == 2


def test_markdown_inline_examples():
    assert md.inline("- a") == "\\- a" and md.inline("12. x") == "12\\. x"
    assert md.inline("<script>|") == "&lt;script&gt;\\|"
    assert md.inline("a\x1bb") == "a\\\\x1bb"  # shows as a\x1bb


# -- dataset card: YAML front matter --------------------------------------------------------------
@FAST
@given(HOSTILE, st.lists(HOSTILE, max_size=3))
def test_front_matter_parses_back_to_the_values(s, items):
    data = {"pretty_name": s, "tags": items}
    text = md.front_matter(data)
    assert yaml.safe_load(text) == data
    assert not any(line.startswith("---") or line.startswith("...")
                   for line in text.split("\n"))


@SLOW
@given(HOSTILE.filter(lambda s: s.strip() != ""), HOSTILE)
def test_card_front_matter_and_title_hold_any_dataset_name(preference_results, name, pool):
    from huggingface_hub import DatasetCard

    from audit.report.card import END, START, check_card, render_card

    results = copy.deepcopy(preference_results)
    ds = results["dataset"]
    ds["name"] = name
    ds["pools"] = {f"crowd{pool}": ds["pools"]["crowd"]}
    text = render_card(results)
    text.encode("utf-8")
    card = DatasetCard(text)
    shown = md.one_line(name)  # the name as the title shows it: one line, controls as escapes
    assert card.data.pretty_name == shown and not CONTROL.search(shown)
    assert yaml.safe_load(text.split("\n---\n", 1)[0].removeprefix("---\n"))["pretty_name"] == shown
    assert card.text.count(START) == 1 and card.text.count(END) == 1  # YAML may quote them
    assert check_card(text) == []
    assert f"# Dataset Card for {md.inline(name)}\n" in text
    again = render_card(results, existing="---\nlicense: mit\n---\n\nhand text\n")
    meta = DatasetCard(again).data.to_dict()
    assert meta["pretty_name"] == shown and meta["license"] == "mit"


# -- HTML report ------------------------------------------------------------------------------------
ALLOWED_TAGS = {"html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "h3", "p",
                "nav", "a", "main", "section", "dl", "div", "dt", "dd", "ul", "li", "table",
                "thead", "tbody", "tr", "th", "td", "span", "strong", "code", "figure",
                "figcaption", "details", "summary", "footer"}


@SLOW
@given(HOSTILE, HOSTILE)
def test_html_report_shows_any_name_as_text(preference_results, name, pool):
    from audit.report.html import build_view, environment

    results = copy.deepcopy(preference_results)
    ds = results["dataset"]
    ds["name"] = name
    ds["pools"] = {f"p{pool}": ds["pools"]["crowd"], "expert": ds["pools"]["expert"]}
    results["reliability"]["by_pool"] = {f"p{pool}": results["reliability"]["by_pool"]["crowd"]}
    page = environment().get_template("report.html.j2").render(
        **build_view(results, charts=False))
    tags, texts = parse_html(page)
    assert {t for t, _ in tags} <= ALLOWED_TAGS, {t for t, _ in tags} - ALLOWED_TAGS
    for tag, attrs in tags:
        assert not any(k.startswith("on") for k in attrs), (tag, attrs)
        assert "href" not in attrs or attrs["href"].startswith("#"), attrs
    text = " ".join(" ".join(texts).split())
    for shown in (name, f"p{pool}"):
        # as written, but for the characters a browser acts on unseen, shown as escapes
        words = " ".join(html_esc.text(shown).split())
        if words and not re.search("[\x00\r\ud800-\udfff]", words):
            assert words in text
    assert not html_esc.HIDDEN.search(page.replace("\x00", ""))


@pytest.mark.parametrize("pool", ["crowd\u202e(reversed)", "a\x1b[31mred", "x\u2066y\u2069",
                                  "line\u2028sep", "c1\x85"])
def test_html_report_shows_bidi_and_control_characters_as_escapes(preference_results, pool):
    """A pool name holding a bidi override reorders the sentence around it in a browser ("Trojan
    Source"); an ESC replays terminal sequences when the file is printed. The report shows them
    as escapes, as the terminal and the card do, in text and in the charts' labels."""
    from audit.report.html import build_view, environment

    results = copy.deepcopy(preference_results)
    ds = results["dataset"]
    ds["pools"] = {pool: ds["pools"]["crowd"], "expert": ds["pools"]["expert"]}
    results["reliability"]["by_pool"] = {pool: results["reliability"]["by_pool"]["crowd"]}
    page = environment().get_template("report.html.j2").render(**build_view(results))
    assert not html_esc.HIDDEN.search(page)
    _, texts = parse_html(page)
    assert visible(pool, html_esc.HIDDEN) in " ".join(texts)


@pytest.mark.parametrize("label", ["a\x1bb", "x\x00y", "\ud800", "ok [/x] $y$"])
def test_chart_labels_are_xml_safe(label):
    from audit.report.charts import short

    out = short(label)
    ET.fromstring(f"<text>{html.escape(out)}</text>".encode("utf-8"))
    assert not xml_esc.NOT_XML.search(out)
