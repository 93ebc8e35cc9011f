"""The adviser's proof in small (issue 18): on seeded simulated datasets with known truth,
re-annotating the advised items buys more labels than as many random items and at least as
much as the highest-entropy items; the same comparison fails when the ranking is replaced by a
random one, so the assertion can fail. For the leaderboard on a majority-unit board the claim
does not hold, on data from the adviser's own model either (benchmarks/advise_bench.py,
docs/advise.md: on 4,000 datasets advised minus as many random items +0.007, s.e. 0.006, in
the model; -0.023, s.e. 0.006, outside it): the tests are strict xfails, one per generator,
that turn into failures the day they pass, so the docs get corrected."""

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


@pytest.mark.xfail(strict=True, reason="majority-unit leaderboard advice (batch ranking) does "
                                       "not beat random and highest-entropy items by 2 s.e. in "
                                       "the benchmark, in or outside its model "
                                       "(docs/advise.md)")
@pytest.mark.parametrize("kind", ["dirichlet", "bt"])
def test_leaderboard_majority_advised_beats_random_and_entropy(kind):
    m = margins(scoring(run(**BOARD, units=("majority",), generator={"kind": kind}),
                        "_majority_board"))
    assert beats(m["random"]) and beats(m["entropy"]), m


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
