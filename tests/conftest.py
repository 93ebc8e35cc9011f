"""Shared test helpers: where the research data lives, and canonical tables built from raw data."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, settings

from audit.contract import columns as C

# Every Spark session a test process starts (the fixture's, or one load_spark starts inside a
# test) gets a 2 GiB driver: with the default 1 GiB, the one local session an xdist worker
# shares across ~150 Spark tests ran out of execution memory for a small aggregation
# ("AGGREGATE_OUT_OF_MEMORY", a CI run of 2026-12-04) even with its cache cleared after each.
os.environ.setdefault("PYSPARK_SUBMIT_ARGS", "--driver-memory 3g pyspark-shell")
from audit.contract.labels import WINNER_NAMES, LabelKind, LabelScale
from audit.contract.table import build_table

# Tests never assert on wall time: hypothesis's per-example deadline and its "too slow" health
# check are timings, which a busy 2-core CI machine breaks at random (a 359 ms example against
# the 200 ms default deadline failed a run). Every property test runs without them.
settings.register_profile("annotation-audit", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("annotation-audit")

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


def shared_data(relpath: str) -> Path:
    """The path of a research-only data file under ../shared/data; skip the test if it is absent."""
    path = SHARED_DATA / relpath
    if not path.exists():
        pytest.skip(f"research data not present: {path}")
    return path


#: The shipped WMT23 zh-en side-by-side MQM ratings (Google's raw TSV, written without quoting).
WMT_ARCHIVE = "wmt23_sxs_mqm_zhen/sxs_mqm_generalMT2023_zhen.3ratingsPerSegment.tsv.tar.gz"


def wmt_tsv(folder: Path) -> Path:
    """The WMT23 zh-en TSV extracted from its archive into ``folder`` (skip when absent)."""
    import tarfile

    with tarfile.open(shared_data(WMT_ARCHIVE), "r:gz") as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith(".tsv"))
        tar.extract(member, folder, filter="data")
    return Path(folder) / member.name


#: PandaLM's label codes -> the preference sign convention (negative = response1 / model_a better).
PANDALM_SIGN = {1: -1, 2: 1, 0: 0}
PANDALM_ANNOTATORS = ("annotator1", "annotator2", "annotator3")


def pandalm_records() -> list[dict]:
    """The raw PandaLM test set (999 comparisons, 3 annotators), skipping when absent."""
    return json.loads(shared_data("pandalm_testset/testset-v1.json").read_text())


def pandalm_table(*, judge_pools=()):
    """PandaLM as a canonical table built from the raw JSON: each annotator is its own pool.

    Items are ``idx``; ``cmp_key`` is ``"<model of response1>_<model of response2>"`` split on the
    single ``_``; labels 1 -> -1 (A better), 2 -> +1, 0 -> 0 (see the data's PROVENANCE.md).
    """
    rows = []
    for rec in pandalm_records():
        model_a, model_b = rec["cmp_key"].split("_")
        for ann in PANDALM_ANNOTATORS:
            rows.append({C.ITEM: rec["idx"], C.ANNOTATOR: ann, C.POOL: ann,
                         C.LABEL: PANDALM_SIGN[rec[ann]], C.MODEL_A: model_a, C.MODEL_B: model_b,
                         C.TEXT: rec["instruction"]})
    raw = pd.DataFrame(rows)
    raw.index = pd.Index([f"record {r // 3}" for r in range(len(raw))])
    scale = LabelScale(LabelKind.PREFERENCE, (-1, 0, 1), WINNER_NAMES)
    return build_table(raw, scale, name="pandalm", source="pandalm_testset/testset-v1.json",
                       judge_pools=judge_pools)


# -- results produced by the code (never written by hand: tests/test_results_schema.py checks) --

#: Resamples for produced results: enough for every interval to exist, few enough to be fast.
N_BOOTSTRAP = 20


def preference_table(*, n_items: int = 60, seed: int = 0):
    """A pairwise preference table built in code: pools ``crowd`` (four annotators, three per
    item), ``expert`` (two, both on every item) and the judge pool ``gpt-4``; five models.

    Each item has a true winner; the crowd errs more often than the experts, sides as one
    against them on some hard items, and one crowd worker (``c3``) leans towards A, so the
    crowd's annotators are not interchangeable and the experts' are; every block of the audit
    has defined numbers to read.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    models = ["gpt-4", "claude-v1", "gpt-3.5-turbo", "vicuna-13b", "llama-13b"]
    strength = np.array([2.0, 1.5, 1.0, 0.5, 0.0])
    rows = []
    for i in range(n_items):
        a, b = rng.choice(len(models), size=2, replace=False)
        p_b = 1.0 / (1.0 + np.exp(strength[a] - strength[b]))
        truth = 1 if rng.random() < p_b else -1
        crowd = [f"c{k}" for k in rng.choice(4, size=3, replace=False)]
        hard = rng.random() < 0.15  # the crowd takes the other side, as one
        for ann, pool, err in [*((c, "crowd", 0.3) for c in crowd), ("e0", "expert", 0.1),
                               ("e1", "expert", 0.1), ("gpt-4", "gpt-4", 0.12)]:
            u = rng.random()
            label = truth if u >= err else (0 if u < err / 2 else -truth)
            if pool == "crowd" and hard and rng.random() < 0.9:
                label = -truth
            if ann == "c3" and rng.random() < 0.8:  # one crowd worker leans towards A
                label = -1
            rows.append({C.ITEM: f"cmp-{i:04d}", C.ANNOTATOR: ann, C.POOL: pool,
                         C.LABEL: label, C.MODEL_A: models[a], C.MODEL_B: models[b],
                         C.TEXT: f"prompt {i}"})
    scale = LabelScale(LabelKind.PREFERENCE, (-1, 0, 1), WINNER_NAMES)
    return build_table(pd.DataFrame(rows), scale, name="toy-preferences",
                       source="toy-preferences.jsonl", judge_pools=("gpt-4",))


def audited(table, *, n_bootstrap: int = N_BOOTSTRAP, seed: int = 0) -> dict:
    """The full audit of ``table`` as :func:`audit.pipeline.audit_table` returns it (NaN where
    a value is undefined), degenerate-data warnings silenced."""
    import warnings

    from audit.pipeline import audit_table
    from audit.resample import Bootstrap

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return audit_table(table, bootstrap=Bootstrap(n_bootstrap, seed))


@pytest.fixture(scope="session")
def preference_results() -> dict:
    """The audit of :func:`preference_table` in its JSON form (as results.json holds it).
    Session-wide and shared: copy it (``copy.deepcopy``) before changing it."""
    from audit.results import jsonable

    return jsonable(audited(preference_table()))


def spark_or_skip(*, java: bool = True):
    """Skip, naming what is missing (pyspark; Java unless ``java=False``); fail instead when
    AUDIT_REQUIRE_SPARK is set (CI)."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        reason = "pyspark not installed (pip install 'annotation-audit[spark]')"
    else:
        from audit.ingest.spark.session import java_available

        reason = None if not java or java_available() else "no Java runtime for Spark"
    if reason:
        if os.environ.get("AUDIT_REQUIRE_SPARK"):
            pytest.fail(f"AUDIT_REQUIRE_SPARK is set but {reason}")
        pytest.skip(reason)


@pytest.fixture(scope="module")
def spark():
    """A local Spark session (``local[2]``) for the Spark engine's tests, or a skip naming
    what is missing (:func:`spark_or_skip`). Stopped after the module: a session shared by
    every Spark module of a worker kept what each module's frames and plans left in its 3 GiB
    driver, and late modules failed to broadcast a join ("Not enough memory to build and
    broadcast the table", tests/test_spark_advice.py in clean-clone CI, though it passes on
    its own); the next module starts a fresh one (a few seconds)."""
    spark_or_skip()
    from audit.ingest.spark import get_session

    session = get_session("local[2]")
    yield session
    session.stop()


@pytest.fixture(autouse=True)
def _release_cached_frames(request):
    """After every test that used the Spark session, its cached frames are freed: the Spark
    tests share one local session per worker, whose 3 GiB driver otherwise runs out of room
    to broadcast (a test leaving dictionaries or coded judgments cached starves the next)."""
    yield
    if "spark" not in request.fixturenames:
        return
    from pyspark.sql import SparkSession

    session = SparkSession.getActiveSession()
    if session is not None:
        session.catalog.clearCache()

