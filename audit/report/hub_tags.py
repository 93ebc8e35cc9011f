"""The Hub tags the audit computes for the dataset card: ``annotations_creators`` from the pools
and ``size_categories`` from the number of items.

``annotations_creators`` comes from the pools: judge pools are ``machine-generated``; a pool whose
name says crowd (crowd, normal, worker, mturk, prolific, ...) is ``crowdsourced``; one that says
expert (expert, author, professional, linguist, ...) is ``expert-generated``; any other pool gets
``default_creator`` (``expert-generated``); ``creators={pool: kind}`` (the CLI's ``--creator
POOL=KIND``, :func:`parse_creators`) overrides any pool. The values come from the Hub's
vocabularies (:data:`CREATOR_KINDS`, :data:`SIZE_CATEGORIES`, as also shipped in
``datasets/utils/resources``), which :func:`audit.report.card.check_card` checks a card against.
"""

from __future__ import annotations

import math
import re

from ..errors import InputError, join_names

#: The Hub's ``annotations_creators`` values.
CREATOR_KINDS = ("found", "crowdsourced", "expert-generated", "machine-generated",
                 "no-annotation", "other")
#: The Hub's ``size_categories`` values, in order, with the exclusive upper bound of each.
SIZE_CATEGORIES = (("n<1K", 1e3), ("1K<n<10K", 1e4), ("10K<n<100K", 1e5), ("100K<n<1M", 1e6),
                   ("1M<n<10M", 1e7), ("10M<n<100M", 1e8), ("100M<n<1B", 1e9),
                   ("1B<n<10B", 1e10), ("10B<n<100B", 1e11), ("100B<n<1T", 1e12),
                   ("n>1T", math.inf))
SIZE_VALUES = ("unknown",) + tuple(name for name, _ in SIZE_CATEGORIES)
DEFAULT_CREATOR = "expert-generated"

_CROWD = re.compile(r"crowd|normal|worker|mturk|turk|prolific|amt|layperson|lay|public|volunteer",
                    re.I)
_EXPERT = re.compile(r"expert|author|professional|linguist|specialist|annotator|trained|staff|"
                     r"researcher|graduate|student", re.I)


def pool_creator(pool: str, *, judge: bool = False, default: str = DEFAULT_CREATOR) -> str:
    """The ``annotations_creators`` kind of one pool (see the module docstring for the rules)."""
    if judge:
        return "machine-generated"
    if _CROWD.search(pool):
        return "crowdsourced"
    if _EXPERT.search(pool):
        return "expert-generated"
    return default


def pool_creators(results: dict, *, creators: dict | None = None,
                  default_creator: str = DEFAULT_CREATOR) -> dict[str, str]:
    """``{pool: kind}`` for every pool of the dataset.

    Raises
    ------
    InputError
        A kind outside :data:`CREATOR_KINDS`, or an override naming a pool the dataset lacks.
    """
    creators = dict(creators or {})
    for key, kind in [("default_creator", default_creator)] + \
            [(f"creator {p}", k) for p, k in creators.items()]:
        if kind not in CREATOR_KINDS:
            raise InputError(f"{kind!r} is not an annotations_creators value; use one of "
                             f"{join_names(CREATOR_KINDS)}", key=key)
    pools = (results.get("dataset") or {}).get("pools") or {}
    unknown = sorted(set(creators) - set(pools))
    if unknown:
        raise InputError(f"no pool {join_names(unknown)}; pools are {join_names(pools)}",
                         key="creator")
    return {p: creators.get(p) or pool_creator(p, judge=bool(info.get("judge")),
                                               default=default_creator)
            for p, info in pools.items()}


def size_category(n_items) -> str:
    """The Hub's ``size_categories`` value for ``n_items`` rows."""
    if n_items is None:
        return "unknown"
    return next(name for name, upper in SIZE_CATEGORIES if n_items < upper)


def parse_creators(pairs) -> dict[str, str]:
    """``["POOL=KIND", ...]`` (the CLI's ``--creator``) as ``{pool: kind}``; a pool given two
    different kinds is an InputError (which one was meant cannot be told), the same kind twice
    is the same request."""
    out = {}
    for text in pairs or ():
        pool, sep, kind = str(text).rpartition("=")
        if not sep or not pool:
            raise InputError(f"expected POOL=KIND, got {text!r}", key="creator")
        kind = kind.strip()
        if out.get(pool, kind) != kind:
            raise InputError(f"pool {pool!r} is given two kinds, {out[pool]!r} and {kind!r}: "
                             "give one", key="creator")
        out[pool] = kind
    return out
