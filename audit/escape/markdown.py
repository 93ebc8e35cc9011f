"""The dataset card: dataset strings as inert Markdown, and its YAML front matter.

The card is read by the Hugging Face Hub, which renders its Markdown (CommonMark with GitHub's
extensions, raw HTML allowed but sanitised) and parses its YAML header. A pool or model name must
show as the text it is, wherever it lands: in a table cell, a list item, a heading, the start of
a paragraph. :func:`inline` therefore

* folds whitespace to single spaces (a name is one line: a line break could end a table row
  or start a block);
* shows the remaining control characters as escapes (:func:`audit.escape.visible`);
* writes ``&``, ``<`` and ``>`` as entities (no HTML tag, comment or card marker can form);
* backslash-escapes every Markdown punctuation character that can start or end inline markup
  (emphasis, code, links and images, tables, strikethrough, math): ``\\ ` * _ { } [ ] | ~ # $ !``;
* backslash-escapes a ``-``, ``+`` or ``=`` that starts the string and the ``.`` or ``)`` after a
  leading number, which would otherwise start a list, a setext heading or a thematic break when
  the name begins a line.

:func:`one_line` is the first two steps alone, for a YAML value shown as text (the card's
default ``pretty_name``, the dataset's name: ``two lines``, ``my\\x1b[31mset``, as its title shows
it). :func:`front_matter` writes the metadata block with PyYAML's safe serializer, so any value,
whatever it holds, parses back with :func:`yaml.safe_load` to the value written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from . import CONTROL, CONTROL_BUT_BREAKS, visible

_PUNCTUATION = re.compile(r"([\\`*_{}\[\]|~#$!])")
_BLOCK_START = re.compile(r"^([-+=])|^(\d+)([.)])")


def one_line(value) -> str:
    """``value`` as one line of plain text, as :func:`inline` shows it before Markdown's
    escapes: whitespace folded to single spaces (line breaks included), the remaining
    :data:`audit.escape.CONTROL` characters shown as escapes (``\\x1b``). For a YAML value the
    Hub shows as text, such as the card's ``pretty_name`` taken from the dataset's name: a
    ``pretty_name`` given by a flag or the spec with a control character is refused
    (:mod:`audit.report.card_meta`), one derived from a file name is written so instead."""
    return visible(" ".join(str(value).split()), CONTROL)


def inline(value) -> str:
    """``value`` as inert inline Markdown on one line (module docstring)."""
    out = one_line(value)
    out = out.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    out = _PUNCTUATION.sub(r"\\\1", out)
    return _BLOCK_START.sub(lambda m: f"\\{m.group(1)}" if m.group(1)
                            else f"{m.group(2)}\\{m.group(3)}", out)


def front_matter(data: Mapping) -> str:
    """``data`` as the YAML of a card's metadata block (without the ``---`` lines).

    Written by :func:`yaml.dump` with the safe representer, so any value, whatever it holds, is
    read back by :func:`yaml.safe_load` as written. Two things are added to PyYAML's defaults: a
    string holding a character outside printable Unicode (controls, NEL, the line and paragraph
    separators, a byte-order mark, a lone surrogate) or any other :data:`audit.escape.CONTROL`
    character (the bidi controls, a zero-width space) is written double-quoted, with every such
    character as its YAML escape (``\\x1b``, ``\\N``, ``\\u202E``): PyYAML writes NEL raw in
    its other styles and reads it back as a space, and would write a bidi control raw, reordering
    the line for whoever reviews the card's source; and strings are never folded across lines, so
    no line of the block can begin with ``---`` and end it early in a reader that does not parse
    YAML. The dumper is :mod:`audit.ingest.yamlsafe`'s, which also quotes every text YAML 1.1
    or YAML 1.2's core schema would read as something else: PyYAML alone wrote a dataset named
    ``08`` or ``1e3`` plain, text to a YAML 1.1 reader (``huggingface_hub``) and a number to a
    YAML 1.2 one (the Hub's own pages).
    """
    import yaml

    from ..ingest.yamlsafe import _Dumper  # the one YAML writer of the package (its docstring)

    return yaml.dump(dict(data), Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                     width=2 ** 31 - 1).rstrip("\n")


_UNSAFE_IN_YAML = re.compile("[^\x20-\x7e\xa0-\ud7ff\ue000-\ufefe\uff00-\ufffd"
                             "\U00010000-\U0010ffff]")


def _unsafe(value: str) -> bool:
    return bool(_UNSAFE_IN_YAML.search(value) or CONTROL_BUT_BREAKS.search(value))


def escaping_strings(dumper: type) -> type:
    """``dumper`` (a subclass of PyYAML's ``SafeDumper``, changed in place and returned) writing
    a string that holds a character outside printable Unicode or a :data:`CONTROL` character
    double-quoted, each such character as its YAML escape (:func:`front_matter` says why):
    what every YAML file this package writes (the card's header, ``export``'s spec) does."""

    def write_double_quoted(self, text, split=True):
        # PyYAML escapes in double quotes only what it cannot print; with allow_unicode off it
        # escapes every character past ASCII, the CONTROL ones included (only a string holding
        # one is written so; line breaks alone keep it readable)
        base = super(dumper, self).write_double_quoted
        if not CONTROL_BUT_BREAKS.search(text):
            return base(text, split)
        unicode, self.allow_unicode = self.allow_unicode, False
        try:
            return base(text, split)
        finally:
            self.allow_unicode = unicode

    def represent_str(self, value):
        return self.represent_scalar("tag:yaml.org,2002:str", value,
                                     style='"' if _unsafe(value) else None)

    dumper.write_double_quoted = write_double_quoted
    dumper.add_representer(str, represent_str)
    return dumper
