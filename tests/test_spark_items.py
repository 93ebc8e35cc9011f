"""``items.parquet`` written from a table kept on the cluster (issue 17, item 2).

:func:`audit.ingest.spark.units.unit_counts` is checked against a per-judgment Python loop
written from the item table's description (orientation by most judgments, the lower model name
first on a tie; labels mirrored when shown the other way). The file
:func:`audit.ingest.spark.units.write_items_from_cluster` streams in chunks equals the pandas
engine's ``write_items(item_table(...))`` of the same source: the frame read back, its
``attrs``, the Parquet key-value metadata, and ``items.csv`` byte for byte, on the PandaLM CSV
and on a three-pool Parquet table with hostile ids (leading zeros, Unicode, a newline,
formula-looking text), items judged on two pairs and units whose judgments split evenly
between the two orientations, with chunks of a few units. A spy on ``toLocalIterator`` checks
that the units come to the driver one piece of at most a chunk at a time, and one on
``toArrow``, ``collect`` and ``toPandas`` that nothing else is collected.
"""

from __future__ import annotations

import warnings
from collections import Counter, defaultdict
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from conftest import pandalm_table

from audit.contract import columns as C
from audit.errors import InputError

SPEC = "label: {kind: preference, order: [-2, -1, 0, 1, 2]}\njudge_pools: [gpt-4]\n"
IDS = ["0010", "007", "10", "=SUM(A1)", "+cmd", "@x", "-1", "multi\nline", "名前 ü", "é",
       "'quoted", "z"]
MODELS = ["alpha", "Beta", "gamma", "δ-model", "=m"]


def hostile_frame(seed: int = 5) -> pd.DataFrame:
    """Three pools (``crowd``, ``=expert``, the judge ``gpt-4``), five-point preference labels,
    ids a spreadsheet or a number parser would mangle, 60 plain items; some items judged on two
    model pairs, some units shown both ways in equal numbers (a tie: the lower name first),
    some mostly shown (hi, lo)."""
    rng = np.random.default_rng(seed)
    ids = IDS + [f"q{k:03d}" for k in range(60)]
    rows = []
    for k, item in enumerate(ids):
        pairs = [tuple(rng.choice(MODELS, 2, replace=False))]
        if k % 4 == 1:  # a second pair on the same item
            other = tuple(rng.choice(MODELS, 2, replace=False))
            if set(other) != set(pairs[0]):
                pairs.append(other)
        for j, (a, b) in enumerate(pairs):
            people = [(pool, r) for pool, size in (("crowd", int(rng.integers(1, 5))),
                                                   ("=expert", k % 3), ("gpt-4", 1))
                      for r in range(size)]
            if k % 5 == 2:  # an even split between the two orientations: a tie
                people = people[:len(people) // 2 * 2]
            for t, (pool, r) in enumerate(people):
                shown = (a, b)
                if k % 5 == 2 and t % 2 == 1 or k % 7 == 3:
                    shown = (b, a)  # other way round: half of them, or all
                rows.append({C.ITEM: item, C.ANNOTATOR: f"{pool}-{r}-{j}", C.POOL: pool,
                             C.MODEL_A: shown[0], C.MODEL_B: shown[1],
                             C.LABEL: int(rng.integers(-2, 3))})
    return pd.DataFrame(rows)


def reference_units(raw: pd.DataFrame, labels=(-2, -1, 0, 1, 2)) -> dict:
    """Per (item, lo name, hi name): ((model_a, model_b), {(pool, label): count}, n, whether
    the judgments split evenly between the two orientations), by a loop
    over the judgments, from the module docstring of :mod:`audit.items` alone."""
    shown = defaultdict(Counter)
    judgments = defaultdict(list)
    for r in raw.itertuples(index=False):
        a, b = getattr(r, C.MODEL_A), getattr(r, C.MODEL_B)
        lo, hi = sorted((a, b))
        key = (getattr(r, C.ITEM), lo, hi)
        shown[key][(a, b)] += 1
        judgments[key].append((getattr(r, C.POOL), a, int(getattr(r, C.LABEL))))
    out = {}
    for key, ways in shown.items():
        _, lo, hi = key
        first = (hi, lo) if ways[(hi, lo)] > ways[(lo, hi)] else (lo, hi)
        counts = Counter()
        for pool, a, label in judgments[key]:
            counts[(pool, label if a == first[0] else -label)] += 1
        out[key] = (first, counts, len(judgments[key]), ways[(lo, hi)] == ways[(hi, lo)])
    return out


def _write_source(tmp_path, which):
    spec = tmp_path / "spec.yaml"
    if which == "pandalm":
        src = tmp_path / "pandalm.csv"
        pandalm_table().frame.astype(str).to_csv(src, index=False)
        return str(src), None
    spec.write_text(SPEC)
    src = tmp_path / "hostile.parquet"
    hostile_frame().to_parquet(src, index=False)
    return str(src), str(spec)


def test_unit_counts_equal_a_loop_over_the_judgments(spark, tmp_path):
    from audit.ingest.spark import load_spark
    from audit.ingest.spark.units import count_column, n_column, unit_counts

    raw = hostile_frame()
    src, spec = _write_source(tmp_path, "hostile")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ct = load_spark(src, spark=spark, spec=spec, keep_on_cluster=True)
    try:
        got = unit_counts(ct).toPandas()
        names = dict(ct.items.select("code", "name").toPandas().itertuples(index=False))
    finally:
        ct.release()
    want = reference_units(raw)
    assert len(got) == len(want)
    values = list(ct.scale.values)
    ties = mostly_flipped = 0
    for r in got.itertuples(index=False):
        lo, hi = ct.models[r.lo], ct.models[r.hi]
        first, counts, n, even = want[(names[r.item], lo, hi)]
        assert ((hi, lo) if r.flipped else (lo, hi)) == first
        ties += even
        assert r.n == n
        for p, pool in enumerate(ct.pools):
            assert getattr(r, n_column(p)) == sum(c for (q, _), c in counts.items() if q == pool)
            for j, label in enumerate(values):
                assert getattr(r, count_column(p, j)) == counts[(pool, label)], (pool, label)
        mostly_flipped += bool(r.flipped)
    assert ties >= 3 and mostly_flipped >= 3  # both rules are exercised
    assert (raw.groupby(C.ITEM)[[C.MODEL_A, C.MODEL_B]]
            .apply(lambda f: len({frozenset(x) for x in f.to_numpy()})) > 1).sum() >= 3


def _pandas_files(src, spec, folder):
    from audit import load
    from audit.items import item_table, write_items

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = load(src, spec=spec)
    folder.mkdir()
    write_items(item_table(table), folder, csv=True)
    return folder


@pytest.mark.parametrize("which", ["pandalm", "hostile"])
def test_items_streamed_from_the_cluster_equal_the_pandas_engines(spark, which, tmp_path,
                                                                  monkeypatch):
    """The same frame, attrs, key-value metadata and CSV bytes, written in chunks of 7 (hostile)
    or 250 (PandaLM) units; the units reach the driver one piece of at most a chunk at a time,
    and nothing else is collected."""
    from audit.ingest.spark import load_spark
    from audit.ingest.spark.units import write_items_from_cluster

    src, spec = _write_source(tmp_path, which)
    want = _pandas_files(src, spec, tmp_path / "pandas")
    chunk = 250 if which == "pandalm" else 7
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ct = load_spark(src, spark=spark, spec=spec, keep_on_cluster=True)
    n_items = ct.items.count()
    DataFrame = type(spark.range(1))
    fetched, pieces = [], []
    for name in ("toArrow", "collect", "toPandas"):
        real = getattr(DataFrame, name)

        def spy(self, *args, _real=real, _name=name, **kwargs):
            out = _real(self, *args, **kwargs)
            fetched.append((_name, out.num_rows if _name == "toArrow" else len(out)))
            return out

        monkeypatch.setattr(DataFrame, name, spy)
    real_iterator = DataFrame.toLocalIterator

    def rows(self, *args, **kwargs):
        for row in real_iterator(self, *args, **kwargs):
            pieces.append(len(row[C.ITEM]))
            yield row

    monkeypatch.setattr(DataFrame, "toLocalIterator", rows)
    got = tmp_path / "cluster"
    got.mkdir()
    try:
        assert write_items_from_cluster(ct, got, csv=True, chunk_rows=chunk) == [
            "items.parquet", "items.csv"]
    finally:
        monkeypatch.undo()
        ct.release()
    a = pd.read_parquet(want / "items.parquet")
    b = pd.read_parquet(got / "items.parquet")
    pd.testing.assert_frame_equal(a, b)
    assert a.attrs == b.attrs and a.attrs["annotation_audit"]["unit"] == "item, model pair"
    meta_a = pq.read_metadata(want / "items.parquet")
    meta_b = pq.read_metadata(got / "items.parquet")
    assert meta_a.metadata == meta_b.metadata
    assert pq.read_schema(want / "items.parquet").equals(pq.read_schema(got / "items.parquet"),
                                                         check_metadata=True)
    groups = [meta_b.row_group(i).num_rows for i in range(meta_b.num_row_groups)]
    assert len(groups) == -(-len(a) // chunk) >= 4 and max(groups) == chunk
    assert (want / "items.csv").read_bytes() == (got / "items.csv").read_bytes()
    assert max(pieces) <= chunk and sum(pieces) == len(a)  # one piece of units at a time
    assert not fetched  # nothing else is collected
    if which == "hostile":  # a block of `chunk` items on more pairs is cut into pieces
        assert len(pieces) > -(-n_items // chunk)
    if which == "hostile":
        assert a[C.ITEM].iloc[:3].tolist() == ["'quoted", "+cmd", "-1"]  # code-point order
        assert set(IDS) <= set(a[C.ITEM])
        assert a.duplicated(C.ITEM).sum() >= 3  # items on two pairs: a row per pair


def test_other_tables_are_refused_before_spark_runs(tmp_path):
    from audit.contract.labels import LabelKind, LabelScale
    from audit.ingest.spark.units import write_items_from_cluster

    rating = SimpleNamespace(is_pairwise=False,
                             scale=LabelScale(LabelKind.ORDINAL, (1, 2, 3)))
    with pytest.raises(InputError, match="pairwise preference"):
        write_items_from_cluster(rating, tmp_path)
    winners = LabelScale(LabelKind.PREFERENCE, (-1, 0, 1), ("A", "tie", "B"))
    pairwise = SimpleNamespace(is_pairwise=True, scale=winners, pools=("p",), judge_pools=())
    with pytest.raises(InputError, match="chunk_rows"):
        write_items_from_cluster(pairwise, tmp_path, chunk_rows=0)
    assert not list(tmp_path.iterdir())


def test_run_with_the_spark_engine_writes_the_pandas_engines_item_files(spark, tmp_path,
                                                                        monkeypatch):
    """``audit.run(..., engine="spark", out=...)`` keeps the hostile table on the cluster and
    streams its ``items.parquet`` and ``items.csv`` into the run's set (once, through
    :func:`write_items_from_cluster`): the pandas engine's files (frame, attrs, key-value
    metadata, CSV bytes), listed in the manifest."""
    import json

    import audit
    from audit.ingest.spark import units

    streamed = []
    real = units.write_items_from_cluster

    def spy(ct, folder, **options):
        streamed.append(type(ct).__name__)
        return real(ct, folder, **options)

    monkeypatch.setattr(units, "write_items_from_cluster", spy)

    src, spec = _write_source(tmp_path, "hostile")
    outs = {}
    for engine in ("pandas", "spark"):
        outs[engine] = tmp_path / engine
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results = audit.run(src, engine=engine, out=outs[engine], n_bootstrap=20,
                                report=False, items=True, items_csv=True, advice_files=False,
                                load_options={"spec": spec})
        assert results["dataset"]["n_annotations"] == len(hostile_frame())
    a = pd.read_parquet(outs["pandas"] / "items.parquet")
    b = pd.read_parquet(outs["spark"] / "items.parquet")
    pd.testing.assert_frame_equal(a, b)
    assert a.attrs == b.attrs
    assert (pq.read_metadata(outs["pandas"] / "items.parquet").metadata
            == pq.read_metadata(outs["spark"] / "items.parquet").metadata)
    assert streamed == ["ClusterTable"]
    csv_files = [(outs[e] / "items.csv").read_bytes() for e in ("pandas", "spark")]
    assert csv_files[0] == csv_files[1]
    manifest = json.loads((outs["spark"] / "manifest.json").read_text())
    assert {"items.parquet", "items.csv"} <= set(manifest["files"])


def _jobs(spark, group: str, action) -> int:
    """The Spark jobs ``action()`` launches: run in job group ``group``, counted by the status
    tracker once the listener bus has delivered every job's events."""
    sc = spark.sparkContext
    sc.setJobGroup(group, group)
    try:
        action()
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
        sc.setLocalProperty("spark.job.description", None)
    sc._jsc.sc().listenerBus().waitUntilEmpty()
    return len(sc.statusTracker().getJobIdsForGroup(group))


def test_the_item_export_takes_spark_jobs_by_partition_not_by_chunk(spark, tmp_path,
                                                                   monkeypatch):
    """``toLocalIterator`` runs one Spark job per partition: the export's partitions hold
    ``pieces_per_partition`` pieces, so eleven 7-unit chunks of the hostile table take the jobs
    of one 1,000-unit chunk (one partition either way), not one job per chunk as one piece per
    partition did (17 jobs against 6, ~5,000 at 1B judgments). The file is the same bytes
    however the pieces are partitioned and whether the next partition is prefetched (the
    piece-a-partition run is the former export: no prefetch)."""
    from audit.ingest.spark import load_spark, units
    from audit.ingest.spark.units import write_items_from_cluster

    src, spec = _write_source(tmp_path, "hostile")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ct = load_spark(src, spark=spark, spec=spec, keep_on_cluster=True)
    n_items = ct.items.count()
    blocks = -(-n_items // 7)
    assert blocks == 11 <= units.PIECES_PER_PARTITION
    folders, jobs = {}, {}
    runs = {"chunks": dict(chunk_rows=7), "one chunk": dict(chunk_rows=1000),
            "a piece a partition": dict(chunk_rows=7, pieces_per_partition=1)}
    try:
        for name, options in runs.items():
            folders[name] = tmp_path / name.replace(" ", "-")
            folders[name].mkdir()
            monkeypatch.setattr(units, "PREFETCH", name != "a piece a partition")
            jobs[name] = _jobs(spark, f"items-{name}", lambda: write_items_from_cluster(
                ct, folders[name], csv=True, **options))
    finally:
        ct.release()
    assert jobs["chunks"] == jobs["one chunk"]  # the chunks do not cost jobs
    # a partition per piece: a job per partition, ten partitions more
    assert jobs["a piece a partition"] >= jobs["chunks"] + blocks - 1
    parquet = {name: (folder / "items.parquet").read_bytes() for name, folder in folders.items()}
    assert parquet["chunks"] == parquet["a piece a partition"]
    meta = pq.read_metadata(folders["chunks"] / "items.parquet")
    assert meta.num_row_groups == -(-meta.num_rows // 7) > blocks  # 7-unit chunks, several pairs
    text = {name: (folder / "items.csv").read_bytes() for name, folder in folders.items()}
    assert text["chunks"] == text["one chunk"] == text["a piece a partition"]
