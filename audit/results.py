"""The audit's result object: one JSON-serialisable dict, written as ``results.json``.

Every renderer (terminal summary, HTML report, dataset card, JUnit file) is a pure function of it,
in its JSON form (:func:`json_form`: undefined values as None). The library
(:func:`audit.measure.measure`, :func:`audit.rank.rank`, :func:`audit.run`) returns floats with
NaN where a value is undefined; :func:`dumps` alone turns NaN into ``null``. None, in both forms,
marks a value that does not apply (the winner reversal of a scale without winners, the degrees
of freedom of a permutation test).
Keys, top level: ``meta``, ``dataset``, then one block per analysis (``reliability``,
``pool_disagreement``, ``within_pool``, ``leaderboards``, ``stability``, ``judge_alignment``, ...).
The same inputs and seed give the same bytes: nothing time- or host-dependent is written.

A written ``results.json`` is one file of a set (:mod:`audit.outputs`): its ``meta.run_id`` is a
digest of its own content and is the run id of the folder's ``manifest.json``; :func:`read`
checks both before returning the dict.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np


def _convert(obj, finite):
    kind = type(obj)  # the exact plain types first: most of a result is these
    if kind is str or kind is int or kind is bool or obj is None:
        return obj
    if kind is float:
        return finite(obj)
    if kind is dict:
        return {k if type(k) is str else str(k): _convert(v, finite) for k, v in obj.items()}
    if kind is list:
        return [_convert(v, finite) for v in obj]
    if isinstance(obj, dict):
        return {str(k): _convert(v, finite) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_convert(v, finite) for v in obj]
    if isinstance(obj, np.ndarray):
        return _convert(obj.tolist(), finite)
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return finite(float(obj))
    return obj


def plain(obj):
    """``obj`` in plain Python types: numpy scalars and arrays, tuples -> ``bool``, ``int``,
    ``float``, lists; keys -> ``str``. NaN stays NaN: the form the library returns
    (:func:`audit.measure.measure`, :func:`audit.rank.rank`, :func:`audit.run`)."""
    return _convert(obj, lambda x: x)


def jsonable(obj):
    """:func:`plain` with NaN and inf as None: the one NaN-to-None conversion, applied by
    :func:`dumps` (and so by :func:`json_form`)."""
    return _convert(obj, lambda x: None if math.isnan(x) or math.isinf(x) else x)


def dumps(results: dict) -> str:
    """``results`` as the text of ``results.json`` (indented, UTF-8, NaN written as null, a
    lone surrogate of a name that is not UTF-8 as its escape: :mod:`audit.escape.json`),
    checked against the result contract first (:func:`audit.contract.results.checked`: a
    producer that drifts from it is an internal error naming the block and key)."""
    from .contract.results import checked  # pydantic: on the first write, never at start-up
    from .escape.json import text

    return text(json.dumps(checked(jsonable(results)), indent=2, ensure_ascii=False,
                           allow_nan=False)) + "\n"


def json_form(results):
    """``results`` (or any block of them) as ``results.json`` holds them, NaN as None: the
    values ``json.loads(dumps(results))`` gives, without writing the text (:func:`jsonable`).
    What every renderer reads (the report, the card, the terminal summary, suites), whether
    the results come from a run or from a file (:func:`read`)."""
    return jsonable(results)


def write(results: dict, path: str | Path) -> Path:
    """Write ``results`` to the single file ``path``, atomically (no manifest, no run id: for
    an output folder use :func:`audit.outputs.write_run`)."""
    from .outputs import write_text

    return write_text(path, dumps(results))


def read(path: str | Path, *, verify: bool = True) -> dict:
    """Read a ``results.json`` back.

    With ``verify`` (default), a file written as part of an output folder (its ``meta`` has a
    ``run_id``, or a ``manifest.json`` sits beside it) is checked against the manifest
    (:func:`audit.outputs.verify_outputs`): a torn or mixed folder raises
    :class:`audit.outputs.OutputsError` naming the file that does not match.
    """
    from .outputs import MANIFEST, OutputsError, read_verified

    path = Path(path)
    ours = verify and os.path.lexists(path.parent / MANIFEST)
    data = read_verified(path) if ours else path.read_bytes()
    results = json.loads(data.decode("utf-8"))
    if verify and not ours and "run_id" in ((results.get("meta") if isinstance(results, dict)
                                            else None) or {}):
        raise OutputsError(f"has a run id but no {MANIFEST} beside it: its folder is not a "
                           "complete annotation-audit output (interrupted, or copied in part)",
                           path=path)
    return results
