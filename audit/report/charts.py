"""Charts for the HTML report: matplotlib figures rendered to sanitised inline SVG.

Each function takes one block of the result dict and returns an SVG string, or ``None`` when the
block is absent or empty. The SVG is safe to paste into HTML: dataset strings (pool, model and
label names) become escaped ``<text>`` content (``svg.fonttype = 'none'``, mathtext off so a ``$``
in a name is text, not markup), and :func:`audit.report.svg.sanitize_svg` re-parses the output
and keeps only an allow-list of drawing elements and attributes (no scripts, no event handlers,
no external links).

matplotlib is imported inside the functions: it stays off the CLI's start-up path. Figures are
built with :class:`matplotlib.figure.Figure` directly, never through pyplot, so no GUI backend is
selected and the caller's backend is left alone; the output is byte-for-byte reproducible
(fixed hash salt, no date in the metadata).
"""

from __future__ import annotations

import io

from ..contract.columns import EVERY_HUMAN_POOL
from ..format import finite
from ..metrics import METRICS as METRIC_LIST
from ..metrics import get as metric
from .svg import sanitize_svg

#: Longest label drawn on an axis; the tables carry the full string.
MAX_LABEL = 32
#: Most models drawn in one leaderboard panel (the best ones, by the first pool's rank).
MAX_MODELS = 40

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
    cannot hold shown as escapes (:func:`audit.escape.xml.text`): the SVG must parse."""
    from ..escape.xml import text as xml_text

    text = xml_text(" ".join(str(text).split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- figure plumbing ---------------------------------------------------------------------------------
_RC = {
    "svg.fonttype": "none",
    "text.parse_math": False,
    "text.usetex": False,
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Liberation Sans", "Arial", "Helvetica"],
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
    "axes.titlelocation": "left",
    "svg.image_inline": True,
}


def _render(name: str, width: float, height: float, draw) -> str:
    """Call ``draw(fig)`` on a detached :class:`~matplotlib.figure.Figure` and return its SVG.

    The figure is never registered with pyplot, so no backend is selected or switched. The hash
    salt is the chart's name: the same results give the same bytes, and two charts on one page
    get distinct clip-path ids.
    """
    import matplotlib
    from matplotlib.figure import Figure

    buf = io.StringIO()
    from cycler import cycler

    # matplotlib's default cycle would paint an unstyled artist (an error bar's cap) in a colour
    # a reader could take for a pool's
    with matplotlib.rc_context({**_RC, "svg.hashsalt": f"audit-{name}",
                                "axes.prop_cycle": cycler(color=[NEUTRAL])}):
        fig = Figure(figsize=(width, min(height, 40.0)), layout="constrained")
        draw(fig)
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None, "Format": None,
                                                 "Type": None})
    return sanitize_svg(buf.getvalue())


def _err(value, ci) -> tuple[float, float]:
    """Distances from ``value`` to the CI ends for ``errorbar``.

    0 where the CI is missing, and where a percentile interval does not cover its own point
    estimate (possible for skewed statistics): the bar then stops at the point.
    """
    lo, hi = (ci or [None, None])[:2] if ci else (None, None)
    return (max(value - lo, 0.0) if finite(lo) else 0.0,
            max(hi - value, 0.0) if finite(hi) else 0.0)


# -- one chart per result block ---------------------------------------------------------------------
def reliability_chart(reliability: dict | None, *, metrics=None,
                      colours: dict | None = None) -> str | None:
    """Forest plot: each metric's value and 95% CI, one marker per pool in its
    :func:`pool_colours` colour (all humans first, in :data:`NEUTRAL`)."""
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
    pools = [p for p in (reliability.get("by_pool") or {})]

    def draw(fig):
        ax = fig.add_subplot()
        step = 0.8 / max(len(names), 1)
        for j, pool in enumerate(names):
            ys, xs, err = [], [], [[], []]
            for i, m in enumerate(metrics):
                e = series[pool].get(m) or {}
                if not finite(e.get("value")):
                    continue
                lo, hi = _err(e["value"], e.get("ci95"))
                ys.append(i - 0.4 + step * (j + 0.5))
                xs.append(e["value"])
                err[0].append(lo)
                err[1].append(hi)
            ax.errorbar(xs, ys, xerr=err, fmt="o", ms=4, capsize=2, lw=1.2,
                        color=_colour(colours, pool, pools), label=short(pool))
        ax.set_yticks(range(len(metrics)), [_label(m) for m in metrics])
        ax.set_ylim(len(metrics) - 0.5, -0.5)
        ax.axvline(0.667, color="#999", lw=0.8, ls=":")
        ax.axvline(0.8, color="#999", lw=0.8, ls="--")
        ax.grid(axis="x", color="#eee")
        ax.set_xlabel("coefficient (95% CI); dotted 0.667, dashed 0.8 (Krippendorff 2004)")
        fig.legend(loc="outside upper center", fontsize=8, frameon=False,
                   ncols=min(len(names), 4))
    return _render("reliability", 7.0, 1.5 + 0.2 * len(metrics) * len(names), draw)


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


def confusion_heatmap(labels_a: list, labels_b: list, counts, *, pool_a: str, pool_b: str,
                      name: str = "confusion") -> str | None:
    """Heatmap of majority labels, ``pool_a`` (rows) against ``pool_b`` (columns), with counts."""
    import numpy as np

    m = np.asarray(counts, dtype=float)
    if m.ndim != 2 or m.size == 0 or m.shape != (len(labels_a), len(labels_b)):
        return None
    n = len(labels_a)

    def draw(fig):
        ax = fig.add_subplot()
        share = m / m.sum(axis=1, keepdims=True).clip(min=1)
        # pcolormesh, not imshow: vector cells, no embedded raster image in the SVG
        ax.pcolormesh(share, cmap="Blues", vmin=0, vmax=1, edgecolors="white", linewidth=1)
        for i in range(m.shape[0]):
            for j in range(m.shape[1]):
                ax.text(j + 0.5, i + 0.5, f"{int(m[i, j]):,}", ha="center", va="center",
                        fontsize=9, color="white" if share[i, j] > 0.6 else "#222")
        ax.set_xticks([j + 0.5 for j in range(len(labels_b))],
                      [short(x, 18) for x in labels_b], rotation=30, ha="right")
        ax.set_yticks([i + 0.5 for i in range(n)], [short(x, 18) for x in labels_a])
        ax.set_ylim(n, 0)
        ax.set_xlabel(f"majority label: {short(pool_b)}")
        ax.set_ylabel(f"majority label: {short(pool_a)}")
        ax.tick_params(length=0)
        for side in ("left", "bottom"):
            ax.spines[side].set_visible(False)
    size = 1.6 + 0.35 * max(len(labels_a), len(labels_b))
    return _render(name, size + 1.0, size, draw)


def leaderboard_chart(leaderboards: dict | None, *, colours: dict | None = None) -> str | None:
    """Side-by-side panels, one per pool: each model's score with its 95% CI, same model order."""
    boards = {p: rows for p, rows in (leaderboards or {}).items() if rows}
    if not boards:
        return None
    order = model_order(boards)
    pools = list(boards)

    def draw(fig):
        axes = fig.subplots(1, len(pools), sharey=True, squeeze=False)[0]
        for k, (ax, pool) in enumerate(zip(axes, pools)):
            by_model = {r["model"]: r for r in boards[pool]}
            ys, xs, err = [], [], [[], []]
            for i, model in enumerate(order):
                r = by_model.get(model)
                if r is None or not finite(r.get("score")):
                    continue
                lo, hi = _err(r["score"], r.get("ci95"))
                ys.append(i)
                xs.append(r["score"])
                err[0].append(lo)
                err[1].append(hi)
            ax.errorbar(xs, ys, xerr=err, fmt="o", ms=4, capsize=2, lw=1.2,
                        color=_colour(colours, pool, pools))
            ax.set_title(short(pool, 24))
            ax.grid(axis="x", color="#eee")
            ax.set_xlabel("score (95% CI)")
        axes[0].set_yticks(range(len(order)), [short(m) for m in order])
        axes[0].invert_yaxis()
    return _render("leaderboards", min(2.6 + 2.4 * len(pools), 11), 0.8 + 0.3 * len(order), draw)


def model_order(boards: dict) -> list[str]:
    """Models by their rank in the first pool, then any other model; at most :data:`MAX_MODELS`."""
    first = sorted(next(iter(boards.values())), key=lambda r: (r.get("rank") or 1e9, r["model"]))
    order = [r["model"] for r in first]
    for rows in boards.values():
        order += [r["model"] for r in rows if r["model"] not in order]
    return order[:MAX_MODELS]


def slope_chart(leaderboards: dict | None) -> str | None:
    """Bump chart: each model's rank in each pool, joined by a line; crossings are rank swaps."""
    boards = {p: rows for p, rows in (leaderboards or {}).items() if rows}
    if len(boards) < 2:
        return None
    order = model_order(boards)
    pools = list(boards)
    ranks = {p: {r["model"]: r.get("rank") for r in rows} for p, rows in boards.items()}

    def draw(fig):
        ax = fig.add_subplot()
        for i, model in enumerate(order):
            pts = [(j, ranks[p].get(model)) for j, p in enumerate(pools)]
            pts = [(x, y) for x, y in pts if finite(y)]
            if not pts:
                continue
            moved = len({y for _, y in pts}) > 1
            color = "#1d2327" if moved else _GREY  # pool colours stay for pools
            ax.plot(*zip(*pts), marker="o", ms=4, lw=2 if moved else 1, color=color)
            x0, y0 = pts[0]
            x1, y1 = pts[-1]
            ax.text(x0 - 0.06, y0, short(model, 24), ha="right", va="center", fontsize=8)
            ax.text(x1 + 0.06, y1, short(model, 24), ha="left", va="center", fontsize=8)
        ax.set_xticks(range(len(pools)), [short(p, 20) for p in pools])
        ax.set_xlim(-1.1, len(pools) - 1 + 1.1)
        ax.invert_yaxis()
        ax.set_ylabel("rank (1 = best)")
        ax.spines["bottom"].set_visible(False)
        ax.tick_params(axis="x", length=0)
    return _render("slope", 4.5 + 1.6 * len(pools), 1.2 + 0.28 * len(order), draw)


def swap_chart(closest_pairs: list | None, *, colours: dict | None = None) -> str | None:
    """Horizontal bars: the probability that each close pair of neighbours swaps under
    resampling (±2 Monte-Carlo s.e. as error bars), each bar in its pool's colour, with the
    closed form Φ(−gap/(√2·SD)) as a marker where the results carry it."""
    from .read import swap

    rows = [(r, swap(r)) for r in closest_pairs or []]
    rows = [(r, s) for r, s in rows if s["bootstrap"] is not None]
    if not rows:
        return None

    def draw(fig):
        ax = fig.add_subplot()
        labels = [f"{short(r.get('model_hi'), 20)} / {short(r.get('model_lo'), 20)}"
                  + (f" ({short(r['pool'], 12)})" if r.get("pool") else "") for r, _ in rows]
        boot = [s["bootstrap"] for _, s in rows]
        err = [2 * s["mc_se"] if s["mc_se"] is not None else 0.0 for _, s in rows]
        names = [r.get("pool") for r, _ in rows if r.get("pool") is not None]
        ax.barh(range(len(rows)), boot, xerr=err, ecolor="#333", capsize=2,
                color=[_colour(colours, r.get("pool"), names) for r, _ in rows],
                label="bootstrap share (±2 MC s.e.)")
        closed = [(i, s["closed_form"]) for i, (_, s) in enumerate(rows)
                  if s["closed_form"] is not None]
        if closed:
            ax.plot([c for _, c in closed], [i for i, _ in closed], "D", ms=4,
                    color="#1d2327", label="closed form Φ(−gap/(√2·SD))")
            ax.legend(frameon=False, fontsize=8, loc="lower right")
        ax.set_yticks(range(len(rows)), labels)
        ax.invert_yaxis()
        top = max(b + e for b, e in zip(boot, err))
        top = max([top] + [c for _, c in closed])
        ax.set_xlim(0, min(1.0, max(0.5, top * 1.1)))
        ax.axvline(0.05, color="#999", lw=0.8, ls=":")
        ax.set_xlabel("P(order of the pair reverses)")
    return _render("swaps", 7.0, 0.8 + 0.3 * len(rows), draw)


def displacement_histogram(histograms: dict | None, *,
                           colours: dict | None = None) -> str | None:
    """Bars: in how many bootstrap resamples 0, 1, 2, ... models change rank, one colour per pool."""
    hist = {p: {int(k): int(v) for k, v in (h or {}).items()} for p, h in (histograms or {}).items()}
    hist = {p: h for p, h in hist.items() if h and sum(h.values()) > 0}
    if not hist:
        return None
    pools = list(hist)
    xs = sorted({k for h in hist.values() for k in h})

    def draw(fig):
        ax = fig.add_subplot()
        width = 0.8 / len(pools)
        for j, pool in enumerate(pools):
            total = sum(hist[pool].values())
            ax.bar([x - 0.4 + width * (j + 0.5) for x in xs],
                   [hist[pool].get(x, 0) / total for x in xs], width=width,
                   color=_colour(colours, pool, [p for p in pools if p != EVERY_HUMAN_POOL]),
                   label=short(pool))
        ax.set_xticks(xs)
        ax.set_xlabel("models whose rank differs from the full-data leaderboard")
        ax.set_ylabel("share of bootstrap resamples")
        ax.legend(frameon=False, fontsize=8)
    return _render("displacement", 6.5, 3.0, draw)


def simulation_curve(simulation: list | None) -> str | None:
    """Line: P(at least one model displaced) against leaderboard size; dark band ±2 Monte-Carlo
    s.e., light band the 95% interval over the perturbation SD's own uncertainty where the
    results carry it."""
    from .read import simulation_row

    rows = sorted((simulation_row(r) for r in simulation or []), key=lambda r: r["n_models"])
    rows = [r for r in rows if r["p"] is not None]
    if not rows:
        return None

    def draw(fig):
        ax = fig.add_subplot()
        n = [r["n_models"] for r in rows]
        p = [r["p"] for r in rows]
        se = [r["mc_se"] or 0.0 for r in rows]
        band = [(i, r["interval95"]) for i, r in enumerate(rows) if r["interval95"]]
        if band:
            ax.fill_between([n[i] for i, _ in band], [b[0] for _, b in band],
                            [b[1] for _, b in band], color=NEUTRAL, alpha=0.12, lw=0,
                            label="95% interval over the SD's uncertainty")
        ax.fill_between(n, [max(0, a - 2 * s) for a, s in zip(p, se)],
                        [min(1, a + 2 * s) for a, s in zip(p, se)], color=NEUTRAL, alpha=0.3,
                        lw=0, label="±2 Monte-Carlo s.e.")
        ax.plot(n, p, marker="o", ms=4, color=NEUTRAL)
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("models on the leaderboard")
        ax.set_ylabel("P(at least one model displaced)")
        ax.legend(frameon=False, fontsize=8, loc="lower right")
        ax.grid(color="#eee")
    return _render("simulation", 6.5, 3.0, draw)
