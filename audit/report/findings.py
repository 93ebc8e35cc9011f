"""Findings: at most six plain-language sentences that open the report and the terminal summary.

Each sentence is built from the numbers of ``results.json`` (read through
:mod:`audit.report.read`), carries its figure with its 95% interval, and names the id of the
report section that holds the details. A sentence is plain text with the dataset's own strings
(pool and judge names) as they are: the renderer escapes them for its channel (Jinja autoescape
in the HTML report, :func:`audit.escape.terminal.text` in the terminal summary).

Degenerate numbers give no sentence, never a wrong one: a statistic that is NaN, a rate without
its interval, a pool disagreement whose permutation null is missing or not defined (one judgment
per pool on every item: no permutation can change the rate), a judge difference without an
interval.

Severity
--------
Every finding falls in one tier, highest first; within a tier the larger magnitude comes first
(each magnitude is on a 0-1 scale), then the report's section order, so the order is a function
of the numbers alone.

3. **Large and certain.** A pool disagreement whose excess over the permutation null is
   significant (the excess's 95% interval lies above 0 and the permutation p < 0.05) and large
   (at least 5 percentage points; on a continuous scale, at least the null mean itself, i.e. the
   pools differ at least twice as much as interchangeable annotators would); a pool whose
   Krippendorff α has its whole 95% interval below 0.667; a leaderboard displacement probability
   whose 95% interval (over the perturbation SD's uncertainty) lies above 0.5 at the largest size
   stated. Magnitude: the excess, 0.667 − α, P(displaced).
2. **Significant.** A significant excess smaller than that; items whose majority winner flips
   between human pools (any: the labels per-item consumers take; magnitude: their share, with a
   Wilson interval); a within-pool annotator effect
   (within-item permutation p < 0.05; magnitude: Cramér's V or η²); a judge that tracks one human
   pool (the t interval of the paired difference of agreements excludes 0; magnitude: the
   difference); α below 0.667 with an interval that reaches it; P(displaced) ≥ 0.2 at the largest
   size stated.
1. **No evidence of a problem** (stated because the reader came for it): a pool disagreement
   within what interchangeable annotators give; a judge indistinguishable from every pool;
   P(displaced) < 0.2.

Reliability and the within-pool effects are one sentence each, listing every pool concerned
(the sentence takes the tier of its worst pool); pool disagreement is one sentence per pool pair
(label granularity, the opposite-winner rate where the data are pairwise).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..format import interval, number, p_bound, p_is, percent, percent_with_interval, with_interval
from ..format import points_with_interval
from .prose import ALPHA, join_and
from .read import against_null, at_floor, finite, judge_rows, simulation_row, within_test

#: Most sentences shown.
MAX_FINDINGS = 6
#: Krippendorff's (2004) floor for tentative conclusions.
ALPHA_FLOOR = 0.667
#: A significant pool-disagreement excess at least this large (a rate difference) is "large".
LARGE_EXCESS = 0.05
#: P(displaced) at or above this is worth a reader's attention.
DISPLACED_NOTABLE = 0.2
#: The leaderboard sizes a displacement sentence states, when simulated.
SIZES = (10, 20)
#: Significance level of the tests the sentences read.
ALPHA_TEST = 0.05

#: Report section order, for the tie-break.
_ORDER = ("pool-disagreement", "reliability", "simulation", "judge-alignment", "flipped-items")


@dataclass(frozen=True)
class Finding:
    """One sentence: ``text`` (plain, unescaped), the report ``section`` id it links to, its
    ``severity`` tier (module docstring) and ``magnitude`` (0-1) that order it."""

    text: str
    section: str
    severity: int
    magnitude: float
    kind: str


def p_phrase(p, mc_se=None, n_permutations=None) -> str:
    """``p = 0.0050`` or ``p ≤ 0.0099`` (the permutations' resolution, :func:`read.at_floor`)."""
    if n_permutations and at_floor(p, n_permutations):
        return f"p ≤ {p_bound(n_permutations)}"
    return p_is(p)


def num_ci(x, ci, digits: int = 3) -> str:
    """``0.712 [0.650, 0.770]``."""
    return with_interval(x, ci, lambda v: number(v, digits))


# -- one builder per result block --------------------------------------------------------------------
def _pool_disagreement(rows) -> list[Finding]:
    out = []
    for r in rows or []:
        if not isinstance(r, dict) or r.get("judge") or r.get("granularity", "label") != "label":
            continue
        a, b = r.get("pool_a"), r.get("pool_b")
        continuous = r.get("majority_differs_rate") is None and \
            r.get("mean_abs_difference") is not None
        if continuous:
            stat = "mean_abs_difference"
        elif finite(r.get("winner_reversed_rate")):
            stat = "winner_reversed_rate"
        else:
            stat = "majority_differs_rate"
        n = against_null(r, stat)
        if n is None or n["not_defined"] or n["observed"] is None or n["null"] is None \
                or n["ci95"] is None or n["excess"] is None or n["excess_ci95"] is None \
                or n["p"] is None:
            continue
        significant = n["excess_ci95"][0] > 0 and n["p"] < ALPHA_TEST
        p = p_phrase(n["p"], n["mc_se"], n["n_permutations"])
        if continuous:
            items = r.get("n_items_shared")
            if not isinstance(items, int):
                continue
            large = n["excess"] >= n["null"]
            text = (f"On the {items:,} items both rated, the mean scores of {a} and {b} "
                    f"differ by {num_ci(n['observed'], n['ci95'])} per item (mean absolute "
                    f"difference; {number(n['null'])} expected if the pools were "
                    "interchangeable; excess "
                    f"{num_ci(n['excess'], n['excess_ci95'])}, {p})")
            magnitude = min(max(n["excess"] / n["null"], 0.0), 1.0) if n["null"] > 0 else 1.0
        else:
            items = r.get("n_items_both_unanimous")
            if not isinstance(items, int):
                continue
            large = n["excess"] >= LARGE_EXCESS
            what = ("name opposite winners" if stat == "winner_reversed_rate"
                    else "give different labels")
            text = (f"Where both pools are unanimous, {a} and {b} {what} on "
                    f"{percent_with_interval(n['observed'], n['ci95'])} of {items:,} items "
                    f"({percent(n['null'])} "
                    f"expected if the pools were interchangeable; excess "
                    f"{points_with_interval(n['excess'], n['excess_ci95'])}, {p})")
            magnitude = max(n["excess"], 0.0)
        if not significant:
            text += ": no more than interchangeable annotators would give"
        severity = (3 if large else 2) if significant else 1
        out.append(Finding(text + ".", "pool-disagreement", severity, magnitude,
                           "pool_disagreement"))
    return out


def _within(rows) -> list[Finding]:
    hits = []
    for w in rows or []:
        if not isinstance(w, dict) or w.get("judge"):
            continue
        t = within_test(w)
        if t["p"] is None or t["p"] >= ALPHA_TEST:
            continue
        part = f"{w.get('pool')} ({t['name'] or 'annotator effect'} " \
               f"{p_phrase(t['p'], t['mc_se'], t['n_permutations'])}"
        if t["effect"] is not None:
            part += f", {t['effect_name']} {number(t['effect'])}"
        rate, ci = w.get("disagreement_rate"), interval(w.get("ci95"))
        sd, sd_ci = w.get("within_item_sd"), interval(w.get("within_item_sd_ci95"))
        if finite(rate) and ci:
            part += f"; a disagreement on {percent_with_interval(rate, ci)} of its items"
        elif finite(sd) and sd_ci:
            part += f"; within-item SD {num_ci(sd, sd_ci)}"
        hits.append((t["effect"] or 0.0, part + ")"))
    if not hits:
        return []
    parts = [part for _, part in hits]
    pools = join_and(parts, sep="; ")
    return [Finding(f"Annotators are not interchangeable within {pools}: the label an item gets "
                    "depends on which of them labelled it.", "pool-disagreement", 2,
                    min(max(e for e, _ in hits), 1.0), "within_pool")]


def _reliability(rel) -> list[Finding]:
    if not isinstance(rel, dict):
        return []
    series = dict(rel.get("by_pool") or {})
    if not series and rel.get("overall"):
        series = {"all annotators": rel["overall"]}
    low = []
    for pool, stats in series.items():
        e = (stats or {}).get(ALPHA) or {}
        v, ci = e.get("value"), interval(e.get("ci95"))
        if finite(v) and ci and v < ALPHA_FLOOR:
            low.append((pool, v, ci))
    if not low:
        return []
    severity = 3 if any(ci[1] < ALPHA_FLOOR for _, _, ci in low) else 2
    parts = [f"{p} ({num_ci(v, ci)})" for p, v, ci in low]
    listed = join_and(parts)
    return [Finding(f"Krippendorff's α is below {ALPHA_FLOOR}, the floor for tentative "
                    f"conclusions (Krippendorff 2004), in {listed}.", "reliability",
                    severity, min(max(ALPHA_FLOOR - v for _, v, _ in low), 1.0), "reliability")]


def _simulation(st) -> list[Finding]:
    if not isinstance(st, dict):
        return []
    rows = [simulation_row(r) for r in st.get("simulation") or [] if isinstance(r, dict)]
    rows = [r for r in rows if r["p"] is not None and r["interval95"] is not None]
    chosen = [r for r in rows if r["n_models"] in SIZES] or rows[:2]
    if not chosen:
        return []
    model = st.get("simulation_model") or {}
    sd, sd_ci = model.get("perturbation_sd"), interval(model.get("perturbation_sd_ci95"))
    cause = ("Switching between the human pools" if model.get("perturbation_used") == "pool_switch"
             else "The measured score noise")
    moves = f" (score shift SD {num_ci(sd, sd_ci, 4)})" if finite(sd) and sd_ci else ""
    sizes = " and ".join(f"{percent_with_interval(r['p'], r['interval95'])} at "
                         f"{r['n_models']} models"
                         for r in chosen)
    last = chosen[-1]
    severity = 3 if last["interval95"][0] > 0.5 else 2 if last["p"] >= DISPLACED_NOTABLE else 1
    return [Finding(f"{cause}{moves} puts at least one model of a leaderboard out of place "
                    f"with probability {sizes} (95% interval over the SD's uncertainty).",
                    "simulation", severity, last["p"], "displacement")]


def _judges(entries) -> list[Finding]:
    out = []
    for e in entries or []:
        if not isinstance(e, dict):
            continue
        judge, tracks = e.get("judge"), e.get("tracks")
        diffs = [d for d in e.get("differences") or [] if isinstance(d, dict)
                 and finite(d.get("difference")) and interval(d.get("ci95"))
                 and isinstance(d.get("n"), int)]
        humans = {r["pool"] for r in judge_rows(e)}
        if not diffs or tracks is None:
            continue
        if tracks in humans:
            mine = [d for d in diffs if tracks in (d.get("pool_a"), d.get("pool_b"))]
            if not mine:
                continue
            parts = []
            for d in mine:
                sign = 1 if d["pool_a"] == tracks else -1
                other = d["pool_b"] if sign == 1 else d["pool_a"]
                lo, hi = sorted((sign * d["ci95"][0], sign * d["ci95"][1]))
                parts.append(f"{num_ci(sign * d['difference'], [lo, hi])} above {other} "
                             f"over {d['n']:,} comparisons")
            out.append(Finding(
                f"Judge {judge} tracks {tracks}: its agreement with one {tracks} annotator is "
                + "; ".join(parts) + ".", "judge-alignment", 2,
                min(max(abs(d["difference"]) for d in mine), 1.0), "judge"))
        else:
            parts = "; ".join(f"{d['pool_a']} − {d['pool_b']} "
                              f"{num_ci(d['difference'], interval(d['ci95']))} over {d['n']:,} "
                              "comparisons" for d in diffs)
            out.append(Finding(
                f"Judge {judge} agrees with no human pool more than another (agreement with one "
                f"annotator, {parts}).", "judge-alignment", 1,
                min(max(abs(d["difference"]) for d in diffs), 1.0), "judge"))
    return out


def _flipped(st) -> list[Finding]:
    """Items whose majority winner is A in one human pool and B in another: the labels a
    reward model or a DPO pair would consume one per item, exposed at any leaderboard size.
    Tier 2 when there is any (magnitude: their share), with the Wilson interval of the share;
    no sentence when nothing was compared."""
    from ..intervals import wilson_list

    fl = (st or {}).get("flipped_items") or {}
    k = fl.get("n_flipped", fl.get("count"))
    n = fl.get("n_compared")
    if not isinstance(k, int) or not isinstance(n, int) or n <= 0 or k <= 0:
        return []
    ci = wilson_list(k, n)
    pools = fl.get("pools") or []
    between = f" between {', '.join(str(p) for p in pools)}" if len(pools) >= 2 else ""
    text = (f"{k:,} of {n:,} compared items ({percent_with_interval(k / n, ci)}) have opposite "
            "majority "
            f"winners{between}: per-item consumers (reward models, DPO pairs) get a different "
            "label depending on the pool; every item is in items.parquet.")
    return [Finding(text, "flipped-items", 2, k / n, "flipped_items")]


def findings(results: dict, *, limit: int = MAX_FINDINGS) -> list[Finding]:
    """The report's findings, most severe first (module docstring), at most ``limit``.

    Parameters
    ----------
    results
        The audit's result dict; any block may be missing (it then gives no sentence).
    limit
        Most sentences returned.
    """
    found = (_pool_disagreement(results.get("pool_disagreement"))
             + _within(results.get("within_pool"))
             + _reliability(results.get("reliability"))
             + _simulation(results.get("stability"))
             + _judges(results.get("judge_alignment"))
             + _flipped(results.get("stability")))
    found = [f for f in found if math.isfinite(f.magnitude)]
    found.sort(key=lambda f: (-f.severity, -f.magnitude, _ORDER.index(f.section)))
    return found[:limit]
