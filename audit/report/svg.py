"""The SVG sanitiser: a chart's SVG reduced to drawing elements, safe to paste into HTML.

matplotlib's SVG is re-parsed with :mod:`xml.etree` and only an allow-list of drawing elements
and attributes is kept: no scripts, no ``on*`` event handlers, no ``foreignObject``, no link
outside the document, no style that loads anything. Text is re-serialised by the parser, which
escapes ``<``, ``>`` and ``&``; the report's dataset strings reach the SVG only as ``<text>``
content (:mod:`audit.report.charts`).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"

_ALLOWED_TAGS = frozenset({"svg", "g", "defs", "clipPath", "path", "use", "text", "tspan", "rect",
                           "circle", "ellipse", "line", "polyline", "polygon", "style", "title"})
_ALLOWED_ATTRS = frozenset({"id", "class", "d", "x", "y", "x1", "x2", "y1", "y2", "cx", "cy",
                            "r", "rx", "ry", "width", "height", "viewBox", "version",
                            "transform", "style", "clip-path", "fill", "stroke", "points",
                            "stroke-width", "stroke-linecap", "stroke-linejoin", "opacity",
                            "fill-opacity", "stroke-opacity", "text-anchor", "href",
                            "preserveAspectRatio", "font-family", "font-size", "font-weight",
                            "font-style", "dominant-baseline"})
_MPL_STYLE = re.compile(r"^\s*\*\s*\{\s*stroke-linejoin:\s*round;\s*stroke-linecap:\s*butt\s*\}\s*$")
_BAD_CSS = re.compile(r"url\(\s*['\"]?(?!#)|expression\s*\(|@import|javascript:|<", re.I)


def sanitize_svg(svg: str) -> str:
    """Keep only drawing elements and attributes of an SVG document; return it without prolog.

    Elements outside the allow-list are dropped with their content; ``on*`` handlers and any
    attribute not on the allow-list are dropped; ``href`` may only point inside the document
    (``#id``); style values may not load anything (``url(`` other than ``url(#...)``, ``@import``).
    Text is re-serialised by :mod:`xml.etree`, which escapes ``<``, ``>`` and ``&``.
    """
    ET.register_namespace("", SVG_NS)
    ET.register_namespace("xlink", XLINK_NS)
    root = ET.fromstring(svg.encode("utf-8"))
    _clean(root)
    return ET.tostring(root, encoding="unicode", short_empty_elements=True)


def _local(name: str) -> str:
    return name.rsplit("}", 1)[-1]


def _clean(el: ET.Element) -> None:
    for child in list(el):
        tag = _local(child.tag) if isinstance(child.tag, str) else ""
        if tag not in _ALLOWED_TAGS or (tag == "style" and not _MPL_STYLE.match(child.text or "")):
            el.remove(child)
            continue
        _clean(child)
    for key in list(el.attrib):
        name, value = _local(key), el.attrib[key]
        if name not in _ALLOWED_ATTRS:
            del el.attrib[key]
        elif name == "href" and not value.startswith("#"):
            del el.attrib[key]
        elif _BAD_CSS.search(value):
            del el.attrib[key]
