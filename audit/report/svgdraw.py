"""A small SVG builder for the report's charts: shapes, text and tooltips, serialised by
:mod:`xml.etree.ElementTree`.

Why not matplotlib: the report's charts are a few dozen marks each, but a matplotlib figure with
a constrained layout costs 0.2-1.7 s to lay out and save (three draws per ``savefig``) and 0.6 s
to import; at 1M judgments the eight charts took ~6 s of a ~19 s audit. Writing the elements
directly costs milliseconds, and the size of a chart depends only on what it draws (pools,
models, label values), never on the number of judgments.

Every string goes through the serializer, never through string concatenation: ``<``, ``&`` and
quotes are the serializer's business, and characters XML 1.0 cannot hold at all (C0 controls,
lone surrogates) are shown as escapes first (:mod:`audit.escape.xml`), so any dataset string
yields a document that parses. Coordinates are rounded to hundredths of a unit: the same
results give the same bytes.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ..escape import xml as xml_escape

SVG_NS = "http://www.w3.org/2000/svg"
#: Font stack of every chart (the page's own sans-serif stack).
FONT = "DejaVu Sans, Liberation Sans, Arial, Helvetica, sans-serif"
#: Text size of tick labels and legends, in user units (a chart is drawn 760 units wide, the
#: width the page shows it at, so one unit is one CSS pixel there).
FONT_SIZE = 12
#: Average advance of a character in :data:`FONT`, as a share of the font size: enough for
#: DejaVu Sans (the widest of the stack), so a label estimated to fit does fit.
CHAR_WIDTH = 0.6


def fmt(x: float) -> str:
    """A coordinate with at most two decimals and no trailing zeros (``12.5``, ``3``, ``-0.25``)."""
    text = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def text_width(text: str, size: float = FONT_SIZE) -> float:
    """Estimated width of ``text`` set in :data:`FONT` at ``size`` (no font metrics at hand:
    :data:`CHAR_WIDTH` per character)."""
    return len(text) * size * CHAR_WIDTH


class Drawing:
    """One SVG document: ``width`` x ``height`` user units, with an accessible name and
    description (``role="img"``, ``<title>`` and ``<desc>`` referenced by ``aria-labelledby``).

    Parameters
    ----------
    name
        Chart name, unique on the page: the ids of the title and description derive from it
        (never from dataset strings).
    title, desc
        The chart's accessible name and a one-sentence description of what it shows.
    """

    def __init__(self, name: str, width: float, height: float, *, title: str, desc: str):
        self.width, self.height = width, height
        ident = f"chart-{name}"
        self.root = ET.Element("svg", {
            "xmlns": SVG_NS, "version": "1.1", "width": fmt(width), "height": fmt(height),
            "viewBox": f"0 0 {fmt(width)} {fmt(height)}", "role": "img",
            "aria-labelledby": f"{ident}-title {ident}-desc", "font-family": FONT,
            "font-size": str(FONT_SIZE)})
        ET.SubElement(self.root, "title", {"id": f"{ident}-title"}).text = xml_escape.text(title)
        ET.SubElement(self.root, "desc", {"id": f"{ident}-desc"}).text = xml_escape.text(desc)

    # -- containers -------------------------------------------------------------------------------
    def group(self, parent: ET.Element | None = None, *, cls: str | None = None,
              tip: str | None = None, **attrs) -> ET.Element:
        """A ``<g>`` (under ``parent``, else the root) with a class and a tooltip."""
        return self._add(parent, "g", cls, tip, attrs)

    # -- shapes -----------------------------------------------------------------------------------
    def rect(self, x: float, y: float, w: float, h: float, *, parent=None, cls=None, tip=None,
             **attrs) -> ET.Element:
        """A rectangle; a negative ``w`` or ``h`` is drawn from the other corner."""
        x, w = (x + w, -w) if w < 0 else (x, w)
        y, h = (y + h, -h) if h < 0 else (y, h)
        return self._add(parent, "rect", cls, tip, {"x": fmt(x), "y": fmt(y), "width": fmt(w),
                                                    "height": fmt(h), **attrs})

    def line(self, x1: float, y1: float, x2: float, y2: float, *, parent=None, cls=None,
             tip=None, **attrs) -> ET.Element:
        return self._add(parent, "line", cls, tip, {"x1": fmt(x1), "y1": fmt(y1),
                                                    "x2": fmt(x2), "y2": fmt(y2), **attrs})

    def circle(self, cx: float, cy: float, r: float, *, parent=None, cls=None, tip=None,
               **attrs) -> ET.Element:
        return self._add(parent, "circle", cls, tip, {"cx": fmt(cx), "cy": fmt(cy),
                                                      "r": fmt(r), **attrs})

    def polyline(self, points, *, parent=None, cls=None, tip=None, **attrs) -> ET.Element:
        return self._add(parent, "polyline", cls, tip, {"points": _points(points),
                                                        "fill": "none", **attrs})

    def polygon(self, points, *, parent=None, cls=None, tip=None, **attrs) -> ET.Element:
        return self._add(parent, "polygon", cls, tip, {"points": _points(points), **attrs})

    def diamond(self, cx: float, cy: float, r: float, **kwargs) -> ET.Element:
        """A diamond marker of half-diagonal ``r`` centred on ``(cx, cy)``."""
        return self.polygon([(cx, cy - r), (cx + r, cy), (cx, cy + r), (cx - r, cy)], **kwargs)

    def text(self, x: float, y: float, content, *, parent=None, cls=None, anchor: str = "start",
             size: float | None = None, bold: bool = False, rotate: float | None = None,
             **attrs) -> ET.Element:
        """Text whose baseline middle sits at ``y`` (``dominant-baseline="central"``), aligned by
        ``anchor`` (``start``, ``middle``, ``end``), rotated by ``rotate`` degrees about
        ``(x, y)``. ``content`` is shown as written (:func:`audit.escape.xml.text`)."""
        attrs = {"x": fmt(x), "y": fmt(y), "dominant-baseline": "central", **attrs}
        if anchor != "start":
            attrs["text-anchor"] = anchor
        if size is not None:
            attrs["font-size"] = fmt(size)
        if bold:
            attrs["font-weight"] = "bold"
        if rotate:
            attrs["transform"] = f"rotate({fmt(rotate)} {fmt(x)} {fmt(y)})"
        el = self._add(parent, "text", cls, None, attrs)
        el.text = xml_escape.text(content)
        return el

    # -- output -----------------------------------------------------------------------------------
    def to_svg(self) -> str:
        """The document as a string, without an XML declaration (it is pasted into HTML)."""
        return ET.tostring(self.root, encoding="unicode", short_empty_elements=True)

    def _add(self, parent, tag: str, cls, tip, attrs: dict) -> ET.Element:
        attrs = {k.replace("_", "-"): xml_escape.attribute(str(v)) for k, v in attrs.items()
                 if v is not None}
        if cls:
            attrs["class"] = cls
        el = ET.SubElement(self.root if parent is None else parent, tag, attrs)
        if tip:
            ET.SubElement(el, "title").text = xml_escape.text(tip)
        return el


def _points(points) -> str:
    return " ".join(f"{fmt(x)},{fmt(y)}" for x, y in points)
