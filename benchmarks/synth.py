"""Seeded synthetic annotation data in the canonical raw layout, for benchmarks and tests.

A judgment is a noisy reading of an item's latent value by an annotator from one *pool*:

* **pairwise** — item ``i`` compares ``model_a`` with ``model_b``; its latent value is
  ``theta[b] - theta[a] + item_sd * eta_i`` (Bradley & Terry 1952 / Thurstone 1927 style strengths
  ``theta ~ N(0, model_sd)``). Annotator ``j`` of pool ``p`` reads
  ``z = latent + shift_p[b] - shift_p[a] + bias_p + noise_p * eps`` and labels it on the
  preference scale ``-k..k`` (negative = model_a better, :mod:`audit.contract.labels`): a tie inside
  ``|z| < tie``, else the sign of ``z`` with strength ``1 + floor((|z| - tie) / step)`` capped at k.
* **rating** — item ``i`` is one output of ``model``; latent ``theta[model] + item_sd * eta_i``;
  the label is the Likert bin ``1..levels`` of ``z = latent + bias_p + noise_p * eps``, or with
  ``continuous=True`` the score ``50 + 15 z`` to four decimals (an interval scale with about as
  many distinct values as judgments; same design and same ``z`` as the Likert labels).

``bias_p`` is the pool's systematic lean (towards response B / a higher rating), ``noise_p`` its
within-pool noise, ``shift_p`` optional per-model private preferences (so pools can rank models
differently). Each item gets ``per_item`` annotators (uniform between the bounds), spread over the
pools round-robin from a random first pool, and drawn without replacement within each pool: sparse
designs with a few annotators per item out of thousands. Everything is vectorised: the only
Python loops run over slots within an item (at most ``per_item[1]``).

Ids are integer-coded: ``item`` is an int64, ``annotator`` / ``pool`` / model columns are
categoricals over short strings. :func:`write` saves CSV or Parquet through pyarrow.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from audit.contract import columns as C
from audit.contract.labels import LabelKind, LabelScale

KINDS = ("pairwise", "rating")
#: Bumped whenever the same arguments would give different data (benchmark caches key on it).
VERSION = 1


@dataclass(frozen=True)
class PoolSpec:
    """One annotator pool of the generator.

    Parameters
    ----------
    name
        Pool name written in the ``pool`` column.
    bias
        Shift of every judgment's latent value (towards B for pairwise, upwards for ratings).
    noise
        Within-pool SD of the judgment noise (smaller = a more reliable pool).
    share
        Relative number of annotators in the pool.
    model_sd
        SD of the pool's private per-model strength shifts (0: the pool ranks models as the truth).
    """

    name: str
    bias: float = 0.0
    noise: float = 1.0
    share: float = 1.0
    model_sd: float = 0.0


DEFAULT_POOLS = (PoolSpec("crowd", bias=0.0, noise=1.0, share=3.0),
                 PoolSpec("expert", bias=0.2, noise=0.5, share=1.0, model_sd=0.1))


def scale(kind: str = "pairwise", *, strength: int = 2, levels: int = 5) -> LabelScale:
    """The label scale :func:`generate` writes for ``kind``."""
    _check_kind(kind)
    if kind == "pairwise":
        return LabelScale(LabelKind.PREFERENCE, tuple(range(-strength, strength + 1)))
    return LabelScale(LabelKind.ORDINAL, tuple(range(1, levels + 1)))


def continuous_scale() -> LabelScale:
    """The open interval scale of ``generate(kind="rating", continuous=True)``: the observed
    numbers are the values."""
    return LabelScale(LabelKind.INTERVAL, ())


def model_strengths(n_models: int, *, model_sd: float = 1.0, seed: int = 0) -> np.ndarray:
    """The true strengths ``theta`` :func:`generate` uses for ``seed`` (for recovery checks)."""
    return _streams(seed)["models"].normal(0.0, model_sd, n_models)


def generate(n_judgments: int | None = None, *, n_items: int | None = None,
             kind: str = "pairwise", n_models: int = 50, n_annotators: int | None = None,
             pools: Sequence[PoolSpec] = DEFAULT_POOLS, per_item: tuple[int, int] = (3, 5),
             model_sd: float = 1.0, item_sd: float = 0.5, strength: int = 2, levels: int = 5,
             tie: float = 0.3, step: float = 1.0, continuous: bool = False,
             seed: int = 0) -> pd.DataFrame:
    """A canonical raw frame of synthetic judgments (one row per judgment).

    Parameters
    ----------
    n_judgments, n_items
        Size: give exactly one. With ``n_judgments`` the last item is trimmed so the frame has
        exactly that many rows.
    kind
        ``pairwise`` (columns item, annotator, pool, label, model_a, model_b) or ``rating``
        (item, annotator, pool, label, model).
    n_models
        Number of models (systems) compared or rated.
    n_annotators
        Total annotators over all pools; default ``clip(n_judgments // 100, 20, 10000)``.
    pools
        The pools, see :class:`PoolSpec`.
    per_item
        Inclusive bounds of the number of annotators per item; ``(1, 1)`` gives one judgment per
        item (an arena "battle").
    model_sd, item_sd
        SD of the true model strengths and of the item-level deviation shared by its annotators
        (item_sd makes annotators of one item agree beyond what the models explain).
    strength, levels
        Pairwise scale ``-strength..strength``; rating scale ``1..levels``.
    tie, step
        Pairwise label thresholds on the latent ``z`` (see the module docstring).
    continuous
        Rating labels as continuous scores (:func:`continuous_scale`) instead of Likert bins.
    seed
        Seed of every random draw; the same arguments give the same frame.

    Returns
    -------
    pandas.DataFrame
        Columns from :mod:`audit.contract.columns`; pass it with :func:`scale` to
        :func:`audit.contract.table.build_table`.
    """
    _check_kind(kind)
    lo, hi = (int(v) for v in per_item)
    if not 1 <= lo <= hi:
        raise ValueError(f"per_item must be 1 <= low <= high, got {per_item}")
    if (n_judgments is None) == (n_items is None):
        raise ValueError("give exactly one of n_judgments and n_items")
    if kind == "pairwise" and n_models < 2:
        raise ValueError("pairwise data needs at least two models")
    pools = tuple(pools)
    n_pools = len(pools)
    rng = _streams(seed)

    # -- design: annotators per item, their pools, and who they are ---------------------------
    if n_judgments is not None:
        n_est = int(math.ceil(n_judgments / lo)) + 1
        m = rng["design"].integers(lo, hi + 1, size=n_est)
        cum = np.cumsum(m)
        n_items = int(np.searchsorted(cum, n_judgments) + 1)
        m = m[:n_items]
        m[-1] -= int(cum[n_items - 1] - n_judgments)
    else:
        m = rng["design"].integers(lo, hi + 1, size=int(n_items))
    n = int(m.sum())
    n_ann = int(n_annotators if n_annotators is not None else np.clip(n // 100, 20, 10_000))
    slots_per_pool = -(-hi // n_pools)
    pool_sizes = _split(n_ann, [p.share for p in pools], minimum=slots_per_pool)
    pool_start = np.concatenate([[0], np.cumsum(pool_sizes)[:-1]])

    item = np.repeat(np.arange(n_items, dtype=np.int64), m)
    starts = np.repeat(np.cumsum(m) - m, m)
    slot = np.arange(n, dtype=np.int64) - starts
    first_pool = rng["design"].integers(0, n_pools, size=n_items)
    pool = (first_pool[item] + slot) % n_pools
    annotator = _distinct_within(slot // n_pools, pool_sizes[pool], n_pools, rng["design"])
    annotator += pool_start[pool]

    # -- labels ----------------------------------------------------------------------------------
    theta = model_strengths(n_models, model_sd=model_sd, seed=seed)
    shifts = np.stack([rng["pools"].normal(0.0, p.model_sd, n_models) for p in pools])
    bias = np.array([p.bias for p in pools])[pool]
    noise = np.array([p.noise for p in pools])[pool]
    eta = rng["items"].normal(0.0, item_sd, n_items)
    eps = rng["judgments"].standard_normal(n)
    frame = {C.ITEM: item, C.ANNOTATOR: _names("a", annotator, n_ann),
             C.POOL: pd.Categorical.from_codes(pool, [p.name for p in pools])}
    if kind == "pairwise":
        a = rng["items"].integers(0, n_models, size=n_items)
        b = rng["items"].integers(0, n_models - 1, size=n_items)
        b += b >= a
        ai, bi = a[item], b[item]
        z = (theta[bi] - theta[ai] + eta[item] + shifts[pool, bi] - shifts[pool, ai]
             + bias + noise * eps)
        mag = np.minimum(strength, np.floor((np.abs(z) - tie) / step).astype(np.int64) + 1)
        label = np.where(np.abs(z) < tie, 0, np.sign(z).astype(np.int64) * mag)
        frame[C.LABEL] = label.astype(np.int8)
        frame[C.MODEL_A] = _names("m", ai, n_models)
        frame[C.MODEL_B] = _names("m", bi, n_models)
    else:
        model = rng["items"].integers(0, n_models, size=n_items)
        mi = model[item]
        z = theta[mi] + eta[item] + shifts[pool, mi] + bias + noise * eps
        cuts = np.linspace(-1.5, 1.5, levels - 1) * max(model_sd, 1e-9)
        frame[C.LABEL] = (np.round(50.0 + 15.0 * z, 4) if continuous
                          else (1 + np.searchsorted(cuts, z)).astype(np.int8))
        frame[C.MODEL] = _names("m", mi, n_models)
    return pd.DataFrame(frame)


def battles(frame: pd.DataFrame) -> pd.DataFrame:
    """The LMArena / FastChat battle layout of a pairwise frame: model_a, model_b, winner.

    ``winner`` is ``"model_a"`` for a negative label, ``"model_b"`` for a positive one and
    ``"tie"`` for 0 (the sign convention of :mod:`audit.contract.labels`).
    """
    sign = np.sign(frame[C.LABEL].to_numpy().astype(np.int64)) + 1
    winner = pd.Categorical.from_codes(sign, ["model_a", "tie", "model_b"])
    return pd.DataFrame({"model_a": frame[C.MODEL_A].astype(str).to_numpy(),
                         "model_b": frame[C.MODEL_B].astype(str).to_numpy(),
                         "winner": np.asarray(winner.astype(str))})


def write(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write ``frame`` as CSV or Parquet (chosen by the suffix) through pyarrow."""
    import pyarrow as pa

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq
        pq.write_table(table, path)
    elif path.suffix == ".csv":
        import pyarrow.csv as pcsv
        # CSV has no dictionary type: write categoricals as their strings
        cols = [c.cast(c.type.value_type) if pa.types.is_dictionary(c.type) else c
                for c in table.columns]
        pcsv.write_csv(pa.Table.from_arrays(cols, names=table.column_names), path)
    else:
        raise ValueError(f"{path}: write .csv or .parquet")
    return path


# -- helpers ------------------------------------------------------------------------------------

def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")


def _streams(seed: int) -> dict[str, np.random.Generator]:
    names = ("models", "design", "pools", "items", "judgments")
    seqs = np.random.SeedSequence(seed).spawn(len(names))
    return {name: np.random.default_rng(s) for name, s in zip(names, seqs)}


def _split(total: int, shares: Sequence[float], *, minimum: int) -> np.ndarray:
    """Integer sizes proportional to ``shares``, summing to ``total``, each at least ``minimum``."""
    shares = np.asarray(shares, dtype=float)
    if total < minimum * len(shares):
        raise ValueError(f"{total} annotators cannot fill {len(shares)} pools with at least "
                         f"{minimum} each (an item draws that many from one pool)")
    sizes = np.maximum(minimum, np.floor(total * shares / shares.sum()).astype(np.int64))
    sizes[np.argmax(sizes)] += total - sizes.sum()
    return sizes


def _distinct_within(rank: np.ndarray, size: np.ndarray, n_pools: int,
                     rng: np.random.Generator) -> np.ndarray:
    """Draw, for each judgment, an annotator index in ``[0, size)`` distinct from the earlier
    judgments of the same item and pool (those ``n_pools, 2 n_pools, ...`` rows before it).

    Sequential sampling without replacement: the ``k``-th draw is uniform on ``size - k`` values
    and skips, in increasing order, the ``k`` values already taken.
    """
    x = np.zeros(len(rank), dtype=np.int64)
    for k in range(int(rank.max()) + 1 if len(rank) else 0):
        rows = np.flatnonzero(rank == k)
        draw = (rng.random(len(rows)) * (size[rows] - k)).astype(np.int64)
        if k:
            taken = np.sort(np.stack([x[rows - t * n_pools] for t in range(1, k + 1)], axis=1),
                            axis=1)
            for t in range(k):
                draw += draw >= taken[:, t]
        x[rows] = draw
    return x


def _names(prefix: str, codes: np.ndarray, n: int) -> pd.Categorical:
    width = len(str(max(n - 1, 0)))
    return pd.Categorical.from_codes(codes, [f"{prefix}{i:0{width}d}" for i in range(n)])
