"""The leaderboards' resamples drawn ahead on a worker thread (audit.rank.ahead): the same bits
as drawing them in rank(), on every shape of table and chunking; a failed or cancelled worker
falls back to drawing in rank(); never drawn ahead beyond its memory; the warnings of the
measures stay in their scopes."""

from __future__ import annotations

import json
import threading
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.contract import columns as C
from audit.errors import DegenerateDataWarning
from audit.pipeline import audit_table
from audit.rank import ahead as ahead_mod
from audit.rank import rank
from audit.rank import shared
from audit.rank.ahead import AHEAD_BYTES, ahead_bytes, draw_ahead
from audit.resample import Bootstrap
from audit.results import dumps
from conftest import pandalm_table, preference_table
from rank_data import RATING_SCALE, arena_raw, rating_raw, table_of

BOOT = Bootstrap(n_resamples=120, seed=3)


def _bytes(result) -> str:
    return dumps(result)


def _raw(seed=0, n_items=150, pools=("x", "y"), per_pool=2):
    raw = arena_raw(n_items=n_items, n_models=5, pools=pools, per_pool=per_pool, tie=0.2,
                    seed=seed)
    item_no = raw[C.ITEM].str.extract(r"(\d+)")[0].astype(int)
    return raw[(raw[C.POOL] == pools[0]) | (item_no % 3 != 0)].copy()  # uneven pools


def _ranked_both_ways(table, *, unit="judgment", bootstrap=BOOT):
    """rank() drawing its own resamples, and rank() from resamples drawn ahead."""
    alone = rank(table, bootstrap=bootstrap, unit=unit)
    ahead = draw_ahead(table, bootstrap=bootstrap, unit=unit, room=None)
    assert ahead is not None
    try:
        early = rank(table, bootstrap=bootstrap, unit=unit, ahead=ahead)
    finally:
        ahead.close()
    return alone, early


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.sampled_from(["judgment", "majority"]),
       st.sampled_from([None, (2_000, 1_500, 300), (50_000, 400, 60)]))
def test_drawn_ahead_is_the_same_bits_as_drawn_in_rank(seed, unit, cells):
    """Whatever the chunking of the weights, the products and the fits (the constants the
    streaming path splits resamples by), the results are byte-identical."""
    table = table_of(_raw(seed))
    saved = (shared.WEIGHT_CELLS, shared.FIT_CELLS, shared.PRODUCT_CELLS)
    try:
        if cells is not None:
            shared.WEIGHT_CELLS, shared.FIT_CELLS, shared.PRODUCT_CELLS = cells
        alone, early = _ranked_both_ways(table, unit=unit)
    finally:
        shared.WEIGHT_CELLS, shared.FIT_CELLS, shared.PRODUCT_CELLS = saved
    assert _bytes(early) == _bytes(alone)


@pytest.mark.parametrize("make", [pandalm_table, preference_table])
def test_shipped_data_and_a_judge_pool_are_the_same_bits(make):
    alone, early = _ranked_both_ways(make(), bootstrap=Bootstrap(n_resamples=200, seed=7))
    assert _bytes(early) == _bytes(alone)
    assert early["leaderboards"] and early["stability"]["pool_pairs"]


def test_one_human_pool_and_three_pools():
    for pools in (("solo",), ("a", "b", "c")):
        table = table_of(_raw(1, pools=pools))
        alone, early = _ranked_both_ways(table)
        assert _bytes(early) == _bytes(alone)


def test_fit_step_is_where_the_streaming_path_flushes(monkeypatch):
    """fit_step gives the chunks the streaming path hands to stats."""
    table = table_of(_raw(2))
    monkeypatch.setattr(shared, "WEIGHT_CELLS", 3_000)
    monkeypatch.setattr(shared, "FIT_CELLS", 2_500)
    ahead = draw_ahead(table, bootstrap=BOOT, unit="judgment", room=None)
    cp = ahead.patterns().cp
    ahead.close()
    seen = []
    shared.shared_resamples(cp, lambda t: (seen.append(len(t)) or np.zeros((len(t), 1)),),
                            BOOT, "rank/judgment")
    step = shared.fit_step(cp, BOOT.n_resamples)
    assert seen[:-1] == [step] * (len(seen) - 1) and sum(seen) == BOOT.n_resamples
    assert len(seen) > 1  # the constants above force several chunks


def test_a_failed_draw_falls_back_to_drawing_in_rank(monkeypatch):
    table = table_of(_raw(4))
    alone = rank(table, bootstrap=BOOT)

    def broken(*args, **kwargs):
        raise MemoryError("no room for the weights")
        yield  # pragma: no cover

    monkeypatch.setattr(ahead_mod, "weight_blocks", broken)
    ahead = draw_ahead(table, bootstrap=BOOT, unit="judgment", room=None)
    assert ahead.totals() is None and isinstance(ahead._failed, MemoryError)
    assert ahead.patterns() is not None  # built before the draws failed, and used
    assert _bytes(rank(table, bootstrap=BOOT, ahead=ahead)) == _bytes(alone)


def test_failed_votes_fall_back_to_building_everything_in_rank(monkeypatch):
    import audit.rank.counts as counts

    table = table_of(_raw(4))
    alone = rank(table, bootstrap=BOOT)

    def broken(table):
        raise RuntimeError("boom")

    monkeypatch.setattr(counts, "pairwise_votes", broken)  # the worker's, not rank()'s
    ahead = draw_ahead(table, bootstrap=BOOT, unit="judgment", room=None)
    assert ahead.votes() is None and ahead.patterns() is None and ahead.totals() is None
    assert _bytes(rank(table, bootstrap=BOOT, ahead=ahead)) == _bytes(alone)


def test_close_stops_the_worker_at_its_next_block(monkeypatch):
    table = table_of(_raw(5))
    release, blocks = threading.Event(), []
    real = ahead_mod.weight_blocks

    def slow(*args, **kwargs):
        for w in real(*args, **kwargs):
            blocks.append(len(w))
            release.wait(5)
            yield w

    monkeypatch.setattr(ahead_mod, "AHEAD_ROWS", 10)
    monkeypatch.setattr(ahead_mod, "weight_blocks", slow)
    ahead = draw_ahead(table, bootstrap=BOOT, unit="judgment", room=None)
    for _ in range(500):  # the worker is drawing (its first block is out)
        if blocks:
            break
        threading.Event().wait(0.01)
    assert blocks
    ahead._cancel.set()
    release.set()
    ahead.close()
    assert not ahead._thread.is_alive()
    assert sum(blocks) < BOOT.n_resamples  # stopped early
    assert ahead.totals() is None


def test_another_unit_or_bootstrap_is_not_used():
    table = table_of(_raw(6))
    ahead = draw_ahead(table, bootstrap=BOOT, unit="judgment", room=None)
    try:
        other = Bootstrap(n_resamples=120, seed=4)
        assert not ahead.fits("majority", BOOT) and not ahead.fits("judgment", other)
        assert _bytes(rank(table, bootstrap=other, ahead=ahead)) == _bytes(
            rank(table, bootstrap=other))
    finally:
        ahead.close()


def test_not_drawn_ahead_beyond_its_memory_or_the_budget(monkeypatch):
    table = table_of(_raw(7))
    ahead = draw_ahead(table, bootstrap=BOOT, unit="judgment", room=None)
    assert ahead.totals() is not None
    cp = ahead.patterns().cp
    votes = ahead_mod.VOTE_BYTES * len(table.frame)
    totals = ahead_bytes(len(cp.counts), cp.n_groups * cp.values.shape[1], BOOT.n_resamples)
    assert totals == 8 * (BOOT.n_resamples * cp.n_groups * cp.values.shape[1]
                          + 2 * min(ahead_mod.AHEAD_ROWS, BOOT.n_resamples) * len(cp.counts))
    assert ahead._out.nbytes <= totals and votes + totals <= AHEAD_BYTES
    # room for the votes but not the totals: the patterns are built, the totals drawn in rank()
    short = draw_ahead(table, bootstrap=BOOT, unit="judgment", room=votes + totals - 1)
    assert short.patterns() is not None and short.totals() is None
    assert _bytes(rank(table, bootstrap=BOOT, ahead=short)) == _bytes(rank(table, bootstrap=BOOT))
    enough = draw_ahead(table, bootstrap=BOOT, unit="judgment", room=votes + totals)
    assert enough.totals() is not None
    # no room for the votes: nothing is started
    assert draw_ahead(table, bootstrap=BOOT, unit="judgment", room=votes - 1) is None
    monkeypatch.setattr(ahead_mod, "AHEAD_BYTES", votes - 1)
    assert draw_ahead(table, bootstrap=BOOT, unit="judgment", room=None) is None


def test_only_pairwise_preference_tables_are_drawn_ahead():
    ratings = table_of(rating_raw(n_items=60), RATING_SCALE)
    assert draw_ahead(ratings, bootstrap=BOOT, unit="judgment", room=None) is None


def test_a_table_rank_refuses_is_refused_by_rank_not_by_the_worker():
    """A pool named like the board of every human pool: rank's InputError, in rank."""
    table = table_of(_raw(8, pools=("all", "y")))
    assert draw_ahead(table, bootstrap=BOOT, unit="judgment", room=None) is None


def test_the_audit_is_the_same_bits_with_and_without_drawing_ahead(monkeypatch):
    table = preference_table()
    boot = Bootstrap(n_resamples=150, seed=11)
    started = []
    real = ahead_mod.draw_ahead

    def spy(*args, **kwargs):
        out = real(*args, **kwargs)
        started.append(out is not None)
        return out

    monkeypatch.setattr(ahead_mod, "draw_ahead", spy)
    with_ahead = audit_table(table, bootstrap=boot)
    monkeypatch.setattr(ahead_mod, "AHEAD_BYTES", 0)
    without = audit_table(table, bootstrap=boot)
    assert started == [True, False]
    assert _bytes(with_ahead) == _bytes(without)


def test_warnings_keep_their_scope_and_order(monkeypatch):
    """A model that never loses (the Bradley-Terry MLE does not exist) warns from the fit, on
    the calling thread, after the measures' own warnings, as without drawing ahead."""
    raw = _raw(9)
    raw = raw[~((raw[C.MODEL_A] == "m0") | (raw[C.MODEL_B] == "m0"))].copy()
    winner = raw.copy()
    winner[C.MODEL_A], winner[C.ITEM] = "m0", "w-" + winner[C.ITEM]
    winner[C.LABEL] = -1  # model_a, m0, wins every comparison
    import pandas as pd

    table = table_of(pd.concat([raw, winner], ignore_index=True))

    def caught(bytes_ahead):
        monkeypatch.setattr(ahead_mod, "AHEAD_BYTES", bytes_ahead)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            result = audit_table(table, bootstrap=BOOT)
        return result, [(w.category, str(w.message)) for w in seen]

    with_ahead, early = caught(AHEAD_BYTES)
    without, alone = caught(0)
    assert early == alone
    assert any(c is DegenerateDataWarning and "Bradley-Terry" in m for c, m in early)
    assert _bytes(with_ahead) == _bytes(without)


def test_profile_lists_the_worker_beside_the_stages(tmp_path):
    from audit.pipeline import run

    src = tmp_path / "a.csv"
    table_raw = _raw(10)
    table_raw.to_csv(src, index=False)
    spec = tmp_path / "s.yaml"
    spec.write_text("label: {kind: preference, order: [-1, 0, 1]}\n")
    result = run(src, spec=str(spec), n_bootstrap=50, profile=True, report=False)
    beside = result["meta"]["profile"]["beside"]
    assert [b["stage"] for b in beside] == [ahead_mod.STAGE]
    assert beside[0]["seconds"] > 0
    json.loads(dumps(result))


@pytest.mark.parametrize("pools", [("x", "y"), ("a", "b", "c")])
def test_the_boards_fits_on_one_thread_or_several_are_the_same_bits(monkeypatch, pools):
    """The boards' batched Bradley-Terry fits run side by side on threads
    (:func:`audit.resample.thread_map`); on one thread they give the same bytes."""
    import audit.resample.threads as threads

    table = table_of(_raw(4, pools=pools))
    monkeypatch.setattr(threads, "cpu_threads", lambda: 4)
    several = rank(table, bootstrap=BOOT)
    monkeypatch.setattr(threads, "cpu_threads", lambda: 1)
    one = rank(table, bootstrap=BOOT)
    assert _bytes(several) == _bytes(one)
    assert len(several["leaderboards"]) == len(pools) + 1
