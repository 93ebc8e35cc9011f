"""Escaping at the boundary: one small module per output channel.

Every string a dataset carries (item and annotator ids, pool and model names, labels, item texts)
and every string of a suite or spec is written by whoever wrote the file, which for a dataset pull
request checked in CI is anyone. Each output channel has its own syntax, so each has its own
escaper, applied where a renderer puts a string into its output and nowhere earlier:
``results.json`` and the exports keep every string exactly as written.

====================  =================  ===========================================================
channel               module             guarantee
====================  =================  ===========================================================
GitHub Actions log    :mod:`.github`     a workflow command's message and properties escaped by
                                         GitHub's rules (unescaping gives the string back); no
                                         string can start a line as ``::command`` or hold a legacy
                                         ``##[command]``, so data cannot add, mask or silence a
                                         workflow command
terminal and logs     :mod:`.terminal`   control, line-separator, bidi and invisible characters
                                         shown as ``\\x1b``-style escapes, never raw; rich markup
                                         escaped (``[/x]`` shows as text); workflow-command syntax
                                         defused (every terminal line may be a CI log line)
JUnit XML             :mod:`.xml`        characters XML 1.0 cannot hold, and the rest of
                                         :data:`CONTROL` but tab, LF and CR, shown as escapes; the
                                         file built by :mod:`xml.etree` (a serializer)
dataset card          :mod:`.markdown`   Markdown and HTML-active characters escaped in the body;
                                         YAML front matter written by a YAML serializer
HTML report           :mod:`.html`       autoescape in :mod:`audit.report.html`, and every plain
                                         string's control, separator, bidi and invisible
                                         characters shown as escapes (Jinja2 ``finalize``); chart
                                         labels made XML-safe by :mod:`.xml` and shown the same
                                         way
JSON files            :mod:`.json`       ``results.json``, ``croissant.json``, ``--json``: every
                                         string read back by :func:`json.loads` as written; lone
                                         surrogates (a name that is not UTF-8), the rest of
                                         :data:`CONTROL` and ``##[`` as JSON's ``\\uXXXX``
                                         escapes, so the text is UTF-8 and inert when printed
CSV / Parquet export  (none)             cells written as data, formula-looking ones included
                                         (:mod:`audit.export` says why); so is ``items.parquet``
spreadsheet CSV       ``.spreadsheet``   ``items.csv``: a text cell or column name a spreadsheet
                                         would evaluate (``= + - @``, tab or CR first, not a plain
                                         number) prefixed with ``'``, reversibly
====================  =================  ===========================================================

:func:`visible` is the shared primitive: it shows chosen characters the way Python's ``repr`` does
(``\\n``, ``\\x1b``, ``\\u202e``, ``\\u200b``), so a reader sees that the string holds them;
:data:`CONTROL` (and :data:`CONTROL_BUT_BREAKS`, the same without tab, LF and CR) is the one list
of characters every channel shows, so a name reads the same in each.
"""

from __future__ import annotations

import re

#: Characters that draw nothing, so that ``crowd`` and ``crowd`` + U+200B read as one name in a
#: table while the audit counts two (and the tag characters U+E0000-U+E007F spell hidden ASCII
#: text, "ASCII smuggling"): the soft hyphen, the Mongolian vowel separator, the zero-width space,
#: the word joiner and the invisible operators, the deprecated format controls U+206A-U+206F, the
#: byte-order mark (zero-width no-break space), the interlinear annotation controls, the tags, and
#: the noncharacters U+FDD0-U+FDEF, U+FFFE, U+FFFF, which no text should hold. Left as they are:
#: the zero-width joiner and non-joiner (U+200C, U+200D), which shape Persian, Indic and emoji
#: text, and the variation selectors, which pick a glyph's form; both draw as part of a visible
#: character.
INVISIBLE = ("\xad\u180e\u200b\u2060-\u2064\u206a-\u206f\ufeff\ufff9-\ufffb\ufdd0-\ufdef"
             "\ufffe\uffff\U000e0000-\U000e007f")
#: What every channel shows as an escape besides the C0 controls: DEL and the C1 controls (ESC
#: starts terminal escape sequences; NEL ends lines), lone surrogates (not encodable), the line
#: and paragraph separators, the bidirectional controls (Unicode Technical Report 36, "Trojan
#: Source", Boucher & Anderson 2021), which reorder what a reader sees, and :data:`INVISIBLE`.
_SHOWN = "\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff" + INVISIBLE
#: Characters no terminal or log line should receive raw: the C0 controls (CR, LF, VT and FF end
#: lines) and everything above.
CONTROL = re.compile(f"[\x00-\x1f{_SHOWN}]")
#: :data:`CONTROL` but tab, line feed and carriage return: for a channel that has its own way to
#: keep line breaks (HTML renders them as white space; a workflow command and XML escape them).
CONTROL_BUT_BREAKS = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f{_SHOWN}]")

_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _show(match: re.Match) -> str:
    ch = match.group()
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def visible(text, pattern: re.Pattern = CONTROL) -> str:
    """``text`` (made a string) with every character ``pattern`` matches shown as its escape:
    ``\\t``, ``\\n``, ``\\r``, ``\\xNN`` below U+0100, else ``\\uNNNN`` / ``\\UNNNNNNNN``."""
    return pattern.sub(_show, str(text))
