"""JSON text (``results.json``, ``croissant.json``, ``--json``): every string kept exactly, and
the file always UTF-8.

:func:`json.dumps` escapes quotes, backslashes and control characters itself, so JSON needs no
escaping of its own, with one exception: a lone surrogate (U+D800-U+DFFF). Python holds one in
a string made from bytes that are not UTF-8 with ``surrogateescape``: a file name on a POSIX
system (``caf\\xe9.csv`` written in Latin-1 is ``'caf\\udce9.csv'``), a command-line argument
(``--tag``). With ``ensure_ascii=False`` it is written raw, and the text cannot be encoded as
UTF-8 at all: the whole file was lost (an internal error, exit 3). :func:`text` writes each lone
surrogate as JSON's ``\\uXXXX`` escape instead, which :func:`json.loads` reads back as the same
code point, so the string is still the one written (RFC 8259, section 7, allows any code unit as
an escape; section 8.2 warns that readers other than Python's may refuse or replace it). The
ingest refuses a lone surrogate inside the data (:mod:`audit.contract.labels.column`); names that come
from outside the data (a path, a flag) reach this channel.

Two lone surrogates that together form a pair (``'\\ud83d\\ude00'``) read back as the one
character they encode (``'😀'``); ``surrogateescape`` never makes such a pair (it makes only
U+DC80-U+DCFF).
"""

from __future__ import annotations

import re

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match) -> str:
    return f"\\u{ord(match.group()):04x}"


def text(dumped: str) -> str:
    """``dumped`` (the output of :func:`json.dumps` with ``ensure_ascii=False``) with every lone
    surrogate written as its ``\\uXXXX`` escape: encodable as UTF-8, and read back by
    :func:`json.loads` as the value dumped. Text without one is returned unchanged."""
    return _LONE_SURROGATE.sub(_escape, dumped)
