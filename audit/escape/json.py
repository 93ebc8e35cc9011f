"""JSON text (``results.json``, ``croissant.json``, ``--json``): every string kept exactly, the
file always UTF-8, and inert wherever it is printed.

:func:`json.dumps` escapes quotes, backslashes and the C0 controls itself; with
``ensure_ascii=False`` it writes every other character raw. Three kinds of them matter:

* a lone surrogate (U+D800-U+DFFF). Python holds one in a string made from bytes that are not
  UTF-8 with ``surrogateescape``: a file name on a POSIX system (``caf\\xe9.csv`` written in
  Latin-1 is ``'caf\\udce9.csv'``), a command-line argument (``--tag``). Written raw, the text
  cannot be encoded as UTF-8 at all: the whole file was lost (an internal error, exit 3);
* the rest of :data:`audit.escape.CONTROL`: DEL and the C1 controls (``\\x9b`` starts a
  terminal sequence as ESC ``[`` does), the line and paragraph separators, the bidi controls
  and the characters that draw nothing, which act on a terminal, reorder a line or hide in it
  when the file is printed (``cat results.json``, ``check --json /dev/stdout``);
* ``##[``, which starts a legacy GitHub workflow command anywhere in a line of a job's log
  (:mod:`audit.escape.github`): a model named ``m ##[add-mask]secret`` in
  ``check --json /dev/stdout`` masked ``secret`` for the rest of the job.

:func:`text` writes each of them as JSON's own ``\\uXXXX`` escape (``##[`` as ``##\\u005b``), so
a JSON reader gets every string back exactly as it was written, and the text holds nothing a
terminal or the Actions runner acts on: its lines are indented (they start with a space, a
quote or a bracket, never ``::``) and line breaks inside strings are ``\\n``. RFC 8259
(section 7) allows any code unit as an escape; section 8.2 warns that readers other than
Python's may refuse or replace a lone surrogate. The ingest refuses a lone surrogate inside the
data (:mod:`audit.contract.labels.column`); names that come from outside it (a path, a flag)
reach this channel. Two lone surrogates that together form a pair (``'\\ud83d\\ude00'``) read
back as the one character they encode (``'😀'``); ``surrogateescape`` never makes such a pair
(it makes only U+DC80-U+DCFF).
"""

from __future__ import annotations

import re

from . import CONTROL_BUT_BREAKS

#: What :func:`text` escapes: :data:`audit.escape.CONTROL` but tab, LF and CR (which
#: :func:`json.dumps` escapes inside strings and writes raw only as the layout's line breaks),
#: and ``##[``.
RAW = re.compile(f"{CONTROL_BUT_BREAKS.pattern}|##\\[")


def _escape(match: re.Match) -> str:
    found = match.group()
    if found == "##[":
        return "##\\u005b"
    code = ord(found)
    if code > 0xFFFF:  # a UTF-16 pair, as JSON writes a character past the BMP
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def text(dumped: str) -> str:
    """``dumped`` (the output of :func:`json.dumps` with ``ensure_ascii=False``) with every
    :data:`RAW` match written as its ``\\uXXXX`` escape: encodable as UTF-8, inert when printed,
    and read back by :func:`json.loads` as the value dumped. Text without one is returned
    unchanged."""
    return RAW.sub(_escape, dumped)
