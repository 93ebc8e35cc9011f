"""``--stay 0.999999`` is shown as 0.999999, not 1.00, and an estimated P(stay) (or an agreement)
of 0.9996 is not shown as 1.00 (certainty), on every channel that shows the plan: its sentences,
the terminal's plan and summary, the HTML report, the dataset card; results.json keeps the
setting as given. The rules: :func:`audit.format.setting`, :func:`audit.format.probability`."""

from __future__ import annotations

import copy
import io
import json
import re
import warnings
from decimal import Decimal

import pytest
from click.testing import CliRunner
from conftest import REPO
from hypothesis import example, given
from hypothesis import strategies as st
from results_examples import section_text
from rich.console import Console

import audit
from audit.cli import cli
from audit.format import (NAN, percent, probability, probability_percent, setting,
                          setting_percent)
from audit.planning import plan_sentences
from audit.report.card import md_escape, render_card
from audit.report.html import render_html
from audit.report.limitations import limitations
from audit.report.next_terminal import print_plan
from audit.report.summary import print_summary
from audit.results import json_form

DEMO = REPO / "data" / "pandalm" / "testset-v1.json"
#: A number shown as certainty: 1.00, 1.000, 100%, 100.0%.
CERTAIN = re.compile(r"(?<![\d.])(1\.0+|100(\.0+)?%)(?![\d])")


@pytest.mark.parametrize("x, text, share", [
    (0.9, "0.90", "90%"), (0.95, "0.95", "95%"), (0.995, "0.995", "99.5%"),
    (0.999999, "0.999999", "99.9999%"), (0.5, "0.50", "50%"), (1e-05, "0.00001", "0.001%"),
    (0.1 + 0.2, "0.30000000000000004", "30.000000000000004%"), (None, NAN, NAN)])
def test_a_setting_reads_as_given(x, text, share):
    assert setting(x) == text and setting_percent(x) == share


@given(st.floats(min_value=0, max_value=1, exclude_min=True, exclude_max=True))
def test_a_setting_reads_back_as_the_same_float_never_as_0_or_1(x):
    text = setting(x)
    assert float(text) == x and len(text.partition(".")[2]) >= 2
    assert float(Decimal(setting_percent(x)[:-1]) / 100) == x


@pytest.mark.parametrize("x, text, share", [
    (0.9996, "0.9996", "99.96%"), (0.93, "0.93", "93.0%"), (1.0, "1.00", "100.0%"),
    (0.0, "0.00", "0.0%"), (0.004, "0.004", "0.4%"), (0.99951, "0.9995", "99.95%"),
    (0.9999999, "> 0.999999", "> 99.9999%"), (1e-8, "< 0.000001", "< 0.0001%"),
    (float("nan"), NAN, NAN)])
def test_an_estimate_is_not_rounded_to_certainty(x, text, share):
    assert probability(x) == text and probability_percent(x) == share


@given(st.floats(min_value=0, max_value=1, exclude_min=True, exclude_max=True),
       st.integers(1, 4))
def test_an_estimate_short_of_0_or_1_never_reads_as_0_or_1(x, digits):
    text = probability(x, digits)
    if text[0] in "<>":
        assert (x > 1 - 1e-6) if text[0] == ">" else (x < 1e-6)
        return
    shown = float(text)
    decimals = len(text.partition(".")[2])
    assert 0 < shown < 1 and decimals >= digits
    assert abs(shown - x) <= 0.5 * 10.0 ** -decimals + 1e-15


@given(st.floats(min_value=0, max_value=1, exclude_min=True, exclude_max=True))
@example(0.3825)
def test_an_estimate_as_a_percentage_is_rounded_once(x):
    """``0.3825`` is ``38.2%`` as :func:`audit.format.percent` shows it, not ``38.3%`` (the
    3-decimal ``0.383`` rounded again): the card's swap probabilities read ``probability_percent``
    and the HTML's ``percent`` of the same number."""
    share = probability_percent(x)
    if share[0] in "<>":
        return
    decimals = len(share[:-1].partition(".")[2])
    assert abs(float(share[:-1]) - 100 * x) <= 0.5 * 10.0 ** -decimals + 1e-12
    assert 0 < float(share[:-1]) < 100
    if 0.001 <= x <= 0.999:
        assert share == percent(x)


@pytest.fixture(scope="module")
def near_one():
    """The demo planned at --stay 0.999999, with every estimated probability set to 0.9996
    (P(stay) at each planned size and its ceiling, the labels' agreement today, each pool
    planned)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = json_form(audit.plan(DEMO, models=(10, 20), stay=0.999999, n_sims=2000,
                                       n_bootstrap=20, budget=5000))
    results = copy.deepcopy(results)
    plan = results["plan"]
    for e in plan["leaderboard"]["sizes"]:
        e.update(ceiling=0.9996, ceiling_ci95=[0.5, 0.9996])
        for r in e.get("rows") or []:
            r["p_stay"] = 0.9996
        if e.get("budget"):
            e["budget"]["p_stay"] = 0.9996
    for p in plan["labels"]["pools"]:
        p.update(agreement_now=0.9996, planned_m=p.get("planned_m") or 16)  # a planned pool
    return results


def test_results_keep_the_setting_as_given(near_one):
    assert json.loads(json.dumps(near_one))["plan"]["settings"]["stay"] == 0.999999


def test_plan_sentences_show_the_setting_and_the_estimates(near_one):
    text = " ".join(plan_sentences(near_one["plan"]))
    assert "probability 0.999999" in text and "on 99.9999% of items" in text
    assert "0.9996" in text and "99.96%" in text
    assert not CERTAIN.search(text), CERTAIN.search(text)


def _printed(show, results) -> str:
    buf = io.StringIO()
    show(results, console=Console(file=buf, width=400, highlight=False, soft_wrap=True))
    return buf.getvalue()


def test_terminal_plan_and_summary(near_one):
    out = _printed(print_plan, near_one)
    assert "0.999999" in out and "0.9996 ± " in out and "P(stay) 0.500 – 0.9996" in out
    assert not CERTAIN.search(out), CERTAIN.search(out)
    nexts = " ".join(line for line in _printed(print_summary, near_one).splitlines()
                     if line.startswith("next: "))
    assert "0.999999" in nexts and not CERTAIN.search(nexts)


def test_html_report_section(near_one):
    text = section_text(render_html(near_one), "next")
    assert "P(stay) 0.999999" in text and "on 99.9999% of items" in text
    assert "0.9996 ± " in text
    assert not CERTAIN.search(text), CERTAIN.search(text)


def test_card(near_one):
    said = " ".join(s for s in limitations(near_one, md_escape) if "keep its order" in s)
    assert "probability 0.999999" in said and "caps it at 0.9996" in said
    assert not CERTAIN.search(said), CERTAIN.search(said)
    assert "0.999999" in render_card(near_one)


def test_cli_plan_stay_0_995(tmp_path):
    result = CliRunner().invoke(cli, ["plan", str(DEMO), "--stay", "0.995", "--bootstrap",
                                      "20", "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "probability 0.995:" in result.output and "99.5% of items" in result.output
    assert "1.00:" not in result.output
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    assert saved["plan"]["settings"]["stay"] == 0.995
