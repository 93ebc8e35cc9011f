"""The adviser's proof in small (issue 18): on seeded simulated datasets with known truth,
re-annotating the advised items buys more labels than as many random items and at least as
much as the highest-entropy items, and, on majority-unit leaderboards drawn from the adviser's
own label model, steadies the board more than as many random items; the same comparisons fail
when the ranking is replaced by a random one, so the assertions can fail
(benchmarks/advise_bench.py and docs/advise.md hold the full benchmark)."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.advise_bench import BOARD_GENERATOR, pairwise_truth, run, scoring, summary

LABELS = {"target": "labels", "datasets": 40, "n_items": 300, "budget": 45, "more": 3,
          "draws": 20}
BOARD = {"target": "leaderboard", "datasets": 40, "n_items": 200, "budget": 60, "more": 5,
         "draws": 100}


def margins(frame) -> dict:
    return {r["method"]: (r["margin"], r["margin_se"]) for r in summary(frame)}


def beats(margin: tuple[float, float]) -> bool:
    """The advised items' mean reduction exceeds the method's by more than 2 s.e."""
    mean, se = margin
    return mean > 2 * se


def random_ranker(seed: int, size: int):
    rng = np.random.default_rng(seed)
    return lambda table, counts: rng.choice(len(counts), size=size, replace=False)


@pytest.fixture(scope="module")
def labels():
    return run(**LABELS)


def test_labels_advised_beats_random_and_entropy(labels):
    m = margins(labels)
    assert beats(m["random"]), m
    assert m["entropy"][0] > 0 and beats(m["entropy"]), m


#: The leaderboard proof in small: data from the adviser's own model (its stated model),
#: majority-unit boards (the leaderboard target lists nothing under the judgment unit).
MODEL_BOARD = {**BOARD, "datasets": 160, "units": ("majority",),
               "generator": {"kind": "dirichlet"}}


@pytest.fixture(scope="module")
def board():
    return scoring(run(**MODEL_BOARD), "_majority_board")


def test_leaderboard_majority_advised_beats_random_and_entropy(board):
    """Under the adviser's own model the advised items lower the displacement from the fully
    annotated board more than as many random items by 2 s.e., and more than the
    highest-entropy items on average, on 160 datasets (the benchmark's 2,000 resolve the
    latter too: +0.050 (s.e. 0.006) and +0.035 (0.005), docs/advise.md; 160 datasets give
    +0.080 (0.021) and +0.042 (0.020))."""
    m = margins(board)
    assert beats(m["random"]), m
    assert m["entropy"][0] > 0, m


def test_the_leaderboard_comparison_can_fail():
    """The same datasets with the ranking replaced by a random draw of as many items: it must
    not beat random items by 2 s.e."""
    frame = run(**MODEL_BOARD, ranker=random_ranker(6, 60))
    assert not beats(margins(scoring(frame, "_majority_board"))["random"])


def test_the_comparison_can_fail():
    """With the ranking replaced by a random draw, "advised" is one more random method: it
    must not beat random by 2 s.e."""
    frame = run(**{**LABELS, "datasets": 25}, ranker=random_ranker(5, LABELS["budget"]))
    assert not beats(margins(frame)["random"])
    assert not beats(margins(frame)["entropy"])


def test_dirichlet_generator_is_the_stated_model():
    """``pairwise_truth(kind="dirichlet")``: per model pair, theta's mean is the
    Bradley-Terry-with-ties mean and its per-label variance the Dirichlet's
    ``pi (1 - pi) / (s + 1)``; the ``bt`` kind's tie share does not vary at all."""
    rng = np.random.default_rng(11)
    cfg = {**BOARD_GENERATOR, "kind": "dirichlet", "precision": 4.0}
    truth = pairwise_truth(rng, n_items=60_000, **cfg)
    a, b, theta, beta = truth["a"], truth["b"], truth["theta"], truth["beta"]
    pick = (a == 0) & (b == 2)
    p = 1 / (1 + np.exp(-(beta[0] - beta[2])))
    pi = np.array([(1 - cfg["tie"]) * p, cfg["tie"], (1 - cfg["tie"]) * (1 - p)])
    got = theta[pick]
    se = np.sqrt(pi * (1 - pi) / 5 / len(got))
    assert np.all(np.abs(got.mean(axis=0) - pi) < 4 * se)
    np.testing.assert_allclose(got.var(axis=0), pi * (1 - pi) / 5, rtol=0.08)
    bt = pairwise_truth(rng, n_items=1000, **{**cfg, "kind": "bt"})["theta"]
    assert np.ptp(bt[:, 1]) == 0
