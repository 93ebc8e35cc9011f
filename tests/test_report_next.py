"""What to do next, as the reader sees it (issue 18, item 3): the report's section right after
the findings, the terminal summary's two lines and the dataset card's limitations show the
``plan`` and ``advise`` blocks' numbers, each found in the output as formatted here from
results.json (independently of the renderers' helpers). Hostile strings are checked in
tests/test_xss.py and tests/test_advise_cli.py.
"""

from __future__ import annotations

import copy
import io
import warnings

import pytest
from conftest import REPO, shared_data
from results_examples import parse_html, section_text
from rich.console import Console

import audit
from audit.advice import advise_sentences
from audit.planning import plan_sentences
from audit.report.card import md_escape, render_card
from audit.report.html import render_html
from audit.report.limitations import limitations
from audit.report.summary import print_summary
from audit.results import json_form

DEMO = REPO / "data" / "pandalm" / "testset-v1.json"


def words(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def demo():
    """The demo audited with a plan for 10 and 20 models at P(stay) 0.97: the 10-model board
    needs more items than the demo has, the 20-model one cannot reach 0.97 at any size (the
    pool effect measured between the three annotators caps it)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return json_form(audit.plan(DEMO, models=(10, 20), stay=0.97, n_sims=4000,
                                    n_bootstrap=50))


def test_section_follows_the_findings(demo):
    tags, _ = parse_html(render_html(demo))
    ids = [a.get("id") for t, a in tags if t == "section"]
    assert ids[:2] == ["findings", "next"]  # no suite ran: nothing comes between


def test_section_shows_the_sentences_and_the_plan_s_numbers(demo):
    text = section_text(render_html(demo), "next")
    for s in plan_sentences(demo["plan"]) + advise_sentences(demo["advise"]):
        assert words(s) in text
    sizes = demo["plan"]["leaderboard"]["sizes"]
    verdicts = {e["n_models"]: e["verdict"] for e in sizes}
    assert verdicts == {10: "planned", 20: "no_size_suffices"}
    for e in sizes:
        if e["verdict"] == "planned":
            for r in e["rows"]:
                lo, hi = r["n_items_ci95"]
                row = (f"{e['n_models']} {r['m']} {r['n_items']:,} {r['judgments']:,} "
                       f"{r['p_stay']:.3f} ± {r['p_stay_mc_se']:.3f} {lo:,} – "
                       + (f"{hi:,}" if hi is not None else "∞"))
                assert row in text, row
        else:
            lo, hi = e["ceiling_ci95"]
            row = (f"{e['n_models']} any no size suffices - {e['ceiling']:.3f} ± "
                   f"{e['ceiling_mc_se']:.3f} (ceiling) P(stay) {lo:.3f} – {hi:.3f}")
            assert row in text, row


def test_section_lists_the_first_advised_items_in_order(demo):
    text = section_text(render_html(demo), "next")
    items = demo["advise"]["items"]
    assert len(items) == 50
    at = 0
    for it in items[:10]:  # "all": every human pool together, any of their annotators
        to = "any human annotator" if it["pool"] == "all" else it["pool"]
        row = (f"{it['rank']} {it['item']} {it['model_a']} / {it['model_b']} {to} "
               f"{', '.join(r.replace('_', ' ') for r in it['reasons'])} "
               f"{it['expected_reduction']:.3g}")
        at = text.index(row, at)  # in rank order
    assert "The first 10 of 50 advised items" in text
    assert "advice.csv" in text


def test_hs_brexit_section_has_the_labels_plan_and_no_model_column(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = json_form(audit.run(shared_data("lewidi2023/HS-Brexit"), n_bootstrap=20))
    html = render_html(results)
    text = section_text(html, "next")
    assert results["plan"]["leaderboard"]["not_defined"]
    for p in results["plan"]["labels"]["pools"]:
        row = (f"{p['pool']} {p['judgments_per_item_now']:.0f} {p['agreement_now']:.3f} "
               f"{p['planned_m']}")
        assert row in text, row
    assert results["advise"]["target"] == "labels"
    assert "models" not in text.split("Items to send back", 1)[1].split("reasons", 1)[0]
    buf = io.StringIO()  # the summary's plan line is the labels plan: there is no leaderboard
    print_summary(results, console=Console(file=buf, width=300, highlight=False, soft_wrap=True))
    lines = [line for line in buf.getvalue().splitlines() if line.startswith("next: ")]
    assert lines == [f"next: {plan_sentences(results['plan'])[1]}",
                     f"next: {advise_sentences(results['advise'])[0]}"]
    assert "annotator" in lines[0]


def test_terminal_summary_has_two_lines(demo):
    from audit.advice.advise import CAVEAT

    buf = io.StringIO()
    print_summary(demo, console=Console(file=buf, width=300, highlight=False, soft_wrap=True))
    lines = [line for line in buf.getvalue().splitlines() if line.startswith("next: ")]
    advice = advise_sentences(demo["advise"])
    assert advice[1] == CAVEAT["labels"]  # the demo's advice says why not the leaderboard
    assert lines == [f"next: {plan_sentences(demo['plan'])[0]}",
                     f"next: {advice[0]} {advice[1]}"]


def test_card_says_the_planned_size_exceeds_the_dataset_and_no_size_suffices(demo):
    n_items = demo["dataset"]["n_items"]
    m_now = round(demo["plan"]["leaderboard"]["components"]["judgments_per_item_now"])
    ten = next(e for e in demo["plan"]["leaderboard"]["sizes"] if e["n_models"] == 10)
    row = next(r for r in ten["rows"] if r["m"] == m_now)
    assert row["n_items"] > n_items
    want = (f"A 10-model leaderboard would need about {row['n_items']:,} items ({m_now} "
            f"judgment{'s' if m_now != 1 else ''} each, per pool) to keep its order with "
            f"probability 0.97; this dataset has {n_items:,}.")
    twenty = next(e for e in demo["plan"]["leaderboard"]["sizes"] if e["n_models"] == 20)
    verdict = ("No number of items lets a 20-model leaderboard keep its order with probability "
               f"0.97: the pool effect measured here does not shrink with more items and caps "
               f"it at {twenty['ceiling']:.2f}.")
    said = limitations(demo, md_escape)
    assert want in said and verdict in said
    card = words(render_card(demo))
    assert words(md_escape(want)) in card or words(want) in card


def test_card_says_nothing_when_the_dataset_is_large_enough(demo):
    big = copy.deepcopy(demo)
    big["dataset"]["n_items"] = 10 ** 9
    said = " ".join(limitations(big, md_escape))
    assert "would need about" not in said
    assert "No number of items lets a 20-model" in said  # the ceiling holds at any size
    bare = {k: v for k, v in demo.items() if k not in ("plan", "advise")}
    assert "would need about" not in " ".join(limitations(bare, md_escape))
    assert 'id="next"' in render_html(bare)
    assert "Not applicable" in section_text(render_html(bare), "next")
