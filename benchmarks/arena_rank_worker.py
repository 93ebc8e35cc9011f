"""Time LMArena's arena-rank bootstrap; runs inside its own virtual environment.

arena-rank 0.1.1 pins numpy 2.3.3 and jax 0.8.1, which cannot live beside this project's pins, so
:mod:`benchmarks.run` installs it under ``benchmarks/_venvs/arena-rank`` and runs this file with
that environment's python. It imports nothing from the project.

Usage: ``python arena_rank_worker.py BATTLES.parquet --rounds 2 6 --jobs 2 --seed 0``

Prints one JSON object: the data preparation time, two point fits (the first includes jax's
compilation; arena-rank re-creates its jitted optimiser on every fit, so the second compiles
again), the wall time of ``compute_ratings_and_cis(ci_method="bootstrap")`` for each requested
number of rounds, the ratings, and the peak RSS. The process pool uses the *spawn* start method:
under the default fork, jax's threads make the pool hang.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import resource
import sys
import time


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser()
    parser.add_argument("battles")
    parser.add_argument("--rounds", type=int, nargs="+", default=[2, 6])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    import jax
    import pandas as pd
    from arena_rank.models.bradley_terry import BradleyTerry
    from arena_rank.utils.data_utils import PairDataset

    import arena_rank

    df = pd.read_parquet(args.battles, columns=["model_a", "model_b", "winner"])
    t = time.perf_counter()
    dataset = PairDataset.from_pandas(df)
    jax.block_until_ready(dataset.counts)
    prepare = time.perf_counter() - t

    fits = []
    for _ in range(2):
        model = BradleyTerry(n_competitors=len(dataset.competitors))
        t = time.perf_counter()
        model.fit(dataset)
        jax.block_until_ready(model.params["ratings"])
        fits.append(time.perf_counter() - t)

    boots = []
    for rounds in args.rounds:
        t = time.perf_counter()
        out = model.compute_ratings_and_cis(dataset, ci_method="bootstrap", num_bootstrap=rounds,
                                            seed=args.seed, n_jobs=args.jobs)
        jax.block_until_ready(out["rating_upper"])
        boots.append({"rounds": rounds, "seconds": time.perf_counter() - t})

    ratings = dict(zip(map(str, out["competitors"]), map(float, out["ratings"])))
    return {"version": getattr(arena_rank, "__version__", None) or _version("arena-rank"),
            "jax": jax.__version__, "prepare_s": prepare, "fit_s": fits, "bootstrap": boots,
            "n_rows": int(len(df)), "n_patterns": int(dataset.counts.shape[0]),
            "ratings": ratings,
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "children_peak_rss_mib":
                resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


def _version(dist: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return None


if __name__ == "__main__":
    mp.set_start_method("spawn", force=True)
    json.dump(main(), sys.stdout)
    sys.stdout.write("\n")
