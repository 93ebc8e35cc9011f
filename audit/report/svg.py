"""The SVG sanitiser: a chart's SVG reduced to what the chart builder writes, safe to paste into
HTML.

The charts are written by :mod:`audit.report.svgdraw` through :mod:`xml.etree`, so they hold
only shapes, text and tooltips. This re-parses a chart and keeps exactly that: an allow-list of
drawing elements (no scripts, no ``foreignObject``, no ``<style>``, no links, no ``<use>``) and
of presentation attributes (no ``on*`` event handlers, no ``href``, no ``style``), and drops any
attribute value that could load or run something (``url(`` other than ``url(#...)``,
``javascript:``, ``expression(``, ``@import``). It is defence in depth: the builder already
escapes every string; the sanitiser makes sure that whatever reaches the page is inert even if
a chart function is later written carelessly. Text is re-serialised by the parser, which
escapes ``<``, ``>`` and ``&``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

SVG_NS = "http://www.w3.org/2000/svg"

_ALLOWED_TAGS = frozenset({"svg", "g", "title", "desc", "rect", "line", "polyline", "polygon",
                           "circle", "path", "text", "tspan"})
_ALLOWED_ATTRS = frozenset({"id", "class", "role", "aria-labelledby", "aria-hidden", "version",
                            "width", "height", "viewBox", "x", "y", "x1", "x2", "y1", "y2",
                            "cx", "cy", "r", "d", "points", "transform", "fill", "stroke",
                            "stroke-width", "stroke-dasharray", "stroke-linecap",
                            "stroke-linejoin", "opacity", "fill-opacity", "stroke-opacity",
                            "text-anchor", "dominant-baseline", "font-family", "font-size",
                            "font-weight", "font-style"})
_BAD_VALUE = re.compile(r"url\(\s*['\"]?(?!#)|expression\s*\(|@import|javascript:|<", re.I)


def sanitize_svg(svg: str) -> str:
    """Keep only drawing elements and attributes of an SVG document; return it without prolog.

    Elements outside the allow-list are dropped with their content; attributes outside it
    (``on*`` handlers, ``href``, ``style``, any namespaced attribute) are dropped, as is any
    value that could load or run something.
    """
    ET.register_namespace("", SVG_NS)
    root = ET.fromstring(svg.encode("utf-8"))
    _clean(root)
    return ET.tostring(root, encoding="unicode", short_empty_elements=True)


def _local(name: str) -> str | None:
    """The name of an SVG element or an un-namespaced attribute; None for anything else."""
    if name.startswith("{"):
        ns, _, local = name[1:].partition("}")
        return local if ns == SVG_NS else None
    return name


def _clean(el: ET.Element) -> None:
    for child in list(el):
        tag = _local(child.tag) if isinstance(child.tag, str) else None
        if tag not in _ALLOWED_TAGS:
            el.remove(child)
            continue
        _clean(child)
    for key in list(el.attrib):
        if _local(key) not in _ALLOWED_ATTRS or _BAD_VALUE.search(el.attrib[key]):
            del el.attrib[key]
