"""The card's "Known limitations" paragraph: what the numbers say a user of the labels should
know, in plain language.

Each sentence reads one result block against a threshold (:mod:`audit.report.prose`): α below
Krippendorff's (2004) floors, a pool disagreement or an annotator effect beyond its permutation
null, few judgments per item, rank changes between pools, neighbouring models within resampling
noise, a displaced model in a simulated leaderboard, judges that track one pool, a planned
leaderboard that needs more items than the dataset has or that no size lets stay put
(:func:`audit.report.nextsteps.card_sentences`), failed expectations. When none applies, one
sentence says so and that it is no proof of clean labels.
"""

from __future__ import annotations

from .prose import (ALPHA, ALPHA_RELIABLE, ALPHA_TENTATIVE, EFFECT_P, FEW_JUDGMENTS, NOTABLE_SWAP,
                    by_pair, closest_by_pool, count, estimate, in_board, join_and, number,
                    percent, permutation_p, simulated, swap_phrase, why_undefined)
from .read import against_null, judge_rows, simulation_row, within_test

#: Number words for the few neighbouring pairs a sentence lists.
WORDS = {2: "two", 3: "three"}


def limitations(results: dict, esc=str) -> list[str]:
    """Plain-language sentences naming what the numbers say a user of the labels should know."""
    ds = results.get("dataset") or {}
    pools = ds.get("pools") or {}
    humans = [p for p, info in pools.items() if not info.get("judge")]
    judges = [p for p, info in pools.items() if info.get("judge")]
    out = []
    if len(humans) == 1:
        out.append(f"All human judgments come from one annotator pool ({esc(humans[0])}), so "
                   "nothing here says whether another population of annotators would label the "
                   "items the same way.")
    undefined, undefined_raw, low = [], [], []
    overall = ((results.get("reliability") or {}).get("overall") or {}).get(ALPHA)
    for pool, stats in ((results.get("reliability") or {}).get("by_pool") or {}).items():
        entry = (stats or {}).get(ALPHA)
        if not entry:
            continue
        a = entry.get("value")
        if a is None:
            undefined.append(esc(pool))
            undefined_raw.append(pool)
        elif a < ALPHA_TENTATIVE:
            low.append((esc(pool), entry))
        elif a < ALPHA_RELIABLE:
            out.append(f"Agreement within the {esc(pool)} pool is moderate (Krippendorff's α = "
                       f"{estimate(entry)}): good enough for tentative conclusions only.")
    if len(low) == 1:
        out.append(f"Agreement within the {low[0][0]} pool is low (Krippendorff's α = "
                   f"{estimate(low[0][1])}; Krippendorff (2004) asks for {ALPHA_TENTATIVE} even "
                   "for tentative conclusions): its annotators agree little beyond what the label "
                   "frequencies alone would give, so one label from this pool is a weak guide to "
                   "the item.")
    elif low:
        out.append("Agreement is low within " + join_and(
            [f"{p} (Krippendorff's α = {estimate(e)})" for p, e in low])
            + f"; Krippendorff (2004) asks for {ALPHA_TENTATIVE} even for tentative conclusions. "
            "Annotators of the same pool agree little beyond what the label frequencies alone "
            "would give, so one label from these pools is a weak guide to the item.")
    if undefined:
        out.append(f"Agreement within {join_and(undefined)} cannot be measured "
                   f"({why_undefined(undefined_raw, results)}), so the reliability of "
                   f"{'that pool' if len(undefined) == 1 else 'those pools'} is unknown"
                   + (f"; across every human annotator together, Krippendorff's α = "
                      f"{estimate(overall, style='paren')}"
                      if (overall or {}).get("value") is not None else "") + ".")
    for (a, b), rows in by_pair(results.get("pool_disagreement")).items():
        s = pool_limitation(rows, a, b, esc)
        if s:
            out.append(s)
    effects = [(esc(w["pool"]), t) for w in results.get("within_pool") or []
               if (t := within_test(w))["p"] is not None and t["p"] < EFFECT_P]
    if len(effects) == 1:
        (p, t), = effects
        name = t["name"] or "annotator effect"
        out.append(f"Annotators within {p} are not interchangeable ({name} {permutation_p(t)}): "
                   "some of them label systematically differently from the "
                   "others, so an item's label depends on who labelled it.")
    elif effects:
        out.append("Annotators within " + join_and(
            [f"{p} ({t['name'] or 'annotator effect'} {permutation_p(t)})" for p, t in effects])
            + " are not interchangeable: some annotators label systematically differently "
            "from the others in their pool, so an item's label depends on who labelled it.")
    jpi = ds.get("judgments_per_item") or {}
    if jpi.get("min") is not None and jpi["min"] < FEW_JUDGMENTS:
        out.append(f"Some items have only {count(jpi['min'], 'judgment')}, so their majority "
                   "label can turn on a single annotator.")
    st = results.get("stability") or {}
    moved = [pp for pp in st.get("pool_pairs") or [] if (pp.get("n_displaced") or 0) > 0]
    if moved:
        out.append("The leaderboard depends on who judges: " + "; ".join(
            (f"switching from {esc(pp['pool_a'])} to {esc(pp['pool_b'])} changes the rank of "
             if i == 0 else f"from {esc(pp['pool_a'])} to {esc(pp['pool_b'])}, of ")
            + f"{count(pp['n_displaced'], 'model')} (Kendall τ = {number(pp.get('kendall_tau'))})"
            for i, pp in enumerate(moved)) + ".")
    for pool, rows in closest_by_pool(st, at_least=NOTABLE_SWAP).items():
        where = in_board(pool, results, esc)
        if len(rows) == 1:
            r = rows[0]
            out.append(f"{where[0].upper()}{where[1:]}, {esc(r['model_hi'])} and "
                       f"{esc(r['model_lo'])} are within resampling noise of each other: their "
                       f"order would {swap_phrase(r)}.")
        else:
            out.append(f"{where[0].upper()}{where[1:]}, {WORDS.get(len(rows), len(rows))} "
                       "neighbouring pairs are within resampling noise: "
                       + "; ".join(f"{esc(r['model_hi'])} and {esc(r['model_lo'])} would "
                                   f"{swap_phrase(r)}" for r in rows) + ".")
    sim = [r for r in map(simulation_row, st.get("simulation") or []) if (r["p"] or 0) >= 0.5]
    if sim:
        r = min(sim, key=lambda r: r["n_models"])
        out.append(f"At the measured pool effect, a leaderboard of {r['n_models']} models would "
                   f"have at least one model displaced with probability {simulated(r)}.")
    if len(judges) == 1:
        out.append(f"{esc(judges[0])} is an automatic judge, not a person: its labels are "
                   "compared with the human pools, not pooled with them.")
    elif judges:
        out.append(f"{', '.join(esc(j) for j in judges)} are automatic judges, not people: their "
                   "labels are compared with the human pools, not pooled with them.")
    humans_set = set(humans)
    for entry in results.get("judge_alignment") or []:
        tracked = entry.get("tracks")
        if tracked in humans_set:
            row = next((a for a in judge_rows(entry) if a["pool"] == tracked), None)
            level = next((d.get("level") for d in entry.get("differences") or []
                          if d.get("level") is not None), None)
            out.append(f"{esc(entry.get('judge'))} tracks {esc(tracked)}: it agrees with a single "
                       f"{esc(tracked)} annotator more than with one of any other pool"
                       + (f" ({percent(row['agreement'])} of comparisons)" if row else "")
                       + (f"; every paired interval of the difference excludes 0 "
                          f"({100 * level:g}% simultaneous)" if level is not None else "")
                       + f"; judging with it inherits {esc(tracked)}'s view.")
    from .nextsteps import card_sentences

    out += card_sentences(results, esc)
    failed = [r for r in (results.get("expectations") or {}).get("results") or []
              if not r.get("passed")]
    if failed:
        out.append(f"{len(failed)} of the dataset's stated expectations failed: "
                   + "; ".join(esc(r.get("expectation")) for r in failed[:5]) + ".")
    if not out:
        out.append("No check crossed the thresholds used here (α ≥ 0.667 in every pool, no pool "
                   "disagreement or annotator effect beyond its permutation null at p < 0.05, no "
                   "rank change between pools); that is not evidence that the labels are free of "
                   "annotator or pool effects.")
    return out


def pool_limitation(rows: list, a: str, b: str, esc=str) -> str | None:
    """The pools disagree beyond what interchangeable annotators give: the permutation null's
    p below :data:`EFFECT_P` with the observed rate above the null."""
    first = rows[0]
    n = against_null(first, "majority_differs_rate")
    rev = next((against_null(r, "winner_reversed_rate") for r in rows
                if r.get("winner_reversed_rate") is not None), None)
    if n is None or n["observed"] is None:
        return None
    if n["p"] is None or n["p"] >= EFFECT_P or (n["excess"] or 0) <= 0:
        return None
    s = (f"The pools disagree beyond chance: where {esc(a)} and {esc(b)} are each unanimous, "
         f"their {first.get('granularity', 'label')}s differ on {percent(n['observed'])} of items "
         f"against {percent(n['null'])} expected if the pools were interchangeable (permutation "
         f"{permutation_p(n)})")
    if rev is not None and rev["observed"]:
        s += (f", and they name opposite winners on {percent(rev['observed'])}"
              + (f" against {percent(rev['null'])} expected" if rev["null"] is not None else ""))
    return s + ("; a model trained or evaluated on one pool's labels inherits that pool's "
                "view.")
