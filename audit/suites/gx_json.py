"""Suites in great_expectations' JSON form: each entry one built-in expectation.

:func:`to_gx_json` writes a :class:`audit.suites.suite.Suite` as great_expectations'
``ExpectationSuite`` JSON (what :mod:`audit.suites.gx_run` runs); ``meta["annotation_audit"]``
of every expectation keeps the entry as written, so :func:`from_gx_json` reads the suite back,
re-validated. :func:`label_key` is the string a label is compared by, here and in the batches
(:mod:`audit.suites.batches`).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..contract import columns as C
from ..errors import SuiteFileError
from .catalogue import ALL, EVERY, META_KEY
from .suite import Expectation, Suite


def label_key(value) -> str:
    """The string a label is compared by: integral numbers without a decimal point."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _condition(column: str, value: str) -> dict:
    return {"column": {"name": column}, "operator": "==", "parameter": value,
            "type": "comparison"}


def gx_expectation(exp: Expectation) -> dict:
    """One expectation in great_expectations' JSON form (``type``, ``kwargs``, ``meta``).

    ``meta["annotation_audit"]`` keeps the entry as written (name, parameters, lines, claim), so
    the suite can be read back from the JSON form (:func:`from_gx_json`).
    """
    p, name = exp.params, exp.expect
    kw: dict = {}
    if name == "not_null":
        typ, kw = "expect_column_values_to_not_be_null", {"column": p["column"]}
    elif name == "labels_in_set":
        typ = "expect_column_values_to_be_in_set"
        kw = {"column": C.LABEL, "value_set": [label_key(v) for v in p["values"]]}
    elif name == "unique_judgments":
        typ, kw = "expect_compound_columns_to_be_unique", {"column_list": [C.ITEM, C.ANNOTATOR]}
    elif name == "models_in_set":
        typ = "expect_column_values_to_be_in_set"
        kw = {"column": C.MODEL, "value_set": [str(v) for v in p["values"]]}
    elif exp.kind.bound == "between":
        column = {"judgments_per_item": "n_judgments", "judgments_per_pool": "n_judgments",
                  "annotators_per_pool": "n_annotators", "position_balance": "share_as_a"}[name]
        typ = "expect_column_values_to_be_between"
        kw = {"column": column}
        if p["min"] is not None:
            kw["min_value"] = p["min"]
        if p["max"] is not None:
            kw["max_value"] = p["max"]
        if p.get("pool") not in (None, ALL, EVERY):
            kw["row_condition"] = _condition(C.POOL, p["pool"])
            kw["condition_parser"] = "great_expectations"
    else:
        bound = exp.kind.bound
        typ = f"expect_column_{bound}_to_be_between"
        kw = {"column": p.get("use", "value"),
              "row_condition": _condition("measurement", exp.measurement),
              "condition_parser": "great_expectations",
              f"{bound}_value": p[bound]}
    meta = {META_KEY: {"expect": name, "params": p, "line": exp.line, "lines": exp.lines,
                       "claim": exp.claim, "batch": exp.batch, "title": exp.title,
                       "description": exp.description, "measurement": exp.measurement}}
    out = {"type": typ, "kwargs": kw, "meta": meta}
    if exp.claim:
        out["notes"] = exp.claim
    return out


def to_gx_json(suite: Suite) -> dict:
    """The suite as great_expectations' ``ExpectationSuite`` JSON (``ExpectationSuite(**d)``)."""
    return {"name": suite.name,
            "expectations": [gx_expectation(e) for e in suite.expectations],
            "meta": {META_KEY: {"path": suite.path, "description": suite.description}},
            "notes": suite.description}


def from_gx_json(data: Mapping) -> Suite:
    """Read a suite back from its great_expectations JSON form (as written by
    :func:`to_gx_json`, possibly after a round trip through ``ExpectationSuite.to_json_dict``).

    Every expectation is re-validated by the model its name picks
    (:data:`audit.suites.suite_model.Entry`); one not written by this toolkit is a
    SuiteFileError.
    """
    from ..ingest.yamlmodel import Lines, YamlInvalid, validate
    from .suite_file import entry_params, suite_error
    from .suite_model import Entry

    top = (data.get("meta") or {}).get(META_KEY) or {}
    path = top.get("path")
    exps = []
    for i, e in enumerate(data.get("expectations") or [], start=1):
        mine = (e.get("meta") or {}).get(META_KEY)
        if not mine:
            raise SuiteFileError(f"expectation {i} ({e.get('type')}) was not written by "
                                 "annotation-audit: its meta has no 'annotation_audit' block",
                                 path=path)
        raw = {k: v for k, v in (mine.get("params") or {}).items() if v is not None}
        lines = {k: int(v) for k, v in (mine.get("lines") or {}).items()}
        where = Lines(values={(): mine.get("line"), **{(k,): v for k, v in lines.items()}})
        try:
            entry = validate(Entry, {**raw, "expect": mine.get("expect")}, lines=where,
                             dotted=False)
        except YamlInvalid as err:
            raise suite_error(err.problem, path, expect=mine.get("expect")) from None
        exps.append(Expectation(entry.expect, entry_params(entry), int(mine["line"]),
                                mine.get("claim"), lines))
    if not exps:
        raise SuiteFileError("the suite has no expectations", path=path)
    return Suite(name=data["name"], expectations=tuple(exps), path=path,
                 description=top.get("description"))
