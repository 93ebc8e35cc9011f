"""GitHub Actions workflow commands for a validation result: ``::error file=...,line=...::...``.

A pure function of great_expectations' validation-result JSON. Each failed expectation becomes
one error annotation pointing at its line in the suite file, so the pull request shows the broken
claim next to the line that states it. Escaping follows GitHub's workflow-command rules (``%``,
CR and LF in the message; additionally ``:`` and ``,`` in properties).
"""

from __future__ import annotations

from collections.abc import Mapping

from .outcomes import summary


def escape_data(text: str) -> str:
    return str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(level: str, message: str, *, file=None, line=None, title=None) -> str:
    """One workflow command, e.g. ``::error file=s.yaml,line=3,title=t::message``."""
    props = [f"{k}={escape_property(v)}" for k, v in
             (("file", file), ("line", line), ("title", title)) if v is not None]
    return f"::{level} {','.join(props)}::{escape_data(message)}" if props else \
        f"::{level}::{escape_data(message)}"


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
