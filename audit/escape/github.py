"""GitHub Actions workflow commands: escaping by GitHub's rules, and lines that cannot be one.

The Actions runner reads every line a step prints (standard output and standard error) and acts
on two syntaxes (``actions/runner``, ``src/Runner.Common/ActionCommand.cs``):

* ``::name key=value,...::data``, when the line *starts* with ``::`` after leading whitespace;
* the legacy ``##[name key=value;...]data``, *anywhere* in a line.

Registered names include ``error``, ``warning``, ``add-mask``, ``stop-commands``, ``group`` and
``set-output``; ``stop-commands`` switches processing off for the rest of the job. A dataset
string must therefore never start a line with ``::`` nor hold ``##[``: :func:`message` and
:func:`prop` escape a string inside a command we write (GitHub's rules: ``%`` as ``%25``, CR as
``%0D``, LF as ``%0A`` in data; additionally ``:`` as ``%3A`` and ``,`` as ``%2C`` in property
values; the runner unescapes them, :func:`unescape_message` / :func:`unescape_property` do the
same), and :func:`defuse` makes any other text inert wherever it lands in a line.
"""

from __future__ import annotations

import re

_DATA = (("%", "%25"), ("\r", "%0D"), ("\n", "%0A"))
_PROPERTY = _DATA + ((":", "%3A"), (",", "%2C"))
#: ``::`` where a line, or a word a renderer may wrap onto a new line, starts.
_LEADING_COLONS = re.compile(r"(?:^|(?<=\s))::")
_LEGACY = "##["


def message(text) -> str:
    """``text`` as the data of a workflow command (after the second ``::``): one line."""
    out = str(text)
    for token, replacement in _DATA:
        out = out.replace(token, replacement)
    return out


def prop(text) -> str:
    """``text`` as a property value of a workflow command (``file=``, ``title=``): one line,
    without the ``:`` and ``,`` that end a property list."""
    out = str(text)
    for token, replacement in _PROPERTY:
        out = out.replace(token, replacement)
    return out


def _unescape(text: str, mapping) -> str:
    # the runner's order: every mapping but "%", then "%" (ActionCommand.UnescapeData)
    for token, replacement in mapping[1:] + mapping[:1]:
        text = text.replace(replacement, token)
    return text


def unescape_message(text: str) -> str:
    """What the runner reads back from :func:`message`'s output."""
    return _unescape(text, _DATA)


def unescape_property(text: str) -> str:
    """What the runner reads back from :func:`prop`'s output."""
    return _unescape(text, _PROPERTY)


def command(name: str, data, **properties) -> str:
    """One workflow command line, e.g. ``::error file=s.yaml,line=3,title=t::data``.

    ``properties`` with the value None are left out; every value is escaped with :func:`prop`
    and ``data`` with :func:`message`, so the line is one command whatever they hold.
    """
    props = ",".join(f"{key}={prop(value)}" for key, value in properties.items()
                     if value is not None)
    return f"::{name}{' ' + props if props else ''}::{message(data)}"


def defuse(text) -> str:
    """``text`` that the runner cannot read as a workflow command, wherever it is printed.

    A ``::`` at the start or after whitespace (where a line, or a wrapped line, may begin) is
    shown as ``\\::``, and ``##[`` as ``##\\[``. Line breaks are not this function's business:
    :func:`audit.escape.terminal.text` shows them as ``\\n`` first.
    """
    return _LEADING_COLONS.sub(r"\\::", str(text)).replace(_LEGACY, "##\\[")
