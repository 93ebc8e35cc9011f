"""The same statistic through this toolkit and through the tools people use today.

Bradley-Terry (ties as half a win each, the rule every tool below shares) and Krippendorff's
alpha. Every function returns plain numbers keyed by name, so :mod:`benchmarks.tasks` can time
them and :mod:`benchmarks.run` / tests/test_bench_agreement.py can compare them. Strengths are
compared on the natural-log scale after centring each tool's vector to mean 0 over the models:

==============  ==============================================================================
tool            how its scale maps to centred natural-log strengths
==============  ==============================================================================
this toolkit    ``Board.bt`` is already natural log, centred
evalica         ``scores`` are the strengths ``gamma``: take the log, centre
FastChat        Elo ``400 * beta + 1000`` with ``P(a beats b) = 1 / (1 + 10 ** (beta_b -
                beta_a))``: multiply ``(elo - 1000) / 400`` by ``ln 10``, centre
arena-rank      ``ratings = theta * 400 / ln 10 + 1000``: invert, centre
==============  ==============================================================================

FastChat's ``compute_elo_mle_with_tie`` fits scikit-learn's ``LogisticRegression`` with its default
L2 penalty (``C=1``), which shrinks every strength towards 0; :func:`fastchat_ratings` can swap in
``C=1e12`` (and a tight solver tolerance) to fit the unpenalised MLE the other tools compute.
"""

from __future__ import annotations

import contextlib
import functools
import math

import numpy as np
import pandas as pd

from audit.contract import columns as C
from audit.resample import Bootstrap

FASTCHAT_DEFAULT_C = 1.0
FASTCHAT_MLE_C = 1e12


# -- comparing strength vectors ---------------------------------------------------------------

def centred(strengths: dict[str, float]) -> pd.Series:
    """A strength vector centred to mean 0 (NaN strengths dropped)."""
    s = pd.Series(strengths, dtype=float).dropna()
    return s - s.mean()


def max_centred_diff(a: dict[str, float], b: dict[str, float]) -> float:
    """Largest absolute difference of two log-strength vectors after centring both over the
    models they share."""
    common = sorted(set(a) & set(b))
    if not common:
        return float("nan")
    x = centred({k: a[k] for k in common})
    y = centred({k: b[k] for k in common})
    return float((x - y).abs().max())


# -- this toolkit ---------------------------------------------------------------------------------

def ours_board(table, *, n_resamples: int, seed: int = 0):
    """The toolkit's pairwise leaderboard of ``table`` (win rates and Bradley-Terry strengths)
    with ``n_resamples`` item-bootstrap resamples: :func:`audit.rank.leaderboard.pairwise_board`
    on every judgment."""
    from audit.rank.counts import pairwise_votes
    from audit.rank.leaderboard import pairwise_board

    votes = pairwise_votes(table)
    everyone = np.ones(len(votes.item), dtype=bool)
    return pairwise_board(votes, everyone, pool="all", unit="judgment",
                          bootstrap=Bootstrap(n_resamples, seed), stream="benchmark")


def ours_ratings(board) -> dict[str, float]:
    return dict(zip(board.models, map(float, board.bt)))


def ours_alpha(table, *, level: str) -> float:
    """Krippendorff's alpha of ``table`` through :mod:`audit.measure` (count matrix, then
    alpha)."""
    from audit.measure.alpha import krippendorff_alpha
    from audit.measure.counts import item_label_counts

    counts = item_label_counts(table)
    return krippendorff_alpha(counts, level=level, values=table.scale.numeric_values)


# -- evalica ---------------------------------------------------------------------------------------

def _evalica_inputs(battles: pd.DataFrame):
    import evalica

    code = {"model_a": evalica.Winner.X, "model_b": evalica.Winner.Y, "tie": evalica.Winner.Draw}
    winners = battles["winner"].map(code).tolist()
    return battles["model_a"].to_numpy(object), battles["model_b"].to_numpy(object), winners


def evalica_ratings(battles: pd.DataFrame, *, tolerance: float = 1e-6,
                    limit: int = 100) -> dict[str, float]:
    """evalica's Bradley-Terry (ties as half) as natural-log strengths (evalica's defaults:
    ``tolerance=1e-6``, ``limit=100``)."""
    import evalica

    xs, ys, winners = _evalica_inputs(battles)
    res = evalica.bradley_terry(xs, ys, winners, tie_weight=0.5, tolerance=tolerance,
                                limit=limit)
    return {str(k): math.log(v) for k, v in res.scores.items()}


def evalica_bootstrap(battles: pd.DataFrame, *, n_resamples: int, seed: int = 0):
    """evalica's percentile bootstrap of Bradley-Terry (``evalica.bootstrap``, which runs
    ``scipy.stats.bootstrap`` with one fit per resample)."""
    import evalica

    xs, ys, winners = _evalica_inputs(battles)
    return evalica.bootstrap(evalica.bradley_terry, xs, ys, winners, tie_weight=0.5,
                             n_resamples=n_resamples, bootstrap_method="percentile",
                             random_state=seed)


# -- FastChat -------------------------------------------------------------------------------------

@contextlib.contextmanager
def _sklearn_logistic(**params):
    """Make ``sklearn.linear_model.LogisticRegression()`` default to ``params`` inside the block
    (FastChat builds it with ``LogisticRegression(fit_intercept=False)`` and exposes no C)."""
    import sklearn.linear_model as lm

    original = lm.LogisticRegression
    lm.LogisticRegression = functools.partial(original, **params)
    try:
        yield
    finally:
        lm.LogisticRegression = original


FASTCHAT_FUNCTIONS = ("get_bootstrap_result", "compute_elo_mle_with_tie")


@functools.cache
def _fastchat():
    """FastChat's own bootstrap and MLE functions, from the installed ``fschat`` package.

    Importing ``fastchat.serve.monitor.elo_analysis`` pulls in torch, transformers and plotly for
    unrelated model-serving and plotting code, so the two functions are compiled from that
    module's source (unchanged) with only the names they use.
    """
    import ast
    import importlib.util
    import types
    from collections import defaultdict
    from pathlib import Path

    from tqdm import tqdm

    spec = importlib.util.find_spec("fastchat")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("fschat is not installed (pip install fschat==0.2.36)")
    path = Path(list(spec.submodule_search_locations)[0]) / "serve" / "monitor" / "elo_analysis.py"
    tree = ast.parse(path.read_text(), filename=str(path))
    tree.body = [node for node in tree.body
                 if isinstance(node, ast.FunctionDef) and node.name in FASTCHAT_FUNCTIONS]
    mod = types.ModuleType("fastchat_elo_analysis")
    mod.__dict__.update(np=np, pd=pd, math=math, tqdm=functools.partial(tqdm, disable=True),
                        defaultdict=defaultdict)
    exec(compile(tree, str(path), "exec"), mod.__dict__)
    missing = [name for name in FASTCHAT_FUNCTIONS if name not in mod.__dict__]
    if missing:
        raise ImportError(f"{path} has no {', '.join(missing)}")
    return mod


def fastchat_elo(battles: pd.DataFrame, *, C: float | None = None) -> pd.Series:
    """FastChat's ``compute_elo_mle_with_tie`` (Elo scale); ``C`` replaces sklearn's default
    penalty, with a tight solver tolerance so the fit is the unpenalised MLE to 1e-8."""
    mod = _fastchat()
    if C is None:
        return mod.compute_elo_mle_with_tie(battles)
    with _sklearn_logistic(C=C, tol=1e-12, max_iter=10_000):
        return mod.compute_elo_mle_with_tie(battles)


def fastchat_ratings(battles: pd.DataFrame, *, C: float | None = None) -> dict[str, float]:
    """:func:`fastchat_elo` as natural-log strengths."""
    elo = fastchat_elo(battles, C=C)
    return {str(k): (float(v) - 1000.0) / 400.0 * math.log(10.0) for k, v in elo.items()}


def fastchat_bootstrap(battles: pd.DataFrame, *, n_rounds: int, seed: int = 0) -> pd.DataFrame:
    """FastChat's ``get_bootstrap_result(battles, compute_elo_mle_with_tie, n_rounds)`` (it draws
    from numpy's global generator, seeded here)."""
    mod = _fastchat()
    np.random.seed(seed)
    return mod.get_bootstrap_result(battles, mod.compute_elo_mle_with_tie, num_round=n_rounds)


# -- arena-rank -----------------------------------------------------------------------------------

def arena_ratings(ratings: dict[str, float]) -> dict[str, float]:
    """arena-rank's scaled ratings (``theta * 400 / ln 10 + 1000``) as natural-log strengths."""
    return {k: (v - 1000.0) * math.log(10.0) / 400.0 for k, v in ratings.items()}


# -- krippendorff ----------------------------------------------------------------------------------

def long_codes(table) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    """(item, annotator, label value) per judgment and the numbers of items and annotators."""
    f = table.frame
    values = table.scale.numeric_values[table.label_codes]
    return (f[C.ITEM].cat.codes.to_numpy(), f[C.ANNOTATOR].cat.codes.to_numpy(), values,
            len(f[C.ITEM].cat.categories), len(f[C.ANNOTATOR].cat.categories))


def dense_bytes(n_annotators: int, n_items: int, n_values: int) -> int:
    """Bytes the ``krippendorff`` package's dense input needs: the float64 annotators x items
    matrix plus the items x annotators x values boolean array it compares it into."""
    return n_annotators * n_items * (8 + n_values)


def reliability_data(table) -> np.ndarray:
    """The ``krippendorff`` package's dense input: annotators x items, NaN where missing."""
    item, ann, values, n_items, n_ann = long_codes(table)
    dense = np.full((n_ann, n_items), np.nan)
    dense[ann, item] = values
    return dense


def value_counts_pandas(table) -> np.ndarray:
    """The ``krippendorff`` package's ``value_counts`` input (items x values), built the usual way
    with pandas from the long table."""
    f = table.frame
    counts = f.groupby([C.ITEM, C.LABEL], observed=False).size().unstack(fill_value=0)
    return counts.reindex(columns=list(table.scale.values), fill_value=0).to_numpy()


def kd_alpha(*, level: str, values, reliability: np.ndarray | None = None,
             counts: np.ndarray | None = None) -> float:
    """``krippendorff.alpha`` on one of its two inputs."""
    import krippendorff

    if reliability is not None:
        return float(krippendorff.alpha(reliability_data=reliability, value_domain=values,
                                        level_of_measurement=level))
    return float(krippendorff.alpha(value_counts=counts, value_domain=values,
                                    level_of_measurement=level))


def write_section(path, text: str, begin: str, end: str) -> None:
    """Replace the section of ``path`` between the markers ``begin`` and ``end`` (both in
    ``text``) with ``text``, or append it: how each study writes its own part of
    benchmarks/RESULTS.md and leaves the rest as it is."""
    import re
    from pathlib import Path

    path = Path(path)
    old = path.read_text() if path.exists() else ""
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    new = pattern.sub(lambda _: text, old) if pattern.search(old) else \
        old.rstrip("\n") + "\n\n" + text + "\n"
    path.write_text(new)
