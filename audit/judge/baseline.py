"""Dataset-PR mode: what changed between the baseline (old) version of a dataset and the new one.

A judgment is identified by its (item, annotator) pair, compared by the string form of ids and
labels, so the two versions may order, encode or even scale their labels differently:

* *added* / *removed* judgments: pairs only in the new / only in the old version;
* *relabelled*: pairs in both whose label differs; ``changed_label_share`` is their share of the
  pairs in both (the "no more than X% of existing labels changed" claim);
* items added / removed: item ids only in one version (``removed_item_share`` is over the old
  items; ``added_item_share`` too, so "grew by 10%" reads as 0.10);
* reliability change: every metric, all humans and per pool, new minus old (negative = fell);
* leaderboard change: per leaderboard in both, Kendall's tau-b between the old and the new
  scores of the models in both (Kendall 1945), and each model's old and new rank.

Everything is vectorised on integer keys (item code x annotator code over the union of ids).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd

from .. import columns as C
from ..errors import DegenerateDataWarning
from ..table import AnnotationTable
from .suite import label_key

CHANGE = "change"
ADDED, REMOVED, RELABELLED = "added", "removed", "relabelled"
#: How many changed judgments / items the result block lists (the counts are always complete).
MAX_LISTED = 1000


def _union_codes(old: pd.Series, new: pd.Series) -> tuple[np.ndarray, np.ndarray, pd.Index]:
    """Codes of two categorical id columns over the union of their (string) categories."""
    oc, nc = old.cat.categories.astype(str), new.cat.categories.astype(str)
    union = oc.union(nc)
    om, nm = union.get_indexer(oc), union.get_indexer(nc)
    return om[old.cat.codes.to_numpy()], nm[new.cat.codes.to_numpy()], union


def _labels(table: AnnotationTable) -> np.ndarray:
    keys = np.asarray([label_key(v) for v in table.scale.values], dtype=object)
    return keys[table.frame[C.LABEL].cat.codes.to_numpy()]


def judgment_changes(old: AnnotationTable, new: AnnotationTable) -> pd.DataFrame:
    """Every (item, annotator) judgment that was added, removed or relabelled.

    Returns
    -------
    pandas.DataFrame
        Columns ``item``, ``annotator``, ``change`` (``added`` / ``removed`` /
        ``relabelled``), ``old_label``, ``new_label`` (label keys; None where absent), sorted by
        change, item and annotator. Unchanged judgments are not listed.
    """
    oi, ni, items = _union_codes(old.frame[C.ITEM], new.frame[C.ITEM])
    oa, na, anns = _union_codes(old.frame[C.ANNOTATOR], new.frame[C.ANNOTATOR])
    ok, nk = oi * len(anns) + oa, ni * len(anns) + na
    shared, io, inew = np.intersect1d(ok, nk, assume_unique=True, return_indices=True)
    ol, nl = _labels(old), _labels(new)
    diff = ol[io] != nl[inew]
    removed = np.setdiff1d(np.arange(len(ok)), io, assume_unique=True)
    added = np.setdiff1d(np.arange(len(nk)), inew, assume_unique=True)
    item_names = items.to_numpy(dtype=object)
    ann_names = anns.to_numpy(dtype=object)
    parts = []
    for change, keys, old_lab, new_lab in (
            (RELABELLED, shared[diff], ol[io[diff]], nl[inew[diff]]),
            (REMOVED, ok[removed], ol[removed], np.full(len(removed), None, dtype=object)),
            (ADDED, nk[added], np.full(len(added), None, dtype=object), nl[added])):
        parts.append(pd.DataFrame({C.ITEM: item_names[keys // len(anns)],
                                   C.ANNOTATOR: ann_names[keys % len(anns)],
                                   CHANGE: change, "old_label": old_lab, "new_label": new_lab}))
    out = pd.concat(parts, ignore_index=True)
    return out.sort_values([CHANGE, C.ITEM, C.ANNOTATOR], kind="stable").reset_index(drop=True)


def _share(num: int, den: int, what: str) -> float:
    if den == 0:
        warnings.warn(f"baseline comparison: {what} is undefined (nothing to compare)",
                      DegenerateDataWarning, stacklevel=3)
        return float("nan")
    return num / den


def _num(x):
    if isinstance(x, dict):
        x = x.get("value")
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def reliability_change(old: dict, new: dict) -> dict:
    """Every metric in both reliability blocks: ``{old, new, change}`` (change = new - old)."""
    def block(o, n):
        out = {}
        for metric in (o or {}):
            if metric in (n or {}) and isinstance(o[metric], dict) and "value" in o[metric]:
                a, b = _num(o[metric]), _num(n[metric])
                out[metric] = {"old": a, "new": b,
                               CHANGE: None if a is None or b is None else b - a}
        return out

    by_pool = {p: block((old.get("by_pool") or {})[p], (new.get("by_pool") or {})[p])
               for p in (old.get("by_pool") or {}) if p in (new.get("by_pool") or {})}
    return {"overall": block(old.get("overall"), new.get("overall")), "by_pool": by_pool}


def leaderboard_change(old: dict, new: dict) -> dict:
    """Per leaderboard in both: Kendall's tau-b of the common models' old vs new scores, and
    each model's old and new rank and score."""
    from scipy.stats import kendalltau

    out = {}
    for pool in old:
        if pool not in new:
            continue
        o = {r["model"]: r for r in old[pool]}
        n = {r["model"]: r for r in new[pool]}
        common = [m for m in o if m in n]
        a = np.array([_num(o[m]["score"]) if _num(o[m]["score"]) is not None else np.nan
                      for m in common], dtype=float)
        b = np.array([_num(n[m]["score"]) if _num(n[m]["score"]) is not None else np.nan
                      for m in common], dtype=float)
        ok = np.isfinite(a) & np.isfinite(b)
        if ok.sum() < 2 or np.ptp(a[ok]) == 0 or np.ptp(b[ok]) == 0:
            warnings.warn(f"baseline comparison: leaderboard {pool!r} has fewer than two "
                          "comparable models or constant scores; its Kendall tau is NaN",
                          DegenerateDataWarning, stacklevel=2)
            tau = float("nan")
        else:
            tau = float(kendalltau(a[ok], b[ok]).statistic)
        out[pool] = {"kendall_tau": tau, "n_models": int(ok.sum()),
                     "models_added": sorted(m for m in n if m not in o),
                     "models_removed": sorted(m for m in o if m not in n),
                     "models": {m: {"old_rank": o[m].get("rank"), "new_rank": n[m].get("rank"),
                                    "old_score": _num(o[m]["score"]),
                                    "new_score": _num(n[m]["score"])} for m in common}}
    return out


def compare(old: AnnotationTable, new: AnnotationTable, *, old_results: dict | None = None,
            new_results: dict | None = None, max_listed: int = MAX_LISTED) -> dict:
    """The ``baseline`` block of results.json: new version ``new`` against ``old``.

    Parameters
    ----------
    old, new
        The two versions as canonical tables.
    old_results, new_results
        Their audits (:func:`audit.pipeline.audit_table`); with them the block also holds the
        reliability and leaderboard changes.
    max_listed
        How many changed judgments and items to list; counts are always complete.

    Returns
    -------
    dict
        ``source``, ``n_items``, ``n_judgments`` (old / new / shared), ``items_added``,
        ``items_removed``, ``items_relabelled`` (each ``{count, items}``), ``judgments_added``,
        ``judgments_removed``, ``relabelled`` (``{count, share, changes}``), the shares
        ``changed_label_share``, ``removed_item_share``, ``added_item_share``, and with the
        audits ``reliability`` and ``leaderboards``.
    """
    changes = judgment_changes(old, new)
    kind = changes[CHANGE].to_numpy()
    old_items = set(old.frame[C.ITEM].astype(str).unique())
    new_items = set(new.frame[C.ITEM].astype(str).unique())
    added_items, removed_items = sorted(new_items - old_items), sorted(old_items - new_items)
    relabelled = changes[kind == RELABELLED]
    n_shared = len(old.frame) - int((kind == REMOVED).sum())
    rel_items = list(pd.unique(relabelled[C.ITEM]))

    def listed(names):
        return {"count": len(names), "items": [str(x) for x in names[:max_listed]]}

    out = {
        "source": old.source,
        "n_items": {"old": len(old_items), "new": len(new_items)},
        "n_judgments": {"old": len(old.frame), "new": len(new.frame), "shared": n_shared},
        "items_added": listed(added_items),
        "items_removed": listed(removed_items),
        "items_relabelled": listed(rel_items),
        "judgments_added": int((kind == ADDED).sum()),
        "judgments_removed": int((kind == REMOVED).sum()),
        "relabelled": {"count": len(relabelled),
                       "changes": relabelled.drop(columns=CHANGE).head(max_listed)
                       .astype(object).to_dict("records")},
        "changed_label_share": _share(len(relabelled), n_shared, "the changed-label share"),
        "removed_item_share": _share(len(removed_items), len(old_items), "the removed share"),
        "added_item_share": _share(len(added_items), len(old_items), "the added share"),
    }
    out["relabelled"]["share"] = out["changed_label_share"]
    if old_results is not None and new_results is not None:
        out["reliability"] = reliability_change(old_results.get("reliability") or {},
                                                new_results.get("reliability") or {})
        out["leaderboards"] = leaderboard_change(old_results.get("leaderboards") or {},
                                                 new_results.get("leaderboards") or {})
    return out


def text_lines(block: dict) -> list[str]:
    """The terminal report of a ``baseline`` block.

    Item and annotator ids, labels, pool and model names go through
    :func:`audit.escape.terminal.text` (one line each, control characters shown,
    workflow-command syntax defused): the new version is a pull request's data.
    """
    from ..escape.terminal import text as t

    def pct(x):
        return "NaN" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.1%}"

    ni, nj = block["n_items"], block["n_judgments"]
    out = [f"baseline {t(block['source'])}: {ni['old']:,} -> {ni['new']:,} items, "
           f"{nj['old']:,} -> {nj['new']:,} judgments",
           f"  items added {block['items_added']['count']:,}, removed "
           f"{block['items_removed']['count']:,}, with a relabelled judgment "
           f"{block['items_relabelled']['count']:,}",
           f"  judgments added {block['judgments_added']:,}, removed "
           f"{block['judgments_removed']:,}, relabelled {block['relabelled']['count']:,} "
           f"({pct(block['changed_label_share'])} of the {nj['shared']:,} in both)"]
    for ch in block["relabelled"]["changes"][:10]:
        out.append(f"    item {t(ch[C.ITEM])}, annotator {t(ch[C.ANNOTATOR])}: "
                   f"{t(ch['old_label'])} -> {t(ch['new_label'])}")
    if block["relabelled"]["count"] > 10:
        out.append(f"    ... and {block['relabelled']['count'] - 10:,} more")
    rel = block.get("reliability") or {}
    alpha = "krippendorff_alpha"
    scopes = [("all humans", (rel.get("overall") or {}).get(alpha))] + \
        [(f"pool {t(p)}", m.get(alpha)) for p, m in (rel.get("by_pool") or {}).items()]
    for name, entry in scopes:
        if entry:
            f = lambda x: "NaN" if x is None else f"{x:.3f}"  # noqa: E731
            out.append(f"  {alpha} {name}: {f(entry['old'])} -> {f(entry['new'])}")
    for pool, lb in (block.get("leaderboards") or {}).items():
        moved = [f"{t(m)} {v['old_rank']}->{v['new_rank']}" for m, v in lb["models"].items()
                 if v["old_rank"] != v["new_rank"]]
        tau = lb["kendall_tau"]
        out.append(f"  leaderboard {t(pool)}: Kendall tau old vs new "
                   f"{'NaN' if tau is None or math.isnan(tau) else f'{tau:.3f}'}"
                   + (f"; moved: {', '.join(moved)}" if moved else "; no rank changed"))
    return out
