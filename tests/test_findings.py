"""The Findings box (audit/report/findings.py) on real audits: PandaLM (three single-annotator
pools, five models) and HS-Brexit (two pools of three annotators). Every number in a sentence is
formatted here from results.json, independently of the module's helpers; the box opens the page,
its links resolve, the pool colours agree across charts, the header shows no absolute temporary
path, and dataset strings stay escaped in HTML and inert in the terminal.
"""

from __future__ import annotations

import copy
import io
import json
import math
import re
import shutil

import pytest
from click.testing import CliRunner
from conftest import REPO, shared_data
from results_examples import full_results, parse_html, section_html, section_text
from rich.console import Console

from audit.cli import cli
from audit.report import charts
from audit.report.findings import MAX_FINDINGS, findings
from audit.report.html import render_html, shown_source
from audit.report.summary import print_findings

PANDALM = REPO / "data" / "pandalm" / "testset-v1.json"


def _run(source, out) -> tuple[dict, str]:
    result = CliRunner().invoke(cli, ["run", str(source), "--out", str(out), "--bootstrap", "100",
                                      "--quiet"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return (json.loads((out / "results.json").read_text()),
            (out / "report.html").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def pandalm(tmp_path_factory):
    """PandaLM copied to an absolute temporary folder and audited from there."""
    if not PANDALM.exists():
        pytest.skip("data/pandalm/testset-v1.json not present")
    src = tmp_path_factory.mktemp("in") / "testset-v1.json"
    shutil.copy(PANDALM, src)
    results, html = _run(src, tmp_path_factory.mktemp("out"))
    return {"results": results, "html": html, "source": src}


@pytest.fixture(scope="module")
def brexit(tmp_path_factory):
    src = shared_data("lewidi2023/HS-Brexit")
    results, html = _run(src, tmp_path_factory.mktemp("out"))
    return {"results": results, "html": html, "source": src}


def f1(x):
    return f"{100 * x:.1f}"


def rate_ci(x, ci):
    return f"{f1(x)}% [{f1(ci[0])}, {f1(ci[1])}]"


def section_ids(html):
    tags, _ = parse_html(html)
    return [a.get("id") for t, a in tags if t == "section"]


# -- the box opens the page and links to its sections -------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("which", ["pandalm", "brexit"])
def test_findings_open_the_report_and_links_resolve(which, request):
    html = request.getfixturevalue(which)["html"]
    assert section_ids(html)[0] == "findings"
    main = html[html.index("<main>"):]
    assert main.index('<section id="findings">') < main.index('<section id="overview">')
    # no suite ran: the "not applicable" expectations box does not come before the analyses
    assert section_ids(html).index("expectations") > section_ids(html).index("flipped-items")
    tags, _ = parse_html(section_html(html, "findings"))
    hrefs = [a["href"] for t, a in tags if t == "a"]
    assert hrefs, "no finding on a real dataset"
    ids = {a.get("id") for _, a in parse_html(html)[0] if a.get("id")}
    for h in hrefs:
        assert h.startswith("#") and h[1:] in ids and h[1:] != "findings"
    assert len(hrefs) <= MAX_FINDINGS


@pytest.mark.slow
def test_brexit_sentences_carry_results_json_numbers(brexit):
    res, text = brexit["results"], section_text(brexit["html"], "findings")
    (row,) = res["pool_disagreement"]
    null, ex = row["null"], row["excess"]["majority_differs_rate"]
    assert (f"Where both pools are unanimous, {row['pool_a']} and {row['pool_b']} give different "
            f"labels on {rate_ci(row['majority_differs_rate'], row['ci95']['majority_differs_rate'])}"
            f" of {row['n_items_both_unanimous']:,} items ({f1(null['majority_differs_rate'])}% "
            f"expected if the pools were interchangeable; excess {100 * ex['estimate']:+.1f} "
            f"[{100 * ex['ci95'][0]:+.1f}, {100 * ex['ci95'][1]:+.1f}] points") in text
    low = [(p, s["krippendorff_alpha"]) for p, s in res["reliability"]["by_pool"].items()
           if s["krippendorff_alpha"]["value"] < 0.667]
    assert low  # both pools of HS-Brexit are below the floor
    for pool, a in low:
        assert f"{pool} ({a['value']:.3f} [{a['ci95'][0]:.3f}, {a['ci95'][1]:.3f}])" in text
    effects = [w for w in res["within_pool"] if w["annotator_effect_p"] is not None
               and w["annotator_effect_p"] < 0.05]
    assert effects
    for w in effects:
        assert (f"Cramér's V {w['effect_size']:.3f}; a disagreement on "
                f"{rate_ci(w['disagreement_rate'], w['ci95'])} of its items") in text
        assert f"within {w['pool']} (" in text or f"and {w['pool']} (" in text
    # the largest significant excess (>= 5 points) and alpha's whole interval below 0.667 lead
    order = [f.kind for f in findings(res)]
    assert set(order[:2]) == {"reliability", "pool_disagreement"} and order[2] == "within_pool"


@pytest.mark.slow
def test_pandalm_displacement_sentence_and_no_sentence_without_a_null(pandalm):
    res, text = pandalm["results"], section_text(pandalm["html"], "findings")
    sim = {r["n_models"]: r for r in res["stability"]["simulation"]}
    for n in (10, 20):
        r = sim[n]
        assert f"{rate_ci(r['displacement_probability'], r['interval95'])} at {n} models" in text
    sd = res["stability"]["simulation_model"]
    assert (f"score shift SD {sd['perturbation_sd']:.4f} [{sd['perturbation_sd_ci95'][0]:.4f}, "
            f"{sd['perturbation_sd_ci95'][1]:.4f}]") in text
    # one judgment per pool on every item: the permutation null is not defined, so no sentence
    assert all(r["null"]["not_defined"] for r in res["pool_disagreement"])
    assert "unanimous" not in text
    # single-annotator pools: alpha is NaN, so no reliability sentence either
    assert "Krippendorff" not in text


# -- the header: no absolute temporary or home path ---------------------------------------------------
@pytest.mark.slow
def test_header_shows_no_absolute_temporary_path(pandalm):
    html, src = pandalm["html"], pandalm["source"]
    assert src.is_absolute()
    assert str(src) not in html and str(src.parent) not in html
    assert "/tmp/" not in html and "/home/" not in html
    header = html[html.index("<header>"):html.index("</header>")]
    assert f"…/{src.parent.name}/{src.name}" in header


def test_shown_source_rules(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d").mkdir()
    assert shown_source(str(tmp_path / "d" / "x.json")) == "d/x.json"  # under the cwd: relative
    assert shown_source("../elsewhere/x.json") == "../elsewhere/x.json"  # relative: as given
    assert shown_source("/home/someone/data/set/x.json") == "…/set/x.json"
    assert shown_source("org/dataset") == "org/dataset"  # a hub name
    assert shown_source(None) is None


# -- one colour per pool -------------------------------------------------------------------------------
PALETTE = set(charts.OKABE_ITO)


def colours_in(svg: str) -> set[str]:
    return {c.lower() for c in re.findall(r"#[0-9a-fA-F]{6}\b", svg)} & PALETTE


def test_pool_colours_are_fixed_by_name_humans_before_judges():
    c = charts.pool_colours(["zeta", "aaa-judge", "beta"], judges=["aaa-judge"])
    assert c == {"beta": charts.OKABE_ITO[0], "zeta": charts.OKABE_ITO[1],
                 "aaa-judge": charts.OKABE_ITO[2]}
    assert charts.pool_colours(["beta", "zeta"]) == charts.pool_colours(["zeta", "beta"])


@pytest.mark.slow
def test_same_pool_same_colour_in_every_chart(pandalm):
    res, html = pandalm["results"], pandalm["html"]
    colours = charts.dataset_colours(res["dataset"])
    assert colours == {f"annotator{i + 1}": charts.OKABE_ITO[i] for i in range(3)}
    # on the page: only the dataset's pools' colours, and each chart of pools shows all three
    svgs = re.findall(r"<svg.*?</svg>", html, flags=re.S)
    assert svgs and set().union(*map(colours_in, svgs)) == set(colours.values())
    st = res["stability"]
    boards = res["leaderboards"]
    # a chart showing a subset or another order keeps each pool's colour
    sub = {"annotator3": boards["annotator3"], "annotator1": boards["annotator1"]}
    assert colours_in(charts.leaderboard_chart(sub, colours=colours)) == \
        {colours["annotator3"], colours["annotator1"]}
    hist = {"annotator2": st["displacement_histogram"]["annotator2"]}
    assert colours_in(charts.displacement_histogram(hist, colours=colours)) == \
        {colours["annotator2"]}
    pairs = [r for r in st["closest_pairs"] if r["pool"] == "annotator3"]
    assert colours_in(charts.swap_chart(pairs, colours=colours)) == {colours["annotator3"]}
    # without a map a chart still colours by name, not by position
    assert colours_in(charts.displacement_histogram(hist)) == {charts.OKABE_ITO[0]}


@pytest.mark.slow
def test_brexit_reliability_chart_uses_the_pool_colours(brexit):
    res = brexit["results"]
    colours = charts.dataset_colours(res["dataset"])
    svg = charts.reliability_chart(res["reliability"], colours=colours)
    assert colours_in(svg) == set(colours.values())
    one = {"by_pool": {"target group": res["reliability"]["by_pool"]["target group"]}}
    assert colours_in(charts.reliability_chart(one, colours=colours)) == {colours["target group"]}


# -- severity, degenerate data, escaping ---------------------------------------------------------------
def test_order_follows_severity_and_at_most_six():
    res = full_results()
    fs = findings(res)
    assert [f.severity for f in fs] == sorted((f.severity for f in fs), reverse=True)
    many = copy.deepcopy(res)
    row = many["pool_disagreement"][0]
    many["pool_disagreement"] = [dict(copy.deepcopy(row), pool_b=f"p{i}") for i in range(9)]
    assert len(findings(many)) == MAX_FINDINGS
    assert len(findings(many, limit=2)) == 2


@pytest.mark.slow
def test_degenerate_numbers_give_no_sentence(brexit):
    base = brexit["results"]
    assert {f.kind for f in findings(base)} >= {"pool_disagreement", "within_pool", "reliability"}
    res = copy.deepcopy(base)
    res["pool_disagreement"][0]["excess"]["majority_differs_rate"]["ci95"] = [math.nan, math.nan]
    res["pool_disagreement"].append(dict(copy.deepcopy(base["pool_disagreement"][0]), null=None))
    for w in res["within_pool"]:
        w["annotator_effect_p"] = math.nan
    for stats in res["reliability"]["by_pool"].values():
        stats["krippendorff_alpha"]["value"] = math.nan
    assert findings(res) == []
    assert 'id="findings"' in render_html(res, max_items=0)


@pytest.mark.slow
def test_hostile_pool_names_stay_escaped(brexit):
    res = copy.deepcopy(brexit["results"])
    evil = 'ctl<script>alert(1)</script>\x1b]0;pwned\x07"'
    row = res["pool_disagreement"][0]
    old = row["pool_a"]
    row["pool_a"] = evil
    for w in res["within_pool"]:
        if w["pool"] == old:
            w["pool"] = evil
    res["reliability"]["by_pool"][evil] = res["reliability"]["by_pool"].pop(old)
    html = section_html(render_html(res), "findings")
    assert "<script" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    buf = io.StringIO()
    print_findings(res, console=Console(file=buf, width=400, soft_wrap=True, emoji=False,
                                        highlight=False, force_terminal=False))
    out = buf.getvalue()
    assert "\x1b" not in out and "\x07" not in out and "\\x1b" in out
    assert "ctl<script>alert(1)</script>" in out  # shown as text, not interpreted


def test_hostile_toy_results_escape_in_findings():
    html = section_html(render_html(full_results(hostile=True)), "findings")
    tags, _ = parse_html(html)
    assert {t for t, _ in tags} <= {"section", "h2", "ul", "li", "a", "p"}
    assert all(set(a) <= {"href", "id", "class"} for _, a in tags)
    assert all(a["href"].startswith("#") for t, a in tags if t == "a")


def test_pandalm_flipped_items_sentence_states_the_share_and_its_interval(pandalm):
    """Opposite majority winners between pools are a finding at any leaderboard size: the
    count, the share with its Wilson interval (checked against statsmodels) and the link."""
    from statsmodels.stats.proportion import proportion_confint

    res, html = pandalm["results"], pandalm["html"]
    fl = res["stability"]["flipped_items"]
    k, n = fl["n_flipped"], fl["n_compared"]
    lo, hi = proportion_confint(k, n, method="wilson")
    text = section_text(html, "findings")
    assert f"{k:,} of {n:,} compared items ({rate_ci(k / n, [lo, hi])})" in text
    assert 'href="#flipped-items"' in section_html(html, "findings")
    none = copy.deepcopy(res)
    none["stability"]["flipped_items"].update(n_flipped=0, count=0, items=[])
    assert not [f for f in findings(none) if f.kind == "flipped_items"]
