"""How the GitHub Actions runner reads a step's output: a port of its command parser, for tests.

From ``actions/runner`` (``src/Runner.Common/ActionCommand.cs`` and
``src/Runner.Worker/ActionCommandManager.cs``): the runner splits a step's standard output and
standard error into lines (at CR, LF or CRLF) and, for each line, tries ``TryParseV2``
(``::name props::data`` after leading whitespace) and then the legacy ``TryParse``
(``##[name props]data`` anywhere in the line). Only registered names count there; this port is
stricter and reports any name, so a test that finds no command here has found none the runner
could act on, whatever ``stop-commands`` token a step registered.
"""

from __future__ import annotations

import re

#: Commands the runner registers (its extensions, plus stop-commands).
REGISTERED = {"stop-commands", "set-env", "set-output", "save-state", "add-mask", "add-path",
              "add-matcher", "remove-matcher", "warning", "error", "notice", "debug", "group",
              "endgroup", "echo"}

_DATA = (("\r", "%0D"), ("\n", "%0A"), ("%", "%25"))
_PROPERTY = (("\r", "%0D"), ("\n", "%0A"), (":", "%3A"), (",", "%2C"), ("%", "%25"))


def _unescape(text: str, mapping) -> str:
    for token, replacement in mapping:  # the runner's order: one String.Replace per mapping
        text = text.replace(replacement, token)
    return text


def unescape_data(text: str) -> str:
    return _unescape(text, _DATA)


def unescape_property(text: str) -> str:
    return _unescape(text, _PROPERTY)


def lines(output: str) -> list[str]:
    """The lines the runner sees: split at CRLF, CR or LF."""
    return re.split(r"\r\n|\r|\n", output)


def parse_v2(line: str):
    """``(name, properties, data)`` of a ``::name props::data`` line, or None."""
    message = line.lstrip()
    if not message.startswith("::"):
        return None
    end = message.find("::", 2)
    if end < 0:
        return None
    info = message[2:end]
    space = info.find(" ")
    name = info if space < 0 else info[:space]
    if not name:
        return None
    props = {}
    if space > 0:
        for item in (p for p in info[space + 1:].strip().split(",") if p):
            pair = [x for x in item.split("=", 1) if x]
            if len(pair) == 2:
                props[pair[0]] = unescape_property(pair[1])
    return name, props, unescape_data(message[end + 2:])


def parse_legacy(line: str):
    """``(name, data)`` of a line holding ``##[name ...]data`` anywhere, or None."""
    start = line.find("##[")
    if start < 0:
        return None
    close = line.find("]", start)
    if close < 0:
        return None
    name = line[start + 3:close].split(" ", 1)[0]
    return (name, line[close + 1:]) if name else None


def commands(output: str) -> list[tuple]:
    """Every line of ``output`` the runner could read as a command: ``(line, parsed)``."""
    found = []
    for line in lines(output):
        parsed = parse_v2(line) or parse_legacy(line)
        if parsed is not None:
            found.append((line, parsed))
    return found


def could_start_command(text: str) -> bool:
    """Whether ``text``, printed anywhere in a line (and wrapped at any whitespace), could make the
    runner see a command: a ``::`` at its start or after whitespace, or a ``##[``."""
    return bool(re.search(r"(?:^|\s)::", text)) or "##[" in text
