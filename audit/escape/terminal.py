"""The terminal (and every log that records it): dataset strings shown, never obeyed.

Three things can go wrong when a string reaches a terminal as written: control characters act
(ESC starts a sequence that recolours, clears or retitles the terminal; CR and backspace
overwrite what was printed; bidi controls reorder it), rich reads ``[...]`` as markup (``[/x]``
raises :class:`rich.errors.MarkupError`, ``[link=...]`` makes a link), and in a CI job the line is
read by the Actions runner as a workflow command. So:

* :func:`text` shows every :data:`audit.escape.CONTROL` character as its escape (``\\x1b``,
  ``\\n``, ``\\u202e``) and defuses workflow-command syntax
  (:func:`audit.escape.github.defuse`), for text printed as is (``click.echo``, or a rich
  :class:`~rich.text.Text`, which is never parsed as markup);
* :func:`markup` is :func:`text` escaped for rich console markup, for a string put into a markup
  template (``f"[bold]{markup(name)}[/bold]"``);
* :func:`lines` makes a multi-line message (an error report) safe line by line, keeping its own
  line breaks;
* :func:`is_log` tells whether data a command prints as it is (``advise --csv``) lands where a
  person or a CI runner reads it, so that it is shown with :func:`text` there instead.

The escapes are for reading, not for reversing: a backslash already in the string is left alone.
"""

from __future__ import annotations

import re

from . import CONTROL, visible
from .github import defuse

#: rich's tag syntax (``rich.markup.RE_TAGS``) after an opening bracket.
_TAG_BODY = re.compile(r"[a-z#/@][^[]*?]")
_BRACKET = re.compile(r"(\\*)\[")
_TRAILING_BACKSLASHES = re.compile(r"(\\+)$")


def text(value) -> str:
    """``value`` as one inert line of plain terminal text (module docstring)."""
    return defuse(visible(value, CONTROL))


def markup(value) -> str:
    """``value`` as one inert line inside rich console markup: it renders as :func:`text`.

    :func:`rich.markup.escape` escapes only brackets that look like tags, while rich's renderer
    also turns any other ``\\[`` into ``[``, so ``a\\[b`` would lose its backslash. Here each
    ``[`` and the backslashes before it are escaped by the rule rich's parser applies to it (a
    tag-like bracket: each backslash doubled and one added; any other: one added), and a trailing
    run of backslashes is doubled so that it cannot escape a tag that follows (followed by plain
    text instead, it shows doubled).
    """
    out = text(value)

    def bracket(match: re.Match) -> str:
        slashes = match.group(1)
        tag = _TAG_BODY.match(out, match.end())
        return (slashes * 2 if tag else slashes) + "\\["

    return _TRAILING_BACKSLASHES.sub(r"\1\1", _BRACKET.sub(bracket, out))


def lines(message) -> str:
    """A multi-line ``message`` with each line made inert by :func:`text` (``\\n`` kept as the
    line break, every other control character shown)."""
    return "\n".join(text(line) for line in str(message).split("\n"))


#: Environment variables a CI service sets in its jobs (``CI``: GitHub Actions, GitLab,
#: CircleCI, Travis, Buildkite, ...; ``GITHUB_ACTIONS``: GitHub's own).
CI_VARIABLES = ("CI", "GITHUB_ACTIONS")


def is_log(stream, *, environ=None) -> bool:
    """Whether text written to ``stream`` is read by a person or a CI runner rather than a
    program: a terminal, or, in a CI job (a :data:`CI_VARIABLES` variable set to anything but
    empty, ``0`` or ``false``), a file descriptor that is not a regular file (the runner reads a
    step's output through a pipe, and acts on its workflow commands).

    A regular file (``> advice.csv``), and a pipe or a stream without a file descriptor outside
    CI (``| python tool.py``, a test's captured output), are a program's: data goes there
    exactly as written, as ``ls`` shows control characters raw only when its output is not a
    terminal. In a CI job a pipe may also lead to a program (``| tee file``); it is shown
    inert all the same, since the runner cannot be told apart from it.
    """
    import os
    import stat

    try:
        if stream.isatty():
            return True
        mode = os.fstat(stream.fileno()).st_mode
    except (AttributeError, OSError, ValueError):  # no descriptor: captured by a program
        return False
    environ = os.environ if environ is None else environ
    in_ci = any(environ.get(name, "").strip().lower() not in ("", "0", "false")
                for name in CI_VARIABLES)
    return in_ci and not stat.S_ISREG(mode)
