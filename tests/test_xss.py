"""Script injection through dataset strings: item, annotator, pool and model names and item texts.

A dataset whose strings carry payloads (``<script>``, ``"><img onerror=...>``, ``</style>``,
``javascript:`` ...) goes through the real pipeline; nothing may execute in the report (each
payload sets ``window.__xss`` or the title), and every string must show as text.
"""

from __future__ import annotations

import json
import re
import warnings

import chromium
import numpy as np
import pandas as pd
import pytest
from results_examples import PAYLOADS, full_results, parse_html, section_text

from audit.contract import columns as C
from audit.errors import DegenerateDataWarning
from audit.contract.labels import LabelKind, LabelScale
from audit.advice import advise_frame
from audit.pipeline import audit_table, next_steps
from audit.results import json_form
from audit.report import write_reports
from audit.report.card import END, START, check_card, md_escape
from audit.report.advice_table import write_advice
from audit.report.html import SECTIONS
from audit.resample import Bootstrap
from audit.contract.table import build_table

POOLS = (f"crowd{PAYLOADS[0]}", f"expert{PAYLOADS[1]}", f"judge{PAYLOADS[2]}")
MODELS = tuple(f"m{i}{p}" for i, p in enumerate(PAYLOADS[3:8]))
ALLOWED_TAGS = {"html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "h3", "p",
                "nav", "a", "main", "section", "dl", "div", "dt", "dd", "ul", "li", "table",
                "thead", "tbody", "tr", "th", "td", "span", "strong", "code", "figure",
                "figcaption", "details", "summary", "footer",
                # inline SVG, after sanitising (audit.report.svg)
                "svg", "desc", "g", "path", "text", "tspan", "rect", "circle", "line",
                "polyline", "polygon"}


def hostile_table():
    """40 pairwise items judged by two human pools (3 annotators each) and a judge pool."""
    rng = np.random.default_rng(5)
    n = 40
    a = rng.integers(0, len(MODELS), n)
    b = (a + rng.integers(1, len(MODELS), n)) % len(MODELS)
    models = np.array(MODELS, dtype=object)
    rows = []
    for q, (pool, k) in enumerate(zip(POOLS, (3, 3, 1))):
        for j in range(k):
            rows.append(pd.DataFrame({
                C.ITEM: [f"item{PAYLOADS[i % len(PAYLOADS)]}#{i}" for i in range(n)],
                C.ANNOTATOR: f"ann{q}.{j}{PAYLOADS[(j + 4) % len(PAYLOADS)]}",
                C.POOL: pool, C.MODEL_A: models[a], C.MODEL_B: models[b],
                C.LABEL: rng.choice([-1, 0, 1], size=n, p=[0.45, 0.1, 0.45]),
                C.TEXT: [PAYLOADS[(i + 3) % len(PAYLOADS)] for i in range(n)]}))
    raw = pd.concat(rows, ignore_index=True)
    return build_table(raw, LabelScale(LabelKind.PREFERENCE, (-1, 0, 1)),
                       name=f"evil{PAYLOADS[0]}", source="hostile.jsonl",
                       judge_pools=(POOLS[2],))


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """Reports of the hostile dataset through the pipeline, and of the hostile toy audit (results_examples.toy_table)."""
    out = {}
    table = hostile_table()
    with warnings.catch_warnings():  # the one-annotator judge pool has NaN reliability
        warnings.simplefilter("ignore", DegenerateDataWarning)
        raw = audit_table(table, bootstrap=Bootstrap(30, 1))
        raw.update(next_steps(table, raw, plan={"n_sims": 500}, seed=1))
    results = json_form(raw)
    folder = tmp_path_factory.mktemp("pipeline")
    write_advice(advise_frame(table, results["advise"]), folder)  # as advise --out: linked
    out["pipeline"] = (results, write_reports(results, folder))
    hand = full_results(hostile=True)
    out["toy"] = (hand, write_reports(hand, tmp_path_factory.mktemp("hand")))
    return out


@pytest.mark.parametrize("which", ["pipeline", "toy"])
def test_html_has_no_injected_markup(reports, which):
    results, paths = reports[which]
    html = paths["report"].read_text()
    tags, texts = parse_html(html)
    assert {t for t, _ in tags} <= ALLOWED_TAGS, {t for t, _ in tags} - ALLOWED_TAGS
    assert "<script" not in html.lower() and "<img" not in html.lower()
    for tag, attrs in tags:
        assert not any(k.startswith("on") for k in attrs), (tag, attrs)
        assert all(v is None or "javascript:" not in v.lower() for v in attrs.values()), attrs
        if "href" in attrs:  # the page's sections, and the advised items' file beside it
            assert attrs["href"].startswith("#") or attrs["href"] == "advice.csv"
    assert [t for t, _ in tags].count("style") == 1  # the page's CSS; charts carry none
    assert [t for t, _ in tags].count("svg") >= 5
    assert "&lt;script&gt;window.__xss=1" in html
    text = " ".join(texts)
    for p in results["dataset"]["pools"]:
        assert p in text  # shown as text, exactly
    for m in results["dataset"]["models"]:
        assert m in text


def test_pipeline_report_shows_every_kind_of_string(reports):
    results, paths = reports["pipeline"]
    html = paths["report"].read_text()
    flipped = results["stability"]["flipped_items"]
    assert flipped["count"] > 0
    shown = section_text(html, "flipped-items")
    for it in flipped["items"][:5]:
        assert it["item"] in shown and " ".join(it["text"].split()) in shown
    assert results["judge_alignment"] and POOLS[2] in section_text(html, "judge-alignment")
    judges = section_text(html, "judge-alignment")
    for row in results["judge_alignment"][0]["agreement"]:  # the per-pool table (issue 14)
        assert f"{row['pool']} {row['agreement']:.3f}" in judges
    within = section_text(html, "pool-disagreement")
    for w in results["within_pool"]:
        assert w["pool"] in within
    advised = results["advise"]["items"]
    assert advised, "nothing advised: the What to do next section was not checked"
    shown = section_text(html, "next")
    for it in advised[:10]:  # hostile ids and model names, as text
        assert it["item"] in shown and it["model_a"] in shown and it["model_b"] in shown
    card = paths["card"].read_text()
    auto = card[card.index("### Automatic judges"):card.index("### Known limitations")]
    for pool in POOLS:  # names in the judge sentences, escaped for Markdown
        assert md_escape(pool) in auto and pool not in auto


@pytest.mark.parametrize("which", ["pipeline", "toy"])
def test_card_and_croissant_stay_inert(reports, which):
    results, paths = reports[which]
    card = paths["card"].read_text()
    assert check_card(card) == []
    assert card.count(START) == 1 and card.count(END) == 1
    body = card.split("---", 2)[2]
    for bad in ("<script", "<img", "<svg", "</style", "</textarea"):
        assert bad not in body, bad
    assert not re.search(r"(?<!\\)\]\(javascript", body)  # no live Markdown link
    # which model and pool names the card's sentences mention depends on the numbers (the
    # closest pair, the judge's pools); every one it mentions is there escaped, never raw,
    # and some hostile name is always mentioned (else this test would check nothing)
    names = {*results["dataset"]["pools"], *(row["model"] for rows in
                                             results["leaderboards"].values() for row in rows)}
    shown = [n for n in names if md_escape(n) in body]
    assert shown, "no hostile pool or model name in the card: nothing was checked"
    for name in names:
        if any(ch in name for ch in "<[*|$"):
            assert name not in body, name
    if any("[link](javascript" in n for n in shown):
        assert "\\[link\\](javascript" in body  # the escaped text is there instead
    node = json.loads(paths["croissant_rai"].read_text())
    assert node["name"] == results["dataset"]["name"]  # JSON keeps the raw string


@pytest.mark.browser
@pytest.mark.skipif(not chromium.available(), reason=chromium.SKIP_REASON)
@pytest.mark.parametrize("which", ["pipeline", "toy"])
def test_nothing_executes_in_the_browser(reports, which, tmp_path):
    results, paths = reports[which]
    with chromium.browser(*chromium.LAPTOP) as driver:
        driver.get(paths["report"].resolve().as_uri())
        assert driver.execute_script("return typeof window.__xss") == "undefined"
        assert driver.title == f"Annotation audit: {results['dataset']['name']}"
        assert driver.execute_script("return document.scripts.length") == 0
        assert driver.execute_script("return document.images.length") == 0
        assert [e for e in driver.get_log("browser") if e["level"] == "SEVERE"] == []
        body = driver.find_element("tag name", "body").text
        for p in results["dataset"]["pools"]:
            assert " ".join(p.split()) in body  # the payload is visible as literal text
        for sid, _ in SECTIONS:
            assert driver.find_element("id", sid).is_displayed()
        driver.save_screenshot(str(tmp_path / f"xss-{which}.png"))
