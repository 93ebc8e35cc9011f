"""What to do next, read out of the ``plan`` and ``advise`` blocks for every renderer.

The blocks are written by :func:`audit.planning.plan_block` (how many items a leaderboard of K
models needs to keep its order with probability ``stay``, or that no size can) and
:func:`audit.advice.advise_block` (which items to send back for annotation). Their sentences
are the producers' own (:func:`audit.planning.plan_sentences`,
:func:`audit.advice.advise_sentences`: plain text); this module adds what each channel shows
beside them, as plain strings a renderer escapes for its channel:

* the report's "What to do next" section (:func:`section_view`): the sentences, the plan table
  (K, planned items, judgments per item, P(stay) reachable and its interval) and the first
  :data:`MAX_ADVISED` advised items;
* the terminal summary's two lines (:func:`summary_lines`);
* the dataset card's limitations (:func:`card_sentences`): a planned size beyond the dataset's
  items, and the verdict that no size suffices.

Every function takes the JSON form of the result (:func:`audit.results.json_form`) and returns
nothing for a result without the blocks (``check``'s, or one written before they existed).
"""

from __future__ import annotations

from ..contract.columns import EVERY_HUMAN_POOL
from ..format import number, probability, setting, setting_percent

#: How an item advised to every human pool together (``all``) names whom to send it to.
ANY_POOL = "any human annotator"
#: Advised items listed in the report and the terminal (every one is in results.json and
#: advice.csv).
MAX_ADVISED = 10


def _sentences(name: str, block: dict | None) -> list[str]:
    """The producer's sentences of ``block`` (``plan`` or ``advise``)."""
    if not block:
        return []
    if name == "plan":
        from ..planning import plan_sentences

        return list(plan_sentences(block))
    from ..advice import advise_sentences

    return list(advise_sentences(block))


def plan_sentences(results: dict) -> list[str]:
    """The plan's sentences (plain text), or none without a ``plan`` block."""
    return _sentences("plan", results.get("plan"))


def advise_sentences(results: dict) -> list[str]:
    """The advice's sentences (plain text), or none without an ``advise`` block."""
    return _sentences("advise", results.get("advise"))


def _interval(pair, show=number) -> str:
    if not pair or all(v is None for v in pair):
        return "-"
    return f"{show(pair[0])} – {show(pair[1])}"


def _significant(x) -> str:
    """A small positive quantity to three significant digits (an expected reduction can be
    1e-4 on a stable board: fixed decimals would show 0.000)."""
    from ..format import finite

    return f"{float(x):.3g}" if finite(x) and x != 0 else number(x)


def _with_se(p, se) -> str:
    """A simulated probability (:func:`_probability`) ± its Monte-Carlo s.e. in as many
    decimals."""
    if p is None:
        return "-"
    text = _probability(p)
    decimals = len(text.rpartition(" ")[2].partition(".")[2])  # "> 0.999999": 6
    return text + (f" ± {number(se, decimals)}" if se is not None else "")


def _probability(p) -> str:
    """A ``P(stay)`` in three decimals, more where those would show ``1.000`` short of 1
    (:func:`audit.format.probability`)."""
    return probability(p, 3)


def stay(block: dict | None) -> float | None:
    """The plan's target probability that a leaderboard keeps its order."""
    return ((block or {}).get("settings") or {}).get("stay")


def planned(block: dict | None) -> list[dict]:
    """The plan block's entries for leaderboards, one per planned size (none when the data
    has no leaderboard to plan)."""
    board = (block or {}).get("leaderboard") or {}
    return [e for e in board.get("sizes") or [] if isinstance(e, dict)]


def plan_rows(block: dict | None) -> list[dict]:
    """The plan table, as display strings: per leaderboard size ``models``, one row per number
    of judgments per item (``per_item``, per pool) with the planned items (``planned``), the
    judgments they take (``judgments``), ``P(stay)`` at that size ± its Monte-Carlo s.e.
    (``p_stay``) and the planned items' interval over the pool effect's (``interval``); a size
    that no number of items lets stay put has one row saying so, with the ceiling ``P(stay)``
    reaches and its interval."""
    rows = []
    for e in planned(block):
        k = number(e.get("n_models"))
        sized = [r for r in e.get("rows") or [] if r.get("n_items") is not None]
        if e.get("verdict") != "planned" or not sized:
            rows.append({"models": k, "per_item": "any", "planned": "no size suffices",
                         "judgments": "-",
                         "p_stay": _with_se(e.get("ceiling"), e.get("ceiling_mc_se"))
                         + " (ceiling)",
                         "interval": "P(stay) " + _interval(e.get("ceiling_ci95"),
                                                            _probability)})
            continue
        for r in sized:
            lo, hi = (r.get("n_items_ci95") or [None, None])[:2]
            rows.append({"models": k, "per_item": number(r.get("m")),
                         "planned": number(r.get("n_items")),
                         "judgments": number(r.get("judgments")),
                         "p_stay": _with_se(r.get("p_stay"), r.get("p_stay_mc_se")),
                         "interval": (_interval([lo, hi]) if hi is not None else
                                      f"{number(lo)} – ∞")})
    return rows


def row_now(entry: dict, block: dict | None) -> dict | None:
    """A planned size's row at today's judgments per item (else the one taking the fewest
    judgments): the size a sentence quotes."""
    rows = [r for r in entry.get("rows") or [] if r.get("n_items") is not None]
    if entry.get("verdict") != "planned" or not rows:
        return None
    comp = ((block or {}).get("leaderboard") or {}).get("components") or {}
    m_now = round(comp.get("judgments_per_item_now") or 1)
    same = [r for r in rows if r.get("m") == m_now]
    return same[0] if same else min(rows, key=lambda r: r.get("judgments") or 0)


def advised(block: dict | None) -> list[dict]:
    """The advise block's items, best first."""
    return [it for it in (block or {}).get("items") or [] if isinstance(it, dict)]


def advice_rows(block: dict | None, limit: int = MAX_ADVISED) -> list[dict]:
    """The first ``limit`` advised items as display strings: ``rank``, ``item`` (the id as the
    data spells it), ``models`` (``A vs B`` on pairwise data, the model of a rating, else
    empty), ``pool`` (whom to send it to: :data:`ANY_POOL` for every human pool together),
    ``reasons`` and ``reduction`` (expected
    reduction)."""
    rows = []
    for it in advised(block)[:limit]:
        models = [m for m in (it.get("model_a"), it.get("model_b"), it.get("model"))
                  if m is not None]
        reasons = it.get("reasons") or []
        rows.append({"rank": number(it.get("rank")), "item": str(it.get("item")),
                     "models": " / ".join(map(str, models)),
                     "reasons": ", ".join(str(r).replace("_", " ") for r in reasons)
                     if isinstance(reasons, list) else str(reasons),
                     "pool": ANY_POOL if it.get("pool") == EVERY_HUMAN_POOL
                     else str(it.get("pool") or "-"),
                     "reduction": _significant(it.get("expected_reduction"))})
    return rows


def section_view(results: dict, *, advice_csv: bool = False) -> dict:
    """The report's "What to do next" section: ``sentences`` (plan then advice), ``plan``
    (:func:`plan_rows`), ``advice`` (:func:`advice_rows`), ``n_advised``, ``n_more`` (advised
    items not listed), ``csv`` (advice.csv sits beside the report: link it); ``na`` with a
    reason when the result holds neither block."""
    plan, advise = results.get("plan"), results.get("advise")
    if not plan and not advise:
        return {"na": "no plan or advice in the results (run, plan or advise writes them)"}
    rows = advice_rows(advise)
    n = len(advised(advise))
    return {"sentences": plan_sentences(results) + advise_sentences(results),
            "plan": plan_rows(plan), "stay": setting(stay(plan)),
            "labels": label_rows(plan), "stay_share": setting_percent(stay(plan)),
            "advice": rows, "n_advised": number(n), "n_more": max(n - len(rows), 0),
            "pairwise": any(r["models"] for r in rows),
            "target": (advise or {}).get("target"), "more": (advise or {}).get("more"),
            "csv": bool(advice_csv and n)}


def label_rows(block: dict | None) -> list[dict]:
    """Per human pool, as display strings: judgments per item today (``now``), how often an
    item's majority from that many fresh annotators is the pool's own (``agreement_now``), and
    the annotators per item planned for ``stay`` (``planned``)."""
    rows = []
    for p in ((block or {}).get("labels") or {}).get("pools") or []:
        if not isinstance(p, dict) or not p.get("rows"):
            continue
        planned_m = p.get("planned_m")
        rows.append({"pool": str(p.get("pool")), "now": number(p.get("judgments_per_item_now"), 0),
                     "agreement_now": _probability(p.get("agreement_now")),
                     "planned": number(planned_m) if planned_m is not None else
                     f"more than {number(p.get('m_max'))}"})
    return rows


def summary_lines(results: dict) -> list[str]:
    """Two lines for the terminal summary: the plan's first sentence (its labels sentence when
    the data has no leaderboard to plan and the plan has one) and the advice's, with its caveat
    (:data:`audit.advice.advise.CAVEAT`: in simulation no ranking of items steadied the board
    more than random ones) whenever the advice carries it."""
    plan = plan_sentences(results)
    board = ((results.get("plan") or {}).get("leaderboard") or {})
    if board.get("not_defined") and len(plan) > 1:
        plan = plan[1:]
    from ..advice.advise import CAVEAT

    advice = advise_sentences(results)
    if len(advice) > 1 and advice[1] in CAVEAT.values():
        advice = [f"{advice[0]} {advice[1]}"]  # a claim the benchmark did not bear out
    lines = [s[0] for s in (plan, advice) if s]
    return [f"next: {line}" for line in lines]


def card_sentences(results: dict, esc=str) -> list[str]:
    """The card's limitations from the plan: each planned leaderboard size that needs more
    items than the dataset holds (at today's judgments per item, :func:`row_now`), and each
    size that no number of items lets stay put (the pool effect's ceiling). The sentences hold
    numbers only (no dataset string), so ``esc``, the card's escaper, has nothing to escape."""
    block = results.get("plan") or {}
    n_items = (results.get("dataset") or {}).get("n_items")
    p = stay(block)
    out = []
    for e in planned(block):
        k = e.get("n_models")
        row = row_now(e, block)
        if row is None:
            ceiling = e.get("ceiling")
            out.append(f"No number of items lets a {number(k)}-model leaderboard keep its "
                       f"order with probability {setting(p)}: the pool effect measured "
                       "here does not shrink with more items"
                       + (f" and caps it at {probability(ceiling)}" if ceiling is not None
                          else "") + ".")
        elif n_items is not None and row["n_items"] > n_items:
            out.append(f"A {number(k)}-model leaderboard would need about "
                       f"{number(row['n_items'])} items ({number(row.get('m'))} "
                       f"{'judgment' if row.get('m') == 1 else 'judgments'} each, per "
                       f"pool) to keep its order with probability {setting(p)}; this "
                       f"dataset has {number(n_items)}.")
    return out
