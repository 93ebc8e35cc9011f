"""A great_expectations validation result as outcome rows and as text: pure functions of it.

:func:`outcomes` reads the JSON form (``ExpectationSuiteValidationResult.to_json_dict()``) that
:func:`audit.suites.gx_run.validate` returns, so any renderer — the terminal lines here, the
JUnit file (:mod:`.junit`), GitHub annotations (:mod:`.github`), the HTML report (through the
``expectations`` block of results.json, :func:`summary`) — sees the same words and numbers.

Each row: ``expectation`` (a short title), ``expect`` (the catalogue name), ``passed``,
``observed`` (the measurement read, or the number of rows that broke the expectation),
``threshold`` (in words: ``<= 0.05``, ``[3, 3]``, ``in {0, 1}``), ``line`` (in the suite file),
``claim``, ``description``, ``measurement``, and ``message`` (observed against threshold).

A judgment is named by the line of the data file its record starts on (``line 7``) when the
validation's meta holds ``row_names`` (set by :func:`audit.suites.check.check` for a CSV /
TSV / JSON Lines file, as load errors name it: :mod:`audit.ingest.readers.lines`), else by its
source row (the 0-based data record).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..format import significant
from .catalogue import META_KEY

_UNITS = {"judgments": "judgments", "items": "items", "item_pools": "(item, pool) pairs",
          "pools": "pools", "models": "models"}
_AT = {"judgments": "source row", "items": "item", "pools": "pool", "models": "model"}
SHOW = 5


def threshold_text(gx_type: str, kwargs: Mapping) -> str:
    lo, hi = kwargs.get("min_value"), kwargs.get("max_value")
    if gx_type.endswith("_to_be_in_set"):
        return "in {" + ", ".join(str(v) for v in kwargs.get("value_set", [])) + "}"
    if gx_type == "expect_column_values_to_not_be_null":
        return "no nulls"
    if gx_type == "expect_compound_columns_to_be_unique":
        return "no repeats"
    if lo is not None and hi is not None:
        return f"[{significant(lo)}, {significant(hi)}]"
    if lo is not None:
        return f">= {significant(lo)}"
    return f"<= {significant(hi)}"


def _exception(res: Mapping) -> str | None:
    info = res.get("exception_info") or {}
    if info.get("raised_exception"):
        return info.get("exception_message") or "an exception was raised"
    for v in info.values():  # great_expectations may key exception_info by metric
        if isinstance(v, Mapping) and v.get("raised_exception"):
            return v.get("exception_message") or "an exception was raised"
    return None


def _claim_message(passed, mine, kwargs, observed, info) -> str:
    mid = mine.get("measurement") or ""
    use = (mine.get("params") or {}).get("use", "value")
    what = {"ci_low": f"the lower 95% CI bound of {mid}",
            "ci_high": f"the upper 95% CI bound of {mid}"}.get(use, mid)
    lo, hi = kwargs.get("min_value"), kwargs.get("max_value")
    bound = f"the min {significant(lo)}" if lo is not None else f"the max {significant(hi)}"
    if observed is None:
        return (f"{what} is undefined (NaN) on this data, so the claim cannot hold "
                f"({bound})")
    ci = info.get("ci95") or [None, None]
    extra = []
    if use == "value" and ci[0] is not None and ci[1] is not None:
        extra.append(f"95% CI [{significant(ci[0])}, {significant(ci[1])}]")
    if info.get("worst"):
        extra.append(f"worst: {info['worst']}")
    extra = f" ({'; '.join(extra)})" if extra else ""
    if passed:
        op = ">=" if lo is not None else "<="
        return f"{what} = {significant(observed)}{extra} {op} {significant(lo if lo is not None else hi)}"
    side = "below" if lo is not None else "above"
    return f"{what} = {significant(observed)}{extra} is {side} {bound}"


def _row_name(batch, index, row_names: Mapping) -> str:
    """How a failing row is named: a judgment by its line when ``row_names`` has it."""
    if batch == "judgments" and str(index) in row_names:
        return str(row_names[str(index)])
    return f"{_AT.get(batch, 'row')} {index}"


def failing_judgments(validation: Mapping) -> list:
    """The source rows the judgments batch's failed expectations list as examples (what
    :func:`_rows_message` names), for :func:`audit.suites.check.check` to name by line."""
    out = []
    for r in validation.get("results") or []:
        mine = ((r.get("expectation_config") or {}).get("meta") or {}).get(META_KEY) or {}
        idx = (r.get("result") or {}).get("partial_unexpected_index_list") or []
        if mine.get("batch") == "judgments" and not r.get("success"):
            out += [i for i in idx[:SHOW] if not isinstance(i, Mapping)]
    return out


def _rows_message(passed, gx_type, kwargs, res, batch, row_names: Mapping = {}) -> str:
    unit = _UNITS.get(batch, "rows")
    n, total = res.get("unexpected_count") or 0, res.get("element_count") or 0
    what = {"expect_column_values_to_not_be_null": "are null",
            "expect_compound_columns_to_be_unique": "repeat an (item, annotator) pair",
            }.get(gx_type)
    if what is None:
        what = ("are not " if gx_type.endswith("_in_set") else "are outside ") + \
            threshold_text(gx_type, kwargs)
    if passed:
        return f"all {total:,} {unit} pass (0 {what.replace('are ', '')})"
    vals = res.get("partial_unexpected_list") or []
    idx = res.get("partial_unexpected_index_list") or []
    examples = []
    if batch in _AT and len(idx) == len(vals) and idx and not isinstance(idx[0], Mapping):
        examples = [f"{_row_name(batch, i, row_names)}: {significant(v)}"
                    for i, v in zip(idx, vals)]
    elif vals:
        examples = [significant(v) for v in vals]
    elif idx:
        examples = [_row_name(batch, i, row_names) for i in idx]
    shown = "; ".join(examples[:SHOW]) + ("; ..." if n > SHOW and examples else "")
    return f"{n:,} of {total:,} {unit} {what}" + (f" (e.g. {shown})" if shown else "")


def outcome(result: Mapping, row_names: Mapping = {}) -> dict:
    """One expectation's result as an outcome row (module docstring); ``row_names``: source
    row (as text) -> how a judgment is named (``line 7``)."""
    cfg = result["expectation_config"]
    kwargs, gx_type = cfg.get("kwargs") or {}, cfg["type"]
    mine = (cfg.get("meta") or {}).get(META_KEY) or {}
    res = result.get("result") or {}
    info = (result.get("meta") or {}).get(META_KEY) or {}
    passed = bool(result.get("success"))
    error = _exception(result)
    claim = "observed_value" in res or mine.get("batch") == "measurements"
    observed = res.get("observed_value") if claim else res.get("unexpected_count")
    if error is not None:
        message = f"could not be evaluated: {error}"
    elif claim:
        message = _claim_message(passed, mine, kwargs, observed, info)
    else:
        message = _rows_message(passed, gx_type, kwargs, res, mine.get("batch"), row_names)
    return {"expectation": mine.get("title", gx_type), "expect": mine.get("expect", gx_type),
            "passed": passed, "observed": observed, "threshold": threshold_text(gx_type, kwargs),
            "line": mine.get("line"), "claim": mine.get("claim"),
            "description": mine.get("description"), "measurement": mine.get("measurement"),
            "error": error is not None, "message": message}


def outcomes(validation: Mapping) -> list[dict]:
    """Every expectation's outcome row, in suite order."""
    mine = (validation.get("meta") or {}).get(META_KEY) or {}
    names = mine.get("row_names") or {}
    return [outcome(r, names) for r in validation.get("results") or []]


def summary(validation: Mapping) -> dict:
    """The ``expectations`` block of results.json: ``{suite, path, success, n_passed, n_failed,
    n_skipped, results, skipped}`` (``skipped``: expectations not run, with the reason)."""
    rows = outcomes(validation)
    n_ok = sum(r["passed"] for r in rows)
    mine = (validation.get("meta") or {}).get(META_KEY) or {}
    skipped = list(mine.get("skipped") or [])
    return {"suite": validation.get("suite_name"), "path": mine.get("suite"),
            "success": n_ok == len(rows), "n_passed": n_ok, "n_failed": len(rows) - n_ok,
            "n_skipped": len(skipped), "results": rows, "skipped": skipped}


def text_lines(block: Mapping) -> list[str]:
    """The terminal report of an ``expectations`` block: every failure with its observed value
    and threshold, one line per pass, and the count.

    Every string from the suite or the data goes through :func:`audit.escape.terminal.text`:
    one line each, control characters shown, workflow-command syntax defused, so the lines are
    safe on a terminal and in a CI log whatever the dataset holds.
    """
    from ..escape.terminal import text as t

    path = t(block.get("path") or block.get("suite") or "suite")
    out = []
    for r in block.get("results") or []:
        where = f"{path}:{r['line']}" if r.get("line") else path
        if r["passed"]:
            out.append(f"pass  {t(r['expectation'])}  ({where})")
            continue
        out.append(f"FAIL  {t(r['expectation'])}  ({where})")
        out.append(f"      {t(r['message'])}")
        out.append(f"      expected: {t(r['description'])}")
        if r.get("claim"):
            out.append(f"      claim: {t(r['claim'])}")
    for r in block.get("skipped") or []:
        where = f"{path}:{r['line']}" if r.get("line") else path
        out.append(f"skip  {t(r['expectation'])}  ({where}): {t(r['reason'])}")
    n_skipped = len(block.get("skipped") or [])
    out.append(f"{block.get('n_passed', 0) + block.get('n_failed', 0)} expectations: "
               f"{block.get('n_passed', 0)} passed, {block.get('n_failed', 0)} failed"
               + (f", {n_skipped} skipped" if n_skipped else ""))
    return out
