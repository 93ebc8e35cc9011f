"""Sentences from the numbers: the dataset card's prose and the Croissant RAI analysis.

Each function takes the result dict (the JSON form: ``None`` where a number is undefined) and
returns plain sentences, one per pool, pool pair, leaderboard or judge, each carrying its figure
with its 95% interval (numbers shown by :mod:`audit.format`). Dataset strings (pool, model and
judge names) go through ``esc``: :func:`audit.escape.markdown.inline` for the card, ``str`` for
the Croissant JSON (the serializer escapes them). The card's "Known limitations" paragraph is
:mod:`audit.report.limitations`; the report's findings box is :mod:`audit.report.findings`.
"""

from __future__ import annotations

import math

from ..contract.columns import EVERY_HUMAN_POOL
from ..format import (count, number, p_bound, p_is, percent, points, probability,
                      probability_percent, standard_error, with_interval)
from ..metrics import display_name
from .read import (against_null, at_floor, displacement, finite, judge_rows, simulation_row, swap,
                   swap_key, within_test)

#: The coefficient a pool's reliability sentence names: the first of these its results hold.
#: Krippendorff's α leads (it handles missing judgments and every label level), then the
#: chance-corrected coefficients, then percent agreement; a preference over the registry's
#: output order (:data:`audit.metrics.KEYS`), every key registered there.
HEADLINE_METRICS = ("krippendorff_alpha", "gwet_ac1", "fleiss_kappa", "icc", "percent_agreement")
#: The reliability table's column of every human pool together (``reliability.overall``).
ALL_HUMANS = "all humans"
#: The coefficient the reliability thresholds of the card, the findings and the baseline
#: section read (Krippendorff's 2004 floors of 0.667 and 0.8 are stated for α).
ALPHA = "krippendorff_alpha"

#: Thresholds the sentences read the numbers against.
ALPHA_TENTATIVE = 0.667  # Krippendorff (2004): lowest alpha for tentative conclusions
ALPHA_RELIABLE = 0.8     # Krippendorff (2004): alpha for reliable data
NOTABLE_SWAP = 0.20      # a neighbour pair's swap probability worth a sentence
EFFECT_P = 0.05          # permutation p below which a pool or annotator effect is stated
FEW_JUDGMENTS = 3        # items with fewer judgments have a fragile majority

#: How to read the annotator-effect sizes the within-pool sentences show.
EFFECT_MEANINGS = {"η²": "the share of the score variance that the annotator accounts for",
                   "Cramér's V": "how strongly the label depends on the annotator, 0 none to 1 "
                                 "fully"}


def estimate(entry, show=number, *, style: str = "sentence") -> str:
    """A ``{value, ci95}`` entry as text (:func:`audit.format.with_interval`); ``NaN`` when the
    entry or its value is missing."""
    if not entry:
        return "NaN"
    return with_interval(entry.get("value"), entry.get("ci95"), show, style=style)


def join_and(names: list, sep: str = ", ") -> str:
    """``a``, ``a and b``, ``a, b and c`` (``sep`` between all but the last two)."""
    names = [str(n) for n in names]
    return names[0] if len(names) == 1 else sep.join(names[:-1]) + " and " + names[-1]


def board(pool, results: dict, esc=str) -> str:
    """``the X leaderboard``; the key of every human pool together reads as the pooled board."""
    pools = (results.get("dataset") or {}).get("pools") or {}
    if pool == EVERY_HUMAN_POOL and EVERY_HUMAN_POOL not in pools:
        return "the pooled leaderboard (all human pools)"
    return f"the {esc(pool)} leaderboard"


def pool_label(pool, results: dict, esc=str) -> str:
    """The pool's name, or ``pooled (all human pools)`` for the board of every human pool."""
    pools = (results.get("dataset") or {}).get("pools") or {}
    if pool == EVERY_HUMAN_POOL and EVERY_HUMAN_POOL not in pools:
        return "pooled (all human pools)"
    return esc(pool)


def in_board(pool, results: dict, esc=str) -> str:
    """``in X`` / ``in the pooled leaderboard (all human pools)``."""
    pools = (results.get("dataset") or {}).get("pools") or {}
    if pool == EVERY_HUMAN_POOL and EVERY_HUMAN_POOL not in pools:
        return "in the pooled leaderboard (all human pools)"
    return f"in {esc(pool)}"


# -- sentences from the numbers ------------------------------------------------------------------
def _headline(stats: dict):
    for m in HEADLINE_METRICS:
        if m in (stats or {}):
            return m, stats[m]
    return None, None


def reliability_sentences(results: dict, esc=str) -> list[str]:
    rel = results.get("reliability") or {}
    out, undefined = [], []
    for pool, stats in (rel.get("by_pool") or {}).items():
        metric, entry = _headline(stats)
        if metric is None:
            continue
        if (entry or {}).get("value") is None:
            undefined.append(esc(pool))
            continue
        out.append(f"{esc(pool)}: {display_name(metric)} = {estimate(entry)}.")
    if undefined:
        out.append(f"Agreement is undefined within {', '.join(undefined)} (a single annotator, "
                   "or no item judged twice).")
    return out


def disagreement_sentences(results: dict, esc=str) -> list[str]:
    """One sentence per pool pair: labels differ (full label), winners differ, opposite winners,
    each beside the rate expected if the pools were interchangeable (the permutation null) and
    the excess over it; then the permutation p of each comparison."""
    out, no_null, never = [], [], []
    pools = (results.get("dataset") or {}).get("pools") or {}
    for (a, b), rows in by_pair(results.get("pool_disagreement")).items():
        first = rows[0]
        if first.get("majority_differs_rate") is None and first.get("mean_difference") is not None:
            reasons = []
            out.append(_score_difference_sentence(first, a, b, esc, no_null=reasons))
            no_null += [(f"{esc(a)} and {esc(b)}", r) for r in reasons]
            continue
        if first.get("n_items_both_unanimous") == 0:
            never.append(f"{esc(a)} and {esc(b)}")
            continue
        single = all((pools.get(p) or {}).get("n_annotators") == 1 for p in (a, b))
        where = (f"labelled by both {esc(a)} and {esc(b)} (one annotator each)" if single else
                 f"where both {esc(a)} and {esc(b)} are unanimous")
        s = (f"On the {count(first.get('n_items_both_unanimous'), 'item')} {where}, their "
             f"{first.get('granularity', 'label')}s differ on "
             f"{_against_null(first, 'majority_differs_rate')}")
        tested = [first]
        for r in rows[1:]:
            if r.get("majority_differs_rate") is not None and \
                    r["majority_differs_rate"] != first.get("majority_differs_rate"):
                s += (f"; their {r.get('granularity')}s on "
                      f"{_against_null(r, 'majority_differs_rate')}")
                tested.append(r)
        rev = next((r for r in rows if r.get("winner_reversed_rate") is not None), None)
        if rev is not None:
            s += f"; and they name opposite winners on {_against_null(rev, 'winner_reversed_rate')}"
            tested += [rev] if rev not in tested else []
        ps = [(r, against_null(r, "majority_differs_rate")) for r in tested]
        ps = [(r, n) for r, n in ps if n and n["p"] is not None]
        reasons = {n["not_defined"] for r in tested
                   if (n := against_null(r, "majority_differs_rate")) and n["not_defined"]}
        if reasons:
            no_null.append((f"{esc(a)} and {esc(b)}", "; ".join(sorted(reasons))))
        if ps:
            s += ". Permutation test of interchangeable pools (annotators shuffled between " \
                "them): " + "; ".join((f"{r.get('granularity')}s " if len(ps) > 1 else "")
                                      + permutation_p(n) for r, n in ps)
        out.append(s + ".")
    out = _say_no_null_once(out, no_null)
    if len(never) == 1:
        out.append(f"{never[0]} are never both unanimous on an item, so their majority labels are "
                   "not compared.")
    elif never:
        out.append(f"No item has both pools unanimous for {'; '.join(never)}, so their majority "
                   "labels are not compared.")
    return out


def _say_no_null_once(sentences: list[str], no_null: list[tuple[str, str]]) -> list[str]:
    """Why a comparison has no permutation null, said once: inside the sentence when there is
    one pool pair, else one closing bullet per reason naming the pairs it applies to (all of
    them: "No pair has ...")."""
    if not no_null:
        return sentences
    if len(sentences) == 1:
        return [f"{sentences[0][:-1]}. No permutation null: {no_null[0][1]}."]
    by_reason = {}
    for pair, reason in no_null:
        by_reason.setdefault(reason, []).append(pair)
    if len(by_reason) == 1 and len(no_null) == len(sentences):
        return sentences + [f"No pair has a permutation null: {no_null[0][1]}."]
    return sentences + [f"No permutation null for {'; '.join(pairs)}: {reason}."
                        for reason, pairs in by_reason.items()]


def _against_null(row: dict, stat: str) -> str:
    """``x% (95% CI ...) against y% expected if the pools were interchangeable (excess z points,
    95% CI ...)`` for one rate of a pool-disagreement row."""
    n = against_null(row, stat)
    text = estimate({"value": n["observed"], "ci95": n["ci95"]}, percent, style='paren')
    if n["null"] is None or n["not_defined"]:
        return text
    text += f" against {percent(n['null'])} expected if the pools were interchangeable"
    if n["excess"] is not None:
        text += f" (excess {points_phrase(n['excess'], n['excess_ci95'])})"
    return text


def permutation_p(n: dict) -> str:
    """``p = ...`` of a permutation test with its Monte-Carlo s.e. and permutation count, or
    the bound ``p ≤ 1 / (n + 1)`` when the p-value is the smallest the permutations resolve."""
    if at_floor(n["p"], n.get("n_permutations")):
        return (f"p ≤ {p_bound(n['n_permutations'])}, the smallest p-value "
                f"{number(n['n_permutations'])} permutations resolve")
    text = p_is(n["p"])
    if n.get("mc_se") is not None:
        text += f" ± {number(n['mc_se'], 4)}"
    if n.get("n_permutations"):
        text += f" over {number(n['n_permutations'])} permutations"
    return text


def points_phrase(value, interval=None) -> str:
    """``+8.8 points, 95% CI +7.2 to +10.3``: a difference of two rates in percentage points
    (:func:`audit.format.points`), with its CI."""
    text = f"{points(value)} points"
    if interval:
        text += f", 95% CI {points(interval[0])} to {points(interval[1])}"
    return text


def _score_difference_sentence(row: dict, a: str, b: str, esc=str, *,
                               no_null: list | None = None) -> str:
    """Pool disagreement on a continuous scale, where unanimity is not defined: the per-item
    difference of the pools' mean scores, signed and absolute, with their CIs, and the absolute
    difference expected if the pools were interchangeable."""
    cis = row.get("ci95") or {}
    diff = {"value": row.get("mean_difference"), "ci95": cis.get("mean_difference")}
    absdiff = {"value": row.get("mean_abs_difference"), "ci95": cis.get("mean_abs_difference")}
    s = (f"On the {count(row.get('n_items_shared'), 'item')} both {esc(a)} and {esc(b)} rated, "
         f"{esc(b)}'s mean score minus {esc(a)}'s is {estimate(diff, style='paren')} on "
         "average, and "
         f"{estimate(absdiff, style='paren')} in absolute value")
    n = against_null(row, "mean_abs_difference")
    if n and n["not_defined"]:
        if no_null is None:
            s += f". No permutation null: {n['not_defined']}"
        else:
            no_null.append(n["not_defined"])
    elif n and n["null"] is not None:
        s += f", against {number(n['null'])} expected if the pools were interchangeable"
        if n["excess"] is not None:
            s += f" (excess {with_interval(n['excess'], n['excess_ci95'], style='sentence')})"
        if n["p"] is not None:
            s += (". Permutation test of interchangeable pools (annotators shuffled between "
                  f"them): {permutation_p(n)}")
    return s + "."


def within_sentences(results: dict, esc=str) -> list[str]:
    """One sentence per pool: how often its annotators disagree on an item, and whether they
    are interchangeable, read from the within-item permutation test (:func:`_effect`)."""
    out, undefined, undefined_raw = [], [], []
    for w in results.get("within_pool") or []:
        if w.get("disagreement_rate") is None and w.get("within_item_sd") is not None:
            sd = {"value": w["within_item_sd"], "ci95": w.get("within_item_sd_ci95")}
            out.append(f"{esc(w['pool'])}: scores of one item differ between its annotators "
                       f"with a standard deviation of {estimate(sd, style='paren')}; "
                       f"{_effect(w)}.")
            continue
        if w.get("disagreement_rate") is None:
            undefined.append(esc(w["pool"]))
            undefined_raw.append(w["pool"])
            continue
        rate = {"value": w.get("disagreement_rate"), "ci95": w.get("ci95")}
        out.append(f"{esc(w['pool'])}: {estimate(rate, percent, style='paren')} of items have "
                   f"at least one disagreeing judgment; {_effect(w)}.")
    if undefined:
        out.append(f"Not measurable within {join_and(undefined)} "
                   f"({why_undefined(undefined_raw, results)}).")
    return out


def _effect(w: dict) -> str:
    """Whether the pool's annotators are interchangeable, by the within-item permutation test,
    with the classical tests and the effect size beside it."""
    t = within_test(w)
    if t["p"] is None:
        return ("the annotator effect is not testable here "
                f"({w.get('not_defined') or 'no item with two of its annotators'})")
    verdict = ("its annotators are not interchangeable" if t["p"] < EFFECT_P else
               "no evidence that its annotators differ")
    text = f"{verdict} ({t['name'] or 'annotator effect'} {permutation_p(t)}"
    refs = [f"{r['name']} {p_is(r['p'])}" for r in t["reference"] if r["p"] is not None]
    if t["pooled"] and t["pooled"]["p"] is not None:
        refs.append(f"{t['pooled']['name']} {p_is(t['pooled']['p'])}, which ignores that the "
                    "annotators label the same items")
    if refs:
        text += "; for reference " + ", ".join(refs)
    meaning = EFFECT_MEANINGS.get(t["effect_name"])
    return (text + f"; {t['effect_name']} {number(t['effect'])}"
            + (f", {meaning}" if meaning and t["effect"] is not None else "") + ")")


def stability_sentences(results: dict, esc=str) -> list[str]:
    st = results.get("stability") or {}
    boards = results.get("leaderboards") or {}
    out = []
    for pool, rows in boards.items():
        top = sorted(rows, key=lambda r: r.get("rank") or math.inf)[:3]
        if top:
            scores = [f"{esc(r['model'])} "
                      f"{estimate({'value': r.get('score'), 'ci95': r.get('ci95')}, style='paren')}"
                      for r in top]
            what = ("win rate, a tie counting half" if top[0].get("win_rate") is not None
                    else "mean score, higher is better")
            title = board(pool, results, esc)
            size = count(len(rows), "model")
            title = (f"{title[:-1]}, {size})" if title.endswith(")") else f"{title} ({size})")
            out.append(f"{title[0].upper()}{title[1:]}, top three by {what}: "
                       + "; ".join(scores) + ".")
    for pp in st.get("pool_pairs") or []:
        moved = pp.get("n_displaced")
        out.append(f"Switching from {esc(pp['pool_a'])} to {esc(pp['pool_b'])}: "
                   + ("no model changes rank" if moved == 0 else
                      f"{count(moved, 'model')} change{'s' if moved == 1 else ''} rank")
                   + f" (Kendall τ = {number(pp.get('kendall_tau'))}); the models' scores move "
                   f"by {number(pp.get('score_shift_sd'), 4)} (standard deviation of the change).")
    disp = displacement(st)
    if disp:
        has_se = any(se is not None for _, _, se in disp)
        out.append("Probability that resampling the items changes the order of the leaderboard"
                   + (" (± Monte-Carlo s.e.)" if has_se else "") + ": " + "; ".join(
                       f"{pool_label(pool, results, esc)} {number(p)}"
                       + (f" ± {standard_error(se)}" if se is not None else "") for pool, p, se in disp)
                   + ".")
    closest = closest_by_pool(st)
    if closest:
        parts = []
        for pool, rows in closest.items():
            pairs = [f"{esc(r.get('model_hi'))} and {esc(r.get('model_lo'))} (score gap "
                     f"{number(r.get('gap'), 4)}) {swap_phrase(r)}" for r in rows]
            parts.append(f"{in_board(pool, results, esc)}, " + " and ".join(pairs))
        n = sum(map(len, closest.values()))
        out.append(("The pair" if n == 1 else f"The {n} pairs") + " of neighbouring models "
                   "likeliest to swap places: " + "; ".join(parts) + ".")
    sim = [simulation_row(r) for r in st.get("simulation") or []]
    if sim:
        sd = (st.get("simulation_model") or {})
        sd_text = ""
        if finite(sd.get("perturbation_sd")):
            value = with_interval(sd["perturbation_sd"], sd.get("perturbation_sd_ci95"),
                                  lambda x: number(x, 4), style="sentence")
            sd_text = (" when every model's score moves as much as scores move between pools here"
                       if sd.get("perturbation_used", "pool_switch") == "pool_switch" else
                       " when every model's score moves by its bootstrap standard deviation here")
            sd_text += f" (SD {value})"
        reading = "± Monte-Carlo s.e." + ("; in brackets the 95% interval over the SD's own "
                                          "uncertainty" if any(r["interval95"] for r in sim)
                                          else "")
        out.append("Simulated probability that at least one model is displaced" + sd_text
                   + f", by leaderboard size ({reading}): "
                   + "; ".join(f"{number(r['n_models'])} models {simulated(r, short=True)}"
                               for r in sim) + ".")
    fl = st.get("flipped_items") or {}
    if fl.get("count") is not None:  # rating data: no winner to flip (``skipped`` says so)
        n_flipped = fl.get("count", 0)
        out.append(f"{count(n_flipped, 'item')} {'has' if n_flipped == 1 else 'have'} opposite "
                   "majority winners in different pools.")
    return out


def closest_by_pool(st: dict, *, at_least: float | None = None) -> dict:
    """The three pairs most likely to swap (at least ``at_least``), grouped by pool in the order
    of each pool's likeliest pair."""
    rows = sorted(st.get("closest_pairs") or [], key=swap_key)
    if at_least is not None:
        rows = [r for r in rows if (swap(r)["bootstrap"] or 0) >= at_least]
    out = {}
    for r in rows[:3]:
        out.setdefault(r.get("pool"), []).append(r)
    return out


def swap_phrase(r: dict) -> str:
    """``swap in x% ± se of bootstrap resamples (closed form Φ(−gap/(√2·SD)): y%)``."""
    s = swap(r)
    text = f"swap in {probability_percent(s['bootstrap'])}"
    if s["mc_se"] is not None:
        text += f" ± {percent(s['mc_se'])}"
    text += " of bootstrap resamples"
    if s["closed_form"] is not None:
        text += (f" (closed form Φ(−gap/(√2·SD)): {probability_percent(s['closed_form'])}"
                 + (f" at SD {number(s['closed_form_sd'], 4)}" if s["closed_form_sd"] is not None
                    else "") + ")")
    return text


def simulated(r: dict, *, short: bool = False) -> str:
    """``p ± se (95% interval lo to hi over the SD's uncertainty)`` of one simulated size
    (``short``: ``p ± se [lo, hi]``, the reading said once for the list)."""
    text = probability(r["p"])
    if r["mc_se"] is not None:
        text += f" ± {standard_error(r['mc_se'])}"
    if r["interval95"] and short:
        text += f" [{probability(r['interval95'][0])}, {probability(r['interval95'][1])}]"
    elif r["interval95"]:
        text += (f" (95% interval {probability(r['interval95'][0])} to "
                 f"{probability(r['interval95'][1])} over the SD's uncertainty)")
    return text


def judge_sentences(results: dict, esc=str) -> list[str]:
    """Per judge: the verdict, then per human pool the agreement with one of its annotators,
    the pool's own agreement (the ceiling) and the agreement with its majority."""
    out = []
    for entry in results.get("judge_alignment") or []:
        if not isinstance(entry, dict):
            continue
        judge = esc(entry.get("judge"))
        for a in judge_rows(entry):
            s = (f"{judge} agrees with a single {esc(a['pool'])} annotator on "
                 f"{with_interval(a['agreement'], a['ci95'], percent, style='paren')} of "
                 f"{number(a['n'])} comparisons")
            if a["ceiling"] is not None:
                s += (f"; two {esc(a['pool'])} annotators agree with each other on "
                      f"{with_interval(a['ceiling'], a['ceiling_ci95'], percent, style='paren')}"
                      " (the ceiling)")
            if a["majority"] is not None:
                s += (f"; with the {esc(a['pool'])} majority on "
                      f"{with_interval(a['majority'], a['majority_ci95'], percent, style='paren')}")
            out.append(s + ".")
        if entry.get("verdict"):
            out.append(f"Verdict: {esc(entry['verdict'])}.")
    return out


def why_undefined(pools: list, results: dict) -> str:
    """Why agreement is not measurable in ``pools``: one annotator each when the results say so,
    else the two possible reasons."""
    info = (results.get("dataset") or {}).get("pools") or {}
    if pools and all((info.get(p) or {}).get("n_annotators") == 1 for p in pools):
        return "one annotator" + (" each" if len(pools) > 1 else "")
    return "a single annotator, or no item judged twice"


def by_pair(rows) -> dict:
    """Pool-disagreement rows grouped by pool pair, the full-label row first."""
    pairs = {}
    for r in rows or []:
        pairs.setdefault((r.get("pool_a"), r.get("pool_b")), []).append(r)
    return {k: sorted(v, key=lambda r: r.get("granularity") != "label") for k, v in pairs.items()}


def annotations_per_item(results: dict, esc=str) -> str:
    ds = results.get("dataset") or {}
    jpi = ds.get("judgments_per_item") or {}
    if jpi.get("min") is not None and jpi.get("min") == jpi.get("max"):
        per_item = f"{count(jpi['min'], 'judgment')} per item"
    else:
        per_item = (f"{number(jpi.get('min'))} to {number(jpi.get('max'))} judgments per item "
                    f"(median {number(jpi.get('median'), 1)})")
    given = ds.get("n_annotators") is not None  # not for vote counts (dataset.annotators)
    by = (lambda n: f" by {count(n, 'annotator')}") if given else (lambda n: "")  # noqa: E731
    s = (f"{per_item}; {count(ds.get('n_annotations'), 'judgment')} of "
         f"{count(ds.get('n_items'), 'item')}{by(ds.get('n_annotators'))}")
    pools = ds.get("pools") or {}
    if pools:
        s += (" in " + ("one pool" if len(pools) == 1 else f"{len(pools)} pools") + ": "
              + "; ".join(f"{esc(p)}, {count(i.get('n_annotations'), 'judgment')}"
                          f"{by(i.get('n_annotators'))}" for p, i in pools.items()))
    if not given:
        s += (f"; annotators {ds.get('annotators') or 'not given'}: each judgment is one vote "
              "of the source's counts per item, and who cast it is not known")
    return s + "."


def nan_note(columns: list, metrics: list, pools: dict, esc=str) -> str:
    """Why the reliability table holds NaN: the reason the results give (a coefficient not
    defined on the scale), or a pool of one annotator, or no item judged twice in the pool."""
    by_reason, single, unjudged = {}, [], []
    for m in metrics:
        cells = [(c, (s or {}).get(m)) for c, s in columns]
        for c, e in cells:
            if e is None or (e or {}).get("value") is not None:
                continue
            if e.get("not_defined"):
                by_reason.setdefault(e["not_defined"], [])
                if display_name(m) not in by_reason[e["not_defined"]]:
                    by_reason[e["not_defined"]].append(display_name(m))
            elif (pools.get(c) or {}).get("n_annotators") == 1:
                single += [c] if c not in single else []
            else:
                unjudged += [c] if c not in unjudged else []
    notes = [f"{join_and(names)} {'is' if len(names) == 1 else 'are'} "
             f"{esc(reason.split('; use ', 1)[0])}"
             for reason, names in by_reason.items()]
    if single:
        notes.append(f"{join_and([esc(c) for c in single])} "
                     + ("has one annotator" if len(single) == 1 else "have one annotator each")
                     + ", so there is no agreement to measure")
    if unjudged:
        notes.append(f"{join_and([esc(c) for c in unjudged])} "
                     f"{'has' if len(unjudged) == 1 else 'have'} no item judged twice")
    return ("NaN marks a coefficient not defined here: " + "; ".join(notes) + ".") if notes else ""


def interval_note(columns: list, metrics: list, esc=str) -> str:
    """Which of the reliability table's intervals are not the item bootstrap's percentiles,
    and how they were computed (an entry's ``interval``: Cohen's kappa's mean over pairs, the
    basic bootstrap interval, or the jackknife's on a Spark cluster or over the memory budget),
    by metric and columns; ``""`` when every interval is the bootstrap's. ``columns``: (name,
    block) pairs, "all humans" first where the table has it; ``esc`` escapes the column names
    (the dataset's pool names) for the channel; the rest is the toolkit's text (plain for the
    report, whose template escapes it).

    Where "all humans" and a single pool are the table's only columns, they are the same
    annotators (a source naming no pools has the one pool ``all``): the note names them as one,
    "all humans (one pool: all)", not "all humans and all"."""
    one_pool = len(columns) == 2 and columns[0][0] == ALL_HUMANS
    notes = []
    for m in metrics:
        by_method: dict[str, list[str]] = {}
        for c, s in columns:
            method = ((s or {}).get(m) or {}).get("interval")
            if method:
                by_method.setdefault(method, []).append(c)
        for method, cols in by_method.items():
            where = (f"{ALL_HUMANS} (one pool: {esc(cols[1])})" if one_pool and len(cols) == 2
                     else join_and([esc(c) for c in cols]))
            notes.append(f"{display_name(m)} in {where}: {method}")
    return ("Intervals that are not the item bootstrap's percentiles: " + "; ".join(notes)
            + ".") if notes else ""
