"""XML 1.0 text and attribute values (the JUnit file, the report's SVG chart labels).

Markup characters (``<``, ``&``, quotes) are the serializer's business: documents are built with
:mod:`xml.etree.ElementTree`, never by string concatenation. What no serializer can fix is a
character XML 1.0 does not allow at all, even as a character reference (the ``Char`` production,
XML 1.0 section 2.2): C0 controls other than tab, LF and CR, lone surrogates, U+FFFE and U+FFFF.
One of them in a model name would make the whole file unparseable, so they are shown as escapes
(``\\x1b``, ``\\ud800``), as is everything else the other channels show
(:data:`audit.escape.CONTROL`): the C1 controls and DEL, which XML 1.0 allows but discourages and
which CI viewers show as nothing, the bidirectional controls, which reorder a test's name where a
CI server shows it, and the characters that draw nothing (:data:`audit.escape.INVISIBLE`).

:func:`attribute` keeps tab, LF and CR (ElementTree writes them as character references, so they
parse back); :func:`text` also shows CR as ``\\r``, because an XML parser turns a literal CR in
character data into LF (line-end normalisation, section 2.11). So for every string ``s``, parsing
the serialized document gives back exactly ``attribute(s)`` / ``text(s)``.
"""

from __future__ import annotations

import re

from . import CONTROL_BUT_BREAKS, visible

#: Characters outside XML 1.0's ``Char`` production (C0 controls but tab, LF and CR; lone
#: surrogates; U+FFFE, U+FFFF), and the rest of :data:`audit.escape.CONTROL` but tab, LF and CR.
NOT_XML = CONTROL_BUT_BREAKS
_NOT_XML_TEXT = re.compile(f"{NOT_XML.pattern}|\r")


def attribute(value) -> str:
    """``value`` as an XML attribute value (before the serializer quotes it)."""
    return visible(value, NOT_XML)


def text(value) -> str:
    """``value`` as XML character data (before the serializer escapes ``<`` and ``&``)."""
    return visible(value, _NOT_XML_TEXT)


def document(root) -> str:
    """The XML document of an :class:`xml.etree.ElementTree.Element`, indented, with its
    declaration: the one way this package writes XML."""
    import xml.etree.ElementTree as ET

    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") \
        + "\n"
