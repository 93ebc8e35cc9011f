"""GitHub Actions workflow commands for a validation result: ``::error file=...,line=...::...``.

A pure function of great_expectations' validation-result JSON. Each failed expectation becomes
one error annotation pointing at its line in the suite file, so the pull request shows the broken
claim next to the line that states it.

Every string in a command (the message, the suite path, the expectation's title) may come from
the pull request under test, so each goes through :mod:`audit.escape.github` (GitHub's escaping
of ``%``, CR and LF in the message; also ``:`` and ``,`` in properties): whatever a model name,
item id or suite line holds, a command stays one line and exactly one command. Control characters
other than tab, LF and CR are shown as escapes (``\\x1b``) first, so none reaches a terminal or
the annotation raw; line breaks stay line breaks of the annotation.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..escape import visible
from ..escape import github as esc
from .outcomes import summary

#: The control characters shown as escapes in a command; tab, LF and CR are GitHub's to escape.
_SHOWN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e"
                    "\u2066-\u2069\ud800-\udfff]")


def command(level: str, message, *, file=None, line=None, title=None) -> str:
    """One workflow command, e.g. ``::error file=s.yaml,line=3,title=t::message``."""
    shown = lambda v: None if v is None else visible(v, _SHOWN)  # noqa: E731
    return esc.command(level, shown(message), file=shown(file), line=line, title=shown(title))


def annotations(validation: Mapping, *, path: str | None = None) -> list[str]:
    """One ``::error`` line per failed expectation (``path`` overrides the suite path recorded in
    the result, e.g. to make it relative to the repository root)."""
    block = summary(validation)
    path = path or block.get("path")
    out = []
    for r in block["results"]:
        if r["passed"]:
            continue
        message = r["message"] + (f" — claim: {r['claim']}" if r.get("claim") else "")
        out.append(command("error", message, file=path, line=r.get("line"),
                           title=f"expectation failed: {r['expectation']}"))
    return out
