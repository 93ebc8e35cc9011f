"""The HTML report's text: what Jinja2's autoescape leaves to do.

Autoescape (:mod:`audit.report.html`'s environment) makes ``< > & " '`` inert, so no dataset
string can add markup. It leaves characters a browser acts on without showing them: the
bidirectional controls (Unicode Technical Report 36; "Trojan Source", Boucher & Anderson 2021),
which reorder the sentence around a pool name so that a reader sees another claim than the one
written, the line and paragraph separators, C0 and C1 controls (an ESC replays terminal escape
sequences when the file is printed with ``cat``), lone surrogates, and the characters that draw
nothing (a zero-width space, a byte-order mark: :data:`audit.escape.INVISIBLE`), which make two
pools' columns read alike. :func:`text` shows those
as escapes (``\\u202e``, ``\\x1b``), as the terminal and the dataset card do; tab, line feed and
carriage return stay (HTML renders them as white space).
"""

from __future__ import annotations

from . import CONTROL_BUT_BREAKS, visible

#: :data:`audit.escape.CONTROL` but tab, line feed and carriage return.
HIDDEN = CONTROL_BUT_BREAKS


def text(value) -> str:
    """``value`` (made a string) with every :data:`HIDDEN` character shown as its escape."""
    return visible(value, HIDDEN)


def finalize(value):
    """Jinja2's ``finalize`` for the report: every plain string an expression outputs goes
    through :func:`text` before autoescape; markup the renderer built (the charts' SVG, whose
    labels :func:`audit.report.charts.short` already made safe) and non-strings pass as they
    are."""
    from markupsafe import Markup

    if isinstance(value, str) and not isinstance(value, Markup):
        return text(value)
    return value
