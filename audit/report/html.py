"""The HTML audit report: one self-contained file, a pure function of the result dict.

:func:`render_html` turns ``results`` into a view (plain dicts and lists, each section either
filled or carrying a "not applicable" reason) and renders ``audit/templates/report.html.j2`` with
Jinja2 autoescaping on, so every dataset-supplied string (item, annotator, pool and model names,
item texts) is escaped. Charts are inline SVG from :mod:`audit.report.charts`, sanitised there.
The page loads nothing: no scripts, no fonts, no images from elsewhere, and a Content-Security-
Policy that forbids them. Its size depends on the aggregates (pools, models, the label values of
a scale of categories; a continuous scale is shown by its range) and on ``max_items`` listed
items, never on the number of judgments.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from ..format import (number, p_bound, p_is, p_value, percent, points_with_interval,
                      probability, standard_error, with_interval)
from ..metrics import display_name, keys
from .prose import ALPHA, interval_note, join_and, nan_note, why_undefined
from .read import (STAT_NAMES, against_null, at_floor, displacement, has_null, judge_method,
                   judge_rows, simulation_row, swap, swap_key, within_test)

#: Items whose winner flips that are listed in the report.
MAX_ITEMS = 50
#: Characters of item text shown per listed item.
EXCERPT = 200
#: Most pool-vs-pool heatmaps drawn.
MAX_HEATMAPS = 12
#: Most models named in the overview.
MAX_MODEL_NAMES = 60

#: Most closest-pair rows listed (the highest swap probabilities first).
MAX_PAIRS = 20

#: Rows of the reliability table: the summary coefficients of the registry, then the others
#: (:mod:`audit.metrics`), each in the registry's order.
METRICS = keys(summary=True) + keys(summary=False)

#: Section ids, in page order when a suite ran, with their headings (without one the "not
#: applicable" expectations box moves down: :func:`page_sections`, and what to do next follows
#: the findings). The browser tests look each one up.
SECTIONS = (
    ("findings", "Findings"),
    ("expectations", "Schema validation and expectations"),
    ("next", "What to do next"),
    ("overview", "Dataset"),
    ("reliability", "Reliability per pool"),
    ("pool-disagreement", "Pool disagreement"),
    ("leaderboards", "Leaderboards per pool"),
    ("closest-pairs", "Closest pairs"),
    ("displacement", "Bootstrap displacement"),
    ("simulation", "Displacement probability by leaderboard size"),
    ("judge-alignment", "Judge alignment"),
    ("flipped-items", "Items whose winner flips"),
    ("baseline", "What changed since the baseline"),
    ("method", "Method, seed and versions"),
)

#: Most relabelled judgments listed in the baseline section (every one is in results.json).
MAX_CHANGES = 50


# -- formatting ----------------------------------------------------------------------------------
def cell(v) -> str:
    """Any JSON value as a short cell string (``{value, ci95}`` entries as ``value [lo, hi]``)."""
    if isinstance(v, dict) and "value" in v:
        return with_interval(v.get("value"), v.get("ci95"))
    if isinstance(v, (dict, list)):
        text = json.dumps(v, ensure_ascii=False, default=str)
        return text if len(text) <= 160 else text[:159] + "…"
    return number(v)


def excerpt(text, limit: int = EXCERPT) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- the view ---------------------------------------------------------------------------------------
def build_view(results: dict, *, max_items: int = MAX_ITEMS, charts: bool = True,
               advice_csv: bool = False) -> dict:
    """The template's input: every section as a dict with ``na`` (a reason) when it is empty.
    ``advice_csv``: ``advice.csv`` is written beside the report (the "What to do next" section
    links it)."""
    from markupsafe import Markup

    from . import charts as ch

    colours = ch.dataset_colours(results.get("dataset"))

    def chart(draw, *args, **kwargs):
        """A chart's sanitised SVG, marked safe for the template; None when not drawn. Every
        chart that draws pools takes the page's one pool-colour map."""
        if draw in (ch.reliability_chart, ch.leaderboard_chart, ch.swap_chart,
                    ch.displacement_histogram):
            kwargs["colours"] = colours
        svg = draw(*args, **kwargs) if charts else None
        return Markup(svg) if svg else None

    from .findings import findings
    from .nextsteps import section_view

    ds = results.get("dataset") or {}
    st = results.get("stability") or {}
    expectations = _expectations(results.get("expectations"))
    view = {
        "title": f"Annotation audit: {ds.get('name') or 'dataset'}",
        "sections": page_sections(expectations_first="na" not in expectations),
        "findings": [{"text": f.text, "section": f.section} for f in findings(results)],
        "next": section_view(results, advice_csv=advice_csv),
        "overview": _overview(ds, results.get("meta") or {}),
        "expectations": expectations,
        "expectations_first": "na" not in expectations,
        "reliability": _reliability(results.get("reliability"), ds.get("pools") or {},
                                    chart, ch),
        "pool_disagreement": _disagreement(results.get("pool_disagreement"),
                                           results.get("within_pool"), ds, chart, ch),
        "leaderboards": _leaderboards(results.get("leaderboards"), st, chart, ch),
        "closest_pairs": _closest(st.get("closest_pairs"), chart, ch,
                                  method=st.get("closest_pairs_method")),
        "displacement": _displacement(st, chart, ch),
        "simulation": _simulation(st, chart, ch),
        "judge_alignment": _judges(results.get("judge_alignment")),
        "flipped_items": _flipped(st.get("flipped_items"), max_items),
        "baseline": _baseline(results.get("baseline")),
        "method": _method(results.get("meta") or {},
                          {"intervals computed otherwise": ((results.get("meta") or {})
                                                            .get("bootstrap") or {})
                           .get("exceptions"),
                           "leaderboard method": results.get("leaderboard_method")}),
    }
    return view


def page_sections(*, expectations_first: bool) -> tuple:
    """:data:`SECTIONS` in page order: the findings first; the expectations right after them
    when a suite ran, else (a "not applicable" box) just before the method section."""
    if expectations_first:
        return SECTIONS
    rest = tuple(s for s in SECTIONS if s[0] != "expectations")
    exp = next(s for s in SECTIONS if s[0] == "expectations")
    return rest[:-1] + (exp,) + rest[-1:]


def shown_source(source) -> str | None:
    """The input as the header shows it: relative to the working directory when it lies under
    it, else as the user gave it; an absolute path outside it (a home or temporary folder) is
    cut to ``…/`` and its last two components, so the report does not publish the local layout.
    """
    import os

    if source is None:
        return None
    text = str(source)
    if not text:
        return text
    try:
        rel = os.path.relpath(text)
    except ValueError:  # another drive on Windows
        rel = None
    if rel is not None and os.path.isabs(text) and not rel.startswith(os.pardir):
        return rel
    if os.path.isabs(text):
        parts = [p for p in Path(text).parts if p not in (os.sep, "/", Path(text).anchor)]
        return "…/" + "/".join(parts[-2:])
    return text


def _overview(ds: dict, meta: dict) -> dict:
    pools = [{"name": p, **info, **({"n_annotators": "not given"}
                                    if info.get("n_annotators") is None else {})}
             for p, info in (ds.get("pools") or {}).items()]
    scale = ds.get("label_scale") or {}
    values = scale.get("values") or []
    names = scale.get("names") or []
    labels = [f"{v} ({n})" if names else str(v) for v, n in zip(values, names or values)]
    if "values" not in scale and scale.get("n_values") is not None:  # a continuous scale
        labels = [f"{number(scale['n_values'])} distinct values from {scale.get('min')} to "
                  f"{scale.get('max')}"]
    models = ds.get("models") or []
    return {
        "name": ds.get("name"), "source": shown_source(meta.get("source")),
        "facts": [("dataset", ds.get("name") or "-"), ("items", number(ds.get("n_items"))),
                  ("judgments", number(ds.get("n_annotations"))),
                  ("annotators", ds.get("annotators") or number(ds.get("n_annotators"))),
                  ("label kind", ds.get("label_kind") or "-"),
                  ("judgments per item", _jpi(ds.get("judgments_per_item"))),
                  ("pools", number(len(pools))),
                  ("models", number(len(models)) if models else "-")],
        "labels": labels[:40], "n_labels": len(labels),
        "pools": pools,
        "models": models[:MAX_MODEL_NAMES], "n_models": len(models),
    }


def _jpi(j) -> str:
    if not j:
        return "-"
    return f"{number(j.get('min'))} – {number(j.get('max'))} (median {number(j.get('median'), 1)})"


def _expectations(exp) -> dict:
    if not exp:
        return {"na": "no expectation suite was run", "rows": []}
    # a failed row says why, as the terminal does ("... is undefined (NaN) on this data, so the
    # claim cannot hold": an observed NaN beside a threshold said nothing of it)
    rows = [{"expectation": r.get("expectation"), "passed": bool(r.get("passed")),
             "observed": cell(r.get("observed")), "threshold": cell(r.get("threshold")),
             "line": r.get("line"), "message": None if r.get("passed") else r.get("message")}
            for r in exp.get("results") or []]
    return {"n_passed": exp.get("n_passed", sum(r["passed"] for r in rows)),
            "n_failed": exp.get("n_failed", sum(not r["passed"] for r in rows)), "rows": rows}


def _reliability(rel, pools, chart, ch) -> dict:
    if not rel or not (rel.get("overall") or rel.get("by_pool")):
        return {"na": "no reliability block in the results"}
    columns = ([("all humans", rel["overall"])] if rel.get("overall") else []) + \
        list((rel.get("by_pool") or {}).items())
    present = [m for m in METRICS if any(m in stats for _, stats in columns)]
    for _, stats in columns:
        present += [m for m, e in stats.items()
                    if m not in present and isinstance(e, dict) and "value" in e]
    rows = [{"metric": display_name(m),
             "cells": [with_interval((s.get(m) or {}).get("value"), (s.get(m) or {}).get("ci95"))
                       for _, s in columns]} for m in present]
    return {"columns": [c for c, _ in columns], "rows": rows,
            "interval_note": interval_note(columns, present),
            # a NaN cell says why, as the card's table does
            "nan_note": nan_note(columns, present, pools),
            "chart": chart(ch.reliability_chart, rel, metrics=present)}


def confusion_matrix(row: dict):
    """``(labels_a, labels_b, counts)`` from a pool-disagreement row's ``confusion``, or None.

    ``confusion`` is the producer's nested mapping ``{label_a: {label_b: count}}``
    (:func:`audit.measure.disagreement.pool_disagreement`): pool A's majority labels as rows,
    pool B's as columns (the union of the labels any row names), a missing cell 0.
    """
    conf = row.get("confusion")
    if not isinstance(conf, dict) or not conf:
        return None
    la = list(conf)
    lb = []
    for inner in conf.values():
        lb += [k for k in (inner or {}) if k not in lb]
    return la, lb, [[(conf[a] or {}).get(b, 0) for b in lb] for a in la]


def _disagreement(rows, within, ds, chart, ch) -> dict:
    """Pool-disagreement rows (one per pool pair, granularity and statistic: observed with its
    CI, the permutation null's mean, the excess over it and the permutation p) and the
    within-pool tests."""
    out = {"rows": [], "heatmaps": [], "within": []}
    # a continuous scale has no unanimity: its rows carry the pools' mean score difference
    out["continuous"] = any(r.get("majority_differs_rate") is None
                            and r.get("mean_difference") is not None for r in rows or [])
    for i, r in enumerate(rows or []):
        cis = r.get("ci95") or {}
        pair = {"pool_a": r.get("pool_a"), "pool_b": r.get("pool_b"),
                "granularity": r.get("granularity")}
        if out["continuous"]:
            pair["n"] = number(r.get("n_items_shared"))
            out["rows"].append({**pair, "stat": "mean difference (B − A)",
                                "observed": with_interval(r.get("mean_difference"),
                                                      cis.get("mean_difference")),
                                **_null_cells(r, None)})
            out["rows"].append({**pair, "stat": "mean |difference|",
                                "observed": with_interval(r.get("mean_abs_difference"),
                                                      cis.get("mean_abs_difference")),
                                **_null_cells(r, "mean_abs_difference", rate=False)})
            continue
        pair["n"] = number(r.get("n_items_both_unanimous"))
        for stat in ("majority_differs_rate", "winner_reversed_rate"):
            if stat == "winner_reversed_rate" and r.get(stat) is None:
                continue
            out["rows"].append({**pair, "stat": STAT_NAMES[stat],
                                "observed": _rate(r.get(stat), cis.get(stat)),
                                **_null_cells(r, stat)})
        conf = confusion_matrix(r)
        # a pair with no item unanimous in both pools has nothing to draw (all cells 0)
        if conf and any(map(any, conf[2])) and len(out["heatmaps"]) < MAX_HEATMAPS:
            svg = chart(ch.confusion_heatmap, *conf, pool_a=str(r.get("pool_a")),
                        pool_b=str(r.get("pool_b")), name=f"confusion-{i}")
            if svg:
                out["heatmaps"].append({"pool_a": r.get("pool_a"), "pool_b": r.get("pool_b"),
                                        "granularity": r.get("granularity"), "svg": svg})
    out["no_test"] = sorted({r.pop("no_test") for r in out["rows"] if "no_test" in r})
    out["none_unanimous"] = (not out["continuous"] and any(
        r.get("majority_differs_rate") is None and not r.get("n_items_both_unanimous")
        for r in rows or []))
    out["null_method"] = next((r["null"].get("method") for r in rows or []
                               if has_null(r) and r["null"].get("method")), None)
    out["interval_methods"] = [(name, method) for name, method in (
        ("rates", next((r.get("ci_method") for r in rows or [] if r.get("ci_method")), None)),
        ("excess", next(((r.get("excess") or {}).get("ci_method") for r in rows or []
                         if (r.get("excess") or {}).get("ci_method")), None)),
        ("within-pool disagreement", next((w.get("ci_method") for w in within or []
                                           if w.get("ci_method")), None))) if method]
    out["within_sd"] = any(w.get("disagreement_rate") is None
                           and w.get("within_item_sd") is not None for w in within or [])
    for w in within or []:
        rate = (with_interval(w.get("within_item_sd"), w.get("within_item_sd_ci95"))
                if out["within_sd"] else _rate(w.get("disagreement_rate"), w.get("ci95")))
        t = within_test(w)
        out["within"].append({
            "pool": w.get("pool"), "rate": rate, "test": t["name"] or "-",
            "p": _p(t["p"], t["mc_se"], t["n_permutations"]),
            "reference": "; ".join(f"{x['name']} {number(x['statistic'], 2)}"
                                   + (f" (df {number(x['dof'])})" if x["dof"] is not None else "")
                                   + f", {p_is(x['p'])}" for x in t["reference"]
                                   if x["p"] is not None) or "-",
            "pooled": (f"{t['pooled']['name']} {number(t['pooled']['statistic'], 2)} "
                       f"(df {_dof(t['pooled']['dof'])}), {p_is(t['pooled']['p'])}")
            if t["pooled"] and t["pooled"]["p"] is not None else "-",
            "effect": number(t["effect"]), "effect_name": t["effect_name"]})
    undefined = [w.get("pool") for w in within or []
                 if w.get("disagreement_rate") is None and w.get("within_item_sd") is None]
    out["within_nan_note"] = (
        f"NaN: not measurable within {join_and([str(p) for p in undefined])} "
        f"({why_undefined(undefined, {'dataset': ds})})." if undefined else "")
    untested: dict[str, list[str]] = {}  # the test's own reason (vote counts: who voted)
    for w in within or []:
        if w.get("not_defined") and within_test(w)["p"] is None:
            untested.setdefault(str(w["not_defined"]), []).append(str(w.get("pool")))
    out["within_nan_note"] = " ".join(filter(None, [out["within_nan_note"], *(
        f"Annotator effect NaN within {join_and(pools)}: {why}." for why, pools in
        untested.items())]))
    out["within_method"] = next((within_test(w)["method"] for w in within or []
                                 if within_test(w)["method"]), None)
    if not out["rows"]:
        out["na"] = ("needs two pools whose annotators judged the same items"
                     if len(ds.get("pools") or {}) < 2 else "no pool pair to compare")
    return out


def _dof(dof) -> str:
    """Degrees of freedom: one number, or ``3, 1196`` for an F test."""
    return ", ".join(number(d) for d in dof) if isinstance(dof, list) else number(dof)


def _null_cells(row: dict, stat: str | None, *, rate: bool = True) -> dict:
    """``expected`` (the permutation null's mean), ``excess`` (observed − null, with its CI) and
    ``p`` cells of one statistic; ``-`` where the row has no null for it."""
    n = against_null(row, stat) if stat else None
    if n is None or (n["null"] is None and n["p"] is None):
        return {"expected": "-", "excess": "-", "p": "-"}
    if n["not_defined"]:
        return {"expected": "not defined", "excess": "-", "p": "no test",
                "no_test": n["not_defined"]}
    if rate:
        excess = _points(n["excess"], n["excess_ci95"])
        expected = percent(n["null"])
    else:
        excess = with_interval(n["excess"], n["excess_ci95"])
        expected = number(n["null"])
    return {"expected": expected, "excess": excess,
            "p": _p(n["p"], n["mc_se"], n["n_permutations"])}


def _points(value, interval) -> str:
    """A difference of two rates in percentage points with a typographic minus:
    ``+1.2 [−0.3, +2.8] points`` (:func:`audit.format.points_with_interval`)."""
    return points_with_interval(value, interval).replace("-", "−")


def _p(p, se, n_permutations) -> str:
    """A permutation p-value with its Monte-Carlo s.e. and the permutation count; the bound
    ``≤ 1 / (n + 1)`` when the p-value is the smallest the permutations resolve
    (:func:`audit.report.read.at_floor`)."""
    if p is None:
        return "NaN"
    if at_floor(p, n_permutations):
        return f"≤ {p_bound(n_permutations)} ({number(n_permutations)} perm.)"
    text = p_value(p)
    if se is not None:
        text += f" ± {number(se, 4)}"
    if n_permutations:
        text += f" ({number(n_permutations)} perm.)"
    return text


def _rate(value, interval) -> str:
    """A rate with its interval, each in percent: ``31.0% [27.0%, 35.0%]``."""
    return with_interval(value, interval, percent)


def _leaderboards(boards, st, chart, ch) -> dict:
    boards = {p: rows for p, rows in (boards or {}).items() if rows}
    if not boards:
        return {"na": "the dataset compares no models (no model_a / model_b or model column)"}
    pools = list(boards)
    from .charts import model_order

    order = model_order(boards)
    order += sorted({r["model"] for rows in boards.values() for r in rows} - set(order))
    by_pool = {p: {r["model"]: r for r in rows} for p, rows in boards.items()}
    table = [{"model": m, "cells": [
        (f"{with_interval(r.get('score'), r.get('ci95'))} (#{r.get('rank')})"
         if (r := by_pool[p].get(m)) else "-") for p in pools]} for m in order]
    pairs = [{"pool_a": pp.get("pool_a"), "pool_b": pp.get("pool_b"),
              "tau": number(pp.get("kendall_tau")), "displaced": number(pp.get("n_displaced")),
              "shift_sd": number(pp.get("score_shift_sd"), 4)} for pp in st.get("pool_pairs") or []]
    return {"pools": pools, "rows": table, "pairs": pairs,
            "chart": chart(ch.leaderboard_chart, boards), "slope": chart(ch.slope_chart, boards)}


def _closest(rows, chart, ch, *, method: str | None = None) -> dict:
    if not rows:
        return {"na": "no leaderboard, or fewer than two models in every pool"}
    top = sorted(rows, key=swap_key)[:MAX_PAIRS]
    out = []
    for r in top:
        s = swap(r)
        out.append({"pool": r.get("pool"), "hi": r.get("model_hi"), "lo": r.get("model_lo"),
                    "gap": number(r.get("gap"), 4),
                    "p": number(s["bootstrap"]) + (f" ± {standard_error(s['mc_se'])}"
                                                if s["mc_se"] is not None else ""),
                    "closed": (number(s["closed_form"]) +
                               (f" (SD {number(s['closed_form_sd'], 4)})"
                                if s["closed_form_sd"] is not None else ""))
                    if s["closed_form"] is not None else "-"})
    return {"rows": out, "n_more": len(rows) - len(top), "chart": chart(ch.swap_chart, top),
            "method": method}


def _displacement(st, chart, ch) -> dict:
    probs = displacement(st)
    hist = st.get("displacement_histogram") or {}
    if not probs and not hist:
        return {"na": "no leaderboard to resample"}
    return {"probs": [(p, probability(v, 3) + (f" ± {standard_error(se)}" if se is not None else ""))
                      for p, v, se in probs],
            "chart": chart(ch.displacement_histogram, hist)}


def _simulation(st, chart, ch) -> dict:
    rows = [simulation_row(r) for r in st.get("simulation") or []]
    if not rows:
        return {"na": "no leaderboard to simulate from"}
    model = st.get("simulation_model") or {}
    sd, sd_ci = model.get("perturbation_sd"), model.get("perturbation_sd_ci95")
    return {"rows": [{"n": number(r["n_models"]), "p": probability(r["p"], 3),
                      "se": standard_error(r["mc_se"], 4),
                      "interval": (f"{probability(r['interval95'][0], 3)} – "
                                   f"{probability(r['interval95'][1], 3)}"
                                   if r["interval95"] else "-")} for r in rows],
            "interval_method": next((r["interval_method"] for r in rows
                                     if r["interval_method"]), None),
            "sd": with_interval(sd, sd_ci, lambda x: number(x, 4)) if sd is not None else None,
            "sd_ci": bool(sd_ci and None not in sd_ci[:2]),
            "model": [(k, cell(v)) for k, v in model.items()],
            "chart": chart(ch.simulation_curve, st.get("simulation"))}


def _judges(rows) -> dict:
    """Per judge: the verdict line, a table of agreement with one annotator of each pool beside
    the pool's own ceiling and the majority agreement, and the paired differences."""
    rows = [r for r in rows or [] if isinstance(r, dict)]
    if not rows:
        return {"na": "no judge pool to compare with the human pools"}
    out = []
    for r in rows:
        pools = [{"pool": a["pool"], "agreement": with_interval(a["agreement"], a["ci95"]),
                  "n": number(a["n"]), "ceiling": with_interval(a["ceiling"], a["ceiling_ci95"]),
                  "ceiling_n": number(a["ceiling_n"]) if a["ceiling_n"] is not None else "-",
                  "majority": with_interval(a["majority"], a["majority_ci95"])
                  if a["majority"] is not None else "-"} for a in judge_rows(r)]
        diffs = [{"pool_a": d.get("pool_a"), "pool_b": d.get("pool_b"),
                  "difference": with_interval(d.get("difference"), d.get("ci95")),
                  "n": number(d.get("n")),
                  "tracks": d.get("tracks") or "-"}
                 for d in r.get("differences") or [] if isinstance(d, dict)]
        known = {"judge", "agreement", "differences", "verdict", "method"}
        facts = [(k, cell(v)) for k, v in r.items() if k not in known]
        out.append({"judge": r.get("judge"), "verdict": r.get("verdict"), "pools": pools,
                    "diffs": diffs, "facts": facts,
                    "method": [(k, str(v)) for k, v in judge_method(r).items()]})
    return {"judges": out}


def _flipped(fl, max_items: int) -> dict:
    if not fl:
        return {"na": "needs a pairwise dataset with at least two pools"}
    if fl.get("count") is None and fl.get("skipped"):
        return {"na": str(fl["skipped"])}
    items = fl.get("items") or []
    shown = []
    for it in items[:max_items]:
        winners = it.get("winners") or {}
        if isinstance(winners, dict):
            winners = [(p, cell(w)) for p, w in winners.items()]
        else:
            winners = [("", cell(winners))]
        shown.append({"item": it.get("item"), "text": excerpt(it["text"]) if it.get("text")
                      else "", "winners": winners})
    total = int(fl.get("n_flipped", fl.get("count", len(items))) or 0)
    return {"count": number(total), "items": shown, "n_shown": number(len(shown)),
            "n_more": max(total - len(shown), 0)}


def _baseline(bl) -> dict:
    """The baseline diff of ``check --baseline`` (results.json ``baseline``): what changed,
    relabelled judgments by label name, per pool and per annotator, and what moved in the
    leaderboards and reliability."""
    if not bl:
        return {"na": "no baseline: run check --baseline OLD --out DIR"}
    rel = bl.get("relabelled") or {}
    changes = [{"item": c.get("item"), "annotator": c.get("annotator"), "pool": c.get("pool"),
                "old": c.get("old_name", c.get("old_label")),
                "new": c.get("new_name", c.get("new_label"))}
               for c in (rel.get("changes") or [])[:MAX_CHANGES]]
    by_pool = [{"pool": p, "n": number(v.get("n_relabelled")), "of": number(v.get("n_shared")),
                "share": percent(v.get("share"))} for p, v in (rel.get("by_pool") or {}).items()]
    by_ann = [{"annotator": a.get("annotator"), "pool": a.get("pool"),
               "n": number(a.get("n_relabelled")), "of": number(a.get("n_shared")),
               "share": percent(a.get("share"))}
              for a in ((rel.get("by_annotator") or {}).get("annotators") or [])]
    transitions = [{"old": t.get("old"), "new": t.get("new"), "count": number(t.get("count"))}
                   for t in rel.get("transitions") or []]
    boards = []
    for pool, b in (bl.get("leaderboards") or {}).items():
        moved = [{"model": m, "old": v.get("old_rank"), "new": v.get("new_rank"),
                  "old_score": number(v.get("old_score")), "new_score": number(v.get("new_score"))}
                 for m, v in (b.get("models") or {}).items()]
        boards.append({"pool": pool, "tau": number(b.get("kendall_tau")),
                       "n_moved": sum(r["old"] != r["new"] for r in moved), "models": moved})
    alpha = ((bl.get("reliability") or {}).get("overall") or {}).get(ALPHA) or {}
    n_changes = int(rel.get("count") or 0)
    return {"source": bl.get("source"),
            "n_items": bl.get("n_items") or {}, "n_judgments": bl.get("n_judgments") or {},
            "added": number((bl.get("items_added") or {}).get("count")),
            "removed": number((bl.get("items_removed") or {}).get("count")),
            "relabelled_items": number((bl.get("items_relabelled") or {}).get("count")),
            "n_changes": number(n_changes), "changed_share": percent(bl.get("changed_label_share")),
            "changes": changes, "n_changes_shown": number(len(changes)),
            "changes_truncated": n_changes > len(changes),
            "by_pool": by_pool, "by_annotator": by_ann, "transitions": transitions,
            "boards": boards,
            "alpha": {"old": number(alpha.get("old")), "new": number(alpha.get("new")),
                      "change": number(alpha.get("change"))} if alpha else None}


def _method(meta: dict, extra: dict | None = None) -> dict:
    boot = meta.get("bootstrap") or {}
    facts = [("tool", f"{meta.get('tool', 'annotation-audit')} {meta.get('version', '')}"),
             ("seed", number(meta.get("seed"))),
             ("bootstrap resamples", number(meta.get("n_bootstrap"))),
             ("interval", f"{number(boot.get('level'), 2)} {boot.get('method', '')}".strip()
              if boot else "-"),
             ("source", shown_source(meta.get("source")) or "-")]
    skip = {"tool", "version", "seed", "n_bootstrap", "bootstrap", "source", "versions"}
    facts += [(k, cell(v)) for k, v in meta.items() if k not in skip]
    return {"facts": facts, "versions": list((meta.get("versions") or {}).items()),
            # a key without a value (a leaderboard method's metric when nothing is ranked)
            # is "-", not a number that is not one
            "details": [(k, [(kk, "-" if vv is None else cell(vv)) for kk, vv in v.items()])
                        for k, v in (extra or {}).items() if isinstance(v, dict) and v]}


# -- rendering --------------------------------------------------------------------------------------
def environment():
    """The Jinja2 environment: package templates, autoescaping on for every template, and every
    plain string's hidden characters (bidi and other controls) shown as escapes
    (:func:`audit.escape.html.finalize`)."""
    from jinja2 import Environment, PackageLoader, StrictUndefined

    from ..escape.html import finalize

    env = Environment(loader=PackageLoader("audit", "templates"), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                      keep_trailing_newline=True, finalize=finalize)
    env.filters.update(num=number, pct=percent)
    return env


def render_html(results: dict, *, max_items: int = MAX_ITEMS, advice_csv: bool = False) -> str:
    """The report as one HTML string.

    Parameters
    ----------
    results
        The audit's result dict (see :mod:`audit.results`); any analysis block may be missing.
    max_items
        How many items whose winner flips are listed (with ids and escaped excerpts).
    advice_csv
        ``advice.csv`` sits beside the report (``advise --out``): the advised items link to it.
    """
    return html_renderer(results, max_items=max_items)(advice_csv)


def html_renderer(results: dict, *, max_items: int = MAX_ITEMS) -> Callable[[bool], str]:
    """:func:`render_html` in two steps: the view built and the template compiled now (the
    work), the page rendered by the function returned, given ``advice_csv`` (whether
    ``advice.csv`` sits beside the report, known only once the files written beside the
    reports are: :func:`audit.report.write_reports`). ``advice_csv`` only decides whether the
    "What to do next" section links the file."""
    view = build_view(results, max_items=max_items, advice_csv=True)
    template = environment().get_template("report.html.j2")
    section = view["next"]  # with the link wherever there are advised items to link to

    def render(advice_csv: bool) -> str:
        if "csv" in section:
            view["next"] = {**section, "csv": bool(advice_csv and section["csv"])}
        return template.render(**view)

    return render


def write_html(results: dict, path: str | Path, *, max_items: int = MAX_ITEMS) -> Path:
    """Write :func:`render_html` to ``path`` (UTF-8); return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(results, max_items=max_items), encoding="utf-8")
    return path
