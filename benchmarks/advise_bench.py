"""Does the adviser pick the right items? Simulated datasets with known truth (issue 18, item 2).

For each seeded dataset the truth is known: every item's own label distribution ``theta`` and,
for the leaderboard target, every model's strength. The dataset's labels are drawn from it; the
audit ranks the models (:func:`audit.rank.rank`), :func:`audit.advice.advise_block` lists
``budget`` items, and the same number of items is picked by two baselines: at random, and by the
highest entropy of the item's observed labels (ties in random order). Each choice is then
re-annotated with ``more`` fresh judgments drawn from the truth (``draws`` times, the same
draws for every method where they pick the same item), and what it buys is measured against the
truth:

* ``labels``: the number of items whose plurality label (a tie read as a random one of the
  tied labels, i.e. counted as the share of tied labels that are wrong) is not the majority of
  ``theta``; the reduction is the count before minus its mean after.
* ``leaderboard``: the displacement of the judgment-weighted win-rate leaderboard from the
  true order of strengths (some pair of true neighbours reversed, a tie counting half); the
  reduction is its indicator before minus the share of draws displaced after.

Output: a markdown table for benchmarks/RESULTS.md (per target and method: mean reduction, its
standard error over datasets, and the share of datasets where the advised items do strictly
better than the method), and the adviser's wall time on 200,000 items (a million judgments).

    .venv/bin/python -m benchmarks.advise_bench            # 200 datasets per target
    .venv/bin/python -m benchmarks.advise_bench --datasets 40 --no-timing
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

from audit.contract import columns as C
from audit.contract.labels import WINNER_NAMES, LabelKind, LabelScale
from audit.contract.table import build_table

WINNER_SCALE = LabelScale(LabelKind.PREFERENCE, (-1, 0, 1), WINNER_NAMES)
NOMINAL3 = LabelScale(LabelKind.NOMINAL, ("x", "y", "z"))
METHODS = ("advised", "random", "entropy")


def pairwise_truth(rng, *, n_items: int, n_models: int, spacing: float, close: float,
                   item_sd: float, tie: float) -> dict:
    """Model strengths (logit scale; neighbours ``spacing`` apart, one random pair of
    neighbours only ``close`` apart: the board's weak link) and each item's pair and
    ``theta = (P(A better), P(tie), P(B better))``, the item's own effect ``N(0, item_sd)``
    added to the strength difference."""
    gaps = np.full(n_models - 1, spacing)
    gaps[rng.integers(0, n_models - 1)] = close
    beta = np.concatenate([[0.0], -np.cumsum(gaps)])
    a = rng.integers(0, n_models, n_items)
    b = (a + rng.integers(1, n_models, n_items)) % n_models
    p_a = 1 / (1 + np.exp(-(beta[a] - beta[b] + rng.normal(0, item_sd, n_items))))
    theta = np.stack([(1 - tie) * p_a, np.full(n_items, tie), (1 - tie) * (1 - p_a)], axis=1)
    return {"beta": beta, "a": a, "b": b, "theta": theta}


def labels_truth(rng, *, n_items: int, precision: float) -> dict:
    """Each item's ``theta`` over three nominal labels, Dirichlet around a skewed mean."""
    mean = rng.dirichlet([4.0, 2.5, 1.5])
    return {"theta": rng.dirichlet(precision * mean, size=n_items)}


def draw_counts(rng, theta: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Label counts ``(items, q)``: ``n_i`` judgments of item ``i`` from ``theta_i``."""
    cum = theta.cumsum(axis=1)
    out = np.zeros(theta.shape, dtype=np.int64)
    for j in range(int(n.max()) if len(n) else 0):
        live = n > j
        u = rng.random(len(n))
        k = (u[:, None] > cum).sum(axis=1).clip(0, theta.shape[1] - 1)
        np.add.at(out, (np.flatnonzero(live), k[live]), 1)
    return out


def to_table(counts: np.ndarray, truth: dict, scale: LabelScale):
    """The canonical table of the counts: item ``i{u}``, one annotator per judgment slot."""
    item, label = np.nonzero(counts)
    reps = counts[item, label]
    item, label = np.repeat(item, reps), np.repeat(label, reps)
    slot = np.concatenate([np.arange(r) for r in np.bincount(item, minlength=len(counts))
                           if r]) if len(item) else item
    raw = pd.DataFrame({C.ITEM: np.char.add("i", item.astype(str)),
                        C.ANNOTATOR: np.char.add("a", slot.astype(str)), C.POOL: "crowd",
                        C.LABEL: np.asarray(scale.values, dtype=object)[label]})
    if "a" in truth:
        raw[C.MODEL_A] = np.char.add("m", truth["a"][item].astype(str))
        raw[C.MODEL_B] = np.char.add("m", truth["b"][item].astype(str))
    return build_table(raw, scale, name="sim", source="sim")


def advised_units(table, *, target: str, budget: int, more: int, seed: int) -> np.ndarray:
    """The advised items' indices ``u`` (item ``i{u}``), in rank order."""
    from audit.advice import advise_block
    from audit.rank import rank
    from audit.resample.settings import Bootstrap

    results = rank(table, bootstrap=Bootstrap(n_resamples=200, seed=seed), sizes=(2,),
                   n_sims=10) if target == "leaderboard" else {}
    block = advise_block(table, results, budget=budget, target=target, more=more, seed=seed)
    return np.asarray([int(e["item"][1:]) for e in block["items"]], dtype=np.int64)


def entropy_units(rng, counts: np.ndarray, budget: int) -> np.ndarray:
    """The ``budget`` items of highest observed label entropy, ties in random order."""
    n = counts.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = counts / n
        h = -np.nansum(np.where(p > 0, p * np.log(p), 0.0), axis=1)
    order = rng.permutation(len(counts))
    return order[np.argsort(-h[order], kind="stable")][:budget]


def label_error(counts: np.ndarray, truth_label: np.ndarray) -> np.ndarray:
    """Per row of ``(..., items, q)`` counts: expected wrong plurality labels (ties at random),
    summed over items."""
    top = counts == counts.max(axis=-1, keepdims=True)
    right = top[..., np.arange(len(truth_label)), truth_label]
    return (1 - right / top.sum(axis=-1)).sum(axis=-1)


def displaced(counts: np.ndarray, truth: dict) -> np.ndarray:
    """Per row of ``(..., items, 3)`` counts: 1 when the win-rate leaderboard is out of the
    true order (a tie of two true neighbours counting half), else 0."""
    a, b, beta = truth["a"], truth["b"], truth["beta"]
    k = len(beta)
    pts = counts[..., 0] + 0.5 * counts[..., 1]
    n = counts.sum(axis=-1)
    lead = counts.shape[:-2]
    wins = np.zeros(lead + (k,))
    games = np.zeros(lead + (k,))
    for m in range(k):
        wins[..., m] = (pts * (a == m)).sum(axis=-1) + ((n - pts) * (b == m)).sum(axis=-1)
        games[..., m] = (n * ((a == m) | (b == m))).sum(axis=-1)
    score = wins / np.maximum(games, 1)
    order = np.argsort(-beta)
    hi, lo = score[..., order[:-1]], score[..., order[1:]]
    wrong = (lo > hi) + 0.5 * (lo == hi)
    return np.clip(wrong.sum(axis=-1), 0, 1)


def design_displacement(rng, truth: dict, n: np.ndarray, extra: dict[str, np.ndarray], *,
                        more: int, sims: int, fixed: bool) -> dict[str, float]:
    """The displacement probability of the dataset's design, before and after each method's
    re-annotation: every item's labels drawn afresh from its ``theta`` ``sims`` times (the same
    uniforms for every design: common random numbers), ``n_i`` judgments each, ``n_i + more``
    for the re-annotated items. ``fixed``: an item's mean counts at its original weight ``n_i``
    (the adviser's model); otherwise every judgment counts once (the audit's win rate)."""
    theta = truth["theta"]
    truth = {**truth, "beta": _expected_scores(truth, n)}
    slots = int(n.max()) + more
    u = rng.random((sims, len(n), slots))
    label = (u[..., None] > theta.cumsum(axis=1)[None, :, None, :]).sum(axis=-1).clip(0, 2)
    onehot = np.eye(3, dtype=np.int64)[label]  # (sims, items, slots, 3)
    cum = onehot.cumsum(axis=2)
    idx = np.arange(len(n))

    def counts_of(total):
        return cum[:, idx, total - 1, :]

    out = {"before": float(displaced(counts_of(n) if not fixed else
                                     _weighted(counts_of(n), n, n), truth).mean())}
    for name, units in extra.items():
        total = n.copy()
        total[units] += more
        c = counts_of(total)
        out[name] = float(displaced(_weighted(c, total, n) if fixed else c, truth).mean())
    return out


def _expected_scores(truth: dict, n: np.ndarray) -> np.ndarray:
    """Each model's win rate on these items with every item judged without end, at its
    weight ``n_i``: the leaderboard the dataset's items would give with no annotation noise."""
    theta, a, b = truth["theta"], truth["a"], truth["b"]
    mu = theta[:, 0] + 0.5 * theta[:, 1]
    k = len(truth["beta"])
    wins = np.bincount(a, weights=n * mu, minlength=k) + \
        np.bincount(b, weights=n * (1 - mu), minlength=k)
    games = np.bincount(a, weights=n, minlength=k) + np.bincount(b, weights=n, minlength=k)
    return wins / np.maximum(games, 1)


def _weighted(counts: np.ndarray, total: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Counts rescaled so that each item weighs ``weight`` judgments (its mean unchanged)."""
    return counts * (weight / total)[:, None]


def one_dataset(seed: int, *, target: str, n_items: int, budget: int, more: int,
                draws: int, ranker=None) -> dict:
    """Each method's reduction on one seeded dataset (module docstring). ``ranker``, when
    given, replaces the adviser: ``ranker(table, counts) -> units`` (the test's check that
    the comparison can fail)."""
    rng = np.random.default_rng(seed)
    if target == "leaderboard":
        truth = pairwise_truth(rng, n_items=n_items, n_models=5, spacing=0.6, close=0.1,
                               item_sd=1.0, tie=0.1)
        scale = WINNER_SCALE
    else:
        truth = labels_truth(rng, n_items=n_items, precision=rng.uniform(1.0, 4.0))
        scale = NOMINAL3
    theta = truth["theta"]
    n = rng.integers(1, 4, n_items)
    counts = draw_counts(rng, theta, n)
    table = to_table(counts, truth, scale)
    picks = {"advised": (ranker(table, counts) if ranker is not None else
                         advised_units(table, target=target, budget=budget, more=more,
                                       seed=seed)),
             "random": rng.choice(n_items, size=min(budget, n_items), replace=False),
             "entropy": entropy_units(rng, counts, budget)}
    out = {"n_advised": len(picks["advised"])}
    if target == "leaderboard":
        state = rng.bit_generator.state
        for suffix, fixed in (("", True), ("_judgment", False)):
            rng.bit_generator.state = state
            p = design_displacement(rng, truth, n, picks, more=more, sims=draws, fixed=fixed)
            out.update({name + suffix: p["before"] - p[name] for name in picks})
        return out
    fresh = np.stack([draw_counts(rng, theta, np.full(n_items, more)) for _ in range(draws)])
    truth_label = theta.argmax(axis=1)
    before = float(label_error(counts, truth_label))
    for name, units in picks.items():
        after = np.broadcast_to(counts, fresh.shape).copy()
        after[:, units] += fresh[:, units]
        out[name] = before - float(label_error(after, truth_label).mean())
    return out


def run(*, target: str, datasets: int, n_items: int, budget: int, more: int, draws: int,
        seed: int = 0, ranker=None) -> pd.DataFrame:
    """One row per dataset: each method's reduction (leaderboard: also ``<method>_judgment``,
    the audit's judgment-weighted scoring)."""
    rows = [one_dataset(seed * 100_003 + d, target=target, n_items=n_items, budget=budget,
                        more=more, draws=draws, ranker=ranker) for d in range(datasets)]
    return pd.DataFrame(rows)


def scoring(frame: pd.DataFrame, suffix: str) -> pd.DataFrame:
    """The methods' columns of one scoring (``""`` or ``"_judgment"``) under their names."""
    return frame[[m + suffix for m in METHODS]].set_axis(list(METHODS), axis=1)


def summary(frame: pd.DataFrame) -> list[dict]:
    """Per method: mean reduction and its s.e., and the advised items' paired margin over it
    (mean difference, its s.e., share of datasets where the advised items do strictly
    better)."""
    out = []
    n = len(frame)
    for m in METHODS:
        diff = frame["advised"] - frame[m]
        out.append({"method": m, "mean": frame[m].mean(), "se": frame[m].std(ddof=1) / np.sqrt(n),
                    "margin": diff.mean(), "margin_se": diff.std(ddof=1) / np.sqrt(n),
                    "beaten": (diff > 0).mean() if m != "advised" else float("nan")})
    return out


def markdown(target: str, frame: pd.DataFrame, settings: str) -> str:
    lines = [f"**target {target}** ({settings})", "",
             ("| method | mean reduction | s.e. | advised minus method (s.e.) | "
              "datasets where advised does better |"), "|---|---|---|---|---|"]
    for r in summary(frame):
        margin = "" if r["method"] == "advised" else f"{r['margin']:.4f} ({r['margin_se']:.4f})"
        beaten = "" if r["method"] == "advised" else f"{100 * r['beaten']:.0f}%"
        lines.append(f"| {r['method']} | {r['mean']:.4f} | {r['se']:.4f} | {margin} | "
                     f"{beaten} |")
    return "\n".join(lines)


def timing(n_items: int = 200_000, per_item: int = 5, repeats: int = 3) -> str:
    """Wall time of :func:`audit.advice.advise_block` on ``n_items`` pairwise items of
    ``per_item`` judgments, both targets, the minimum of ``repeats``."""
    from audit.advice import advise_block
    from audit.rank import rank
    from audit.resample.settings import Bootstrap

    rng = np.random.default_rng(7)
    truth = pairwise_truth(rng, n_items=n_items, n_models=8, spacing=0.3, close=0.05,
                           item_sd=1.0, tie=0.1)
    table = to_table(draw_counts(rng, truth["theta"], np.full(n_items, per_item)), truth,
                     WINNER_SCALE)
    results = rank(table, bootstrap=Bootstrap(n_resamples=200, seed=0), sizes=(2,), n_sims=10)
    lines = []
    for target in ("leaderboard", "labels"):
        best = float("inf")
        for _ in range(repeats):
            t = time.perf_counter()
            advise_block(table, results, budget=50, target=target)
            best = min(best, time.perf_counter() - t)
        lines.append(f"- advise_block, target {target}: {best:.2f} s on {n_items:,} items "
                     f"({n_items * per_item:,} judgments), minimum of {repeats}")
    return "\n".join(lines)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=200)
    parser.add_argument("--items", type=int, default=400)
    parser.add_argument("--budget", type=int, default=60)
    parser.add_argument("--more", type=int, default=3)
    parser.add_argument("--draws", type=int, default=200,
                        help="leaderboard: fresh label sets per design; labels: fresh draws")
    parser.add_argument("--no-timing", action="store_true")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    frames = {}
    settings = (f"{args.datasets} seeded datasets of {args.items} items, 1-3 judgments each; "
                f"{args.budget} items re-annotated with {args.more} fresh judgments, "
                f"{args.draws} draws")
    for target in ("leaderboard", "labels"):
        frames[target] = run(target=target, datasets=args.datasets, n_items=args.items,
                             budget=args.budget, more=args.more, draws=args.draws)
        if target == "leaderboard":
            print(markdown("leaderboard, re-annotated items kept at their former weight",
                           scoring(frames[target], ""), settings))
            print()
            print(markdown("leaderboard, every judgment counted (the audit's win rate)",
                           scoring(frames[target], "_judgment"), settings))
        else:
            print(markdown(target, frames[target], settings))
        print()
    if not args.no_timing:
        print(timing())
    return frames


if __name__ == "__main__":
    main()
