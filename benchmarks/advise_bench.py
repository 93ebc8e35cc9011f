"""Does the adviser pick the right items? Simulated datasets with known truth (issue 18, item 2).

For each seeded dataset the truth is known: every item's own label distribution ``theta`` and,
for the leaderboard target, every model's strength. The dataset's labels are drawn from it; the
audit ranks the models (:func:`audit.rank.rank`), :func:`audit.advice.advise_block` lists
``budget`` items, and the same number of items is picked by two baselines: at random, and by the
highest entropy of the item's observed labels (ties in random order). Each choice is then
re-annotated with ``more`` fresh judgments drawn from the truth (``draws`` times, the same
draws for every method where they pick the same item), and what it buys is measured against
the truth:

* ``labels``: the number of items whose plurality label (a tie read as a random one of the
  tied labels, i.e. counted as the share of tied labels that are wrong) is not the majority of
  ``theta``; the reduction is the count before minus its mean after.
* ``leaderboard``: under each scoring the audit offers (``majority``: one vote per item, its
  majority outcome; ``judgment``: every judgment counts), the displacement of the win-rate
  leaderboard (some pair of neighbours reversed, a tie counting half) from the fully
  annotated board of that scoring (every item at its population outcome, or at its ``theta``
  mean with its weight: what re-annotation can reach) and from the true order of strengths;
  the chosen items keep their observed labels and get ``more`` fresh ones, and the reduction
  is the observed board's displacement minus the share of draws displaced after.

Output: a markdown table for benchmarks/RESULTS.md (per target and method: mean reduction, its
standard error over datasets, and the share of datasets where the advised items do strictly
better than the method), and the adviser's wall time on 200,000 items (a million judgments).

    .venv/bin/python -m benchmarks.advise_bench            # 2,000 / 200 datasets a target
    .venv/bin/python -m benchmarks.advise_bench --datasets 40 --no-timing
    .venv/bin/python -m benchmarks.advise_bench --full-budget   # baselines get the budget
    .venv/bin/python -m benchmarks.advise_bench --target leaderboard --generator dirichlet
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
UNITS = ("majority", "judgment")
REFERENCES = ("board", "truth")
#: The leaderboard datasets' truth (:func:`pairwise_truth`), unless ``generator`` says.
BOARD_GENERATOR = {"n_models": 5, "spacing": 0.6, "close": 0.1, "item_sd": 1.0, "tie": 0.1,
                   "n_close": 1, "kind": "bt", "precision": 6.0}
#: ``pairwise_truth``'s kinds of item effect: ``bt``, a Bradley-Terry item effect with the
#: same tie share on every item (outside the adviser's model); ``dirichlet``, the adviser's
#: own family (its stated model).
GENERATORS = ("bt", "dirichlet")
REFERENCE_NAMES = {"board": "fully annotated board", "truth": "true order of strengths"}


def pairwise_truth(rng, *, n_items: int, n_models: int, spacing: float, close: float,
                   item_sd: float, tie: float, n_close: int = 1, kind: str = "bt",
                   precision: float = 6.0) -> dict:
    """Model strengths (logit scale; neighbours ``spacing`` apart, ``n_close`` random pairs
    of neighbours only ``close`` apart: the board's weak links) and each item's pair and
    ``theta = (P(A better), P(tie), P(B better))``.

    ``kind``:

    * ``"bt"``: the item's own effect ``N(0, item_sd)`` added to the strength difference,
      ``P(A) = (1 - tie) logistic(beta_a - beta_b + effect)``, the tie share ``tie`` on every
      item. Outside the adviser's model: its items' spread in A-share is logit-normal and
      their tie share does not vary at all, where one Dirichlet gives all three labels one
      precision.
    * ``"dirichlet"``: the adviser's own family (docs/advise.md, "The label model"): per
      model pair, ``theta ~ Dirichlet(precision * pi)`` around the Bradley-Terry-with-ties
      mean ``pi = ((1 - tie) p, tie, (1 - tie)(1 - p))``, ``p = logistic(beta_a - beta_b)``
      (``item_sd`` unused). ``precision`` is ``s = 1/rho - 1``; the default 6 gives ``rho``
      about 0.14, the A-share heterogeneity of ``"bt"`` with ``item_sd`` 1.
    """
    if kind not in GENERATORS:
        raise ValueError(f"kind must be one of {GENERATORS}, not {kind!r}")
    gaps = np.full(n_models - 1, spacing)
    if n_close == 1:
        gaps[rng.integers(0, n_models - 1)] = close
    else:
        gaps[rng.choice(n_models - 1, size=min(n_close, n_models - 1), replace=False)] = close
    beta = np.concatenate([[0.0], -np.cumsum(gaps)])
    a = rng.integers(0, n_models, n_items)
    b = (a + rng.integers(1, n_models, n_items)) % n_models
    if kind == "dirichlet":
        p_a = 1 / (1 + np.exp(-(beta[a] - beta[b])))
        mean = np.stack([(1 - tie) * p_a, np.full(n_items, tie), (1 - tie) * (1 - p_a)],
                        axis=1)
        gamma = rng.standard_gamma(precision * mean)
        theta = gamma / gamma.sum(axis=1, keepdims=True)
        return {"beta": beta, "a": a, "b": b, "theta": theta}
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


def fresh_counts(rng, theta: np.ndarray, more: int, sims: int) -> np.ndarray:
    """``(sims, items, q)``: ``sims`` independent rounds of ``more`` judgments of every item,
    in one call; the same numbers as ``sims`` calls of :func:`draw_counts` with ``n = more``
    (the uniforms are drawn in the same order)."""
    cum = theta.cumsum(axis=1)
    u = rng.random((sims, more, len(theta)))
    k = (u[..., None] > cum).sum(axis=-1).clip(0, theta.shape[1] - 1)
    out = np.zeros((sims, len(theta), theta.shape[1]), dtype=np.int64)
    for j in range(theta.shape[1]):
        out[..., j] = (k == j).sum(axis=1)
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


def advised_units(table, *, target: str, budget: int, more: int, seed: int,
                  unit: str = "judgment") -> np.ndarray:
    """The advised items' indices ``u`` (item ``i{u}``), in rank order, for boards scored by
    ``unit``. The leaderboard target calls the adviser's board model directly
    (:func:`audit.advice.advise.board_model`, ranked as the block ranks): the block's own
    steps the benchmark does not need are skipped, and under ``unit="judgment"``, where the
    block lists nothing (its ``skipped`` says why, from this benchmark), the re-weighted
    ranking is still measured."""
    from audit.advice import advise_block
    from audit.advice.advise import board_model, ranked
    from audit.advice.units import read_units
    from audit.rank import rank
    from audit.resample.settings import Bootstrap

    if target == "leaderboard":
        results = rank(table, bootstrap=Bootstrap(n_resamples=200, seed=seed), sizes=(2,),
                       n_sims=10, unit=unit)
        units = read_units(table)
        found = board_model(units, table, results, more=more, budget=budget)
        if isinstance(found, str):
            return np.zeros(0, dtype=np.int64)
        chosen = ranked(found["reduction"][units.inverse], budget)  # per pattern -> unit
        items = units.frame[C.ITEM].to_numpy(dtype=object)[chosen]
    else:
        block = advise_block(table, {}, budget=budget, target=target, more=more, seed=seed)
        items = [e["item"] for e in block["items"]]
    return np.asarray([int(str(i)[1:]) for i in items], dtype=np.int64)


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


def majority_counts(counts: np.ndarray) -> np.ndarray:
    """Each unit's A / tie / B counts replaced by one vote for its majority outcome
    (:func:`audit.rank.counts.majority`: a tie for the most votes is a tie)."""
    top = counts == counts.max(axis=-1, keepdims=True)
    outcome = np.where(top.sum(axis=-1) == 1, counts.argmax(axis=-1), 1)
    return np.eye(3, dtype=np.int64)[outcome]


def references(truth: dict, n: np.ndarray, unit: str) -> dict[str, dict]:
    """The boards a re-annotated design is compared with: ``board``, the fully annotated
    board of this scoring (every unit judged without end: its population outcome under
    ``majority``, its ``theta`` mean at weight ``n_i`` under ``judgment``), and ``truth``, the
    order of the models' strengths."""
    theta, a, b = truth["theta"], truth["a"], truth["b"]
    k = len(truth["beta"])
    if unit == "majority":
        mu, w = np.array([1.0, 0.5, 0.0])[theta.argmax(axis=1)], np.ones(len(n))
    else:
        mu, w = theta[:, 0] + 0.5 * theta[:, 1], n.astype(float)
    wins = np.bincount(a, weights=w * mu, minlength=k) + \
        np.bincount(b, weights=w * (1 - mu), minlength=k)
    games = np.bincount(a, weights=w, minlength=k) + np.bincount(b, weights=w, minlength=k)
    return {"board": {**truth, "beta": wins / np.maximum(games, 1)}, "truth": truth}


def reannotated_displacement(rng, truth: dict, counts: np.ndarray,
                             extra: dict[str, np.ndarray], *, more: int, sims: int,
                             unit: str, fresh: np.ndarray | None = None
                             ) -> dict[str, dict[str, float]]:
    """The displacement probability against each reference (:func:`references`) of the
    dataset's board as observed and after each method's re-annotation: the chosen items' own
    labels kept and ``more`` fresh judgments from their ``theta`` added, ``sims`` times (the
    same fresh judgments for every method that picks the item: common random numbers), scored
    as the audit scores ``unit`` (``judgment``: every judgment counts; ``majority``: one vote
    per item, its majority outcome). ``fresh``: those judgments ``(sims, items, q)`` when the
    caller drew them (:func:`fresh_counts`), else drawn here."""
    n = counts.sum(axis=1)
    refs = references(truth, n, unit)
    if fresh is None:
        fresh = fresh_counts(rng, truth["theta"], more, sims)

    def scored(c):
        return majority_counts(c) if unit == "majority" else c

    designs = {"before": counts[None]}
    for name, units in extra.items():
        added = np.zeros(len(n), dtype=np.int64)
        added[units] = 1
        designs[name] = counts[None] + fresh * added[None, :, None]
    return {ref: {name: float(displaced(scored(c), board).mean())
                  for name, c in designs.items()} for ref, board in refs.items()}


def one_dataset(seed: int, *, target: str, n_items: int, budget: int, more: int,
                draws: int, ranker=None, generator: dict | None = None,
                units: tuple = UNITS, same_n: bool = True, advice: dict | None = None
                ) -> dict:
    """Each method's reduction on one seeded dataset (module docstring). ``ranker``, when
    given, replaces the adviser: ``ranker(table, counts) -> units`` (the test's check that
    the comparison can fail). ``same_n``: the baselines get as many items as were advised
    (the issue's "top N advised items against N random and N highest-entropy items"; the
    adviser lists only items it expects to help, often fewer than ``budget``), else
    ``budget`` items. ``advice``: per scoring unit, the unit whose advice picks the items
    (default: the same; ``{"judgment": "majority"}`` scores the majority unit's advice on a
    judgment-weighted board)."""
    rng = np.random.default_rng(seed)
    if target == "leaderboard":
        truth = pairwise_truth(rng, n_items=n_items, **{**BOARD_GENERATOR, **(generator or {})})
        scale = WINNER_SCALE
    else:
        truth = labels_truth(rng, n_items=n_items, precision=rng.uniform(1.0, 4.0))
        scale = NOMINAL3
    theta = truth["theta"]
    n = rng.integers(1, 4, n_items)
    counts = draw_counts(rng, theta, n)
    table = to_table(counts, truth, scale)
    random = rng.choice(n_items, size=min(budget, n_items), replace=False)
    entropy = entropy_units(rng, counts, budget)
    if target == "leaderboard":
        out = {}
        fresh = fresh_counts(rng, theta, more, draws)
        found = {}
        for unit in units:
            by = (advice or {}).get(unit, unit)
            if by not in found:
                found[by] = (ranker(table, counts) if ranker is not None else
                             advised_units(table, target=target, budget=budget, more=more,
                                           seed=seed, unit=by))
            advised = found[by]
            n = len(advised) if same_n else budget
            picks = {"advised": advised, "random": random[:n], "entropy": entropy[:n]}
            out[f"n_advised_{unit}"] = len(advised)
            p = reannotated_displacement(rng, truth, counts, picks, more=more, sims=draws,
                                         unit=unit, fresh=fresh)
            for ref, probs in p.items():
                out[f"now_{unit}_{ref}"] = probs["before"]
                out.update({f"{name}_{unit}_{ref}": probs["before"] - probs[name]
                            for name in picks})
        return out
    advised = (ranker(table, counts) if ranker is not None else
               advised_units(table, target=target, budget=budget, more=more, seed=seed))
    n = len(advised) if same_n else budget
    picks = {"advised": advised, "random": random[:n], "entropy": entropy[:n]}
    out = {"n_advised": len(picks["advised"])}
    fresh = fresh_counts(rng, theta, more, draws)
    truth_label = theta.argmax(axis=1)
    before = float(label_error(counts, truth_label))
    for name, chosen in picks.items():
        after = np.broadcast_to(counts, fresh.shape).copy()
        after[:, chosen] += fresh[:, chosen]
        out[name] = before - float(label_error(after, truth_label).mean())
    return out


def run(*, target: str, datasets: int, n_items: int, budget: int, more: int, draws: int,
        seed: int = 0, ranker=None, generator: dict | None = None,
        units: tuple = UNITS, same_n: bool = True, advice: dict | None = None
        ) -> pd.DataFrame:
    """One row per dataset: each method's reduction (leaderboard: ``<method>_<unit>_<ref>``
    per scoring unit and reference; :func:`one_dataset` for the options)."""
    rows = [one_dataset(seed * 100_003 + d, target=target, n_items=n_items, budget=budget,
                        more=more, draws=draws, ranker=ranker, generator=generator,
                        units=units, same_n=same_n, advice=advice) for d in range(datasets)]
    return pd.DataFrame(rows)


def scoring(frame: pd.DataFrame, suffix: str) -> pd.DataFrame:
    """The methods' columns of one scoring and reference (``"_<unit>_<reference>"``, e.g.
    ``"_majority_board"``) under their names."""
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
    ``per_item`` judgments, both targets (the leaderboard scored one vote per item, where the
    leaderboard target lists items), the minimum of ``repeats``."""
    from audit.advice import advise_block
    from audit.rank import rank
    from audit.resample.settings import Bootstrap

    rng = np.random.default_rng(7)
    truth = pairwise_truth(rng, n_items=n_items, n_models=8, spacing=0.3, close=0.05,
                           item_sd=1.0, tie=0.1)
    table = to_table(draw_counts(rng, truth["theta"], np.full(n_items, per_item)), truth,
                     WINNER_SCALE)
    results = rank(table, bootstrap=Bootstrap(n_resamples=200, seed=0), sizes=(2,), n_sims=10,
                   unit="majority")
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


#: Per target: items per dataset, judgments added per re-annotated item, draws per design
#: (the settings of the table in docs/advise.md).
SETTINGS = {"leaderboard": {"n_items": 200, "more": 5, "draws": 100},
            "labels": {"n_items": 400, "more": 3, "draws": 200}}
#: Datasets per target unless ``--datasets`` says: a leaderboard dataset's displacement is
#: nearly 0 or 1 (paired s.d. 0.24-0.39), so its rows need thousands to resolve a few points.
DATASETS = {"leaderboard": 2000, "labels": 200}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=None,
                        help="datasets per target (default: 2000 leaderboard, 200 labels)")
    parser.add_argument("--budget", type=int, default=60)
    parser.add_argument("--full-budget", action="store_true",
                        help="the baselines get the whole budget, not as many items as advised")
    parser.add_argument("--no-timing", action="store_true")
    parser.add_argument("--target", choices=("leaderboard", "labels", "both"), default="both")
    parser.add_argument("--generator", choices=GENERATORS, default=BOARD_GENERATOR["kind"],
                        help="the leaderboard datasets' item effects (pairwise_truth's kind): "
                             "bt (Bradley-Terry item effects, one tie share) or dirichlet "
                             "(the adviser's own model)")
    parser.add_argument("--precision", type=float, default=BOARD_GENERATOR["precision"],
                        help="the dirichlet generator's precision s = 1/rho - 1")
    parser.add_argument("--seed", type=int, default=0,
                        help="dataset d has seed seed * 100003 + d (0: the table's datasets)")
    parser.add_argument("--units", default=",".join(UNITS),
                        help="the leaderboard's scorings to measure, comma-separated")
    parser.add_argument("--items-from", choices=("adviser", "labels", "majority"),
                        default="adviser",
                        help="leaderboard: whose ranking the advised items are: the adviser's "
                             "for each scoring, the labels target's, or the majority unit's "
                             "for every scoring")
    parser.add_argument("--save", metavar="DIR",
                        help="also write each target's per-dataset frame to DIR/<target>.parquet")
    args = parser.parse_args(argv)
    units = tuple(u for u in args.units.split(",") if u)
    if not set(units) <= set(UNITS):
        parser.error(f"--units: choose from {', '.join(UNITS)}")
    board_options = {"seed": args.seed, "units": units}
    if args.items_from == "majority":
        board_options["advice"] = {u: "majority" for u in units}
    elif args.items_from == "labels":
        board_options["ranker"] = lambda table, counts: advised_units(
            table, target="labels", budget=args.budget, more=SETTINGS["leaderboard"]["more"],
            seed=0)
    warnings.simplefilter("ignore")
    frames = {}
    targets = ("leaderboard", "labels") if args.target == "both" else (args.target,)
    for target in targets:
        cfg = SETTINGS[target]
        datasets = args.datasets or DATASETS[target]
        settings = (f"{datasets} seeded datasets of {cfg['n_items']} items, 1-3 judgments "
                    f"each; up to {args.budget} items re-annotated with {cfg['more']} fresh "
                    f"judgments, {cfg['draws']} draws; baselines: "
                    f"{'the whole budget' if args.full_budget else 'as many items as advised'}")
        generator, options = None, {"seed": args.seed}
        if target == "leaderboard":
            generator = {"kind": args.generator, "precision": args.precision}
            options = board_options
            settings += f"; items from the {args.items_from}'s ranking"
            settings += (f"; generator {args.generator}" +
                         (f", precision {args.precision:g}" if args.generator == "dirichlet"
                          else ""))
        frames[target] = run(target=target, datasets=datasets, budget=args.budget,
                             same_n=not args.full_budget, generator=generator, **options,
                             **cfg)
        if args.save:
            from pathlib import Path

            Path(args.save).mkdir(parents=True, exist_ok=True)
            frames[target].to_parquet(Path(args.save) / f"{target}.parquet")
        if target == "leaderboard":
            for unit in units:
                for ref in REFERENCES:
                    print(markdown(f"leaderboard, unit {unit}, displacement from the "
                                   f"{REFERENCE_NAMES[ref]}",
                                   scoring(frames[target], f"_{unit}_{ref}"),
                                   settings + f"; displaced before: "
                                   f"{frames[target][f'now_{unit}_{ref}'].mean():.3f}; items "
                                   f"advised: mean "
                                   f"{frames[target][f'n_advised_{unit}'].mean():.1f}"))
                    print()
        else:
            print(markdown(target, frames[target], settings))
        print()
    if not args.no_timing:
        print(timing())
    return frames


if __name__ == "__main__":
    main()
