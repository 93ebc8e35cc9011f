"""Calibration and power of the within-pool annotator-effect tests (``python
benchmarks/within_pool_calibration.py``).

Seeded simulated pools, three designs:

``crossed``
    1,120 items x 3 annotators, binary labels, each item's prevalence drawn from Beta(0.6, 2.4)
    (varied difficulty, about 20% positive: the HS-Brexit design);
``small``
    the same with 20 items;
``sparse``
    300 items, 3 annotators per item drawn at random from 30, same prevalence model.

Under the null every annotator labels an item with its prevalence; under the alternative one
annotator's log-odds are shifted by each of ``--shifts``. Each dataset is tested by the toolkit's
within-item permutation test (:mod:`audit.measure.within_item`, ``--permutations`` per dataset,
every dataset's permutations drawn in one pass over all datasets), the asymptotic generalized
CMH test large pools get instead, Cochran's Q on the crossed
designs (chi-square reference) and the old pooled chi-square (Pearson on the annotator x label
table pooled over items; permutation across all judgments when Cochran's rule fails, as the
toolkit did before).

Not a test: the suite runs a small version (tests/test_within_pool_calibration.py). The table is
printed and, with ``--write``, appended to benchmarks/RESULTS.md under its own heading.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from scipy import stats

from audit.measure import within_item as W

DESIGNS = {"crossed": dict(n_items=1120, n_annotators=3, per_item=3),
           "small": dict(n_items=20, n_annotators=3, per_item=3),
           "sparse": dict(n_items=300, n_annotators=30, per_item=3)}
PREVALENCE = (0.6, 2.4)


def simulate(n_datasets: int, *, n_items: int, n_annotators: int, per_item: int,
             shift: float = 0.0, seed: int = 0):
    """``n_datasets`` binary pools stacked: (dataset, item, annotator, label) codes, items and
    annotators numbered within their dataset."""
    rng = np.random.default_rng(seed)
    d = np.repeat(np.arange(n_datasets), n_items * per_item)
    prev = rng.beta(*PREVALENCE, size=(n_datasets, n_items))
    if per_item == n_annotators:
        ann = np.tile(np.arange(n_annotators), n_datasets * n_items)
    else:
        keys = rng.random((n_datasets * n_items, n_annotators))
        ann = np.argsort(keys, axis=1)[:, :per_item].ravel()
    item = np.tile(np.repeat(np.arange(n_items), per_item), n_datasets)
    p = prev[d, item]
    if shift:
        logit = np.log(p / (1 - p)) + shift * (ann == 0)
        p = 1 / (1 + np.exp(-logit))
    label = (rng.random(len(p)) < p).astype(np.int64)
    return d, item, ann, label


def by_dataset(d: np.ndarray) -> list[np.ndarray]:
    """The row positions of each dataset ``0 .. d.max()``, in row order (as ``d == k``, without
    a pass over every row per dataset)."""
    order = np.argsort(d, kind="stable")
    return np.split(order, np.cumsum(np.bincount(d))[:-1])


def within_item_p(d, item, ann, label, *, n_items, n_annotators, n_permutations, seed):
    """The toolkit's within-item permutation p-value of every stacked dataset at once: the
    datasets' items and annotators are disjoint strata of one pool, so one within-item
    permutation of the stack is an independent permutation of each dataset."""
    n_datasets = int(d.max()) + 1
    s = W.strata(d * n_items + item, d * n_annotators + ann, label, min_annotator_judgments=1)
    owner_item = np.zeros(s.n_items, dtype=np.int64)
    keep = np.bincount(d * n_items + item, minlength=n_datasets * n_items) >= 2
    owner_item[:] = np.flatnonzero(keep) // n_items
    owner = np.zeros(s.n_annotators, dtype=np.int64)
    owner[s.annotator] = owner_item[s.item]
    e = W.expected_counts(s)
    cells = s.n_annotators * s.n_labels
    base = s.annotator * s.n_labels

    def per_dataset(tables):  # (b, A, q) -> (b, D)
        terms = np.where(e > 0, (tables - e) ** 2 / np.where(e > 0, e, 1.0), 0.0).sum(axis=-1)
        return np.stack([np.bincount(owner, weights=t, minlength=n_datasets) for t in terms])

    observed = per_dataset(np.bincount(base + s.label, minlength=cells)
                           .reshape(1, s.n_annotators, s.n_labels))[0]
    greater, ties = np.zeros(n_datasets), np.zeros(n_datasets)
    tol = 1e-9 * np.maximum(observed, 1)
    rng = np.random.default_rng(seed)
    vary = W.varying(s)
    base_v, lab_v = base[vary], s.label[vary]
    fixed = (np.bincount(base + s.label, minlength=cells)
             - np.bincount(base_v + lab_v, minlength=cells)).reshape(s.n_annotators, s.n_labels)
    for perm in W.permutations(s.item[vary], n_permutations, rng):
        b = len(perm)
        idx = (np.arange(b)[:, None] * cells + base_v[None, :] + lab_v[perm]).ravel()
        tables = np.bincount(idx, minlength=b * cells).reshape(b, s.n_annotators, s.n_labels)
        stat = per_dataset(tables + fixed)
        greater += (stat > observed + tol).sum(axis=0)
        ties += (np.abs(stat - observed) <= tol).sum(axis=0)
    return W.mid_p(greater, ties, n_permutations)


def cochran_q_p(d, item, ann, label, *, n_items, n_annotators):
    """Cochran's Q p-value of every crossed dataset (chi-square reference); NaN if undefined."""
    n_datasets = int(d.max()) + 1
    x = label.reshape(n_datasets, n_items, n_annotators).astype(np.float64)
    x = np.take_along_axis(x, ann.reshape(n_datasets, n_items, n_annotators).argsort(-1), -1)
    k = n_annotators
    col, row = x.sum(axis=1), x.sum(axis=2)
    total = row.sum(axis=1)
    den = k * total - (row ** 2).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        q = (k - 1) * (k * (col ** 2).sum(axis=1) - total ** 2) / den
    return np.where(den > 0, stats.chi2.sf(q, k - 1), np.nan)


def gcmh_p(d, item, ann, label, *, n_items, n_annotators):
    """The toolkit's asymptotic generalized CMH p-value of every dataset (the test large pools
    get), one dataset at a time."""
    out = np.full(int(d.max()) + 1, np.nan)
    for k, sel in enumerate(by_dataset(d)):
        s = W.strata(item[sel], ann[sel], label[sel], min_annotator_judgments=1)
        if s.n_annotators >= 2 and s.n_labels >= 2:
            q, dof = W.generalized_cmh(s)
            out[k] = stats.chi2.sf(q, dof) if dof else np.nan
    return out


def pooled_chi2_p(d, item, ann, label, *, n_annotators, n_permutations, seed):
    """The old test: Pearson's chi-square of the annotator x label table pooled over items,
    p from the chi-square unless Cochran's rule fails, then from labels permuted across all
    the dataset's judgments."""
    rng = np.random.default_rng(seed)
    out = np.full(int(d.max()) + 1, np.nan)
    for k, rows in enumerate(by_dataset(d)):
        a, y = ann[rows], label[rows]
        table = np.bincount(a * 2 + y, minlength=n_annotators * 2).reshape(n_annotators, 2)
        table = table[table.sum(axis=1) > 0]
        if (table.sum(axis=0) == 0).any():
            continue
        chi2, p, _, expected = stats.chi2_contingency(table, correction=False)
        if (expected < 1).any() or (expected < 5).mean() > 0.2:
            perm = rng.permuted(np.broadcast_to(y, (n_permutations, len(y))), axis=1)
            cells = np.arange(n_permutations)[:, None] * (n_annotators * 2) + a * 2 + perm
            t = np.bincount(cells.ravel(), minlength=n_permutations * n_annotators * 2)
            t = t.reshape(n_permutations, n_annotators, 2)
            n = t.sum(axis=(1, 2), keepdims=True)
            ex = t.sum(axis=2, keepdims=True) * t.sum(axis=1, keepdims=True) / n
            with np.errstate(invalid="ignore", divide="ignore"):
                s = np.where(ex > 0, (t - ex) ** 2 / ex, 0.0).sum(axis=(1, 2))
            p = (1 + (s >= chi2 - 1e-9 * max(chi2, 1)).sum()) / (1 + n_permutations)
        out[k] = p
    return out


def rejection(p: np.ndarray, alpha: float = 0.05) -> tuple[float, int]:
    """Share of datasets with p <= alpha among those where the test is defined, and how many."""
    ok = np.isfinite(p)
    return float((p[ok] <= alpha).mean()) if ok.any() else float("nan"), int(ok.sum())


def run(n_datasets: int, n_permutations: int, shifts, seed: int,
        designs=tuple(DESIGNS), old: bool = True) -> list[dict]:
    if not isinstance(shifts, (tuple, list)):
        shifts = (shifts,)
    rows = []
    for name in designs:
        cfg = DESIGNS[name]
        for eff in (0.0, *shifts):
            t0 = time.perf_counter()
            data = simulate(n_datasets, **cfg, shift=eff, seed=seed + int(eff * 1000))
            p_new = within_item_p(*data, n_items=cfg["n_items"],
                                  n_annotators=cfg["n_annotators"],
                                  n_permutations=n_permutations, seed=seed + 1)
            crossed = cfg["per_item"] == cfg["n_annotators"]
            p_q = (cochran_q_p(*data, n_items=cfg["n_items"], n_annotators=cfg["n_annotators"])
                   if crossed else np.full(n_datasets, np.nan))
            p_old = (pooled_chi2_p(*data, n_annotators=cfg["n_annotators"],
                                   n_permutations=n_permutations, seed=seed + 2)
                     if old else np.full(n_datasets, np.nan))
            p_cmh = gcmh_p(*data, n_items=cfg["n_items"], n_annotators=cfg["n_annotators"])
            rows.append({"design": name, "shift": eff, "n_datasets": n_datasets,
                         "within_item": rejection(p_new), "cochran_q": rejection(p_q),
                         "gcmh": rejection(p_cmh),
                         "pooled_chi2": rejection(p_old),
                         "seconds": time.perf_counter() - t0})
    return rows


def render(rows, n_permutations: int, seed: int) -> str:
    def cell(x):
        share, n = x
        if not np.isfinite(share):
            return "—"
        se = np.sqrt(share * (1 - share) / n)
        return f"{share:.3f} ± {se:.3f}" + (f" (n={n})" if n != rows[0]["n_datasets"] else "")

    lines = ["| design | annotator 0 log-odds shift | datasets | within-item permutation | "
             "gCMH asymptotic | Cochran's Q | old pooled chi-square |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['design']} | {r['shift']:g} | {r['n_datasets']} | "
                     f"{cell(r['within_item'])} | {cell(r['gcmh'])} | {cell(r['cochran_q'])} | "
                     f"{cell(r['pooled_chi2'])} |")
    head = (f"Rejection rate at 0.05 (± its Monte-Carlo s.e.); {n_permutations} permutations "
            f"per dataset, seed {seed}. Shift 0 is the null: the rate should be 0.05.")
    return head + "\n\n" + "\n".join(lines) + "\n"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", type=int, default=1000)
    ap.add_argument("--permutations", type=int, default=199)
    ap.add_argument("--shifts", type=float, nargs="+", default=[0.25, 0.5, 1.0])
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--write", action="store_true", help="append the table to RESULTS.md")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    rows = run(args.datasets, args.permutations, tuple(args.shifts), args.seed)
    table = render(rows, args.permutations, args.seed)
    print(table)
    print(f"{time.perf_counter() - t0:.1f} s")
    if args.write:
        path = Path(__file__).with_name("RESULTS.md")
        text = path.read_text()
        section = ("\n## Within-pool annotator-effect test: calibration and power\n\n"
                   "Written by `python benchmarks/within_pool_calibration.py --write` "
                   f"({DESIGNS['crossed']['n_items']:,} x 3 crossed, 20 x 3 small, 300 items "
                   "x 3 of 30 annotators sparse; binary labels, item prevalence "
                   f"Beta{PREVALENCE}; {args.datasets} datasets per row, "
                   f"{time.perf_counter() - t0:.0f} s).\n\n" + table)
        path.write_text(text.rstrip("\n") + "\n" + section)


if __name__ == "__main__":
    main()
