"""Charts for the HTML report: inline SVG written directly, then sanitised.

Each function takes one block of the result dict and returns an SVG string, or ``None`` when the
block is absent or empty. A chart is drawn with :mod:`audit.report.svgdraw` (shapes and text
through :mod:`xml.etree`, never string concatenation) and :mod:`audit.report.svgaxes` (nice
ticks, axes, legends), so it costs milliseconds, imports no plotting library, and its size is set
by what it draws (pools, models, label values), not by the number of judgments. Dataset strings
(pool, model and label names) become escaped ``<text>`` or tooltip (``<title>``) content, and
:func:`audit.report.svg.sanitize_svg` re-parses the output and keeps only the drawing elements
the builder writes (no scripts, no event handlers, no links, no CSS).

Every chart is an image with an accessible name and description (``role="img"``,
``aria-labelledby``), and each estimate carries a tooltip with its numbers as the tables show
them. Tick labels sit exactly at their values, so every mark's value can be read back from the
drawing (the tests do).
"""

from __future__ import annotations

from ..contract.columns import EVERY_HUMAN_POOL
from ..format import finite, number, percent, probability, standard_error, with_interval
from ..metrics import METRICS as METRIC_LIST
from ..metrics import get as metric
from .svg import sanitize_svg
from .svgaxes import (INK, REFERENCE, Key, Linear, category_labels, legend, legend_height,
                      nice_domain, ticks_within, x_axis, y_axis)
from .svgdraw import Drawing, text_width

#: Longest label drawn on an axis; the tables carry the full string.
MAX_LABEL = 32
#: Longest name a tooltip shows: there a name is read whole (two model ids alike in their first
#: 32 characters are told apart by hovering).
MAX_TIP = 300
#: Most models drawn in one leaderboard panel (the best ones, by the first pool's rank).
MAX_MODELS = 40
#: Width of every chart in user units: the width the page shows it at (``.chart svg``).
WIDTH = 760

#: Coefficients the reliability chart leaves out: those not chance-corrected (percent
#: agreement), to which Krippendorff's (2004) reference lines at 0.667 and 0.8 do not apply.
NOT_CHARTED = tuple(m.key for m in METRIC_LIST if not m.chance_corrected)

#: Okabe & Ito (2008), "Color Universal Design": colours told apart under the common
#: colour-vision deficiencies; their black is left out (it is the axes' and the text's colour)
#: and yellow comes last (weak on white). One per pool, in :func:`pool_colours` order; an eighth
#: pool reuses the first colour.
OKABE_ITO = ("#0072b2", "#d55e00", "#009e73", "#e69f00", "#cc79a7", "#56b4e9", "#f0e442")
#: Colour of what is not a pool (all humans together, a simulated leaderboard, a moved model).
NEUTRAL = "#5c6b73"
_GREY = "#9aa5ab"
#: ColorBrewer's sequential "Blues" (Brewer 2002), light to dark: the heatmap's shading of a
#: cell's share of its row (the ramp matplotlib's "Blues" interpolates).
BLUES = ("#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5",
         "#08519c", "#08306b")
def pool_colours(pools, judges=()) -> dict:
    """One fixed colour per pool: the human pools in sorted order, then the judge pools in
    sorted order, take :data:`OKABE_ITO` in turn. Every chart of a report reads the same map,
    so a pool has one colour on the whole page whichever pools a chart shows."""
    judges = {str(j) for j in judges}
    names = sorted({str(p) for p in pools} - judges) + sorted(judges & {str(p) for p in pools})
    return {p: OKABE_ITO[i % len(OKABE_ITO)] for i, p in enumerate(names)}


def dataset_colours(dataset: dict | None) -> dict:
    """:func:`pool_colours` of a result's ``dataset`` block (its ``pools`` with their ``judge``
    flag)."""
    pools = (dataset or {}).get("pools") or {}
    return pool_colours(pools, [p for p, info in pools.items() if (info or {}).get("judge")])


def _colour(colours: dict | None, pool, names) -> str:
    """``pool``'s colour from ``colours``; without a map, from :func:`pool_colours` of the
    ``names`` the chart draws; :data:`NEUTRAL` for a series that is not a pool."""
    colours = colours if colours is not None else pool_colours(names)
    return colours.get(str(pool), NEUTRAL)


def short(text, limit: int = MAX_LABEL) -> str:
    """A label cut to ``limit`` characters with an ellipsis, on one line, with characters XML
    cannot hold shown as escapes (:func:`audit.escape.xml.text`): the SVG must parse; and the
    bidi and other controls a browser would act on unseen (:func:`audit.escape.html.text`)."""
    text = _shown(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _shown(text) -> str:
    """``text`` on one line, as the SVG may hold it and a browser shows it (see :func:`short`)."""
    from ..escape.html import text as html_text
    from ..escape.xml import text as xml_text

    return html_text(xml_text(" ".join(str(text).split())))


def shorts(texts, limit: int = MAX_LABEL) -> list[str]:
    """:func:`short` of each of ``texts``, different texts kept apart on one chart.

    Where two different texts would be cut to one label (model ids of one family,
    ``meta-llama/Meta-Llama-3.1-70B-Instruct`` and ``...-Instruct-Turbo``), each of them is cut
    in the middle instead (``meta-llama/Meta…-70B-Instruct``), keeping the end, where such
    names usually differ; texts alike at both ends are numbered (``#1``, ``#2``) in order.
    """
    texts = [str(t) for t in texts]
    labels = [short(t, limit) for t in texts]
    clash = _clashes(texts, labels)
    if not clash:
        return labels
    labels = [_middle(t, limit) if label in clash else label for t, label in zip(texts, labels)]
    clash = _clashes(texts, labels)
    numbers: dict[str, dict[str, int]] = {}
    for t, label in zip(texts, labels):
        if label in clash:
            seen = numbers.setdefault(label, {})
            seen.setdefault(t, len(seen) + 1)
    return [f"{label} #{numbers[label][t]}" if label in clash else label
            for t, label in zip(texts, labels)]


def _clashes(texts: list[str], labels: list[str]) -> set[str]:
    """The labels that two different texts share."""
    owners: dict[str, set[str]] = {}
    for t, label in zip(texts, labels):
        owners.setdefault(label, set()).add(t)
    return {label for label, names in owners.items() if len(names) > 1}


def _middle(text, limit: int) -> str:
    """``text`` as :func:`short` shows it, cut in the middle to ``limit`` characters."""
    text = _shown(text)
    if len(text) <= limit:
        return text
    head = (limit - 1) // 2
    return text[:head] + "…" + text[len(text) - (limit - 1 - head):]


# -- shared marks ----------------------------------------------------------------------------------
def _ends(value: float, ci) -> tuple[float, float]:
    """Where an interval bar starts and stops: the CI's ends, widened to reach ``value``.

    A missing end stops at the point, as does a percentile interval that does not cover its own
    point estimate (possible for skewed statistics).
    """
    lo, hi = (list(ci or []) + [None, None])[:2]
    return (min(lo, value) if finite(lo) else value, max(hi, value) if finite(hi) else value)


def _span(values) -> tuple[float, float]:
    """``(min, max)`` of the finite ``values``; ``(0, 1)`` when there are none."""
    vals = [float(v) for v in values if finite(v)]
    return (min(vals), max(vals)) if vals else (0.0, 1.0)


def _estimate(d: Drawing, x: Linear, y: float, value: float, ci, colour: str, tip: str,
              parent=None) -> None:
    """A dot at ``value`` on a horizontal bar over its interval (with end caps), in one group
    whose tooltip is ``tip``."""
    lo, hi = _ends(value, ci)
    g = d.group(parent, cls="estimate", tip=tip)
    d.line(x(lo), y, x(hi), y, parent=g, cls="interval", stroke=colour, stroke_width=1.5)
    for end in (lo, hi):
        d.line(x(end), y - 3, x(end), y + 3, parent=g, stroke=colour, stroke_width=1.2)
    d.circle(x(value), y, 3.5, parent=g, cls="point", fill=colour)


def _rank(rank) -> str:
    """A rank for a tooltip: ``#3``, ``#2.5`` for a shared (mid) rank, ``#NaN`` when undefined."""
    if not finite(rank):
        return f"#{number(None)}"
    return f"#{int(rank)}" if float(rank).is_integer() else f"#{number(rank, 1)}"


def _label(key: str) -> str:
    """A metric's axis label (:attr:`audit.metrics.Metric.label`); an unregistered key as
    itself."""
    try:
        return metric(key).label
    except KeyError:
        return key


def _metrics(series: dict) -> list[str]:
    seen = []
    for stats in series.values():
        for m in stats:
            if m not in seen:
                seen.append(m)
    return seen


# -- one chart per result block --------------------------------------------------------------------
def reliability_chart(reliability: dict | None, *, metrics=None,
                      colours: dict | None = None) -> str | None:
    """Forest plot: each metric's value and 95% CI, one marker per pool in its
    :func:`pool_colours` colour (all humans first, in :data:`NEUTRAL`), with Krippendorff's
    (2004) reference lines at 0.667 (dotted) and 0.8 (dashed)."""
    if not reliability:
        return None
    series = {}
    if reliability.get("overall"):
        series["all humans"] = reliability["overall"]
    series.update(reliability.get("by_pool") or {})
    metrics = [m for m in (metrics or _metrics(series)) if m not in NOT_CHARTED]
    rows = [(m, p, e) for m in metrics for p, stats in series.items()
            if finite((e := stats.get(m) or {}).get("value"))]
    if not rows:
        return None
    names = [p for p in series if any(p == q for _, q, _ in rows)]  # pools with a finite value
    pools = list(reliability.get("by_pool") or {})
    labels = [_label(m) for m in metrics]
    keys = [Key(k, _colour(colours, p, pools)) for p, k in zip(names, shorts(names))]
    left = 14 + max(text_width(t) for t in labels)
    right = WIDTH - 16
    top = 8 + legend_height(keys, right - left) + 6
    band = max(16 * len(names), 26)
    bottom = top + band * len(metrics)
    ends = [v for _, _, e in rows for v in (e["value"], *_ends(e["value"], e.get("ci95")))]
    lo, hi, step = nice_domain(*_span(ends + [0.667, 0.8]))
    x = Linear(lo, hi, left, right)
    d = Drawing("reliability", WIDTH, bottom + 48, title="Reliability per pool",
                desc="Each chance-corrected coefficient's value (dot) and 95% bootstrap interval "
                     "(bar) per pool; dotted line at 0.667, dashed at 0.8 (Krippendorff 2004).")
    legend(d, keys, x=left, y=8, width=right - left)
    x_axis(d, x, ticks_within(lo, hi, step=step), y=bottom, top=top,
           label="coefficient (95% CI); dotted 0.667, dashed 0.8 (Krippendorff 2004)")
    for ref, dash in ((0.667, "1.5 2.5"), (0.8, "5 3")):
        d.line(x(ref), top, x(ref), bottom, cls="reference", stroke=REFERENCE,
               stroke_dasharray=dash)
    category_labels(d, labels, [top + band * (i + 0.5) for i in range(len(metrics))], x=left)
    for j, pool in enumerate(names):
        colour = _colour(colours, pool, pools)
        g = d.group(cls="series")
        for i, (m, label) in enumerate(zip(metrics, labels)):
            e = series[pool].get(m) or {}
            if not finite(e.get("value")):
                continue
            y = top + band * (i + 0.1 + 0.8 * (j + 0.5) / len(names))
            _estimate(d, x, y, e["value"], e.get("ci95"), colour, parent=g,
                      tip=f"{short(pool, MAX_TIP)}, {label}: "
                          f"{with_interval(e['value'], e.get('ci95'))}")
    return sanitize_svg(d.to_svg())


def _blues(share: float) -> str:
    """The colour of ``share`` (0 to 1) on :data:`BLUES`, interpolated linearly in RGB."""
    t = min(max(share, 0.0), 1.0) * (len(BLUES) - 1)
    i = min(int(t), len(BLUES) - 2)
    a, b = BLUES[i], BLUES[i + 1]
    rgb = [round(int(a[k:k + 2], 16) + (t - i) * (int(b[k:k + 2], 16) - int(a[k:k + 2], 16)))
           for k in (1, 3, 5)]
    return "#" + "".join(f"{c:02x}" for c in rgb)


def confusion_heatmap(labels_a: list, labels_b: list, counts, *, pool_a: str, pool_b: str,
                      name: str = "confusion") -> str | None:
    """Heatmap of majority labels, ``pool_a`` (rows) against ``pool_b`` (columns): each cell's
    count written in it, shaded by its share of the row, its two labels whole in its tooltip."""
    import numpy as np

    m = np.asarray(counts, dtype=float)
    if m.ndim != 2 or m.size == 0 or m.shape != (len(labels_a), len(labels_b)):
        return None
    share = m / m.sum(axis=1, keepdims=True).clip(min=1)
    rows = shorts(labels_a, 18)
    cols = shorts(labels_b, 18)
    texts = [[f"{int(c):,}" for c in line] for line in m]
    cell = max(40.0, 10 + max(text_width(t) for line in texts for t in line))
    name_a, name_b = shorts([pool_a, pool_b])
    x_label, y_label = f"majority label: {name_b}", f"majority label: {name_a}"
    left = 30 + max(text_width(t) for t in rows)
    top = 8
    grid_w, grid_h = cell * len(cols), cell * len(rows)
    drop = 0.5 * max(text_width(t) for t in cols) + 10  # labels turned 30 degrees
    width = max(left + grid_w, left + text_width(x_label)) + 12
    height = max(top + grid_h + drop + 40, top + text_width(y_label) + 20)
    d = Drawing(name, width, height,
                title=f"Majority labels: {name_a} against {name_b}",
                desc="Rows: an item's majority label in the first pool; columns: in the second; "
                     "each cell counts the items both pools judged unanimously, shaded by its "
                     "share of the row.")
    g = d.group(cls="cells")
    for i in range(len(rows)):
        for j in range(len(cols)):
            x, y = left + cell * j, top + cell * i
            d.rect(x, y, cell, cell, parent=g, cls="cell", fill=_blues(share[i, j]),
                   stroke="#ffffff", stroke_width=1,
                   tip=f"{short(labels_a[i], MAX_TIP)} in {short(pool_a, MAX_TIP)}, "
                       f"{short(labels_b[j], MAX_TIP)} in {short(pool_b, MAX_TIP)}: "
                       f"{texts[i][j]} items")
            d.text(x + cell / 2, y + cell / 2, texts[i][j], parent=g, cls="count",
                   anchor="middle", fill="#ffffff" if share[i, j] > 0.6 else "#222222")
    category_labels(d, rows, [top + cell * (i + 0.5) for i in range(len(rows))], x=left + 2)
    base = top + grid_h + 8
    for j, label in enumerate(cols):
        d.text(left + cell * (j + 0.5), base, label, cls="x-label", anchor="end", rotate=-30)
    d.text(left + grid_w / 2, top + grid_h + drop + 26, x_label, anchor="middle")
    d.text(10, top + grid_h / 2, y_label, anchor="middle", rotate=-90)
    return sanitize_svg(d.to_svg())


def model_order(boards: dict) -> list[str]:
    """Models by their rank in the first pool, then any other model; at most :data:`MAX_MODELS`."""
    first = sorted(next(iter(boards.values())), key=lambda r: (r.get("rank") or 1e9, r["model"]))
    order = [r["model"] for r in first]
    for rows in boards.values():
        order += [r["model"] for r in rows if r["model"] not in order]
    return order[:MAX_MODELS]


def leaderboard_chart(leaderboards: dict | None, *, colours: dict | None = None) -> str | None:
    """Side-by-side panels, one per pool: each model's score with its 95% CI, same model order
    (:func:`model_order`), each panel on its own score axis."""
    boards = {p: rows for p, rows in (leaderboards or {}).items()
              if any(finite(r.get("score")) for r in rows or [])}
    if not boards:
        return None
    order = model_order(boards)
    pools = list(boards)
    labels = shorts(order)
    titles = shorts(pools, 24)
    left = 12 + max(text_width(t) for t in labels)
    gap = 26
    panel = max(150.0, (WIDTH - left - 12 - gap * (len(pools) - 1)) / len(pools))
    width = left + panel * len(pools) + gap * (len(pools) - 1) + 12
    row, top = 16, 28
    bottom = top + row * len(order) + 6
    d = Drawing("leaderboards", width, bottom + 48, title="Leaderboard scores per pool",
                desc="One panel per pool: each model's score (dot) with its 95% bootstrap "
                     "interval (bar); models in the first pool's rank order.")
    ys = [top + row * (i + 0.5) for i in range(len(order))]
    category_labels(d, labels, ys, x=left)
    for k, pool in enumerate(pools):
        x0 = left + k * (panel + gap)
        by_model = {r["model"]: r for r in boards[pool]}
        rows = [(i, by_model[m]) for i, m in enumerate(order)
                if m in by_model and finite(by_model[m].get("score"))]
        ends = [v for _, r in rows for v in (r["score"], *_ends(r["score"], r.get("ci95")))]
        lo, hi, step = nice_domain(*_span(ends), n=4)
        x = Linear(lo, hi, x0 + 4, x0 + panel - 4)
        g = d.group(cls="panel")
        d.text(x0, 12, titles[k], parent=g, cls="panel-title", bold=True)
        x_axis(d, x, ticks_within(lo, hi, step=step), y=bottom, top=top, label="score (95% CI)",
               parent=g)
        colour = _colour(colours, pool, pools)
        for i, r in rows:
            _estimate(d, x, ys[i], r["score"], r.get("ci95"), colour, parent=g,
                      tip=f"{short(r['model'], MAX_TIP)} in {short(pool, MAX_TIP)}: "
                          f"{with_interval(r['score'], r.get('ci95'))} ({_rank(r.get('rank'))})")
    return sanitize_svg(d.to_svg())


def slope_chart(leaderboards: dict | None) -> str | None:
    """Bump chart: each model's rank in each pool, joined by a line; crossings are rank swaps.
    A model whose rank differs between pools is drawn dark and thick, the others grey (the pool
    colours stay for pools)."""
    boards = {p: rows for p, rows in (leaderboards or {}).items() if rows}
    if len(boards) < 2:
        return None
    order = model_order(boards)
    pools = list(boards)
    ranks = {p: {r["model"]: r.get("rank") for r in rows} for p, rows in boards.items()}
    drawn = [r for p in pools for m in order if finite(r := ranks[p].get(m))]
    if not drawn:
        return None
    names = shorts(order, 24)
    name_w = max(text_width(t) for t in names)
    axis = 56
    x_first = axis + 14 + name_w
    gap = max(120.0, (WIDTH - x_first - 24 - name_w) / (len(pools) - 1))
    width = x_first + gap * (len(pools) - 1) + 14 + name_w + 10
    lo, hi = min(drawn), max(drawn)
    top = 10
    bottom = top + 16 * min(max(hi - lo + 1, len(order)), 200)
    y = Linear(lo - 0.5, hi + 0.5, top, bottom)
    d = Drawing("slope", width, bottom + 40, title="Rank of each model in each pool",
                desc="Lines join a model's ranks across pools (1 = best); dark lines are models "
                     "whose rank changes, and crossings are swaps.")
    y_axis(d, y, ticks_within(lo, hi, n=max(3, round((bottom - top) / 60)), integer=True),
           x=axis, label="rank (1 = best)")
    cols = [x_first + gap * j for j in range(len(pools))]
    for j, pool in enumerate(shorts(pools, 20)):
        d.text(cols[j], bottom + 14, pool, cls="x-tick", anchor="middle")
    for model, name in zip(order, names):
        pts = [(cols[j], ranks[p].get(model)) for j, p in enumerate(pools)]
        pts = [(x, r) for x, r in pts if finite(r)]
        if not pts:
            continue
        moved = len({r for _, r in pts}) > 1
        colour = INK if moved else _GREY
        tip = f"{short(model, MAX_TIP)}: " + ", ".join(
            f"{_rank(ranks[p].get(model))} in {short(p, MAX_TIP)}" for p in pools
            if finite(ranks[p].get(model)))
        g = d.group(cls="model", tip=tip)
        xy = [(x, y(r)) for x, r in pts]
        if len(xy) > 1:
            d.polyline(xy, parent=g, stroke=colour, stroke_width=2 if moved else 1)
        for px, py in xy:
            d.circle(px, py, 3, parent=g, cls="point", fill=colour)
        d.text(xy[0][0] - 8, xy[0][1], name, parent=g, cls="name", anchor="end", size=11)
        d.text(xy[-1][0] + 8, xy[-1][1], name, parent=g, cls="name", size=11)
    return sanitize_svg(d.to_svg())


def swap_chart(closest_pairs: list | None, *, colours: dict | None = None) -> str | None:
    """Horizontal bars: the probability that each close pair of neighbours swaps under
    resampling (±2 Monte-Carlo s.e. as error bars), each bar in its pool's colour, with the
    closed form Φ(−gap/(√2·SD)) as a marker where the results carry it."""
    from .read import swap

    rows = [(r, swap(r)) for r in closest_pairs or []]
    rows = [(r, s) for r, s in rows if s["bootstrap"] is not None]
    if not rows:
        return None
    models = [str(r.get(k)) for r, _ in rows for k in ("model_hi", "model_lo")]
    model_label = dict(zip(models, shorts(models, 20)))
    pool_names = [str(r["pool"]) for r, _ in rows if r.get("pool")]
    pool_label = dict(zip(pool_names, shorts(pool_names, 12)))
    labels = [f"{model_label[str(r.get('model_hi'))]} / {model_label[str(r.get('model_lo'))]}"
              + (f" ({pool_label[str(r['pool'])]})" if r.get("pool") else "") for r, _ in rows]
    tips = [f"{short(r.get('model_hi'), MAX_TIP)} / {short(r.get('model_lo'), MAX_TIP)}"
            + (f" ({short(r['pool'], MAX_TIP)})" if r.get("pool") else "") for r, _ in rows]
    names = [r.get("pool") for r, _ in rows if r.get("pool") is not None]
    fills = [_colour(colours, r.get("pool"), names) for r, _ in rows]
    err = [2 * s["mc_se"] if s["mc_se"] is not None else 0.0 for _, s in rows]
    closed = [s["closed_form"] for _, s in rows]
    keys = [Key("bootstrap share (±2 MC s.e.)", fills[0], "bar")]
    if any(c is not None for c in closed):
        keys.append(Key("closed form Φ(−gap/(√2·SD))", INK, "diamond"))
    left = 12 + max(text_width(t) for t in labels)
    right = WIDTH - 16
    top = 8 + legend_height(keys, right - left) + 6
    row = 22
    bottom = top + row * len(rows)
    reach = [s["bootstrap"] + e for (_, s), e in zip(rows, err)] + [c for c in closed if c]
    hi = min(1.0, max(0.5, max(reach) * 1.1))
    x = Linear(0.0, hi, left, right)
    d = Drawing("swaps", WIDTH, bottom + 48, title="Closest pairs: probability the order reverses",
                desc="For each pair of neighbouring models, the share of bootstrap resamples in "
                     "which their order reverses (bar, ±2 Monte-Carlo s.e.), with the closed "
                     "form as a diamond; dotted line at 0.05.")
    legend(d, keys, x=left, y=8, width=right - left)
    x_axis(d, x, ticks_within(0.0, hi), y=bottom, top=top,
           label="P(order of the pair reverses)")
    ys = [top + row * (i + 0.5) for i in range(len(rows))]
    category_labels(d, labels, ys, x=left)
    for (_, s), label, yy, fill, e in zip(rows, tips, ys, fills, err):
        tip = (f"{label}: {probability(s['bootstrap'], 3)}"
               + (f" ± {standard_error(s['mc_se'])}" if s["mc_se"] is not None else "")
               + (f"; closed form {probability(s['closed_form'], 3)}"
                  if s["closed_form"] is not None else ""))
        g = d.group(cls="pair", tip=tip)
        d.rect(x(0.0), yy - row * 0.4, x.clamp(s["bootstrap"]) - x(0.0), row * 0.8, parent=g,
               cls="bar", fill=fill)
        if e > 0:
            a, b = x.clamp(s["bootstrap"] - e), x.clamp(s["bootstrap"] + e)
            d.line(a, yy, b, yy, parent=g, cls="error", stroke="#333333", stroke_width=1.2)
            for end in (a, b):
                d.line(end, yy - 3, end, yy + 3, parent=g, stroke="#333333", stroke_width=1.2)
        if s["closed_form"] is not None:
            d.diamond(x.clamp(s["closed_form"]), yy, 4.5, parent=g, cls="closed", fill=INK)
    d.line(x(0.05), top, x(0.05), bottom, cls="reference", stroke=REFERENCE,
           stroke_dasharray="1.5 2.5")
    return sanitize_svg(d.to_svg())


def displacement_histogram(histograms: dict | None, *,
                           colours: dict | None = None) -> str | None:
    """Bars: in what share of bootstrap resamples 0, 1, 2, ... models change rank, one colour
    per pool."""
    hist = {p: {int(k): int(v) for k, v in (h or {}).items()}
            for p, h in (histograms or {}).items()}
    hist = {p: h for p, h in hist.items() if h and sum(h.values()) > 0}
    if not hist:
        return None
    pools = list(hist)
    named = [p for p in pools if p != EVERY_HUMAN_POOL]
    fills = {p: _colour(colours, p, named) for p in pools}
    keys = [Key(k, fills[p], "bar") for p, k in zip(pools, shorts(pools))]
    xs = sorted({k for h in hist.values() for k in h})
    shares = {p: {k: v / sum(h.values()) for k, v in h.items()} for p, h in hist.items()}
    left, right = 62, WIDTH - 16
    top = 8 + legend_height(keys, right - left) + 6
    bottom = top + 200
    x = Linear(xs[0] - 0.5, xs[-1] + 0.5, left, right)
    _, hi, step = nice_domain(0.0, max(v for s in shares.values() for v in s.values()))
    y = Linear(0.0, hi, bottom, top)
    d = Drawing("displacement", WIDTH, bottom + 48, title="Bootstrap displacement",
                desc="For each pool, the share of bootstrap resamples in which 0, 1, 2, ... "
                     "models have a rank different from the full-data leaderboard.")
    legend(d, keys, x=left, y=8, width=right - left)
    y_axis(d, y, ticks_within(0.0, hi, step=step), x=left, right=right,
           label="share of bootstrap resamples")
    fit = max(1, int((right - left) / 30))
    x_axis(d, x, ticks_within(xs[0], xs[-1], n=min(len(xs), fit), integer=True), y=bottom,
           label="models whose rank differs from the full-data leaderboard",
           fmt_tick=lambda t: f"{int(t)}")
    unit = x(1) - x(0)
    width = 0.8 * unit / len(pools)
    for j, pool in enumerate(pools):
        g = d.group(cls="series")
        total = sum(hist[pool].values())
        for k in xs:
            share = shares[pool].get(k, 0.0)
            left_edge = x(k) - 0.4 * unit + width * j
            d.rect(left_edge, y(share), width, y(0.0) - y(share), parent=g, cls="bar",
                   fill=fills[pool],
                   tip=f"{short(pool, MAX_TIP)}: {k} moved in {percent(share)} of resamples "
                       f"({number(hist[pool].get(k, 0))} of {number(total)})")
    return sanitize_svg(d.to_svg())


def simulation_curve(simulation: list | None) -> str | None:
    """Line: P(at least one model displaced) against leaderboard size; dark band ±2 Monte-Carlo
    s.e., light band the 95% interval over the perturbation SD's own uncertainty where the
    results carry it."""
    from .read import simulation_row

    rows = sorted((simulation_row(r) for r in simulation or []), key=lambda r: r["n_models"])
    rows = [r for r in rows if r["p"] is not None]
    if not rows:
        return None
    n = [r["n_models"] for r in rows]
    p = [r["p"] for r in rows]
    se = [r["mc_se"] or 0.0 for r in rows]
    band = [(k, r["interval95"]) for k, r in zip(n, rows) if r["interval95"]]
    keys = ([Key("95% interval over the SD's uncertainty", NEUTRAL, "bar", 0.12)] if band
            else []) + [Key("±2 Monte-Carlo s.e.", NEUTRAL, "bar", 0.3)]
    left, right = 62, WIDTH - 16
    top = 8 + legend_height(keys, right - left) + 6
    bottom = top + 200
    lo, hi, step = nice_domain(min(n), max(n))
    x = Linear(lo, hi, left, right)
    y = Linear(0.0, 1.02, bottom, top)
    d = Drawing("simulation", WIDTH, bottom + 48,
                title="Displacement probability by leaderboard size",
                desc="The probability that at least one model of a simulated leaderboard is out "
                     "of place, against the number of models; bands: ±2 Monte-Carlo s.e. and "
                     "the 95% interval over the perturbation SD's uncertainty.")
    legend(d, keys, x=left, y=8, width=right - left)
    y_axis(d, y, ticks_within(0.0, 1.0), x=left, right=right,
           label="P(at least one model displaced)")
    x_axis(d, x, ticks_within(lo, hi, step=step), y=bottom, top=top,
           label="models on the leaderboard")
    if band:
        d.polygon([(x(k), y(b[1])) for k, b in band] + [(x(k), y(b[0])) for k, b in band[::-1]],
                  cls="band-interval", fill=NEUTRAL, fill_opacity=0.12)
    d.polygon([(x(k), y(min(1.0, a + 2 * s))) for k, a, s in zip(n, p, se)]
              + [(x(k), y(max(0.0, a - 2 * s))) for k, a, s in list(zip(n, p, se))[::-1]],
              cls="band-mc", fill=NEUTRAL, fill_opacity=0.3)
    d.polyline([(x(k), y(a)) for k, a in zip(n, p)], stroke=NEUTRAL, stroke_width=1.5)
    for r in rows:
        tip = (f"{r['n_models']} models: {number(r['p'])}"
               + (f" ± {standard_error(r['mc_se'], 4)}" if r["mc_se"] is not None else "")
               + (f"; 95% interval {number(r['interval95'][0])} – {number(r['interval95'][1])}"
                  if r["interval95"] else ""))
        d.circle(x(r["n_models"]), y(r["p"]), 3.5, cls="point", fill=NEUTRAL, tip=tip)
    return sanitize_svg(d.to_svg())
