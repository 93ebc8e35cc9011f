"""JUnit XML of a validation result: one test case per expectation, for CI systems to display.

A pure function of great_expectations' validation-result JSON (:mod:`audit.judge.outcomes`
reads it). The test suite is named after the expectation suite; each test case after its
expectation (``classname`` = suite name, ``file`` / ``line`` = where it is written). A failed
expectation is a ``<failure>`` whose message is the observed value against the threshold; one
great_expectations could not evaluate (an exception) is an ``<error>``; a dataset-PR expectation
skipped for want of ``--baseline`` is ``<skipped>``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping

from .outcomes import summary


def junit_xml(validation: Mapping) -> str:
    """The JUnit XML document (a string) of ``validation``."""
    block = summary(validation)
    rows = block["results"]
    name = block.get("suite") or "expectations"
    path = block.get("path")
    failures = sum(not r["passed"] and not r["error"] for r in rows)
    errors = sum(not r["passed"] and r["error"] for r in rows)
    skipped = block.get("skipped") or []
    total = str(len(rows) + len(skipped))
    root = ET.Element("testsuites", name="annotation-audit", tests=total,
                      failures=str(failures), errors=str(errors), skipped=str(len(skipped)))
    suite = ET.SubElement(root, "testsuite", name=name, tests=total, failures=str(failures),
                          errors=str(errors), skipped=str(len(skipped)))
    for r in rows:
        attrs = {"name": r["expectation"], "classname": name}
        if path:
            attrs["file"] = str(path)
        if r.get("line") is not None:
            attrs["line"] = str(r["line"])
        case = ET.SubElement(suite, "testcase", **attrs)
        if not r["passed"]:
            tag = "error" if r["error"] else "failure"
            node = ET.SubElement(case, tag, message=r["message"], type=r["expect"])
            node.text = _details(r, path)
        elif r.get("message"):
            ET.SubElement(case, "system-out").text = r["message"]
    for r in skipped:
        attrs = {"name": r["expectation"], "classname": name}
        if path:
            attrs["file"] = str(path)
        if r.get("line") is not None:
            attrs["line"] = str(r["line"])
        ET.SubElement(ET.SubElement(suite, "testcase", **attrs), "skipped",
                      message=r["reason"])
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") \
        + "\n"


def _details(r: Mapping, path) -> str:
    lines = [r["message"], f"expected: {r['description']} (threshold {r['threshold']})"]
    if r.get("claim"):
        lines.append(f"claim: {r['claim']}")
    if path and r.get("line") is not None:
        lines.append(f"suite: {path}, line {r['line']}")
    return "\n".join(lines)
