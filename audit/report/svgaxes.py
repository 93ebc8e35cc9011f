"""Scales, ticks, axes and legends for the report's SVG charts (:mod:`audit.report.svgdraw`).

Ticks are Heckbert's (1990) "nice numbers" (1, 2 or 5 times a power of ten), as most plotting
libraries choose them; written here (a dozen lines) so the report imports no plotting library.
Tick labels carry the classes ``x-tick`` / ``y-tick`` and sit exactly at their value's
coordinate, so a reader (or a test) can recover any mark's value from the drawing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .svgdraw import FONT_SIZE, Drawing, text_width

#: Colour of axes, ticks and their labels.
INK = "#1d2327"
#: Colour of grid lines.
GRID = "#e6e6e6"
#: Colour of reference lines (thresholds drawn across a plot).
REFERENCE = "#999999"
#: Length of a tick mark.
TICK = 4


def nice_number(x: float, *, round_it: bool) -> float:
    """Heckbert's (1990) nice number near ``x > 0``: 1, 2, 5 or 10 times a power of ten
    (rounded to the nearest when ``round_it``, else the next one up)."""
    exp = math.floor(math.log10(x))
    f = x / 10 ** exp
    if round_it:
        nf = 1 if f < 1.5 else 2 if f < 3 else 5 if f < 7 else 10
    else:
        nf = 1 if f <= 1 else 2 if f <= 2 else 5 if f <= 5 else 10
    return nf * 10.0 ** exp


def _spread(lo: float, hi: float) -> tuple[float, float]:
    """``(lo, hi)`` widened around a single value, so a scale of one point has a width."""
    if hi > lo:
        return lo, hi
    pad = abs(lo) * 0.1 or 0.5
    return lo - pad, hi + pad


def nice_domain(lo: float, hi: float, n: int = 5) -> tuple[float, float, float]:
    """``(lo', hi', step)``: ``[lo, hi]`` widened to whole ``step``s, about ``n`` ticks."""
    lo, hi = _spread(lo, hi)
    step = nice_number(nice_number(hi - lo, round_it=False) / max(n - 1, 1), round_it=True)
    return math.floor(lo / step + 1e-9) * step, math.ceil(hi / step - 1e-9) * step, step


def ticks_within(lo: float, hi: float, n: int = 5, *, step: float | None = None,
                 integer: bool = False) -> list[float]:
    """Nice tick values inside a fixed ``[lo, hi]`` (about ``n`` of them); whole numbers only
    when ``integer``."""
    lo, hi = _spread(lo, hi)
    if step is None:
        step = nice_number(nice_number(hi - lo, round_it=False) / max(n - 1, 1), round_it=True)
    if integer:
        step = max(1.0, round(step))
    ticks = [k * step for k in range(math.ceil(lo / step - 1e-9),
                                     math.floor(hi / step + 1e-9) + 1)]
    if integer and len(ticks) < 2 and step > 1:
        return ticks_within(lo, hi, step=1.0, integer=True)
    return ticks


def tick_label(value: float, step: float) -> str:
    """A tick value with as many decimals as ``step`` needs, a typographic minus for negatives."""
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) if step > 0 else 0
    text = f"{value:.{decimals}f}"
    if float(text) == 0:
        return f"{0:.{decimals}f}"
    return text.replace("-", "−")


@dataclass(frozen=True)
class Linear:
    """The map from a value in ``[lo, hi]`` to a coordinate in ``[start, end]`` (``end`` may be
    below ``start``: a y axis grows upwards)."""

    lo: float
    hi: float
    start: float
    end: float

    def __call__(self, value: float) -> float:
        return self.start + (value - self.lo) / (self.hi - self.lo) * (self.end - self.start)

    def clamp(self, value: float) -> float:
        """``value`` limited to the domain, then mapped."""
        return self(min(max(value, self.lo), self.hi))


def x_axis(d: Drawing, scale: Linear, ticks, *, y: float, top: float | None = None,
           label: str | None = None, parent=None, fmt_tick=None) -> None:
    """A horizontal axis at ``y``: a baseline, tick marks and labels below it, grid lines up to
    ``top`` (drawn first, under the data), and an axis label."""
    step = ticks[1] - ticks[0] if len(ticks) > 1 else abs(ticks[0]) or 1.0
    g = d.group(parent, cls="x-axis")
    if top is not None:
        for t in ticks:
            d.line(scale(t), top, scale(t), y, parent=g, stroke=GRID)
    d.line(scale.start, y, scale.end, y, parent=g, stroke=INK)
    for t in ticks:
        x = scale(t)
        d.line(x, y, x, y + TICK, parent=g, stroke=INK)
        d.text(x, y + TICK + 8, fmt_tick(t) if fmt_tick else tick_label(t, step), parent=g,
               cls="x-tick", anchor="middle")
    if label:
        d.text((scale.start + scale.end) / 2, y + TICK + 26, label, parent=g, anchor="middle")


def y_axis(d: Drawing, scale: Linear, ticks, *, x: float, right: float | None = None,
           label: str | None = None, parent=None, fmt_tick=None) -> None:
    """A vertical axis at ``x``: a baseline, tick marks and labels to its left, grid lines
    across to ``right``, and an axis label turned a quarter left."""
    step = ticks[1] - ticks[0] if len(ticks) > 1 else abs(ticks[0]) or 1.0
    g = d.group(parent, cls="y-axis")
    if right is not None:
        for t in ticks:
            d.line(x, scale(t), right, scale(t), parent=g, stroke=GRID)
    d.line(x, scale.start, x, scale.end, parent=g, stroke=INK)
    widest = 0.0
    for t in ticks:
        y = scale(t)
        text = fmt_tick(t) if fmt_tick else tick_label(t, step)
        widest = max(widest, text_width(text))
        d.line(x - TICK, y, x, y, parent=g, stroke=INK)
        d.text(x - TICK - 3, y, text, parent=g, cls="y-tick", anchor="end")
    if label:
        lx = x - TICK - 3 - widest - 10
        d.text(lx, (scale.start + scale.end) / 2, label, parent=g, anchor="middle", rotate=-90)


def category_labels(d: Drawing, labels, ys, *, x: float, parent=None, cls="y-label") -> None:
    """Category names right-aligned just left of ``x``, one at each ``ys``."""
    g = d.group(parent, cls="y-categories")
    for text, y in zip(labels, ys):
        d.text(x - 6, y, text, parent=g, cls=cls, anchor="end")


@dataclass(frozen=True)
class Key:
    """A legend entry: ``label`` drawn after a swatch of ``kind`` (``marker``: a dot on a
    line, as an error bar; ``bar``: a filled square; ``diamond``) in ``colour``."""

    label: str
    colour: str
    kind: str = "marker"
    opacity: float | None = None


def legend_height(keys, width: float) -> float:
    """Height :func:`legend` takes for ``keys`` in ``width``."""
    return _legend_rows(keys, width)[1] * 18 if keys else 0.0


def legend(d: Drawing, keys, *, x: float, y: float, width: float) -> float:
    """Legend entries left to right from ``(x, y)``, wrapping at ``width``; returns the height
    used."""
    if not keys:
        return 0.0
    rows, n_rows = _legend_rows(keys, width)
    g = d.group(cls="legend")
    for key, (row, dx) in zip(keys, rows):
        cx, cy = x + dx + 7, y + 9 + 18 * row
        if key.kind == "bar":
            d.rect(cx - 6, cy - 5, 12, 10, parent=g, fill=key.colour,
                   fill_opacity=key.opacity)
        elif key.kind == "diamond":
            d.diamond(cx, cy, 4.5, parent=g, fill=key.colour)
        else:
            d.line(cx - 7, cy, cx + 7, cy, parent=g, stroke=key.colour, stroke_width=1.5)
            d.circle(cx, cy, 3.5, parent=g, fill=key.colour)
        d.text(cx + 12, cy, key.label, parent=g, cls="legend-label")
    return n_rows * 18.0


def _legend_rows(keys, width: float) -> tuple[list[tuple[int, float]], int]:
    """Each key's ``(row, x offset)`` when laid out left to right within ``width``."""
    out, row, dx = [], 0, 0.0
    for key in keys:
        w = 26 + text_width(key.label, FONT_SIZE) + 16
        if dx > 0 and dx + w > width:
            row, dx = row + 1, 0.0
        out.append((row, dx))
        dx += w
    return out, row + 1
