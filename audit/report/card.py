"""The Hugging Face dataset card and the Croissant RAI annotation fields: pure functions of results.

:func:`render_card` writes a card (YAML metadata from :class:`~huggingface_hub.DatasetCardData`,
then Markdown) that :class:`huggingface_hub.DatasetCard` reads. Its generated part sits between
:data:`START` and :data:`END` markers, so an existing card is updated in place: the hand-written
text outside the markers and every YAML key the user wrote are kept as written (keys the audit
computes, ``annotations_creators``, ``size_categories`` and ``pretty_name``, are added only when
missing). Dataset strings in the body are escaped by :func:`audit.escape.markdown.inline` (one
line, ``<`` as ``&lt;`` so a name cannot forge a marker or inject HTML, Markdown punctuation and
block starts backslash-escaped, control characters shown); the YAML metadata is written by a YAML
serializer (:func:`audit.escape.markdown.front_matter`, for a new card and for keys added to an
existing one), never by pasting strings, so every value parses back as written.

``annotations_creators`` comes from the pools: judge pools are ``machine-generated``; a pool whose
name says crowd (crowd, normal, worker, mturk, prolific, ...) is ``crowdsourced``; one that says
expert (expert, author, professional, linguist, ...) is ``expert-generated``; any other pool gets
``default_creator`` (``expert-generated``); ``creators={pool: kind}`` overrides any pool.

:func:`check_card` validates a card offline: ``DatasetCard.validate()`` posts the YAML to the Hub,
which these machines cannot reach, so the card is parsed with :class:`DatasetCard` (the YAML must
be a mapping that :class:`DatasetCardData` accepts), round-tripped, and its tag values checked
against the Hub's vocabularies (:data:`CREATOR_KINDS`, :data:`SIZE_CATEGORIES`, as also shipped in
``datasets/utils/resources``).
"""

from __future__ import annotations

import json
import math
import re
import warnings
from pathlib import Path

from ..errors import AuditWarning, InputError, join_names
from ..escape.markdown import front_matter, inline
from .read import (against_null, at_floor, displacement, finite, judge_rows, p_is,
                   simulation_row, swap, swap_key, within_test)

START = "<!-- annotation-audit:start -->"
END = "<!-- annotation-audit:end -->"

#: The Hub's ``annotations_creators`` values.
CREATOR_KINDS = ("found", "crowdsourced", "expert-generated", "machine-generated",
                 "no-annotation", "other")
#: The Hub's ``size_categories`` values, in order, with the exclusive upper bound of each.
SIZE_CATEGORIES = (("n<1K", 1e3), ("1K<n<10K", 1e4), ("10K<n<100K", 1e5), ("100K<n<1M", 1e6),
                   ("1M<n<10M", 1e7), ("10M<n<100M", 1e8), ("100M<n<1B", 1e9),
                   ("1B<n<10B", 1e10), ("10B<n<100B", 1e11), ("100B<n<1T", 1e12),
                   ("n>1T", math.inf))
SIZE_VALUES = ("unknown",) + tuple(name for name, _ in SIZE_CATEGORIES)
DEFAULT_CREATOR = "expert-generated"
ALL = "all"              # audit.rank.ALL, the board of every human pool (not imported: numpy)

_CROWD = re.compile(r"crowd|normal|worker|mturk|turk|prolific|amt|layperson|lay|public|volunteer",
                    re.I)
_EXPERT = re.compile(r"expert|author|professional|linguist|specialist|annotator|trained|staff|"
                     r"researcher|graduate|student", re.I)

#: Thresholds the "Known limitations" paragraph reads the numbers against.
ALPHA_TENTATIVE = 0.667  # Krippendorff (2004): lowest alpha for tentative conclusions
ALPHA_RELIABLE = 0.8     # Krippendorff (2004): alpha for reliable data
NOTABLE_SWAP = 0.20      # a neighbour pair's swap probability worth a sentence
EFFECT_P = 0.05          # permutation p below which a pool or annotator effect is stated
FEW_JUDGMENTS = 3        # items with fewer judgments have a fragile majority
HEADLINE_METRICS = ("krippendorff_alpha", "gwet_ac1", "fleiss_kappa", "icc", "percent_agreement")
TABLE_METRICS = ("krippendorff_alpha", "fleiss_kappa", "gwet_ac1", "percent_agreement", "icc")
METRIC_NAMES = {"krippendorff_alpha": "Krippendorff's α", "fleiss_kappa": "Fleiss' κ",
                "gwet_ac1": "Gwet's AC1", "percent_agreement": "percent agreement", "icc": "ICC"}

#: How to read the annotator-effect sizes the within-pool sentences show.
EFFECT_MEANINGS = {"η²": "the share of the score variance that the annotator accounts for",
                   "Cramér's V": "how strongly the label depends on the annotator, 0 none to 1 "
                                 "fully"}

#: A dataset string as inert inline Markdown (:func:`audit.escape.markdown.inline`).
md_escape = inline


# -- formatting -------------------------------------------------------------------------------------


def _num(x, digits: int = 3) -> str:
    if x is None or not isinstance(x, (int, float)) or not math.isfinite(x):
        return "NaN"
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, int):
        return f"{x:,}"
    return f"{x:.{digits}f}"


def _n(count, noun: str, plural: str | None = None) -> str:
    """``1 annotator``, ``3 annotators``, ``NaN annotators``: a count with its noun in the right
    number."""
    one = isinstance(count, int) and not isinstance(count, bool) and count == 1
    return f"{_num(count)} {noun if one else (plural or noun + 's')}"


def html_comment(text) -> str:
    """``text`` safe inside an HTML comment: no ``--`` (so no ``-->`` and no ``--!>``), no
    leading ``>``; Markdown escaping does not apply there (the comment is not rendered)."""
    text = str(text).replace("\n", " ")
    while "--" in text:
        text = text.replace("--", "- -")
    return text.lstrip(">")


def _board(pool, results: dict, esc=str) -> str:
    """``the X leaderboard``; the key of every human pool together reads as the pooled board."""
    pools = (results.get("dataset") or {}).get("pools") or {}
    if pool == ALL and ALL not in pools:
        return "the pooled leaderboard (all human pools)"
    return f"the {esc(pool)} leaderboard"


def _pool_label(pool, results: dict, esc=str) -> str:
    """The pool's name, or ``pooled (all human pools)`` for the board of every human pool."""
    pools = (results.get("dataset") or {}).get("pools") or {}
    return "pooled (all human pools)" if pool == ALL and ALL not in pools else esc(pool)


def _in_board(pool, results: dict, esc=str) -> str:
    """``in X`` / ``in the pooled leaderboard (all human pools)``."""
    pools = (results.get("dataset") or {}).get("pools") or {}
    if pool == ALL and ALL not in pools:
        return "in the pooled leaderboard (all human pools)"
    return f"in {esc(pool)}"


def _pct(x) -> str:
    return "NaN" if x is None or not math.isfinite(x) else f"{100 * x:.1f}%"


def _ci(entry, fmt=_num, *, cell: bool = False, paren: bool = False) -> str:
    """``v, 95% CI lo to hi`` for a sentence (``v (95% CI lo to hi)`` with ``paren``), ``v [lo, hi]``
    for a table ``cell``."""
    if not entry or entry.get("value") is None:
        return "NaN"
    lo, hi = (entry.get("ci95") or [None, None])[:2]
    if lo is None or hi is None:
        return fmt(entry["value"])
    if cell:
        return f"{fmt(entry['value'])} [{fmt(lo)}, {fmt(hi)}]"
    if paren:
        return f"{fmt(entry['value'])} (95% CI {fmt(lo)} to {fmt(hi)})"
    return f"{fmt(entry['value'])}, 95% CI {fmt(lo)} to {fmt(hi)}"


# -- metadata ---------------------------------------------------------------------------------------
def pool_creator(pool: str, *, judge: bool = False, default: str = DEFAULT_CREATOR) -> str:
    """The ``annotations_creators`` kind of one pool (see the module docstring for the rules)."""
    if judge:
        return "machine-generated"
    if _CROWD.search(pool):
        return "crowdsourced"
    if _EXPERT.search(pool):
        return "expert-generated"
    return default


def pool_creators(results: dict, *, creators: dict | None = None,
                  default_creator: str = DEFAULT_CREATOR) -> dict[str, str]:
    """``{pool: kind}`` for every pool of the dataset.

    Raises
    ------
    InputError
        A kind outside :data:`CREATOR_KINDS`, or an override naming a pool the dataset lacks.
    """
    creators = dict(creators or {})
    for key, kind in [("default_creator", default_creator)] + \
            [(f"creator {p}", k) for p, k in creators.items()]:
        if kind not in CREATOR_KINDS:
            raise InputError(f"{kind!r} is not an annotations_creators value; use one of "
                             f"{join_names(CREATOR_KINDS)}", key=key)
    pools = (results.get("dataset") or {}).get("pools") or {}
    unknown = sorted(set(creators) - set(pools))
    if unknown:
        raise InputError(f"no pool {join_names(unknown)}; pools are {join_names(pools)}",
                         key="creator")
    return {p: creators.get(p) or pool_creator(p, judge=bool(info.get("judge")),
                                               default=default_creator)
            for p, info in pools.items()}


def size_category(n_items) -> str:
    """The Hub's ``size_categories`` value for ``n_items`` rows."""
    if n_items is None:
        return "unknown"
    return next(name for name, upper in SIZE_CATEGORIES if n_items < upper)


def card_data(results: dict, *, creators: dict | None = None,
              default_creator: str = DEFAULT_CREATOR):
    """The :class:`huggingface_hub.DatasetCardData` the audit computes."""
    from huggingface_hub import DatasetCardData

    ds = results.get("dataset") or {}
    kinds = pool_creators(results, creators=creators, default_creator=default_creator)
    ordered = [k for k in CREATOR_KINDS if k in kinds.values()] or ["no-annotation"]
    from .card_meta import yaml_fields

    return DatasetCardData(**{"annotations_creators": ordered,
                              "size_categories": [size_category(ds.get("n_items"))],
                              "pretty_name": ds.get("name") or None,
                              **yaml_fields(ds.get("card"))})


# -- sentences from the numbers ---------------------------------------------------------------------
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
        out.append(f"{esc(pool)}: {METRIC_NAMES.get(metric, metric)} = {_ci(entry)}.")
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
    for (a, b), rows in _by_pair(results.get("pool_disagreement")).items():
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
        s = (f"On the {_n(first.get('n_items_both_unanimous'), 'item')} {where}, their "
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
            s += ". Permutation test of interchangeable pools (annotators shuffled between them): " \
                + "; ".join((f"{r.get('granularity')}s " if len(ps) > 1 else "") + _p(n)
                            for r, n in ps)
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
    text = _ci({"value": n["observed"], "ci95": n["ci95"]}, _pct, paren=True)
    if n["null"] is None or n["not_defined"]:
        return text
    text += f" against {_pct(n['null'])} expected if the pools were interchangeable"
    if n["excess"] is not None:
        text += f" (excess {_points(n['excess'], n['excess_ci95'])})"
    return text


def _p(n: dict) -> str:
    """``p = ...`` of a permutation test with its Monte-Carlo s.e. and permutation count, or
    the bound ``p ≤ 1 / (n + 1)`` when the p-value is the smallest the permutations resolve."""
    if at_floor(n["p"], n.get("n_permutations")):
        return (f"p ≤ {1 / (n['n_permutations'] + 1):.4f}, the smallest p-value "
                f"{_num(n['n_permutations'])} permutations resolve")
    text = p_is(n["p"])
    if n.get("mc_se") is not None:
        text += f" ± {_num(n['mc_se'], 4)}"
    if n.get("n_permutations"):
        text += f" over {_num(n['n_permutations'])} permutations"
    return text


def _points(value, interval=None) -> str:
    """A difference of two rates in percentage points, with its CI."""
    sign = lambda x: f"{100 * x:+.1f}"  # noqa: E731
    text = f"{sign(value)} points"
    if interval:
        text += f", 95% CI {sign(interval[0])} to {sign(interval[1])}"
    return text


def _score_difference_sentence(row: dict, a: str, b: str, esc=str, *,
                               no_null: list | None = None) -> str:
    """Pool disagreement on a continuous scale, where unanimity is not defined: the per-item
    difference of the pools' mean scores, signed and absolute, with their CIs, and the absolute
    difference expected if the pools were interchangeable."""
    cis = row.get("ci95") or {}
    diff = {"value": row.get("mean_difference"), "ci95": cis.get("mean_difference")}
    absdiff = {"value": row.get("mean_abs_difference"), "ci95": cis.get("mean_abs_difference")}
    s = (f"On the {_n(row.get('n_items_shared'), 'item')} both {esc(a)} and {esc(b)} rated, "
         f"{esc(b)}'s mean score minus {esc(a)}'s is {_ci(diff, paren=True)} on average, and "
         f"{_ci(absdiff, paren=True)} in absolute value")
    n = against_null(row, "mean_abs_difference")
    if n and n["not_defined"]:
        if no_null is None:
            s += f". No permutation null: {n['not_defined']}"
        else:
            no_null.append(n["not_defined"])
    elif n and n["null"] is not None:
        s += f", against {_num(n['null'])} expected if the pools were interchangeable"
        if n["excess"] is not None:
            s += f" (excess {_ci({'value': n['excess'], 'ci95': n['excess_ci95']})})"
        if n["p"] is not None:
            s += (". Permutation test of interchangeable pools (annotators shuffled between "
                  f"them): {_p(n)}")
    return s + "."


def within_sentences(results: dict, esc=str) -> list[str]:
    """One sentence per pool: how often its annotators disagree on an item, and whether they
    are interchangeable, read from the within-item permutation test (:func:`_effect`)."""
    out, undefined, undefined_raw = [], [], []
    for w in results.get("within_pool") or []:
        if w.get("disagreement_rate") is None and w.get("within_item_sd") is not None:
            sd = {"value": w["within_item_sd"], "ci95": w.get("within_item_sd_ci95")}
            out.append(f"{esc(w['pool'])}: scores of one item differ between its annotators "
                       f"with a standard deviation of {_ci(sd, paren=True)}; {_effect(w)}.")
            continue
        if w.get("disagreement_rate") is None:
            undefined.append(esc(w["pool"]))
            undefined_raw.append(w["pool"])
            continue
        rate = {"value": w.get("disagreement_rate"), "ci95": w.get("ci95")}
        out.append(f"{esc(w['pool'])}: {_ci(rate, _pct, paren=True)} of items have at least "
                   f"one disagreeing judgment; {_effect(w)}.")
    if undefined:
        out.append(f"Not measurable within {_and(undefined)} "
                   f"({_why_undefined(undefined_raw, results)}).")
    return out


def _effect(w: dict) -> str:
    """Whether the pool's annotators are interchangeable, by the within-item permutation test,
    with the classical tests and the effect size beside it."""
    t = within_test(w)
    if t["p"] is None:
        return "the annotator effect is not testable here (no item with two of its annotators)"
    verdict = ("its annotators are not interchangeable" if t["p"] < EFFECT_P else
               "no evidence that its annotators differ")
    text = f"{verdict} ({t['name'] or 'annotator effect'} {_p(t)}"
    refs = [f"{r['name']} {p_is(r['p'])}" for r in t["reference"] if r["p"] is not None]
    if t["pooled"] and t["pooled"]["p"] is not None:
        refs.append(f"{t['pooled']['name']} {p_is(t['pooled']['p'])}, which ignores that the "
                    "annotators label the same items")
    if refs:
        text += "; for reference " + ", ".join(refs)
    meaning = EFFECT_MEANINGS.get(t["effect_name"])
    return (text + f"; {t['effect_name']} {_num(t['effect'])}"
            + (f", {meaning}" if meaning and t["effect"] is not None else "") + ")")


def stability_sentences(results: dict, esc=str) -> list[str]:
    st = results.get("stability") or {}
    boards = results.get("leaderboards") or {}
    out = []
    for pool, rows in boards.items():
        top = sorted(rows, key=lambda r: r.get("rank") or math.inf)[:3]
        if top:
            scores = [f"{esc(r['model'])} "
                      f"{_ci({'value': r.get('score'), 'ci95': r.get('ci95')}, paren=True)}"
                      for r in top]
            what = ("win rate, a tie counting half" if top[0].get("win_rate") is not None
                    else "mean score, higher is better")
            board = _board(pool, results, esc)
            size = _n(len(rows), "model")
            board = (f"{board[:-1]}, {size})" if board.endswith(")") else f"{board} ({size})")
            out.append(f"{board[0].upper()}{board[1:]}, top three by {what}: "
                       + "; ".join(scores) + ".")
    for pp in st.get("pool_pairs") or []:
        moved = pp.get("n_displaced")
        out.append(f"Switching from {esc(pp['pool_a'])} to {esc(pp['pool_b'])}: "
                   + ("no model changes rank" if moved == 0 else
                      f"{_n(moved, 'model')} change{'s' if moved == 1 else ''} rank")
                   + f" (Kendall τ = {_num(pp.get('kendall_tau'))}); the models' scores move "
                   f"by {_num(pp.get('score_shift_sd'), 4)} (standard deviation of the change).")
    disp = displacement(st)
    if disp:
        has_se = any(se is not None for _, _, se in disp)
        out.append("Probability that resampling the items changes the order of the leaderboard"
                   + (" (± Monte-Carlo s.e.)" if has_se else "") + ": " + "; ".join(
                       f"{_pool_label(pool, results, esc)} {_num(p)}"
                       + (f" ± {_num(se)}" if se is not None else "") for pool, p, se in disp)
                   + ".")
    closest = _closest_by_pool(st)
    if closest:
        parts = []
        for pool, rows in closest.items():
            pairs = [f"{esc(r.get('model_hi'))} and {esc(r.get('model_lo'))} (score gap "
                     f"{_num(r.get('gap'), 4)}) {_swap(r)}" for r in rows]
            parts.append(f"{_in_board(pool, results, esc)}, " + " and ".join(pairs))
        n = sum(map(len, closest.values()))
        out.append(("The pair" if n == 1 else f"The {n} pairs") + " of neighbouring models "
                   "likeliest to swap places: " + "; ".join(parts) + ".")
    sim = [simulation_row(r) for r in st.get("simulation") or []]
    if sim:
        sd = (st.get("simulation_model") or {})
        sd_text = ""
        if finite(sd.get("perturbation_sd")):
            value = _ci({"value": sd["perturbation_sd"], "ci95": sd.get("perturbation_sd_ci95")},
                        lambda x: _num(x, 4))
            sd_text = (" when every model's score moves as much as scores move between pools here"
                       if sd.get("perturbation_used", "pool_switch") == "pool_switch" else
                       " when every model's score moves by its bootstrap standard deviation here")
            sd_text += f" (SD {value})"
        reading = "± Monte-Carlo s.e." + ("; in brackets the 95% interval over the SD's own "
                                          "uncertainty" if any(r["interval95"] for r in sim)
                                          else "")
        out.append("Simulated probability that at least one model is displaced" + sd_text
                   + f", by leaderboard size ({reading}): "
                   + "; ".join(f"{_num(r['n_models'])} models {_sim(r, short=True)}"
                               for r in sim) + ".")
    fl = st.get("flipped_items") or {}
    if fl.get("count") is not None:  # rating data: no winner to flip (``skipped`` says so)
        count = fl.get("count", 0)
        out.append(f"{_n(count, 'item')} {'has' if count == 1 else 'have'} opposite majority "
                   "winners in different pools.")
    return out


_WORDS = {2: "two", 3: "three"}


def _closest_by_pool(st: dict, *, at_least: float | None = None) -> dict:
    """The three pairs most likely to swap (at least ``at_least``), grouped by pool in the order
    of each pool's likeliest pair."""
    rows = sorted(st.get("closest_pairs") or [], key=swap_key)
    if at_least is not None:
        rows = [r for r in rows if (swap(r)["bootstrap"] or 0) >= at_least]
    out = {}
    for r in rows[:3]:
        out.setdefault(r.get("pool"), []).append(r)
    return out


def _swap(r: dict) -> str:
    """``swap in x% ± se of bootstrap resamples (closed form Φ(−gap/(√2·SD)): y%)``."""
    s = swap(r)
    text = f"swap in {_pct(s['bootstrap'])}"
    if s["mc_se"] is not None:
        text += f" ± {_pct(s['mc_se'])}"
    text += " of bootstrap resamples"
    if s["closed_form"] is not None:
        text += (f" (closed form Φ(−gap/(√2·SD)): {_pct(s['closed_form'])}"
                 + (f" at SD {_num(s['closed_form_sd'], 4)}" if s["closed_form_sd"] is not None
                    else "") + ")")
    return text


def _sim(r: dict, *, short: bool = False) -> str:
    """``p ± se (95% interval lo to hi over the SD's uncertainty)`` of one simulated size
    (``short``: ``p ± se [lo, hi]``, the reading said once for the list)."""
    text = _num(r["p"], 2)
    if r["mc_se"] is not None:
        text += f" ± {_num(r['mc_se'], 3)}"
    if r["interval95"] and short:
        text += f" [{_num(r['interval95'][0], 2)}, {_num(r['interval95'][1], 2)}]"
    elif r["interval95"]:
        text += (f" (95% interval {_num(r['interval95'][0], 2)} to "
                 f"{_num(r['interval95'][1], 2)} over the SD's uncertainty)")
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
                 f"{_ci({'value': a['agreement'], 'ci95': a['ci95']}, _pct, paren=True)} of "
                 f"{_num(a['n'])} comparisons")
            if a["ceiling"] is not None:
                s += (f"; two {esc(a['pool'])} annotators agree with each other on "
                      f"{_ci({'value': a['ceiling'], 'ci95': a['ceiling_ci95']}, _pct, paren=True)}"
                      " (the ceiling)")
            if a["majority"] is not None:
                s += (f"; with the {esc(a['pool'])} majority on "
                      f"{_ci({'value': a['majority'], 'ci95': a['majority_ci95']}, _pct, paren=True)}")
            out.append(s + ".")
        if entry.get("verdict"):
            out.append(f"Verdict: {esc(entry['verdict'])}.")
    return out


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
    overall = ((results.get("reliability") or {}).get("overall") or {}).get("krippendorff_alpha")
    for pool, stats in ((results.get("reliability") or {}).get("by_pool") or {}).items():
        entry = (stats or {}).get("krippendorff_alpha")
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
                       f"{_ci(entry)}): good enough for tentative conclusions only.")
    if len(low) == 1:
        out.append(f"Agreement within the {low[0][0]} pool is low (Krippendorff's α = "
                   f"{_ci(low[0][1])}; Krippendorff (2004) asks for {ALPHA_TENTATIVE} even for "
                   "tentative conclusions): its annotators agree little beyond what the label "
                   "frequencies alone would give, so one label from this pool is a weak guide to "
                   "the item.")
    elif low:
        out.append("Agreement is low within " + _and(
            [f"{p} (Krippendorff's α = {_ci(e)})" for p, e in low])
            + f"; Krippendorff (2004) asks for {ALPHA_TENTATIVE} even for tentative conclusions. "
            "Annotators of the same pool agree little beyond what the label frequencies alone "
            "would give, so one label from these pools is a weak guide to the item.")
    if undefined:
        out.append(f"Agreement within {_and(undefined)} cannot be measured "
                   f"({_why_undefined(undefined_raw, results)}), so the reliability of "
                   f"{'that pool' if len(undefined) == 1 else 'those pools'} is unknown"
                   + (f"; across every human annotator together, Krippendorff's α = "
                      f"{_ci(overall, paren=True)}" if (overall or {}).get("value") is not None
                      else "") + ".")
    for (a, b), rows in _by_pair(results.get("pool_disagreement")).items():
        s = _pool_limitation(rows, a, b, esc)
        if s:
            out.append(s)
    effects = [(esc(w["pool"]), t) for w in results.get("within_pool") or []
               if (t := within_test(w))["p"] is not None and t["p"] < EFFECT_P]
    if len(effects) == 1:
        (p, t), = effects
        name = t["name"] or "annotator effect"
        out.append(f"Annotators within {p} are not interchangeable ({name} {_p(t)}): some of "
                   "them label systematically differently from the "
                   "others, so an item's label depends on who labelled it.")
    elif effects:
        out.append("Annotators within " + _and(
            [f"{p} ({t['name'] or 'annotator effect'} {_p(t)})" for p, t in effects])
            + " are not interchangeable: some annotators label systematically differently "
            "from the others in their pool, so an item's label depends on who labelled it.")
    jpi = ds.get("judgments_per_item") or {}
    if jpi.get("min") is not None and jpi["min"] < FEW_JUDGMENTS:
        out.append(f"Some items have only {_n(jpi['min'], 'judgment')}, so their majority label can "
                   "turn on a single annotator.")
    st = results.get("stability") or {}
    moved = [pp for pp in st.get("pool_pairs") or [] if (pp.get("n_displaced") or 0) > 0]
    if moved:
        out.append("The leaderboard depends on who judges: " + "; ".join(
            (f"switching from {esc(pp['pool_a'])} to {esc(pp['pool_b'])} changes the rank of "
             if i == 0 else f"from {esc(pp['pool_a'])} to {esc(pp['pool_b'])}, of ")
            + f"{_n(pp['n_displaced'], 'model')} (Kendall τ = {_num(pp.get('kendall_tau'))})"
            for i, pp in enumerate(moved)) + ".")
    for pool, rows in _closest_by_pool(st, at_least=NOTABLE_SWAP).items():
        where = _in_board(pool, results, esc)
        if len(rows) == 1:
            r = rows[0]
            out.append(f"{where[0].upper()}{where[1:]}, {esc(r['model_hi'])} and "
                       f"{esc(r['model_lo'])} are within resampling noise of each other: their "
                       f"order would {_swap(r)}.")
        else:
            out.append(f"{where[0].upper()}{where[1:]}, {_WORDS.get(len(rows), len(rows))} "
                       "neighbouring pairs are within resampling noise: "
                       + "; ".join(f"{esc(r['model_hi'])} and {esc(r['model_lo'])} would "
                                   f"{_swap(r)}" for r in rows) + ".")
    sim = [r for r in map(simulation_row, st.get("simulation") or []) if (r["p"] or 0) >= 0.5]
    if sim:
        r = min(sim, key=lambda r: r["n_models"])
        out.append(f"At the measured pool effect, a leaderboard of {r['n_models']} models would "
                   f"have at least one model displaced with probability {_sim(r)}.")
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
                       + (f" ({_pct(row['agreement'])} of comparisons)" if row else "")
                       + (f"; every paired interval of the difference excludes 0 "
                          f"({100 * level:g}% simultaneous)" if level is not None else "")
                       + f"; judging with it inherits {esc(tracked)}'s view.")
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


def _why_undefined(pools: list, results: dict) -> str:
    """Why agreement is not measurable in ``pools``: one annotator each when the results say so,
    else the two possible reasons."""
    info = (results.get("dataset") or {}).get("pools") or {}
    if pools and all((info.get(p) or {}).get("n_annotators") == 1 for p in pools):
        return "one annotator" + (" each" if len(pools) > 1 else "")
    return "a single annotator, or no item judged twice"


def _pool_limitation(rows: list, a: str, b: str, esc=str) -> str | None:
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
         f"their {first.get('granularity', 'label')}s differ on {_pct(n['observed'])} of items "
         f"against {_pct(n['null'])} expected if the pools were interchangeable (permutation "
         f"{_p(n)})")
    if rev is not None and rev["observed"]:
        s += (f", and they name opposite winners on {_pct(rev['observed'])}"
              + (f" against {_pct(rev['null'])} expected" if rev["null"] is not None else ""))
    return s + ("; a model trained or evaluated on one pool's labels inherits that pool's "
                "view.")


def _by_pair(rows) -> dict:
    """Pool-disagreement rows grouped by pool pair, the full-label row first."""
    pairs = {}
    for r in rows or []:
        pairs.setdefault((r.get("pool_a"), r.get("pool_b")), []).append(r)
    return {k: sorted(v, key=lambda r: r.get("granularity") != "label") for k, v in pairs.items()}


def parse_creators(pairs) -> dict[str, str]:
    """``["POOL=KIND", ...]`` (the CLI's ``--creator``) as ``{pool: kind}``."""
    out = {}
    for text in pairs or ():
        pool, sep, kind = str(text).rpartition("=")
        if not sep or not pool:
            raise InputError(f"expected POOL=KIND, got {text!r}", key="creator")
        out[pool] = kind.strip()
    return out


def annotations_per_item(results: dict, esc=str) -> str:
    ds = results.get("dataset") or {}
    jpi = ds.get("judgments_per_item") or {}
    if jpi.get("min") is not None and jpi.get("min") == jpi.get("max"):
        per_item = f"{_n(jpi['min'], 'judgment')} per item"
    else:
        per_item = (f"{_num(jpi.get('min'))} to {_num(jpi.get('max'))} judgments per item "
                    f"(median {_num(jpi.get('median'), 1)})")
    s = (f"{per_item}; {_n(ds.get('n_annotations'), 'judgment')} of "
         f"{_n(ds.get('n_items'), 'item')} by {_n(ds.get('n_annotators'), 'annotator')}")
    pools = ds.get("pools") or {}
    if pools:
        s += (" in " + ("one pool" if len(pools) == 1 else f"{len(pools)} pools") + ": "
              + "; ".join(f"{esc(p)}, {_n(i.get('n_annotations'), 'judgment')} by "
                          f"{_n(i.get('n_annotators'), 'annotator')}" for p, i in pools.items()))
    return s + "."


def _nan_note(columns: list, metrics: list, pools: dict, esc=str) -> str:
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
                if METRIC_NAMES.get(m, m) not in by_reason[e["not_defined"]]:
                    by_reason[e["not_defined"]].append(METRIC_NAMES.get(m, m))
            elif (pools.get(c) or {}).get("n_annotators") == 1:
                single += [c] if c not in single else []
            else:
                unjudged += [c] if c not in unjudged else []
    notes = [f"{_and(names)} {'is' if len(names) == 1 else 'are'} "
             f"{esc(reason.split('; use ', 1)[0])}"
             for reason, names in by_reason.items()]
    if single:
        notes.append(f"{_and([esc(c) for c in single])} "
                     + ("has one annotator" if len(single) == 1 else "have one annotator each")
                     + ", so there is no agreement to measure")
    if unjudged:
        notes.append(f"{_and([esc(c) for c in unjudged])} "
                     f"{'has' if len(unjudged) == 1 else 'have'} no item judged twice")
    return ("NaN marks a coefficient not defined here: " + "; ".join(notes) + ".") if notes else ""


def _and(names: list) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    names = [str(n) for n in names]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


# -- the card ---------------------------------------------------------------------------------------
def _environment():
    from jinja2 import Environment, PackageLoader, StrictUndefined
    from markupsafe import Markup

    def finalize(value):
        return value if isinstance(value, Markup) else md_escape(value)

    return Environment(loader=PackageLoader("audit", "templates"), autoescape=False,
                       finalize=finalize, undefined=StrictUndefined, trim_blocks=True,
                       lstrip_blocks=True, keep_trailing_newline=True)


def annotations_block(results: dict, *, creators: dict | None = None,
                      default_creator: str = DEFAULT_CREATOR) -> str:
    """The generated Markdown, markers included."""
    from markupsafe import Markup

    safe = lambda texts: [Markup(t) for t in texts]  # noqa: E731  (already escaped)
    ds = results.get("dataset") or {}
    meta = results.get("meta") or {}
    kinds = pool_creators(results, creators=creators, default_creator=default_creator)
    pools = [{"name": p, "judge": bool(i.get("judge")), "creator": kinds[p],
              **{k: Markup(_num(i.get(k))) for k in ("n_annotators", "n_annotations", "n_items")}}
             for p, i in (ds.get("pools") or {}).items()]
    rel = results.get("reliability") or {}
    columns = ([("all humans", rel["overall"])] if rel.get("overall") else []) + \
        list((rel.get("by_pool") or {}).items())
    metrics = [m for m in TABLE_METRICS if any(m in (s or {}) for _, s in columns)]
    reliability = {"columns": [c for c, _ in columns],
                   "rows": [{"metric": METRIC_NAMES.get(m, m),
                             "cells": [Markup(_ci((s or {}).get(m), cell=True)) for _, s in columns]}
                            for m in metrics]} if metrics else None
    if reliability:
        reliability["note"] = Markup(_nan_note(columns, metrics, ds.get("pools") or {}, md_escape))
    boot = meta.get("bootstrap") or {}
    method = (f"{boot.get('method', 'bootstrap')}, {meta.get('n_bootstrap')} resamples, seed "
              f"{meta.get('seed')}")
    return _environment().get_template("dataset_card.md.j2").render(
        start=Markup(START), end=Markup(END), version=Markup(html_comment(meta.get("version", ""))),
        pools=pools, judgments_per_item=Markup(annotations_per_item(results, md_escape)),
        reliability=reliability,
        disagreement=safe(disagreement_sentences(results, md_escape)),
        within=safe(within_sentences(results, md_escape)),
        stability=safe(stability_sentences(results, md_escape)),
        judges=safe(judge_sentences(results, md_escape)),
        limitations=Markup(" ".join(limitations(results, md_escape))),
        method=method).strip() + "\n"


_SKELETON = """---
{{ card_data }}
---

# Dataset Card for {{ title }}

<!-- Hand-written sections belong outside the annotation-audit markers below: the block between
them is regenerated by `annotation-audit card` and `annotation-audit run`. -->

{{ block }}"""


def render_card(results: dict, *, existing: str | None = None, creators: dict | None = None,
                default_creator: str = DEFAULT_CREATOR, path=None) -> str:
    """The dataset card as text; with ``existing``, that card updated in place.

    Parameters
    ----------
    existing
        The text of a card to update: the block between :data:`START` and :data:`END` is
        replaced (or appended when it has no markers); the rest, and its YAML, are kept.
    creators, default_creator
        ``annotations_creators`` overrides (see :func:`pool_creators`).
    path
        Where ``existing`` was read from, for error messages.

    Raises
    ------
    InputError
        ``existing`` has a start marker without an end marker, or YAML that is not a mapping.
    """
    from jinja2 import Template

    data = card_data(results, creators=creators, default_creator=default_creator)
    block = annotations_block(results, creators=creators, default_creator=default_creator)
    if existing is None:
        name = (results.get("dataset") or {}).get("name") or "this dataset"
        return Template(_SKELETON).render(card_data=front_matter(data.to_dict()),
                                          title=md_escape(name), block=block)
    from .card_meta import yaml_fields

    explicit = yaml_fields((results.get("dataset") or {}).get("card"))
    return _update(existing, data.to_dict(), block, path=path, explicit=explicit)


def _update(existing: str, computed: dict, block: str, *, path=None,
            explicit: dict | None = None) -> str:
    """``existing`` with the block replaced and the YAML completed: a key the card already has
    is kept as written, except those the spec or a flag gave this run (``explicit``), which the
    user asked for now and so replace the card's value (the YAML is then re-written)."""
    import yaml
    from huggingface_hub.repocard import REGEX_YAML_BLOCK

    match = REGEX_YAML_BLOCK.search(existing)
    if match:
        yaml_text, body = match.group(2), existing[match.end():]
        try:
            user = yaml.safe_load(yaml_text)
        except yaml.YAMLError as err:
            raise InputError(f"the card's YAML metadata does not parse: {err}", path=path) from None
        user = {} if user is None else user
        if not isinstance(user, dict):
            raise InputError("the card's YAML metadata is not a mapping", path=path)
    else:
        yaml_text, body, user = "", existing, {}
    replace = {k: v for k, v in (explicit or {}).items() if k in user and user[k] != v}
    if replace:
        yaml_text = front_matter({**user, **replace})
        user = {**user, **replace}
    added = {k: v for k, v in computed.items() if k not in user}
    if added:
        extra = front_matter(added)
        yaml_text = f"{yaml_text.rstrip()}\n{extra}" if yaml_text.strip() else extra
    start = body.find(START)
    if start >= 0:
        end = body.find(END, start)
        if end < 0:
            raise InputError(f"the card has {START} but no {END} after it", path=path)
        body = body[:start] + block.rstrip("\n") + body[end + len(END):]
    else:
        body = body.rstrip("\n") + ("\n\n" if body.strip() else "\n") + block
    return f"---\n{yaml_text}\n---\n{body if body.startswith(chr(10)) else chr(10) + body}"


def check_card(text: str) -> list[str]:
    """Problems that would stop the Hub from accepting the card; empty when it is valid.

    Offline: the card must parse with :class:`huggingface_hub.DatasetCard` (YAML a mapping that
    :class:`~huggingface_hub.DatasetCardData` accepts), and its ``annotations_creators`` and
    ``size_categories`` must come from the Hub's vocabularies. Also checks the markers.
    """
    from huggingface_hub import DatasetCard

    try:
        card = DatasetCard(text)
    except Exception as err:  # huggingface_hub raises ValueError / yaml errors here
        return [f"metadata does not parse: {err}"]
    meta = card.data.to_dict()
    problems = []
    for key, allowed in (("annotations_creators", CREATOR_KINDS),
                         ("size_categories", SIZE_VALUES)):
        values = meta.get(key)
        values = [values] if isinstance(values, str) else values or []
        bad = [v for v in values if v not in allowed]
        if bad:
            problems.append(f"{key}: {join_names(map(str, bad))} not one of "
                            f"{join_names(allowed)}")
    body = card.text  # the markers belong to the body (a YAML value may quote them)
    if body.count(START) != 1 or body.count(END) != 1 or body.find(START) > body.find(END):
        problems.append(f"expected one {START} ... {END} block")
    return problems


def write_card(results: dict, path: str | Path, *, creators: dict | None = None,
               default_creator: str = DEFAULT_CREATOR) -> Path:
    """Write the card to ``path``, updating the card already there in place; return the path.

    Warns (:class:`audit.errors.AuditWarning`) when the written card has metadata the Hub would
    reject (a hand-written tag outside the vocabularies).
    """
    path = Path(path)
    existing = path.read_text(encoding="utf-8") if path.exists() else None
    text = render_card(results, existing=existing, creators=creators,
                       default_creator=default_creator, path=path)
    for problem in check_card(text):
        warnings.warn(f"{path}: {problem}", AuditWarning, stacklevel=2)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# -- Croissant RAI ----------------------------------------------------------------------------------
CROISSANT_CONTEXT = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "sc": "https://schema.org/",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "dct": "http://purl.org/dc/terms/",
    "conformsTo": "dct:conformsTo",
}


def croissant_rai(results: dict) -> dict:
    """The Croissant RAI annotation fields as a JSON-LD ``sc:Dataset`` node.

    ``rai:annotationsPerItem`` (judgments per item and per pool), ``rai:dataAnnotationAnalysis``
    (reliability, pool disagreement, within-pool variability, leaderboard stability),
    ``rai:dataLimitations``, ``rai:machineAnnotationTools`` (judge pools) and, where the results
    carry it (``dataset.annotator_demographics``), ``rai:annotatorDemographics``.
    Strings are plain text (JSON escapes them).
    """
    ds = results.get("dataset") or {}
    meta = results.get("meta") or {}
    judges = [p for p, i in (ds.get("pools") or {}).items() if i.get("judge")]
    analysis = ([f"Reliability per pool: {s}" for s in reliability_sentences(results)]
                + disagreement_sentences(results)
                + [f"Within-pool variability, {s}" for s in within_sentences(results)]
                + stability_sentences(results)
                + judge_sentences(results))
    node = {
        "@context": CROISSANT_CONTEXT,
        "@type": "sc:Dataset",
        "name": ds.get("name"),
        "conformsTo": ["http://mlcommons.org/croissant/1.0",
                       "http://mlcommons.org/croissant/RAI/1.0"],
        "rai:annotationsPerItem": annotations_per_item(results),
        "rai:dataAnnotationAnalysis": analysis,
        "rai:dataLimitations": limitations(results),
    }
    if judges:
        node["rai:machineAnnotationTools"] = judges
    demographics = ds.get("annotator_demographics")
    if demographics:
        node["rai:annotatorDemographics"] = (demographics if isinstance(demographics, list)
                                             else [json.dumps(demographics, ensure_ascii=False,
                                                              sort_keys=True)])
    if meta.get("source"):
        node["isBasedOn"] = meta["source"]
    return node


def write_croissant_rai(results: dict, path: str | Path) -> Path:
    from ..results import dumps

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(croissant_rai(results)), encoding="utf-8")
    return path
