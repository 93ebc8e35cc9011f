"""The statistics of issue 14 as the reader sees them: every renderer (HTML report, dataset card,
terminal summary) shows the numbers of a real audit, each found in the output as formatted here
from results.json (independently of the renderers' helpers): pool disagreement beside its
permutation null and the excess, the within-item permutation test and its reference tests, the
judge's agreement with one annotator beside the pool's ceiling, swap and displacement
probabilities with their Monte-Carlo s.e., the simulation's interval over the SD's uncertainty.
"""

from __future__ import annotations

import io
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import shared_data
from results_examples import section_text
from rich.console import Console

from audit.contract import columns as C
from audit.errors import DegenerateDataWarning
from audit.format import probability, probability_percent
from audit.contract.labels import LabelKind, LabelScale
from audit.pipeline import audit_table
from audit.report.card import annotations_block
from audit.report.limitations import limitations
from audit.report.html import render_html
from audit.report.summary import print_summary
from audit.resample import Bootstrap
from audit.results import json_form
from audit.contract.table import build_table

MODELS = ("m-alpha", "m-beta", "m-gamma", "m-delta", "m-eps")


def crossed_table(*, seed: int = 11, n: int = 120):
    """Pairwise items judged by every annotator of two human pools (3 each, fully crossed) and a
    judge. The experts see 30% of the items the other way round (a pool effect: the pools differ
    beyond what shuffling their annotators gives) and crowd annotator 0 leans to A (an annotator
    effect within the crowd); the judge follows the crowd's view."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, len(MODELS), n)
    b = (a + rng.integers(1, len(MODELS), n)) % len(MODELS)
    strength = np.linspace(1.0, -1.0, len(MODELS))
    truth = np.sign(strength[b] - strength[a] + rng.normal(0, 0.8, n)).astype(int)
    expert_view = np.where(rng.random(n) < 0.3, -truth, truth)
    rows = []
    for pool, k, noise in (("crowd", 3, 0.15), ("expert", 3, 0.15), ("gpt-4", 1, 0.3)):
        view = expert_view if pool == "expert" else truth
        for j in range(k):
            label = np.where(rng.random(n) < noise, rng.choice([-1, 0, 1], n), view)
            if pool == "crowd" and j == 0:
                label = np.where(rng.random(n) < 0.35, -1, label)
            rows.append(pd.DataFrame({
                C.ITEM: [f"i{i}" for i in range(n)], C.ANNOTATOR: f"{pool}-{j}", C.POOL: pool,
                C.MODEL_A: np.array(MODELS)[a], C.MODEL_B: np.array(MODELS)[b],
                C.LABEL: label}))
    return build_table(pd.concat(rows, ignore_index=True),
                       LabelScale(LabelKind.PREFERENCE, (-1, 0, 1)), name="crossed",
                       source="crossed.jsonl", judge_pools=("gpt-4",))


@pytest.fixture(scope="module")
def audit():
    with warnings.catch_warnings():  # the one-annotator judge pool has NaN reliability
        warnings.simplefilter("ignore", DegenerateDataWarning)
        results = json_form(audit_table(crossed_table(), bootstrap=Bootstrap(200, 3),
                                        sizes=(5, 10), n_sims=2000))
    buf = io.StringIO()
    print_summary(results, console=Console(file=buf, width=400, highlight=False,
                                           soft_wrap=True, emoji=False))
    return {"results": results, "html": render_html(results),
            "card": " ".join(annotations_block(results).split()), "summary": buf.getvalue()}


def pct(x):
    return f"{100 * x:.1f}%"


def pts(x):
    return f"{100 * x:+.1f}"


def perm_p(p, se, n, *, card=False):
    """A permutation p as shown: ``p ± s.e.``, or the bound 1 / (n + 1) when no permutation
    reached the observed value (Phipson & Smyth 2010)."""
    if p * (n + 1) <= 1 + 1e-9:
        return (f"p ≤ {1 / (n + 1):.4f}, the smallest p-value {n:,} permutations resolve"
                if card else f"≤ {1 / (n + 1):.4f} ({n:,} perm.)")
    return f"p = {p:.4f} ± {se:.4f} over {n:,}" if card else f"{p:.4f} ± {se:.4f} ({n:,} perm.)"


# -- pool disagreement: observed, null, excess, p ---------------------------------------------------
def test_pool_disagreement_shows_the_null_and_the_excess(audit):
    res = audit["results"]
    html = section_text(audit["html"], "pool-disagreement")
    tested = 0
    for row in res["pool_disagreement"]:
        null, excess = row["null"], row["excess"]
        if null.get("p_value") is None:
            continue
        for stat in ("majority_differs_rate", "winner_reversed_rate"):
            if row[stat] is None:
                continue
            lo, hi = row["ci95"][stat]
            e = excess[stat]
            cells = (f"{pct(row[stat])} [{pct(lo)}, {pct(hi)}] {pct(null[stat])} "
                     f"{pts(e['estimate'])} [{pts(e['ci95'][0])}, {pts(e['ci95'][1])}] points "
                     + perm_p(null["p_value"], null["mc_se"], null["n_permutations"]))
            assert cells.replace("-", "−") in html or cells in html, cells
            tested += 1
        if row["pool_a"] == "crowd" and row["pool_b"] == "expert" \
                and row["granularity"] == "label":
            d, lo, hi = row["majority_differs_rate"], *row["ci95"]["majority_differs_rate"]
            e = excess["majority_differs_rate"]
            assert (f"labels differ on {pct(d)} (95% CI {pct(lo)} to {pct(hi)}) against "
                    f"{pct(null['majority_differs_rate'])} expected if the pools were "
                    f"interchangeable (excess {pts(e['estimate'])} points, 95% CI "
                    f"{pts(e['ci95'][0])} to {pts(e['ci95'][1])})") in audit["card"]
            assert f"{pct(null['majority_differs_rate'])} " in audit["summary"]
            assert f"{pts(e['estimate'])} [{pts(e['ci95'][0])}, {pts(e['ci95'][1])}] pt" \
                in audit["summary"]
    assert tested >= 2  # the crossed design has a permutation null for both statistics
    row = res["pool_disagreement"][0]
    assert f"rates {row['ci_method']}" in html and f"excess {row['excess']['ci_method']}" in html


def test_pool_limitation_follows_the_permutation_p(audit):
    res = audit["results"]
    row = next(r for r in res["pool_disagreement"]
               if (r["pool_a"], r["pool_b"], r["granularity"]) == ("crowd", "expert", "label"))
    assert row["null"]["p_value"] < 0.05  # the experts' view differs by design
    text = " ".join(limitations(res))
    assert "The pools disagree beyond chance: where crowd and expert" in text
    for other in [r for r in res["pool_disagreement"] if r["granularity"] == "label"]:
        named = f"where {other['pool_a']} and {other['pool_b']} are each unanimous" in text
        assert named == (other["null"]["p_value"] < 0.05
                         and other["excess"]["majority_differs_rate"]["estimate"] > 0)


# -- within pool: the within-item permutation test decides the wording -----------------------------
def test_within_pool_shows_the_permutation_test_and_references(audit):
    res = audit["results"]
    html = section_text(audit["html"], "pool-disagreement")
    for w in res["within_pool"]:
        t = w["test"]
        if w["annotator_effect_p"] is None:
            continue
        assert w["annotator_effect_p"] == t["p_value"]
        assert (f"{w['pool']} {pct(w['disagreement_rate'])} [{pct(w['ci95'][0])}, "
                f"{pct(w['ci95'][1])}] within-item permutation "
                + perm_p(t["p_value"], t["mc_se"], t["n_permutations"])) in html
        for ref in w["reference_tests"]:
            assert f"{ref['statistic']:.2f} (df {ref['dof']}), p = {ref['p_value']:.4f}" in html \
                or ref["p_value"] < 1e-4
        verdict = ("its annotators are not interchangeable" if t["p_value"] < 0.05 else
                   "no evidence that its annotators differ")
        assert f"{w['pool']}: " in audit["card"]
        sentence = audit["card"].split(f"- {w['pool']}: ")[1].split(" - ")[0]
        assert verdict in sentence
        assert perm_p(t["p_value"], t["mc_se"], t["n_permutations"], card=True) in sentence
        assert f"Cramér's V {w['effect_size']:.3f}" in sentence
        n = t["n_permutations"]
        term = (f"<= {1 / (n + 1):.4f}" if t["p_value"] * (n + 1) <= 1 + 1e-9
                else f"{t['p_value']:.4f} ± {t['mc_se']:.4f}")
        line = next(x for x in audit["summary"].splitlines() if f" {w['pool']} " in x
                    and "Cramér" in x and "[#" not in x)  # the table, not a finding
        assert term in line and f"{pct(w['disagreement_rate'])} [" in line
    crowd = next(w for w in res["within_pool"] if w["pool"] == "crowd")
    assert crowd["test"]["p_value"] < 0.05  # annotator 0 leans to A: the test must see it
    assert "Annotators within crowd are not interchangeable" in " ".join(limitations(res))


@pytest.mark.slow
def test_hs_brexit_card_reads_the_within_item_test(tmp_path):
    """HS-Brexit's target group: the pooled chi-square said p = 0.145; the within-item test and
    Cochran's Q find the annotator effect, and the card's wording follows them."""
    from audit.pipeline import run

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        res = run(shared_data("lewidi2023/HS-Brexit"), n_bootstrap=200, report=False)
    target = next(w for w in res["within_pool"] if w["pool"] == "target group")
    q = next(r for r in target["reference_tests"] if r["name"] == "cochran_q")
    card = " ".join(annotations_block(res).split())
    sentence = card.split("- target group: ")[1].split(" - ")[0]
    assert f"Cochran's Q p = {q['p_value']:.4f}" in sentence
    assert f"pooled χ² p = {target['pooled_chi2']['p_value']:.4f}" in sentence
    expected = ("its annotators are not interchangeable" if target["annotator_effect_p"] < 0.05
                else "no evidence that its annotators differ")
    assert expected in sentence


# -- judge: one annotator, the ceiling, the majority, the verdict ----------------------------------
def test_judge_shows_single_annotator_agreement_and_ceiling(audit):
    res = audit["results"]
    (entry,) = res["judge_alignment"]
    html = section_text(audit["html"], "judge-alignment")
    f3 = lambda x: f"{x:.3f}"  # noqa: E731
    for a in entry["agreement"]:
        c, m = a["ceiling"], a["majority_agreement"]
        assert (f"{a['pool']} {f3(a['agreement'])} [{f3(a['ci95'][0])}, {f3(a['ci95'][1])}] "
                f"{a['n']:,} {f3(c['agreement'])} [{f3(c['ci95'][0])}, {f3(c['ci95'][1])}] "
                f"{c['n_items']:,} {f3(m['agreement'])} [{f3(m['ci95'][0])}, "
                f"{f3(m['ci95'][1])}]") in html
        assert (f"gpt-4 agrees with a single {a['pool']} annotator on {pct(a['agreement'])} "
                f"(95% CI {pct(a['ci95'][0])} to {pct(a['ci95'][1])}) of {a['n']} comparisons; "
                f"two {a['pool']} annotators agree with each other on "
                f"{pct(c['agreement'])}") in audit["card"]
        assert (f"judge gpt-4 vs {a['pool']}: one annotator {f3(a['agreement'])} "
                f"[{f3(a['ci95'][0])}, {f3(a['ci95'][1])}]") in audit["summary"]
    assert entry["verdict"] in html and entry["verdict"] in audit["summary"]
    assert f"Verdict: {entry['verdict']}" in audit["card"]
    tracked = [s for s in limitations(res) if s.startswith("gpt-4 tracks")]
    if entry["tracks"] in ("crowd", "expert"):
        row = next(a for a in entry["agreement"] if a["pool"] == entry["tracks"])
        assert tracked == [f"gpt-4 tracks {entry['tracks']}: it agrees with a single "
                           f"{entry['tracks']} annotator more than with one of any other pool "
                           f"({pct(row['agreement'])} of comparisons); every paired interval of "
                           f"the difference excludes 0 ({100 * entry['differences'][0]['level']:g}% "
                           f"simultaneous); judging with it inherits {entry['tracks']}'s view."]
    else:
        assert tracked == []
    assert entry["tracks"] == "crowd"  # the judge follows the crowd's view by design
    (d,) = entry["differences"]
    assert (f"{f3(d['difference'])} [{f3(d['ci95'][0])}, {f3(d['ci95'][1])}] {d['n']:,} "
            f"{d['tracks']}") in html


# -- stability: MC s.e., closed form, the simulation's interval -------------------------------------
def test_stability_numbers_carry_their_uncertainty(audit):
    st = audit["results"]["stability"]
    cp = section_text(audit["html"], "closest-pairs")
    top = max(st["closest_pairs"], key=lambda r: r["swap_probability_bootstrap"])
    b, se = top["swap_probability_bootstrap"], top["swap_probability_bootstrap_mc_se"]
    cf, sd = top["swap_probability_closed_form"], top["closed_form_sd"]
    assert f"{b:.3f} ± {se:.3f} {cf:.3f} (SD {sd:.4f})" in cp
    assert (f"swap in {probability_percent(b)} ± {pct(se)} of bootstrap resamples (closed form "
            f"Φ(−gap/(√2·SD)): {probability_percent(cf)} at SD {sd:.4f})") in audit["card"]
    assert (f"swap probability {probability(b, 3)} ± {se:.3f} bootstrap, "
            f"{probability(cf, 3)} closed form") in audit["summary"]
    disp = section_text(audit["html"], "displacement")
    for pool, p in st["bootstrap_displacement_probability"].items():
        se = st["bootstrap_displacement_mc_se"][pool]
        assert f"P(displaced) · {pool} {probability(p, 3)} ± {se:.3f}" in disp
        assert f"{pool} {probability(p, 3)} ± {se:.3f}" in audit["summary"]
    sim = section_text(audit["html"], "simulation")
    for r in st["simulation"]:
        # estimated probabilities never read as 1 (or 0) short of it: audit.format.probability
        p, (lo, hi) = r["displacement_probability"], r["interval95"]
        assert (f"{r['n_models']} {probability(p, 3)} {r['mc_se']:.4f} "
                f"{probability(lo, 3)} – {probability(hi, 3)}") in sim
        assert (f"{r['n_models']} models {probability(p)} ± "
                f"{r['mc_se']:.3f} [{probability(lo)}, {probability(hi)}]") in audit["card"]
        assert (f"{r['n_models']}: {probability(p)} [{probability(lo)}, {probability(hi)}]"
                in audit["summary"])
    sd, (sd_lo, sd_hi) = (st["simulation_model"]["perturbation_sd"],
                          st["simulation_model"]["perturbation_sd_ci95"])
    assert f"SD {sd:.4f} [{sd_lo:.4f}, {sd_hi:.4f}]" in sim


# -- a continuous scale: the null of the mean |difference|, the pooled ANOVA ------------------------
def scores_table(*, seed: int = 5, n: int = 60):
    """Continuous scores: two pools of three annotators rating every item; the second pool
    scores 0.5 higher and one of its annotators is noisier."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(0, 1, n)
    rows = []
    for pool, shift in (("p1", 0.0), ("p2", 0.5)):
        for j in range(3):
            noise = 0.9 if (pool, j) == ("p2", 2) else 0.4
            rows.append(pd.DataFrame({
                C.ITEM: [f"s{i}" for i in range(n)], C.ANNOTATOR: f"{pool}-{j}", C.POOL: pool,
                C.MODEL: [f"m{i % 4}" for i in range(n)],
                C.LABEL: np.round(truth + shift + rng.normal(0, noise, n), 3)}))
    return build_table(pd.concat(rows, ignore_index=True), LabelScale(LabelKind.INTERVAL, ()),
                       name="scores", source="scores.csv")


def test_continuous_null_and_pooled_anova_are_shown():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        res = json_form(audit_table(scores_table(), bootstrap=Bootstrap(100, 2), sizes=(4,),
                                    n_sims=500))
    (row,) = res["pool_disagreement"]
    null, e = row["null"], row["excess"]["mean_abs_difference"]
    assert null["p_value"] is not None
    html = section_text(render_html(res), "pool-disagreement")
    lo, hi = row["ci95"]["mean_abs_difference"]
    assert (f"mean |difference| {row['mean_abs_difference']:.3f} [{lo:.3f}, {hi:.3f}] "
            f"{null['mean_abs_difference']:.3f} {e['estimate']:.3f} [{e['ci95'][0]:.3f}, "
            f"{e['ci95'][1]:.3f}] "
            + perm_p(null["p_value"], null["mc_se"], null["n_permutations"])) in html
    box = section_text(render_html(res), "findings")
    assert (f"On the {row['n_items_shared']:,} items both rated, the mean scores of p1 and p2 "
            f"differ by {row['mean_abs_difference']:.3f} [{lo:.3f}, {hi:.3f}] per item (mean "
            f"absolute difference; {null['mean_abs_difference']:.3f} expected if the pools were "
            f"interchangeable; excess {e['estimate']:.3f} [{e['ci95'][0]:.3f}, "
            f"{e['ci95'][1]:.3f}]") in box
    card = " ".join(annotations_block(res).split())
    assert (f"against {null['mean_abs_difference']:.3f} expected if the pools were "
            f"interchangeable (excess {e['estimate']:.3f}, 95% CI {e['ci95'][0]:.3f} to "
            f"{e['ci95'][1]:.3f})") in card
    for w in res["within_pool"]:
        anova = w["pooled_anova"]
        df1, df2 = anova["dof"]
        p = anova["p_value"]
        shown = "p < 0.0001" if p < 1e-4 else f"p = {p:.4f}"
        assert (f"pooled one-way ANOVA {anova['statistic']:.2f} (df {df1:,}, {df2:,}), "
                f"{shown}") in html
        assert f"η² {w['effect_size']:.3f}" in card


def test_a_null_without_a_test_is_named_not_shown_as_a_number():
    """PandaLM: each pool is one annotator, so no permutation within an item changes the rates:
    the results say why, and the renderers show that reason instead of a null equal to the
    observed rate and an excess of 0."""
    from pathlib import Path

    from audit.pipeline import run

    path = Path(__file__).resolve().parents[1] / "data" / "pandalm" / "testset-v1.json"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        res = run(path, n_bootstrap=50, report=False, sizes=(5,), n_sims=500)
    reasons = {r["null"]["not_defined"] for r in res["pool_disagreement"]}
    assert len(reasons) == 1 and None not in reasons
    (reason,) = reasons
    html = section_text(render_html(res), "pool-disagreement")
    assert f"No test: {reason}" in html
    row = res["pool_disagreement"][0]
    d, (lo, hi) = row["majority_differs_rate"], row["ci95"]["majority_differs_rate"]
    assert f"labels differ {pct(d)} [{pct(lo)}, {pct(hi)}] not defined - no test" in html
    card = " ".join(annotations_block(res).split())
    assert f"No pair has a permutation null: {reason}" in card and card.count(reason) == 1
    assert "expected if the pools were interchangeable" not in card
    assert "disagree beyond chance" not in " ".join(limitations(res))


# -- findings: the judge and the pool split, stated first ---------------------------------------------
def test_findings_state_the_judge_and_the_pool_split_first(audit):
    """The crossed design's three planted effects open the report and the summary: the experts'
    reversed view (a large excess), the judge following the crowd, crowd annotator 0's lean."""
    res = audit["results"]
    box = section_text(audit["html"], "findings")
    (entry,) = res["judge_alignment"]
    (d,) = entry["differences"]
    assert entry["tracks"] == "crowd" and d["pool_a"] == "crowd"
    judge = (f"Judge gpt-4 tracks crowd: its agreement with one crowd annotator is "
             f"{d['difference']:.3f} [{d['ci95'][0]:.3f}, {d['ci95'][1]:.3f}] above expert over "
             f"{d['n']:,} comparisons.")
    assert judge in box
    row = next(r for r in res["pool_disagreement"] if r["granularity"] == "label")
    rate, ci = row["winner_reversed_rate"], row["ci95"]["winner_reversed_rate"]
    split = (f"crowd and expert name opposite winners on {pct(rate)} [{100 * ci[0]:.1f}, "
             f"{100 * ci[1]:.1f}] of {row['n_items_both_unanimous']:,} items "
             f"({pct(row['null']['winner_reversed_rate'])} expected if the pools were "
             "interchangeable")
    assert split in box
    assert box.index(split) < box.index(judge)  # a large excess before a significant effect
    assert "Annotators are not interchangeable within crowd (" in box
    lines = audit["summary"].splitlines()
    assert lines[0] == "findings"
    assert any(judge in x and x.endswith("[#judge-alignment]") for x in lines[1:7])
    assert any(split in x and x.endswith("[#pool-disagreement]") for x in lines[1:7])
