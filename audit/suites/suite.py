"""Expectation suites: YAML written by hand, checked line by line, in great_expectations' JSON form.

A suite file::

    suite: hs_brexit                  # optional; defaults to the file name
    description: What the data claims, with the reference.
    expectations:
      - expect: labels_in_set         # a name from CATALOGUE
        values: [0, 1]
      - expect: max_within_pool_disagreement
        max: 0.05
        pool: every                   # each pool separately; the worst one counts
        claim: "No intra-group variability (Akhtar et al. 2021)"   # optional: the stated claim

Every entry is one claim and becomes exactly one great_expectations expectation (and one JUnit
test case); the names and their keys are in :data:`audit.suites.catalogue.CATALOGUE`. Row expectations run on the canonical table or on counts derived from it
(:mod:`audit.suites.batches`); statistical claims are ``expect_column_min_to_be_between`` /
``expect_column_max_to_be_between`` on the single row of the measurements table
(:mod:`audit.suites.measurements`) that the claim names, so an undefined (NaN) measurement fails
the claim instead of passing it vacuously.

Scopes, where an expectation takes ``pool`` (or ``pools`` for a pair, ``judge`` for a judge):
a pool's name; ``all`` = every human pool together (the audit's "overall"); ``every`` = each
(human) pool, or pair of pools, separately, and the worst one must satisfy the threshold.

Errors name the file and the line: unknown expectation, unknown key, a threshold of the wrong
type or out of range, min above max. Names that depend on the data (a pool that does not exist,
a metric not computed for this label kind) are checked against the data before anything runs
(:func:`audit.suites.check.check`), again naming the line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..contract import columns as C
from ..errors import SuiteFileError
from .catalogue import (ALL, CATALOGUE, COMMON_KEYS, EVERY, META_KEY, TOP_KEYS, Kind,
                        unknown_name, validate_params)

__all__ = ["ALL", "EVERY", "CATALOGUE", "META_KEY", "SuiteFileError", "Expectation", "Suite",
           "load_suite", "parse_suite", "to_gx_json", "from_gx_json", "gx_expectation",
           "label_key"]

# -- parsed suites ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Expectation:
    """One validated entry of a suite: name, parameters (defaults filled in) and where it is.

    ``line`` is the 1-based line of the entry in the suite file; ``lines`` the line of each key.
    """

    expect: str
    params: dict
    line: int
    claim: str | None = None
    lines: dict = field(default_factory=dict)

    @property
    def kind(self) -> Kind:
        return CATALOGUE[self.expect]

    @property
    def batch(self) -> str:
        """The derived table this expectation runs on (``items`` becomes ``item_pools`` when a
        pool is named, since the counts are then per (item, pool))."""
        if self.expect == "judgments_per_item" and self.params.get("pool") != ALL:
            return "item_pools"
        return self.kind.batch

    @property
    def measurement(self) -> str | None:
        """The id of the one measurement a statistical claim reads (None for row expectations)."""
        from .measurements import claim_measurement

        return claim_measurement(self) if self.kind.batch == "measurements" else None

    @property
    def title(self) -> str:
        """A short test-case name: the expectation and what it is about."""
        target = self.measurement or _row_target(self)
        return f"{self.expect}: {target}" if target else self.expect

    @property
    def description(self) -> str:
        """The expectation in words, with its thresholds."""
        p = self.params
        vals = {k: v for k, v in p.items() if v is not None}
        vals.setdefault("min", "-inf")
        vals.setdefault("max", "inf")
        pool = p.get("pool")
        vals["pool_scope"] = _pool_words(pool)
        vals["in_pool"] = "" if pool in (None, ALL) else f" from {_pool_words(pool)}"
        vals["judge_scope"] = ("every judge" if p.get("judge") == EVERY
                               else f"judge {p.get('judge')!r}")
        pools = p.get("pools")
        vals["pair_scope"] = ("every two human pools" if pools in (None, EVERY)
                              else f"pools {pools[0]!r} and {pools[1]!r}")
        vals["use_text"] = {"value": "", "ci_low": " (lower 95% CI bound)",
                            "ci_high": " (upper 95% CI bound)"}.get(p.get("use"), "")
        return self.kind.summary.format_map(_Blank(vals))

    def param_line(self, name: str) -> int:
        return self.lines.get(name, self.line)


class _Blank(dict):
    def __missing__(self, key):
        return ""


def _pool_words(pool) -> str:
    return {None: "", ALL: "all human pools together", EVERY: "every pool"}.get(
        pool, f"pool {pool!r}")


def _row_target(exp: Expectation) -> str:
    p = exp.params
    if "column" in p:
        return p["column"]
    if "pool" in p:
        return p["pool"]
    return ""


@dataclass(frozen=True)
class Suite:
    """A validated suite: a name, where it came from, and its expectations in file order."""

    name: str
    expectations: tuple[Expectation, ...]
    path: str | None = None
    description: str | None = None

    @property
    def needs(self) -> frozenset:
        return frozenset().union(*(e.kind.needs for e in self.expectations))

    @property
    def batches(self) -> list[str]:
        return list(dict.fromkeys(e.batch for e in self.expectations))

    def error(self, exp: Expectation, message: str, *, key: str | None = None) -> SuiteFileError:
        """An error about ``exp`` naming the suite file and the line (of ``key`` if given)."""
        line = exp.param_line(key) if key else exp.line
        return SuiteFileError(f"{exp.expect}: {message}", path=self.path, line=line)


# -- reading YAML with line numbers -------------------------------------------------------------
def load_suite(path) -> Suite:
    """Read a suite file and validate every entry.

    The file is read as plain data (:mod:`audit.ingest.yamlsafe`): a suite may come with a pull
    request, so tags, alias bombs, non-scalar keys, deep nesting and files over
    :data:`audit.ingest.yamlsafe.MAX_BYTES` are refused, naming the line.

    Raises
    ------
    SuiteFileError
        The file is missing or not YAML, or an entry is bad; the message names the line.
    """
    from ..ingest.yamlsafe import YamlProblem, read_yaml_text

    path = Path(path)
    if not path.is_file():
        raise SuiteFileError("suite file not found" if not path.exists() else
                             "is not a file, expected a YAML suite file", path=path)
    try:
        text = read_yaml_text(path, what="suite")
    except YamlProblem as err:
        raise SuiteFileError(err.message, path=path, line=err.line) from None
    return parse_suite(text, path=str(path), default_name=path.stem)


def parse_suite(text: str, *, path: str | None = None, default_name: str = "suite") -> Suite:
    """Parse and validate suite YAML ``text`` (``path`` only names it in messages), read as
    plain data by :func:`audit.ingest.yamlsafe.compose`."""
    from ..ingest.yamlsafe import YamlProblem, compose

    try:
        root = compose(text)
    except YamlProblem as err:
        message = f"not valid YAML: {err.message}" if err.syntax else err.message
        raise SuiteFileError(message, path=path, line=err.line) from None
    if root is None:
        raise SuiteFileError("the suite is empty; it needs an 'expectations' list", path=path)
    top = _mapping(root, path, "the suite")
    for key, (knode, _) in top.items():
        if key not in TOP_KEYS:
            raise SuiteFileError(unknown_name("top-level key", key, TOP_KEYS), path=path,
                                 line=_line(knode))
    name = _scalar_str(top, "suite", path) or default_name
    description = _scalar_str(top, "description", path)
    if "expectations" not in top:
        raise SuiteFileError("the suite has no 'expectations' list", path=path, line=1)
    knode, lnode = top["expectations"]
    if not isinstance(lnode, yaml.SequenceNode) or not lnode.value:
        raise SuiteFileError("'expectations' must be a non-empty list of entries", path=path,
                             line=_line(lnode))
    exps = tuple(_entry(node, path) for node in lnode.value)
    return Suite(name=name, expectations=exps, path=path, description=description)


def _line(node) -> int:
    return node.start_mark.line + 1


def _construct(node):
    from ..ingest.yamlsafe import construct

    return construct(node)


def _mapping(node, path, what) -> dict:
    """``{key: (key_node, value_node)}`` of a mapping node, rejecting repeated keys."""
    if not isinstance(node, yaml.MappingNode):
        raise SuiteFileError(f"{what} must be a mapping of keys to values", path=path,
                             line=_line(node))
    out = {}
    for knode, vnode in node.value:
        key = _construct(knode)
        if not isinstance(key, str):
            raise SuiteFileError(f"keys must be names, got {key!r}", path=path, line=_line(knode))
        if key in out:
            raise SuiteFileError(f"key {key!r} is given twice (first on line "
                                 f"{_line(out[key][0])})", path=path, line=_line(knode))
        out[key] = (knode, vnode)
    return out


def _scalar_str(top, key, path) -> str | None:
    if key not in top:
        return None
    value = _construct(top[key][1])
    if not isinstance(value, str) or not value.strip():
        raise SuiteFileError(f"{key!r} must be a non-empty text", path=path,
                             line=_line(top[key][1]))
    return value.strip()


def _entry(node, path) -> Expectation:
    keys = _mapping(node, path, "an expectation")
    if "expect" not in keys:
        raise SuiteFileError("an entry without 'expect:' (the expectation's name)", path=path,
                             line=_line(node))
    knode, vnode = keys["expect"]
    name = _construct(vnode)
    if not isinstance(name, str) or name not in CATALOGUE:
        raise SuiteFileError(unknown_name("expectation", name, CATALOGUE), path=path,
                             line=_line(vnode))
    kind = CATALOGUE[name]
    claim = None
    if "claim" in keys:
        claim = _construct(keys["claim"][1])
        if not isinstance(claim, str) or not claim.strip():
            raise SuiteFileError(f"{name}: 'claim' must be a non-empty text", path=path,
                                 line=_line(keys["claim"][1]))
        claim = " ".join(claim.split())
    lines = {}
    raw = {}
    for key, (kn, vn) in keys.items():
        if key in COMMON_KEYS:
            continue
        if kind.param(key) is None:
            allowed = [p.name for p in kind.params] + list(COMMON_KEYS)
            raise SuiteFileError(f"{name}: " + unknown_name("key", key, allowed), path=path,
                                 line=_line(kn))
        raw[key], lines[key] = _construct(vn), _line(vn)
    params = validate_params(kind, raw, lines=lines, path=path, line=_line(node))
    return Expectation(name, params, _line(node), claim, lines)


# -- great_expectations' JSON form ----------------------------------------------------------------
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

    Every expectation is re-validated; one not written by this toolkit is a SuiteFileError.
    """
    top = (data.get("meta") or {}).get(META_KEY) or {}
    path = top.get("path")
    exps = []
    for i, e in enumerate(data.get("expectations") or [], start=1):
        mine = (e.get("meta") or {}).get(META_KEY)
        if not mine:
            raise SuiteFileError(f"expectation {i} ({e.get('type')}) was not written by "
                                 "annotation-audit: its meta has no 'annotation_audit' block",
                                 path=path)
        kind = CATALOGUE.get(mine.get("expect"))
        if kind is None:
            raise SuiteFileError(unknown_name("expectation", mine.get("expect"), CATALOGUE),
                                 path=path, line=mine.get("line"))
        raw = {k: v for k, v in (mine.get("params") or {}).items() if v is not None}
        unknown = [k for k in raw if kind.param(k) is None]
        if unknown:
            raise SuiteFileError(f"{kind.name}: " + unknown_name("key", unknown[0],
                                                             [p.name for p in kind.params]),
                                 path=path, line=mine.get("line"))
        params = validate_params(kind, raw, lines=mine.get("lines"), path=path,
                                 line=mine.get("line"))
        exps.append(Expectation(kind.name, params, int(mine["line"]), mine.get("claim"),
                                {k: int(v) for k, v in (mine.get("lines") or {}).items()}))
    if not exps:
        raise SuiteFileError("the suite has no expectations", path=path)
    return Suite(name=data["name"], expectations=tuple(exps), path=path,
                 description=top.get("description"))
