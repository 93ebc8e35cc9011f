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

import warnings

import numpy as np
import pandas as pd

from ..contract import columns as C
from ..errors import DegenerateDataWarning
from ..contract.table import AnnotationTable
from .catalogue import DEFAULT_METRIC
from .gx_json import label_key
from .measurements import as_float

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


def _label_names(table: AnnotationTable) -> np.ndarray:
    """Each judgment's label as the scale names it (``B``, ``tie``), else its key."""
    scale = table.scale
    names = scale.names if scale.names is not None else [label_key(v) for v in scale.values]
    return np.asarray(names, dtype=object)[table.frame[C.LABEL].cat.codes.to_numpy()]


def _pools(table: AnnotationTable) -> np.ndarray:
    return table.frame[C.POOL].astype(str).to_numpy(dtype=object)


def _diff(old: AnnotationTable, new: AnnotationTable) -> dict:
    """The two versions' judgments matched on (item, annotator): integer keys and row indices
    of the shared, removed and added judgments, and which shared ones changed label."""
    oi, ni, items = _union_codes(old.frame[C.ITEM], new.frame[C.ITEM])
    oa, na, anns = _union_codes(old.frame[C.ANNOTATOR], new.frame[C.ANNOTATOR])
    ok, nk = oi * len(anns) + oa, ni * len(anns) + na
    shared, io, inew = np.intersect1d(ok, nk, assume_unique=True, return_indices=True)
    ol, nl = _labels(old), _labels(new)
    return {"ok": ok, "nk": nk, "shared": shared, "io": io, "inew": inew, "ol": ol, "nl": nl,
            "diff": ol[io] != nl[inew], "n_anns": len(anns),
            "removed": np.setdiff1d(np.arange(len(ok)), io, assume_unique=True),
            "added": np.setdiff1d(np.arange(len(nk)), inew, assume_unique=True),
            "item_names": items.to_numpy(dtype=object), "ann_names": anns.to_numpy(dtype=object)}


def judgment_changes(old: AnnotationTable, new: AnnotationTable, *,
                     _d: dict | None = None) -> pd.DataFrame:
    """Every (item, annotator) judgment that was added, removed or relabelled.

    Returns
    -------
    pandas.DataFrame
        Columns ``item``, ``annotator``, ``pool`` (the new version's; the old one's for a
        removed judgment), ``change`` (``added`` / ``removed`` / ``relabelled``),
        ``old_label``, ``new_label`` (label keys, as compared; None where absent) and
        ``old_name``, ``new_name`` (the labels as each version's scale names them, e.g.
        ``B`` and ``tie`` for the codes ``1`` and ``0``; the key when the scale has no
        names), sorted by change, item and annotator. Unchanged judgments are not listed.
    """
    d = _d if _d is not None else _diff(old, new)
    io, inew, diff, removed, added = d["io"], d["inew"], d["diff"], d["removed"], d["added"]
    ol, nl = d["ol"], d["nl"]
    on, nn = _label_names(old), _label_names(new)
    op, np_ = _pools(old), _pools(new)
    none = lambda n: np.full(n, None, dtype=object)  # noqa: E731
    parts = []
    for change, keys, pool, old_lab, new_lab, old_name, new_name in (
            (RELABELLED, d["shared"][diff], np_[inew[diff]], ol[io[diff]], nl[inew[diff]],
             on[io[diff]], nn[inew[diff]]),
            (REMOVED, d["ok"][removed], op[removed], ol[removed], none(len(removed)),
             on[removed], none(len(removed))),
            (ADDED, d["nk"][added], np_[added], none(len(added)), nl[added],
             none(len(added)), nn[added])):
        parts.append(pd.DataFrame({C.ITEM: d["item_names"][keys // d["n_anns"]],
                                   C.ANNOTATOR: d["ann_names"][keys % d["n_anns"]],
                                   C.POOL: pool, CHANGE: change, "old_label": old_lab,
                                   "new_label": new_lab, "old_name": old_name,
                                   "new_name": new_name}))
    out = pd.concat(parts, ignore_index=True)
    return out.sort_values([CHANGE, C.ITEM, C.ANNOTATOR], kind="stable").reset_index(drop=True)


def _counts(names: np.ndarray, changed: np.ndarray) -> pd.DataFrame:
    """Per distinct name: judgments in both versions, how many changed label, their share."""
    frame = pd.DataFrame({"name": names, "changed": changed})
    g = frame.groupby("name", sort=True)["changed"].agg(["size", "sum"])
    g.columns = ["n_shared", "n_relabelled"]
    g.index.name = None
    g["share"] = g["n_relabelled"] / g["n_shared"]
    return g


def relabel_breakdown(old: AnnotationTable, new: AnnotationTable, *, max_listed: int = MAX_LISTED,
                      _d: dict | None = None) -> dict:
    """Who relabelled what: the changed labels by pool, by annotator and by label transition.

    Over the judgments in both versions (same item and annotator), grouped by the new
    version's pool and by annotator: ``n_shared`` (in both), ``n_relabelled`` and ``share``
    (``n_relabelled / n_shared``). A reviewer of a dataset pull request reads from it whether
    the relabelling is one annotator's correction or a change across a pool.

    Returns
    -------
    dict
        ``by_pool`` (``{pool: {n_shared, n_relabelled, share}}``, every pool with a judgment
        in both), ``by_annotator`` (``{count, annotators}``: the annotators with a changed
        label, most changes first, at most ``max_listed``, each ``{annotator, pool,
        n_shared, n_relabelled, share}``; ``pool`` is the annotator's pool in the new version,
        pools joined by ``", "`` when they hold several), and ``transitions`` (``[{old, new,
        count}]`` by label name, most frequent first).
    """
    d = _d if _d is not None else _diff(old, new)
    inew, diff = d["inew"], d["diff"]
    pools = _pools(new)[inew]
    anns = d["ann_names"][d["shared"] % d["n_anns"]].astype(str)
    by_pool = _counts(pools, diff)
    by_ann = _counts(anns, diff)
    by_ann = by_ann[by_ann["n_relabelled"] > 0]
    by_ann = by_ann.assign(key=by_ann.index).sort_values(
        ["n_relabelled", "key"], ascending=[False, True], kind="stable")
    ann_pools = pd.Series(pools).groupby(anns, sort=False).unique()
    moves = pd.DataFrame({"old": _label_names(old)[d["io"][diff]],
                          "new": _label_names(new)[inew[diff]]})
    moves = moves.groupby(["old", "new"], sort=True).size().rename("count").reset_index() \
        .sort_values("count", ascending=False, kind="stable")
    return {
        "by_pool": {str(p): {"n_shared": int(r.n_shared), "n_relabelled": int(r.n_relabelled),
                             "share": float(r.share)} for p, r in by_pool.iterrows()},
        "by_annotator": {"count": len(by_ann), "annotators": [
            {"annotator": str(a), "pool": ", ".join(sorted(map(str, ann_pools[a]))),
             "n_shared": int(r.n_shared), "n_relabelled": int(r.n_relabelled),
             "share": float(r.share)} for a, r in by_ann.head(max_listed).iterrows()]},
        "transitions": [{"old": str(m.old), "new": str(m.new), "count": int(m.count)}
                        for m in moves.itertuples(index=False)],
    }


def _share(num: int, den: int, what: str) -> float:
    if den == 0:
        warnings.warn(f"baseline comparison: {what} is undefined (nothing to compare)",
                      DegenerateDataWarning, stacklevel=3)
        return float("nan")
    return num / den


def reliability_change(old: dict, new: dict) -> dict:
    """Every metric in both reliability blocks: ``{old, new, change}`` (change = new - old)."""
    def block(o, n):
        out = {}
        for metric in (o or {}):
            if metric in (n or {}) and isinstance(o[metric], dict) and "value" in o[metric]:
                a, b = as_float(o[metric]), as_float(n[metric])
                out[metric] = {"old": a, "new": b, CHANGE: b - a}
        return out

    by_pool = {p: block((old.get("by_pool") or {})[p], (new.get("by_pool") or {})[p])
               for p in (old.get("by_pool") or {}) if p in (new.get("by_pool") or {})}
    return {"overall": block(old.get("overall"), new.get("overall")), "by_pool": by_pool}


def leaderboard_change(old: dict, new: dict) -> dict:
    """Per leaderboard in both: Kendall's tau-b of the common models' old vs new scores
    (:func:`audit.rank.stability.kendall_tau_b`), and each model's old and new rank and score."""
    from ..rank.stability import kendall_tau_b

    out = {}
    for pool in old:
        if pool not in new:
            continue
        o = {r["model"]: r for r in old[pool]}
        n = {r["model"]: r for r in new[pool]}
        common = [m for m in o if m in n]
        a = np.array([as_float(o[m]["score"]) for m in common], dtype=float)
        b = np.array([as_float(n[m]["score"]) for m in common], dtype=float)
        ok = np.isfinite(a) & np.isfinite(b)
        if ok.sum() < 2 or np.ptp(a[ok]) == 0 or np.ptp(b[ok]) == 0:
            warnings.warn(f"baseline comparison: leaderboard {pool!r} has fewer than two "
                          "comparable models or constant scores; its Kendall tau is NaN",
                          DegenerateDataWarning, stacklevel=2)
            tau = float("nan")
        else:
            tau = kendall_tau_b(a[ok], b[ok])
        out[pool] = {"kendall_tau": tau, "n_models": int(ok.sum()),
                     "models_added": sorted(m for m in n if m not in o),
                     "models_removed": sorted(m for m in o if m not in n),
                     "models": {m: {"old_rank": o[m].get("rank"), "new_rank": n[m].get("rank"),
                                    "old_score": as_float(o[m]["score"]),
                                    "new_score": as_float(n[m]["score"])} for m in common}}
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
        ``judgments_removed``, ``relabelled`` (``{count, share, changes, by_pool,
        by_annotator, transitions}``: each change with its labels' keys and names, and the
        breakdown of :func:`relabel_breakdown`), the shares
        ``changed_label_share``, ``removed_item_share``, ``added_item_share``, and with the
        audits ``reliability`` and ``leaderboards``.
    """
    d = _diff(old, new)
    changes = judgment_changes(old, new, _d=d)
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
    out["relabelled"].update(relabel_breakdown(old, new, max_listed=max_listed, _d=d))
    if old_results is not None and new_results is not None:
        out["reliability"] = reliability_change(old_results.get("reliability") or {},
                                                new_results.get("reliability") or {})
        out["leaderboards"] = leaderboard_change(old_results.get("leaderboards") or {},
                                                 new_results.get("leaderboards") or {})
    return out


def _name(change: dict, side: str) -> str:
    """A change's label on one side as its scale names it (older blocks: the key)."""
    name = change.get(f"{side}_name")
    return name if name is not None else change[f"{side}_label"]


def text_lines(block: dict) -> list[str]:
    """The terminal report of a ``baseline`` block.

    Item and annotator ids, labels, pool and model names go through
    :func:`audit.escape.terminal.text` (one line each, control characters shown,
    workflow-command syntax defused): the new version is a pull request's data.
    """
    from ..escape.terminal import text as t
    from ..format import number, percent

    ni, nj = block["n_items"], block["n_judgments"]
    out = [f"baseline {t(block['source'])}: {ni['old']:,} -> {ni['new']:,} items, "
           f"{nj['old']:,} -> {nj['new']:,} judgments",
           f"  items added {block['items_added']['count']:,}, removed "
           f"{block['items_removed']['count']:,}, with a relabelled judgment "
           f"{block['items_relabelled']['count']:,}",
           f"  judgments added {block['judgments_added']:,}, removed "
           f"{block['judgments_removed']:,}, relabelled {block['relabelled']['count']:,} "
           f"({percent(block['changed_label_share'])} of the {nj['shared']:,} in both)"]
    rel = block["relabelled"]
    for ch in rel["changes"][:10]:
        out.append(f"    item {t(ch[C.ITEM])}, annotator {t(ch[C.ANNOTATOR])}: "
                   f"{t(_name(ch, 'old'))} -> {t(_name(ch, 'new'))}")
    if rel["count"] > 10:
        out.append(f"    ... and {rel['count'] - 10:,} more")
    if rel["count"]:
        moves = rel.get("transitions") or []
        if moves:
            out.append("  label changes: " + ", ".join(
                f"{t(m['old'])} -> {t(m['new'])} {m['count']:,}" for m in moves[:8])
                + (", ..." if len(moves) > 8 else ""))
        for pool, v in (rel.get("by_pool") or {}).items():
            out.append(f"  pool {t(pool)}: relabelled {v['n_relabelled']:,} of "
                       f"{v['n_shared']:,} ({percent(v['share'])})")
        anns = rel.get("by_annotator") or {}
        top = anns.get("annotators") or []
        if top:
            shown = ", ".join(f"{t(a['annotator'])} {a['n_relabelled']:,}/{a['n_shared']:,}"
                              for a in top[:5])
            more = anns["count"] - min(len(top), 5)
            out.append(f"  annotators with a changed label: {anns['count']:,} ({shown}"
                       + (f", and {more:,} more" if more > 0 else "") + ")")
    rel = block.get("reliability") or {}
    metric = DEFAULT_METRIC  # the headline coefficient, as a claim that names none
    scopes = [("all humans", (rel.get("overall") or {}).get(metric))] + \
        [(f"pool {t(p)}", m.get(metric)) for p, m in (rel.get("by_pool") or {}).items()]
    for name, entry in scopes:
        if entry:
            out.append(f"  {metric} {name}: {number(entry['old'])} -> {number(entry['new'])}")
    for pool, lb in (block.get("leaderboards") or {}).items():
        moved = [f"{t(m)} {v['old_rank']}->{v['new_rank']}" for m, v in lb["models"].items()
                 if v["old_rank"] != v["new_rank"]]
        tau = lb["kendall_tau"]
        out.append(f"  leaderboard {t(pool)}: Kendall tau old vs new "
                   f"{number(tau)}"
                   + (f"; moved: {', '.join(moved)}" if moved else "; no rank changed"))
    return out
