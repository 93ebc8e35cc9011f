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

The file is also inert when printed in a GitHub Actions log (:func:`inert`): workflow-command
syntax that a text node brings is written as character references, which parse back unchanged.
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


#: A line of the serialized document that starts, after blanks, with ``::`` (a workflow
#: command to the Actions runner, which trims what Python's ``\s`` matches); only a line break
#: inside a text node can start such a line, since the markup's own lines start with ``<``.
_COMMAND_LINE = re.compile(r"^([^\S\n]*):(?=:)", re.M)


def inert(serialized: str) -> str:
    """``serialized`` XML with the workflow-command syntax of GitHub Actions
    (:mod:`audit.escape.github`) written as character references: a line's leading ``::`` as
    ``&#58;:``, every ``##[`` as ``##&#91;``. An XML parser reads the same text back (a
    character reference is the character), and the file printed in a CI log
    (``--junit /dev/stdout``, ``cat junit.xml``) issues no command: a model named
    ``m\n::add-mask::x`` sits on a line of a ``<failure>`` body of its own. Markup never holds
    either (tags start lines with ``<``; attribute values hold line breaks as ``&#10;``)."""
    return _COMMAND_LINE.sub(r"\1&#58;", serialized).replace("##[", "##&#91;")


def document(root) -> str:
    """The XML document of an :class:`xml.etree.ElementTree.Element`, indented, with its
    declaration, made :func:`inert` for a CI log: the one way this package writes XML."""
    import xml.etree.ElementTree as ET

    ET.indent(root)
    return inert('<?xml version="1.0" encoding="utf-8"?>\n'
                 + ET.tostring(root, encoding="unicode") + "\n")
