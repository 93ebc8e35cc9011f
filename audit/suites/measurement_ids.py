"""Measurement ids: the name of each row of the measurements table, and the one a claim reads.

An id is ``quantity[scope, ...]`` (:func:`measurement_id`): ``krippendorff_alpha[crowd]``,
``kendall_tau[crowd vs expert]``, ``majority_differs_rate[every, label]``. The table
(:mod:`audit.suites.measurements`) names its rows this way and a claim
(:attr:`audit.suites.suite.Expectation.measurement`) finds its row by
:func:`claim_measurement`; both read this module, neither the other.
"""

from __future__ import annotations

from collections.abc import Mapping

from .catalogue import EVERY


def measurement_id(quantity: str, *scope: str) -> str:
    """``quantity[scope, ...]``, or the bare quantity when it has no scope."""
    return f"{quantity}[{', '.join(scope)}]" if scope else quantity


def pair_scope(a: str, b: str | None = None) -> str:
    """``"A vs B"`` with the two names sorted; ``every`` stays ``every``."""
    if b is None:
        return a
    a, b = sorted((str(a), str(b)))
    return f"{a} vs {b}"


def claim_measurement(quantity: str, params: Mapping) -> str:
    """The id of the measurement a statistical claim on ``quantity`` (its kind's
    :attr:`audit.suites.catalogue.Kind.quantity`) with ``params`` reads."""
    p, q = params, quantity
    pools = p.get("pools")
    pair = EVERY if pools in (None, EVERY) else pair_scope(*pools)
    if q == "reliability":
        return measurement_id(p["metric"], p["pool"])
    if q == "majority_differs_rate":
        return measurement_id(q, pair, p["granularity"])
    if q in ("winner_reversed_rate", "kendall_tau"):
        return measurement_id(q, pair)
    if q == "judge_agreement":
        return measurement_id(q, p["judge"], p["pool"])
    if q == "reliability_drop":
        return measurement_id(q, p["metric"], p["pool"])
    if "pool" in p:
        return measurement_id(q, p["pool"])
    return measurement_id(q)
