"""The plan in at most four plain-text sentences an annotation lead reads in one screen.

Pure function of the ``plan`` block (library or JSON form). No markup: the renderer escapes
for its channel (pool names come from the dataset). The ``stay`` setting is shown as the user
gave it (:func:`audit.format.setting`: ``0.999999``, never ``1.00``), and an estimated
probability (``P(stay)``, its ceiling, an agreement) never rounded to ``1.00`` or ``0.00``
short of them (:func:`audit.format.probability`).
"""

from __future__ import annotations

from ..format import (count, finite, number, percent, probability, probability_percent, setting,
                      setting_percent)


def plan_sentences(block: dict) -> list[str]:
    """1-4 sentences: the leaderboard sizes (one sentence, every ``K``), the budget, the labels
    plan and the cross-pool ceiling, each present only when defined."""
    out = []
    stay = (block.get("settings") or {}).get("stay")
    lb = block.get("leaderboard") or {}
    if lb.get("sizes"):
        out.append(_sizes_sentence(lb, stay))
        budget = _budget_sentence(lb)
        if budget:
            out.append(budget)
    elif lb.get("not_defined"):
        out.append(f"No leaderboard plan: {lb['not_defined']}.")
    labels = block.get("labels") or {}
    if labels.get("pools"):
        out.extend(_labels_sentences(labels, stay)[: 4 - len(out)])
    return out[:4] or ["Nothing to plan for this dataset."]


def _row_now(entry: dict, m_now) -> dict | None:
    rows = [r for r in entry.get("rows", []) if r.get("n_items") is not None]
    if not rows:
        return None
    same = [r for r in rows if r["m"] == round(m_now or 1)]
    return same[0] if same else min(rows, key=lambda r: r["judgments"])


def _sizes_sentence(lb: dict, stay) -> str:
    comp = lb.get("components") or {}
    m_now = comp.get("judgments_per_item_now") or 1
    parts = []
    for e in lb["sizes"]:
        k = e["n_models"]
        row = _row_now(e, m_now) if e.get("verdict") == "planned" else None
        if row is None and e.get("sd_star") == 0:
            parts.append(f"a {k}-model one cannot reach {setting(stay)} at any size: the "
                         "measured scores include tied neighbours, and tied models come out in "
                         "either order whatever the size (every tie falls the true way in "
                         f"{probability(e.get('ceiling'))} of the simulated boards)")
            continue
        if row is None:
            lower = next((r["n_items_ci95"][0] for r in e.get("rows", [])
                          if r.get("n_items_ci95") and r["n_items_ci95"][0] is not None), None)
            maybe = (f" (at the lower end of its interval {count(lower, 'item')} would do)"
                     if lower is not None else "")
            parts.append(f"a {k}-model one cannot reach {setting(stay)} at any size: the pool "
                         f"effect alone caps it at {probability(e.get('ceiling'))} "
                         f"(MC s.e. {number(e.get('ceiling_mc_se'), 3)}){maybe}")
            continue
        lo, hi = row.get("n_items_ci95") or [None, None]
        effect = lb.get("pool_effect") or {}
        measured = effect.get("measured")
        # tau's interval [0, 0]: every end of it plans the same size, which is no interval
        none_at_all = (effect.get("tau_ci95") or [None, None])[1] == 0
        span = ("sampling noise only: no second pool measures a pool effect" if not measured
                else "sampling noise only: the pool switches are no larger than their sampling "
                "noise predicts, so no pool effect is measured" if none_at_all
                else f"95% interval {number(lo)} to {number(hi)}" if hi is not None else
                f"95% interval from {number(lo)} to no size at all: this data cannot tell "
                "whether the pool effect allows it")
        parts.append(f"a {k}-model one needs about {count(row['n_items'], 'item')} "
                     f"({count(row['m'], 'judgment')} each, {number(row['judgments'])} per "
                     f"pool; {span})")
    text = "; ".join(parts)
    text = text.replace("-model one", "-model leaderboard", 1)
    return f"To keep its order with probability {setting(stay)}: {text}."


def _budget_sentence(lb: dict) -> str | None:
    parts = []
    for e in lb["sizes"]:
        b = e.get("budget")
        if not b or b.get("p_stay") is None:
            continue
        parts.append(f"{e['n_models']} models reach {probability(b['p_stay'])} with "
                     f"{count(b['n_items'], 'item')} x {b['m']}")
    if not parts:
        return None
    budget = next(e["budget"]["budget"] for e in lb["sizes"] if e.get("budget"))
    return f"Within {number(budget)} judgments per pool: " + "; ".join(parts) + "."


def _labels_sentences(labels: dict, stay) -> list[str]:
    out = []
    planned = [p for p in labels["pools"] if p.get("rows")]
    if planned:
        bits = []
        for p in planned:
            if p.get("planned_m") is None:
                bits.append(f"{p['pool']} does not reach it with up to {p.get('m_max')} "
                            "annotators")
            else:
                now = p.get("agreement_now")
                name = "the human pools together" if p["pool"] == "all" and \
                    labels.get("note") else p["pool"]
                verb = "need" if name != p["pool"] else "needs"
                bits.append(f"{name} {verb} {count(p['planned_m'], 'annotator')} per item"
                            + (f" (today's {number(p['judgments_per_item_now'], 0)}: "
                               f"{probability_percent(now)})" if finite(now) else ""))
        out.append(f"For an item's majority label to be its pool's own on "
                   f"{setting_percent(stay)} of items: " + "; ".join(bits) + ".")
    cross = [c for c in labels.get("cross_pool", []) if finite(c.get("majority_differs_shrunk"))]
    if cross:
        c = max(cross, key=lambda c: c["majority_differs_shrunk"])
        share = percent(c["majority_differs_shrunk"])
        if finite(c.get("excess_measured")):  # the smaller first, each with what it is
            ends = sorted([(c["excess_measured"], "the audit's excess over interchangeable "
                                                  "pools"),
                           (c["majority_differs_shrunk"], "plug-in estimate")],
                          key=lambda end: end[0])
            span = " and ".join(f"{percent(v)} ({what})" for v, what in ends)
            span = f"between {span}"
        else:
            span = f"about {share} (plug-in estimate)"
        out.append(f"On {span} of items {c['pool_a']} and {c['pool_b']} hold different "
                   "majority labels; more annotators of either pool do not change that.")
    return out
