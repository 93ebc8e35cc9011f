"""A NaN in the HTML report says why, as the dataset card does.

Found auditing the shipped PandaLM demo and LeWiDi 2025's CSC (pools from ``--pool-column
Gender``): the report's reliability and within-pool tables showed rows of NaN with no word of
why (PandaLM's pools hold one annotator each; CSC's ``CONSENT_REVOKED`` no item judged twice),
where the card says it under its table; CSC's pool pairs with no item unanimous in both pools
drew eleven confusion heatmaps of zeros, crowding out pairs with data (at most
``MAX_HEATMAPS``); and a leaderboard method with nothing ranked listed its metric as ``NaN``.
The results are the committed demo's (``reports/pandalm/results.json``), changed where needed.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from results_examples import parse_html

from audit.report.html import MAX_HEATMAPS, build_view, environment, render_html

REPO = Path(__file__).resolve().parents[1]
DEMO = json.loads((REPO / "reports" / "pandalm" / "results.json").read_text(encoding="utf-8"))


def page_text(results: dict) -> str:
    _, texts = parse_html(render_html(results))
    return " ".join(" ".join(texts).split())


def section(results: dict, sid: str) -> str:
    """The text of one section of the report, from its id to the next section."""
    text = environment().get_template("report.html.j2").render(**build_view(results,
                                                                           charts=False))
    start = text.index(f'<section id="{sid}">')
    end = text.index("</section>", start)
    _, texts = parse_html(text[start:end])
    return " ".join(" ".join(texts).split())


def test_single_annotator_pools_say_why_their_agreement_is_nan():
    reliability = section(DEMO, "reliability")
    assert "NaN" in reliability
    assert ("NaN marks a coefficient not defined here: annotator1, annotator2 and annotator3 "
            "have one annotator each, so there is no agreement to measure.") in reliability
    within = section(DEMO, "pool-disagreement").split("Within-pool variability", 1)[1]
    assert "NaN" in within
    assert ("NaN: not measurable within annotator1, annotator2 and annotator3 "
            "(one annotator each).") in within


def test_a_table_without_nan_gets_no_note():
    results = copy.deepcopy(DEMO)
    results["reliability"]["by_pool"] = {}
    results["within_pool"] = []
    text = page_text(results)
    assert "NaN marks" not in text and "NaN: not measurable" not in text


def _no_unanimous_item(row: dict) -> dict:
    """``row`` as a pair of pools with no item unanimous in both (CSC's CONSENT_REVOKED vs
    Female): rates null, every confusion cell 0."""
    row = copy.deepcopy(row)
    row.update(n_items_shared=0, n_items_both_unanimous=0, majority_differs_rate=None,
               winner_reversed_rate=None)
    row["ci95"] = {"majority_differs_rate": [None, None], "winner_reversed_rate": None}
    row["null"] = {k: None for k in row["null"]}
    row["excess"] = {k: {"estimate": None, "ci95": [None, None]} for k in row["excess"]}
    row["confusion"] = {a: {b: 0 for b in inner} for a, inner in row["confusion"].items()}
    return row


def test_a_pair_with_no_unanimous_item_draws_no_heatmap_and_says_why():
    results = copy.deepcopy(DEMO)
    rows = results["pool_disagreement"]
    kept = rows[-1]
    empty = [_no_unanimous_item(r) for r in rows[:-1]] * MAX_HEATMAPS
    results["pool_disagreement"] = empty + [kept]  # the pair with data comes last
    view = build_view(results, charts=True)["pool_disagreement"]
    assert [(h["pool_a"], h["pool_b"]) for h in view["heatmaps"]] == \
        [(kept["pool_a"], kept["pool_b"])]
    assert view["none_unanimous"]
    assert ("NaN: no item is unanimous in both pools of the pair (0 items), so their majority "
            "labels are not compared.") in page_text(results)
    assert not build_view(DEMO, charts=False)["pool_disagreement"]["none_unanimous"]


@pytest.mark.parametrize("value, shown", [(None, "-"), ("win_rate", "win_rate")])
def test_a_method_detail_without_a_value_is_a_dash_not_nan(value, shown):
    results = copy.deepcopy(DEMO)
    results["leaderboard_method"]["metric"] = value
    details = dict(build_view(results, charts=False)["method"]["details"])
    assert dict(details["leaderboard method"])["metric"] == shown
