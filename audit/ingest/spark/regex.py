"""Python regular expressions as Spark's ``rlike`` (Java's ``java.util.regex``) reads them, so a
rule the pandas engine states as a Python pattern is applied on the executors with the same
meaning.

The patterns translated here use only what both dialects read alike (``[0-9]``, ``[eE]``,
``(?:...)``, ``\\.``, ``*``, ``+``, ``?``, ``^``) and ``\\s``, which differs: Python's ``\\s`` (on text)
is every character ``str.isspace`` holds, 29 of them, ``\\x1c``-``\\x1f``, ``\\x85``, the
no-break and ideographic spaces among them; Java's is the six ASCII ones. It becomes the explicit
class of Python's characters. ``rlike`` finds a match anywhere (``Matcher.find``); a pattern
meant as Python's ``fullmatch`` is anchored with ``^`` and ``\\z`` (Java's ``$`` also matches
before a final line break).
"""

from __future__ import annotations

import re
import sys
from functools import cache


@cache
def python_whitespace() -> str:
    """Python's ``\\s`` (``str.isspace``, which ``str.strip`` strips) as a Java character class."""
    chars = [c for c in range(sys.maxunicode + 1) if chr(c).isspace()]
    return "[" + "".join(f"\\x{{{c:x}}}" for c in chars) + "]"


def java_fullmatch(pattern: re.Pattern | str) -> str:
    """``pattern`` (a Python pattern of the subset above) as a Java pattern that ``rlike``
    matches exactly where Python's ``pattern.fullmatch`` does."""
    text = pattern.pattern if isinstance(pattern, re.Pattern) else pattern
    if re.search(r"\\[^s.]|\\$", text.replace("\\\\", "")):
        raise ValueError(f"only \\s and \\. are read: {text!r}")  # our bug, not the user's
    return "^(?:" + text.replace("\\s", python_whitespace()) + ")\\z"
