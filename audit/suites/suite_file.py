"""Suite files: YAML written by hand, read as data and checked line by line.

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
test case); the names and their keys are in :data:`audit.suites.catalogue.CATALOGUE`. Row
expectations run on the canonical table or on counts derived from it
(:mod:`audit.suites.batches`); statistical claims are ``expect_column_min_to_be_between`` /
``expect_column_max_to_be_between`` on the single row of the measurements table
(:mod:`audit.suites.measurements`) that the claim names, so an undefined (NaN) measurement fails
the claim instead of passing it vacuously.

The file is validated by the pydantic models of :mod:`audit.suites.suite_model` through
:func:`audit.ingest.yamlmodel.validate`; errors name the file and the line: unknown
expectation, unknown key, a threshold of the wrong type or out of range, min above max. Names
that depend on the data (a pool that does not exist, a metric not computed for this label kind)
are checked against the data before anything runs (:func:`audit.suites.check.check`), again
naming the line.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..errors import SuiteFileError
from .catalogue import CATALOGUE, COMMON_KEYS
from .suite import Expectation, Suite


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
    plain data by :func:`audit.ingest.yamlmodel.read`.

    Raises
    ------
    SuiteFileError
        The text is not YAML, or the suite breaks :class:`audit.suites.suite_model.SuiteFile`;
        the message names the line.
    """
    from ..ingest.yamlmodel import YamlInvalid, read, validate
    from ..ingest.yamlsafe import YamlProblem
    from .suite_model import SuiteFile

    try:
        data, lines = read(text)
    except YamlProblem as err:
        message = f"not valid YAML: {err.message}" if err.syntax else err.message
        raise SuiteFileError(message, path=path, line=err.line) from None
    except YamlInvalid as err:
        raise suite_error(err.problem, path) from None
    if data is None:
        raise SuiteFileError("the suite is empty; it needs an 'expectations' list", path=path)
    try:
        model = validate(SuiteFile, data, lines=lines, dotted=False, root="the suite")
    except YamlInvalid as err:
        raise suite_error(err.problem, path, expect=_expect_at(data, err.problem.path)) from None
    exps = tuple(
        Expectation(entry.expect, entry_params(entry), lines.value(("expectations", i)),
                    entry.claim,
                    {k: lines.value(("expectations", i, k)) for k in raw if k not in COMMON_KEYS})
        for i, (entry, raw) in enumerate(zip(model.expectations, data["expectations"])))
    return Suite(name=model.suite or default_name, expectations=exps, path=path,
                 description=model.description)


def entry_params(entry) -> dict:
    """The parameters of a validated entry, in its kind's order, defaults filled in."""
    return {p.name: getattr(entry, p.name) for p in CATALOGUE[entry.expect].params}


def suite_error(problem, path, *, expect=None) -> SuiteFileError:
    """The SuiteFileError of a :class:`audit.ingest.yamlmodel.Problem`; an error inside an
    entry whose ``expect`` is a known name starts with that name."""
    known = isinstance(expect, str) and expect in CATALOGUE
    return SuiteFileError(f"{expect}: {problem.message}" if known else problem.message,
                          path=path, line=problem.line)


def _expect_at(data, where: tuple):
    """The ``expect`` of the entry ``where`` (a key path) lies in, if it names one."""
    if len(where) >= 2 and where[0] == "expectations" and isinstance(where[1], int):
        entry = data["expectations"][where[1]]
        return entry.get("expect") if isinstance(entry, Mapping) else None
    return None
