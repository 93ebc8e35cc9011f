"""JUnit XML of a validation result: one test case per expectation, for CI systems to display.

A pure function of great_expectations' validation-result JSON (:mod:`audit.suites.outcomes`
reads it). The test suite is named after the expectation suite; each test case after its
expectation (``classname`` = suite name, ``file`` / ``line`` = where it is written). A failed
expectation is a ``<failure>`` whose message is the observed value against the threshold; one
great_expectations could not evaluate (an exception) is an ``<error>``; a dataset-PR expectation
skipped for want of ``--baseline`` is ``<skipped>``.

When the check could not run at all (bad input, exit 2; an internal error, exit 3),
:func:`junit_error_xml` writes one test case with an ``<error>`` (never a ``<failure>``), so a CI
system shows a run that did not happen as an error, not as a broken claim.

Every string (the suite's titles and path, and the messages, which quote dataset values such as
pool and model names) goes through :mod:`audit.escape.xml`: a character XML 1.0 cannot hold is
shown as an escape (``\\x1b``), so any dataset still gives a well-formed file, and ElementTree
(a serializer) writes the markup.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping

from ..escape.xml import attribute, document, text
from .outcomes import summary

_MESSAGE_CHARS = 1000


def junit_xml(validation: Mapping, *, path: str | None = None) -> str:
    """The JUnit XML document (a string) of ``validation``; ``path`` overrides the suite path
    recorded in it (``file`` attributes), e.g. relative to the repository root."""
    block = summary(validation)
    rows = block["results"]
    name = block.get("suite") or "expectations"
    path = path or block.get("path")
    failures = sum(not r["passed"] and not r["error"] for r in rows)
    errors = sum(not r["passed"] and r["error"] for r in rows)
    skipped = block.get("skipped") or []
    total = str(len(rows) + len(skipped))
    root = ET.Element("testsuites", name="annotation-audit", tests=total,
                      failures=str(failures), errors=str(errors), skipped=str(len(skipped)))
    suite = ET.SubElement(root, "testsuite", name=attribute(name), tests=total,
                          failures=str(failures), errors=str(errors), skipped=str(len(skipped)))
    for r in rows:
        case = ET.SubElement(suite, "testcase", **_case(r, name, path))
        if not r["passed"]:
            tag = "error" if r["error"] else "failure"
            node = ET.SubElement(case, tag, message=attribute(r["message"]),
                                 type=attribute(r["expect"]))
            node.text = text(_details(r, path))
        elif r.get("message"):
            ET.SubElement(case, "system-out").text = text(r["message"])
    for r in skipped:
        ET.SubElement(ET.SubElement(suite, "testcase", **_case(r, name, path)), "skipped",
                      message=attribute(r["reason"]))
    return document(root)


def _case(r: Mapping, suite: str, path) -> dict:
    """A test case's attributes: its expectation, the suite, and where the suite says it."""
    attrs = {"name": attribute(r["expectation"]), "classname": attribute(suite)}
    if path:
        attrs["file"] = attribute(path)
    if r.get("line") is not None:
        attrs["line"] = str(r["line"])
    return attrs


def junit_error_xml(message: str, *, suite: str, name: str, error_type: str,
                    file=None, line: int | None = None) -> str:
    """A JUnit XML document of a check that could not run: one test case with an ``<error>``.

    Parameters
    ----------
    message
        What went wrong (the CLI's error text): the error's body; its lines joined into one
        (cut at 1,000 characters) are its ``message`` attribute, which CI systems show.
    suite
        The test suite's name (the expectation suite's, or its file name).
    name
        The test case's name, e.g. ``"annotation-audit check: bad input"``.
    error_type
        The ``type`` attribute: the exception's class name.
    file, line
        Where the problem is written, when known (a suite file and line).
    """
    root = ET.Element("testsuites", name="annotation-audit", tests="1", failures="0",
                      errors="1", skipped="0")
    node = ET.SubElement(root, "testsuite", name=attribute(suite), tests="1", failures="0",
                         errors="1", skipped="0")
    attrs = {"name": attribute(name), "classname": attribute(suite)}
    if file is not None:
        attrs["file"] = attribute(file)
    if line is not None:
        attrs["line"] = str(line)
    case = ET.SubElement(node, "testcase", **attrs)
    flat = " ".join(line.strip() for line in message.splitlines() if line.strip())
    if len(flat) > _MESSAGE_CHARS:
        flat = flat[:_MESSAGE_CHARS - 3] + "..."
    ET.SubElement(case, "error", message=attribute(flat or error_type),
                  type=attribute(error_type)).text = text(message)
    return document(root)


def _details(r: Mapping, path) -> str:
    lines = [r["message"], f"expected: {r['description']} (threshold {r['threshold']})"]
    if r.get("claim"):
        lines.append(f"claim: {r['claim']}")
    if path and r.get("line") is not None:
        lines.append(f"suite: {path}, line {r['line']}")
    return "\n".join(lines)
