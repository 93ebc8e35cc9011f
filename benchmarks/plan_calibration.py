"""Calibration of the planner (``python benchmarks/plan_calibration.py``): issue 18's proof at
scale.

Worlds of :mod:`audit.planning.world` (item-level judgments, per-pool model offsets, known
truth). For each world, target ``stay`` and judgments per item ``m``, the planner is given the
world's true inputs (:meth:`World.true_inputs`) and the planned number of items is simulated
afresh (fresh truth draw, pool effect and items per dataset): the simulated P(stay) should be
within 2 MC s.e. of ``stay``. A world whose pool effect exceeds SD* must get "no size
suffices", and its simulated P(stay) at a very large size must sit at the stated ceiling.
Then the planner on *estimated* inputs: pilots of two pools x 2 judgments per item; each pilot's
plan is scored by the true P(stay) at its planned size (the critical values of the truth).
Last, the labels plan: Dirichlet items, planned annotators simulated afresh.

Not a test: the suite runs a small version (tests/test_planning_calibration.py). The tables are
printed in Markdown for benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from audit.planning.components import anova, board_noise, pool_effect
from audit.planning.labels import plan_pool
from audit.planning.leaderboard import plan_sizes
from audit.planning.stay import critical_values, p_stay, sampling_variance
from audit.planning.world import World, stay_rate

WORLDS = {
    "W6": World(n_models=6, gaps=(0.02, 0.04, 0.06), pool_sd=0.008, item_sd=0.08, tie_rate=0.1),
    "W10": World(n_models=10, gaps=(0.01, 0.02, 0.03), pool_sd=0.002, item_sd=0.06,
                 tie_rate=0.1),
    "W20": World(n_models=20, gaps=(0.005, 0.01, 0.015), pool_sd=0.001, item_sd=0.05,
                 tie_rate=0.1),
}
CAPPED = World(n_models=6, gaps=(0.01, 0.02, 0.03), pool_sd=0.02, item_sd=0.05, tie_rate=0.1)


def _plan(world, stay, n_sims, m_options=(1, 3)):
    t = world.true_inputs()
    return plan_sizes(sizes=[world.n_models], stay=stay, sigma_b2=t["sigma_b2"],
                      sigma_w2=t["sigma_w2"], pool_sd=world.pool_sd, gaps=world.gaps,
                      m_options=m_options, n_sims=n_sims, seed=1)[0]


def sizing(n_datasets: int, n_sims: int) -> list[str]:
    out = [("| world | K | tau | stay | m | planned items | planned P(stay) | simulated P(stay) "
            "+- s.e. | datasets | within 2 s.e. |"), "|---|---|---|---|---|---|---|---|---|---|"]
    for name, w in WORLDS.items():
        for stay in (0.8, 0.9, 0.95):
            entry = _plan(w, stay, n_sims)
            for row in entry["rows"]:
                m = row["m"]
                if row["n_items"] is None:
                    out.append(f"| {name} | {w.n_models} | {w.pool_sd} | {stay} | {m} | no size "
                               f"suffices (ceiling {entry['ceiling']:.4f}) | | | | |")
                    continue
                n_data = n_datasets if m == 1 else \
                    int(min(n_datasets, max(400, 1e8 // row["n_items"])))
                rate, se = stay_rate(w, n_items=row["n_items"], m=m, n_datasets=n_data,
                                     seed=100 + m)
                both = math.sqrt(se ** 2 + row["p_stay_mc_se"] ** 2)
                out.append(f"| {name} | {w.n_models} | {w.pool_sd} | {stay} | {m} | "
                           f"{row['n_items']:,} | {row['p_stay']:.4f} | {rate:.4f} +- {se:.4f} | "
                           f"{n_data:,} | {'yes' if abs(rate - stay) <= 2 * both else 'NO'} |")
    return out


def capped(n_datasets: int, n_sims: int) -> list[str]:
    w = CAPPED
    entry = _plan(w, 0.9, n_sims)
    t = w.true_inputs()
    c = critical_values(w.n_models, gaps=w.gaps, n_sims=n_sims, seed=1)
    out = [(f"World K={w.n_models}, tau={w.pool_sd}: verdict `{entry['verdict']}`, SD* = "
            f"{entry['sd_star']:.4f}, ceiling {entry['ceiling']:.4f} +- "
            f"{entry['ceiling_mc_se']:.4f}."), "",
           "| items | planner P(stay) | simulated P(stay) +- s.e. |", "|---|---|---|"]
    for n in (10_000, 100_000, 1_000_000):
        exp = p_stay(c, math.sqrt(w.pool_sd ** 2 + sampling_variance(
            n, 1, w.n_models, t["sigma_b2"] + t["sigma_w2"])))
        rate, se = stay_rate(w, n_items=n, m=1, n_datasets=n_datasets, seed=200)
        out.append(f"| {n:,} | {exp:.4f} | {rate:.4f} +- {se:.4f} |")
    return out


def _pilot_plan(w, rng, n_items, m, stay, n_sims):
    from audit.planning.components import Design
    from audit.planning.world import win_rates

    _, _, wins, ties, pair = w.draw_boards(rng, 1, n_items, m, n_pools=2)
    k, pairs = w.n_models, w.pairs
    units, pools, ys = [], [], []
    for p in (0, 1):
        for value, count in ((1.0, wins[0, p]), (0.5, ties[0, p]),
                             (0.0, m - wins[0, p] - ties[0, p])):
            units.append(np.repeat(np.arange(n_items), count))
            pools.append(np.full(int(count.sum()), p))
            ys.append(np.full(int(count.sum()), value))
    lo, hi = pairs[pair].T
    d = Design(np.concatenate(units), np.concatenate(pools), np.concatenate(ys), lo * k + hi,
               lo, hi, k, ("a", "b"))
    comp = anova(d)
    games = np.bincount(pair, minlength=len(pairs)) * float(m)
    rates = [win_rates(np.bincount(pair, weights=wins[0, p] + ties[0, p] / 2,
                                   minlength=len(pairs)), games, pairs, k) for p in (0, 1)]
    noise = board_noise(d, comp["sigma_b2"], comp["sigma_w2"])["switch"][("a", "b")]
    tau, ci = pool_effect(float(np.std(rates[1] - rates[0], ddof=1)), k - 1, noise)
    entry = plan_sizes(sizes=[k], stay=stay, sigma_b2=comp["sigma_b2"],
                       sigma_w2=comp["sigma_w2"], pool_sd=tau, pool_sd_ci=ci, gaps=w.gaps,
                       m_options=(1,), n_sims=n_sims, seed=1)[0]
    return entry["rows"][0]


def estimated_plans(n_pilots: int, n_sims: int, stay: float = 0.9) -> list[str]:
    out = [("| world | K | true planned items | pilots | median planned items | pilots with no "
            "size | true P(stay) at planned n: median [10%, 90%] | share of pilots whose plan "
            "reaches stay | same at the interval's upper n |"),
           "|---|---|---|---|---|---|---|---|---|"]
    for name in ("W6", "W10"):
        w = WORLDS[name]
        true_row = _plan(w, stay, n_sims, m_options=(1,))["rows"][0]
        t = w.true_inputs()
        c = critical_values(w.n_models, gaps=w.gaps, n_sims=n_sims, seed=1)
        a1 = t["sigma_b2"] + t["sigma_w2"]

        def truth(n, c=c, w=w, a1=a1):
            return p_stay(c, math.sqrt(w.pool_sd ** 2 + sampling_variance(n, 1, w.n_models, a1)))

        planned, scores, reach, upper = [], [], [], []
        for j in range(n_pilots):
            row = _pilot_plan(w, np.random.default_rng([300, j]), 1200, 2, stay, n_sims)
            hi = row["n_items_ci95"][1]
            upper.append(hi is None or truth(hi) >= stay)
            if row["n_items"] is None:
                planned.append(None)
                reach.append(False)
                continue
            planned.append(row["n_items"])
            scores.append(truth(row["n_items"]))
            reach.append(scores[-1] >= stay)
        got = [n for n in planned if n is not None]
        q = np.quantile(scores, [0.1, 0.5, 0.9]) if scores else [math.nan] * 3
        out.append(f"| {name} | {w.n_models} | {true_row['n_items']:,} | {n_pilots} | "
                   f"{int(np.median(got)):,} | {planned.count(None)} | {q[1]:.3f} "
                   f"[{q[0]:.3f}, {q[2]:.3f}] | {np.mean(reach):.3f} | {np.mean(upper):.3f} |")
    return out


def labels(draws: int) -> list[str]:
    from audit.measure.disagreement import consensus_labels

    out = [("| items | scale | stay | planned m (truth) | exact agreement | simulated +- s.e. | "
            "planned m (pilot of 3, shrunk) | true agreement at it |"),
           "|---|---|---|---|---|---|---|---|"]
    for alpha0, pi, ordered in [(1.0, (0.7, 0.3), False), (2.0, (0.8, 0.2), False),
                                (1.0, (0.5, 0.3, 0.2), True)]:
        rng = np.random.default_rng(400)
        pi = np.array(pi)
        dists = rng.dirichlet(alpha0 * pi, size=2000)
        for stay in (0.8, 0.9):
            plan = plan_pool(np.ones_like(dists), stay=stay, ordered=ordered,
                             tie_break="median", dists=dists)
            m = plan["planned_m"]
            target = consensus_labels(dists, ordered=ordered, tie_break="median")
            keep = np.flatnonzero(target >= 0)
            if m is None:
                out.append(f"| Dir({alpha0} x {tuple(pi)}) | {'ordinal' if ordered else 'nominal'} "
                           f"| {stay} | none <= {plan['m_max']} | | | | |")
                continue
            exact = next(r["agreement"] for r in plan["rows"] if r["m"] == m)
            item = rng.choice(keep, size=draws)
            lab = rng.multinomial(m, dists[item])
            rate = float(np.mean(consensus_labels(lab, ordered=ordered, tie_break="median")
                                 == target[item]))
            se = math.sqrt(rate * (1 - rate) / draws)
            pilot = rng.multinomial(3, dists)
            est = plan_pool(pilot, stay=stay, ordered=ordered, tie_break="median")
            m_hat = est["planned_m"]
            at = (next(r["agreement"] for r in plan["rows"] if r["m"] == m_hat)
                  if m_hat is not None else math.nan)
            out.append(f"| Dir({alpha0} x {tuple(pi)}) | {'ordinal' if ordered else 'nominal'} "
                       f"| {stay} | {m} | {exact:.4f} | {rate:.4f} +- {se:.4f} | {m_hat} | "
                       f"{at:.4f} |")
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", type=int, default=10_000, help="simulated datasets per row")
    ap.add_argument("--pilots", type=int, default=200, help="pilots per world (estimated inputs)")
    ap.add_argument("--n-sims", type=int, default=20_000, help="planner's simulated boards")
    args = ap.parse_args(argv)
    t0 = time.time()
    for title, lines in [
            ("Sizing with the world's true inputs", sizing(args.datasets, args.n_sims)),
            ("A pool effect beyond SD*", capped(args.datasets, args.n_sims)),
            ("Plans from pilots (estimated inputs), P(stay) target 0.9",
             estimated_plans(args.pilots, args.n_sims)),
            ("Labels: annotators per item", labels(args.datasets * 4))]:
        print(f"\n### {title}\n")
        print("\n".join(lines), flush=True)
    print(f"\n({time.time() - t0:.0f} s; seeds fixed; MC s.e. = sqrt(p (1 - p) / datasets))")


if __name__ == "__main__":
    main()
