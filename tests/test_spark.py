"""The Spark engine (--engine spark) against the pandas engine: identical results, same errors.

Spark runs in local mode (``local[2]``). Without pyspark or a Java runtime these tests skip,
naming what is missing; CI sets ``AUDIT_REQUIRE_SPARK=1`` (``.ci/run``), which turns that skip
into a failure, so a green CI run always includes them.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from audit.contract import columns as C
from audit.cli import cli
from audit.errors import EngineError, InputError, SchemaError
from audit.export import export_table
from audit.ingest import load
from audit.pipeline import run
from benchmarks import synth
from benchmarks.compare import result_differences
from tests.conftest import REPO, shared_data, spark_or_skip

pytestmark = pytest.mark.spark

PANDALM = REPO / "data" / "pandalm" / "testset-v1.json"
TOL = 1e-12
RESAMPLES = 200




def _audit(source, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run(source, n_bootstrap=RESAMPLES, seed=7, report=False, **options)


def assert_same_results(pandas_results: dict, spark_results: dict):
    assert spark_results["meta"]["engine"] == "spark"
    assert pandas_results["meta"]["engine"] == "pandas"
    a = {k: v for k, v in pandas_results.items() if k != "meta"}
    b = {k: v for k, v in spark_results.items() if k != "meta"}
    found = result_differences(a, b)
    assert not found, f"{len(found)} difference(s), first: {found[:5]}"


def _exported(tmp_path, source, **load_options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = load(source, **load_options)
    return table, export_table(table, tmp_path / "export")


# -- identical results --------------------------------------------------------------------------
def test_pandalm_spark_equals_pandas_on_the_original_json(spark, tmp_path):
    _, paths = _exported(tmp_path, PANDALM)
    expected = _audit(PANDALM)
    got = _audit(str(paths["data"]), engine="spark", load_options={"spec": paths["spec"]})
    assert got["dataset"]["n_annotations"] == 2997
    assert got["dataset"]["pools"] == expected["dataset"]["pools"]
    assert_same_results(expected, got)


def test_hs_brexit_spark_equals_pandas_on_the_lewidi_folder(spark, tmp_path):
    source = shared_data("lewidi2023/HS-Brexit")
    _, paths = _exported(tmp_path, source)
    expected = _audit(source)
    got = _audit(str(paths["data"]), engine="spark", load_options={"spec": paths["spec"]})
    alpha = got["reliability"]["overall"]["krippendorff_alpha"]["value"]
    assert abs(alpha - 0.347) < 0.001  # the figure the pandas engine and krippendorff give
    assert_same_results(expected, got)


def _synthetic_dataset(root, *, n_items=700, seed=3):
    """Three pools, preference labels -2..2, written by pyarrow as Parquet partitioned by pool
    with several files per pool (what a data lake holds)."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    pools = (synth.PoolSpec("crowd", share=0.5, bias=0.2, noise=1.2),
             synth.PoolSpec("expert", share=0.3, noise=0.6),
             synth.PoolSpec("authors", share=0.2, bias=-0.3, noise=0.8, model_sd=0.3))
    frame = synth.generate(n_items=n_items, n_models=8, n_annotators=60, pools=pools,
                           per_item=(2, 6), seed=seed)
    frame[C.ITEM] = "q" + frame[C.ITEM].astype(str)
    frame[C.TEXT] = "prompt " + frame[C.ITEM].astype(str)
    data = root / "lake"
    ds.write_dataset(pa.Table.from_pandas(frame, preserve_index=False), data, format="parquet",
                     partitioning=[C.POOL], partitioning_flavor="hive",
                     max_rows_per_file=400, max_rows_per_group=400)
    spec = root / "spec.yaml"
    spec.write_text("name: synthetic-lake\nlabel: {kind: preference, order: [-2, -1, 0, 1, 2]}\n")
    return data, spec, frame


def test_synthetic_partitioned_parquet_both_engines_read_the_same_folder(spark, tmp_path):
    data, spec, frame = _synthetic_dataset(tmp_path)
    assert len({p.parent.name for p in data.rglob("*.parquet")}) == 3
    assert len(list(data.rglob("*.parquet"))) > 3  # several files per pool
    expected = _audit(str(data), load_options={"spec": spec})
    got = _audit(str(data), engine="spark", load_options={"spec": spec})
    assert got["dataset"]["n_annotations"] == len(frame)
    assert set(got["dataset"]["pools"]) == {"crowd", "expert", "authors"}
    assert_same_results(expected, got)


def test_only_codes_cross_to_the_driver_and_the_judgments_are_the_pandas_engines(
        spark, tmp_path, monkeypatch):
    """What ``toArrow`` brings to the driver: the dictionaries, and one table of judgments with
    exactly the canonical columns, each the narrowest integer its dictionary fits, and no source
    position (9 bytes per judgment here: item and text int16, the others int8). The judgments
    are the pandas engine's, in another order."""
    data, spec, _ = _synthetic_dataset(tmp_path)
    DataFrame = type(spark.range(1))  # the classic DataFrame class on Spark 4
    collected = []
    to_arrow = DataFrame.toArrow

    def spy(self):
        table = to_arrow(self)
        collected.append(table.schema)
        return table

    monkeypatch.setattr(DataFrame, "toArrow", spy)
    got = load(str(data), spec=spec, engine="spark")
    monkeypatch.undo()
    judgments = [s for s in collected if C.LABEL in s.names]
    assert len(judgments) == 1
    schema = judgments[0]
    assert sorted(schema.names) == sorted(got.frame.columns)
    widths = {name: schema.field(name).type.bit_width // 8 for name in schema.names}
    assert widths == {C.ITEM: 2, C.ANNOTATOR: 1, C.POOL: 1, C.MODEL_A: 1, C.MODEL_B: 1,
                      C.LABEL: 1, C.TEXT: 2}
    keys = [C.ITEM, C.ANNOTATOR]
    expected = load(str(data), spec=spec).frame
    mine = got.frame.astype(str).sort_values(keys).reset_index(drop=True)
    theirs = expected.astype(str).sort_values(keys).reset_index(drop=True)
    pd.testing.assert_frame_equal(mine, theirs[mine.columns])


def test_spec_mapped_wide_csv_with_label_map_and_pools_file(spark, tmp_path):
    rng = np.random.default_rng(0)
    n = 120
    wide = pd.DataFrame({"tweet": [f"t{i:03d}" for i in range(n)]})
    for r in ("r1", "r2", "r3", "r4"):
        wide[r] = rng.choice(["yes", "no", ""], size=n, p=[0.45, 0.45, 0.1])
    csv = tmp_path / "wide.csv"
    wide.to_csv(csv, index=False)
    (tmp_path / "pools.csv").write_text("annotator,pool\nr1,crowd\nr2,crowd\nr3,expert\n")
    spec = tmp_path / "spec.yaml"
    spec.write_text("layout: wide\ncolumns: {item: tweet}\nannotator_columns: [r1, r2, r3, r4]\n"
                    "label: {kind: nominal, order: [0, 1], map: {'no': 0, 'yes': 1}}\n"
                    "pools: {file: pools.csv}\n")
    with pytest.warns(UserWarning, match=r"1 annotator\(s\)"):  # r4: pool 'unknown', as pandas
        load(str(csv), spec=spec, engine="spark")
    got = _audit(str(csv), engine="spark", load_options={"spec": spec})
    expected = _audit(str(csv), load_options={"spec": spec})
    assert set(got["dataset"]["pools"]) == {"crowd", "expert", "unknown"}
    assert_same_results(expected, got)


def test_pools_file_keyed_by_number_gives_the_pandas_engine_pools(spark, tmp_path):
    """Metadata keyed ``17`` for the data's ``Ann17`` (LeWiDi's shape): both engines match by
    number with the same warning; an exact key wins, and an unmatched id is 'unknown' in both."""
    rng = np.random.default_rng(1)
    n = 60
    frame = pd.DataFrame({C.ITEM: np.repeat([f"i{i}" for i in range(n)], 4),
                          C.ANNOTATOR: np.tile(["Ann1", "Ann2", "Ann07", "Ann9"], n),
                          C.LABEL: rng.choice(["0", "1"], size=4 * n)})
    data = tmp_path / "judgments.parquet"
    frame.to_parquet(data)
    pools = tmp_path / "pools.json"
    pools.write_text(json.dumps({"1": "crowd", "2": "expert", "7": "expert", "Ann9": "crowd"}))
    for engine in ("pandas", "spark"):
        with pytest.warns(UserWarning, match=r"2 of 4 annotator id\(s\) matched the pools "
                                             r"mapping by number"):
            load(str(data), pools=str(pools), engine=engine)
    expected = _audit(str(data), load_options={"pools": str(pools)})
    got = _audit(str(data), engine="spark", load_options={"pools": str(pools)})
    assert set(got["dataset"]["pools"]) == {"crowd", "expert", "unknown"}  # Ann07 is not 7
    assert_same_results(expected, got)


def test_jsonl_long_table_and_a_catalog_table(spark, tmp_path):
    table, _ = _exported(tmp_path, PANDALM)
    f = table.frame.astype(str)
    f[C.LABEL] = table.frame[C.LABEL].astype(int)
    jsonl = tmp_path / "pandalm.jsonl"
    f.to_json(jsonl, orient="records", lines=True)
    spec = tmp_path / "spec.yaml"
    spec.write_text("name: pandalm\n"
                    "label: {kind: preference, order: [-1, 0, 1], names: [A, tie, B]}\n")
    expected = _audit(str(jsonl), load_options={"spec": spec})
    assert_same_results(expected, _audit(str(jsonl), engine="spark",
                                         load_options={"spec": spec}))
    spark.read.json(str(jsonl)).createOrReplaceTempView("pandalm_judgments")
    got = _audit("pandalm_judgments", engine="spark", load_options={"spec": spec})
    assert got["meta"]["source"] == "pandalm_judgments"
    assert_same_results(expected, got)


# -- bad input: the same kind of message, naming the file ----------------------------------------
def _bad_lake(root):
    import pyarrow as pa
    import pyarrow.parquet as pq

    root.mkdir()
    pq.write_table(pa.table({
        C.ITEM: ["i1", "i1", "i2", "i2", "i3", "i3"],
        C.ANNOTATOR: ["a1", "a1", "a1", None, "a1", "a2"],
        C.LABEL: ["-1", "1", "7", "0", "1", "1"],
        C.MODEL_A: ["m1", "m1", "m1", "m1", "m2", "m2"],
        C.MODEL_B: ["m2", "m2", "m2", "m2", "m2", "m2"]}), root / "part-0.parquet")
    return root


def test_every_schema_failure_is_listed_with_its_file(spark, tmp_path):
    data = _bad_lake(tmp_path / "bad")
    spec = tmp_path / "spec.yaml"
    spec.write_text("label: {kind: preference, order: [-1, 0, 1]}\n")
    with pytest.raises(SchemaError) as err:
        load(str(data), spec=spec, engine="spark")
    checks = set(err.value.failures["check"])
    assert {"not null", "one judgment per (item, annotator)", "model_a differs from model_b"} \
        <= checks
    assert any(c.startswith("label in declared set") for c in checks)
    where = err.value.failures["index"].tolist()
    assert all("part-0.parquet" in w for w in where)
    label_row = err.value.failures[err.value.failures["column"] == C.LABEL].iloc[0]
    assert label_row["failure_case"] == "7" and "item 'i2', annotator 'a1'" in label_row["index"]
    # the pandas engine fails the same checks on the same file
    with pytest.raises(SchemaError) as pandas_err:
        load(str(data), spec=spec)
    assert set(pandas_err.value.failures["check"]) == checks


@pytest.mark.parametrize("column, values", [
    (C.ITEM, ["a\x00b", "a\x00b", "c", "c"]),
    (C.ANNOTATOR, ["x", "y\x00", "x", "y\x00"]),
    (C.LABEL, ["1", "2\x00", "1", "1"]),
])
def test_text_with_a_nul_is_refused_by_both_engines(spark, tmp_path, column, values):
    """pandas compares text only up to a NUL (two ids would merge), so the pandas engine refuses
    it; so does Spark (it once kept it and built the table). Same column, same reason; Spark
    names the judgment's file, item and annotator."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    cols = {C.ITEM: ["a", "a", "c", "c"], C.ANNOTATOR: ["x", "y", "x", "y"],
            C.LABEL: ["1", "2", "1", "1"]}
    cols[column] = values
    path = tmp_path / "nul.parquet"
    pq.write_table(pa.table(cols), path)
    with pytest.raises(InputError) as theirs:
        load(str(path))
    with pytest.raises(InputError) as ours:
        load(str(path), engine="spark")
    assert theirs.value.column == ours.value.column == column
    assert "contains a NUL character (U+0000)" in str(ours.value)
    assert "file tmp" not in str(ours.value) and "nul.parquet" in str(ours.value)
    assert "item '" in str(ours.value) and "annotator '" in str(ours.value)


@pytest.mark.parametrize("label", [[[1], [2], [1], [1]], [{"v": 1}, {"v": 2}, {"v": 1}, {"v": 1}]])
def test_a_nested_label_column_is_refused_by_both_engines(spark, tmp_path, label):
    """Lists and structs are not labels: cast to text they would pass as labels like ``[1]``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "nested.parquet"
    pq.write_table(pa.table({C.ITEM: ["a", "a", "c", "c"], C.ANNOTATOR: ["x", "y", "x", "y"],
                             C.LABEL: label}), path)
    for engine in ("pandas", "spark"):
        with pytest.raises(InputError, match="labels must be single values") as err:
            load(str(path), engine=engine)
        assert err.value.column == C.LABEL


def test_repeated_judgments_alone_are_found_from_the_codes_and_listed_by_spark(spark, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from audit.ingest.spark.validate import has_repeats

    data = tmp_path / "dupes"
    data.mkdir()
    for k, annotators in enumerate((["a1", "a1", "a1"], ["a1", "a2", "a3"])):
        pq.write_table(pa.table({C.ITEM: ["i1", "i2", "i3"], C.ANNOTATOR: annotators,
                                 C.LABEL: ["1", "0", "1"]}), data / f"part-{k}.parquet")
    with pytest.raises(SchemaError) as err:
        load(str(data), engine="spark")
    failures = err.value.failures
    assert set(failures["check"]) == {"one judgment per (item, annotator)"}
    assert sorted(failures["failure_case"]) == [("i1", "a1"), ("i1", "a1")]
    assert {w.split(",")[0] for w in failures["index"]} == {"file dupes/part-0.parquet",
                                                            "file dupes/part-1.parquet"}
    with pytest.raises(SchemaError) as pandas_err:
        load(str(data))
    assert set(pandas_err.value.failures["check"]) == set(failures["check"])
    rng = np.random.default_rng(5)
    for _ in range(50):
        item, ann = rng.integers(0, 30, 40), rng.integers(0, 7, 40)
        expected = pd.DataFrame({"i": item, "a": ann}).duplicated().any()
        assert has_repeats(item.astype(np.int32), ann.astype(np.int32)) == expected


def test_cli_bad_input_exits_2_with_one_message(spark, tmp_path):
    data = _bad_lake(tmp_path / "bad")
    res = CliRunner().invoke(cli, ["validate", str(data), "--engine", "spark"])
    assert res.exit_code == 2, res.output
    assert "schema failure" in res.output and "part-0.parquet" in res.output
    assert "Traceback" not in res.output
    res = CliRunner().invoke(cli, ["run", str(PANDALM), "--engine", "spark"])
    assert res.exit_code == 2
    assert "annotation-audit export" in res.output
    res = CliRunner().invoke(cli, ["validate", str(tmp_path / "nowhere"), "--engine", "spark"])
    assert res.exit_code == 2 and "not found: no such file" in res.output
    res = CliRunner().invoke(cli, ["validate", "no_such_table", "--engine", "spark"])
    assert res.exit_code == 2 and "no table of that name" in res.output


def test_cli_run_engine_spark_writes_results_and_report(spark, tmp_path):
    _, paths = _exported(tmp_path, PANDALM)
    out = tmp_path / "out"
    res = CliRunner().invoke(cli, ["run", str(paths["data"]), "--spec", str(paths["spec"]),
                                   "--engine", "spark", "--spark-master", "local[2]",
                                   "--bootstrap", "50", "--out", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    results = json.loads((out / "results.json").read_text())
    assert results["meta"]["engine"] == "spark"
    assert (out / "report.html").exists() and (out / "dataset_card.md").exists()
    # the per-item files come from the cluster (streamed, listed): the pandas engine's files
    mine = tmp_path / "pandas"
    res = CliRunner().invoke(cli, ["run", str(paths["data"]), "--spec", str(paths["spec"]),
                                   "--bootstrap", "50", "--out", str(mine), "--quiet",
                                   "--items-csv"])
    assert res.exit_code == 0, res.output
    pd.testing.assert_frame_equal(pd.read_parquet(out / "items.parquet"),
                                  pd.read_parquet(mine / "items.parquet"))
    pd.testing.assert_frame_equal(pd.read_parquet(out / "advice.parquet"),
                                  pd.read_parquet(mine / "advice.parquet"))
    assert (out / "advice.csv").read_bytes() == (mine / "advice.csv").read_bytes()
    assert len(pd.read_parquet(out / "advice.parquet")) == len(results["advise"]["items"]) > 0


def test_cohen_beyond_the_drivers_share_runs_end_to_end(spark, tmp_path, monkeypatch):
    """With the driver's share for Cohen's kappa at 0 bytes (as 2.3 million annotator pairs
    make it in a 100M-judgment crowd lake), ``run --engine spark --out`` computes Cohen's kappa
    on the cluster: results.json holds the published schema, its Cohen entries say how the
    interval was computed (the pandas engine's mean and median, a normal interval around the
    bias-corrected mean, no pair listed, the median's interval null), every other number is the
    pandas engine's, and the report and card are written."""
    import jsonschema

    from audit import budget
    from audit.measure.scope import LINEARISED_INTERVAL

    monkeypatch.setattr(budget, "COHEN_DRIVER_BYTES", 0)
    _, paths = _exported(tmp_path, PANDALM)
    out = tmp_path / "out"
    res = CliRunner().invoke(cli, ["run", str(paths["data"]), "--spec", str(paths["spec"]),
                                   "--engine", "spark", "--bootstrap", str(RESAMPLES),
                                   "--seed", "7", "--out", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    got = json.loads((out / "results.json").read_text())
    schema = json.loads((REPO / "docs" / "results.schema.json").read_text())
    jsonschema.validate(got, schema)
    assert (out / "report.html").exists() and (out / "dataset_card.md").exists()
    assert "Intervals that are not the item bootstrap" in (out / "report.html").read_text()
    from audit.results import dumps

    want = json.loads(dumps(_audit(str(paths["data"]), load_options={"spec": paths["spec"]})))
    cohen, ref = got["reliability"]["cohen_pairs"]["overall"], \
        want["reliability"]["cohen_pairs"]["overall"]
    assert cohen["interval"] == LINEARISED_INTERVAL and cohen["pairs"] == [] and ref["pairs"]
    assert cohen["n_pairs"] == ref["n_pairs"] > 0
    assert abs(cohen["mean"] - ref["mean"]) <= TOL and abs(cohen["median"] - ref["median"]) <= TOL
    assert cohen["ci95"]["median"] == [None, None]
    lo, hi = cohen["ci95"]["mean"]
    blo, bhi = ref["ci95"]["mean"]
    assert lo < cohen["mean"] - cohen["bias"] < hi and abs((hi - lo) / (bhi - blo) - 1) < 0.25
    entry = got["reliability"]["overall"]["cohen_kappa"]
    assert entry["interval"] == LINEARISED_INTERVAL and entry["ci95"] == [lo, hi]
    # meta says so too (the cluster's results pass through the same note)
    exceptions = got["meta"]["bootstrap"]["exceptions"]
    assert exceptions["reliability.cohen_pairs.overall.ci95.mean"] == LINEARISED_INTERVAL
    assert got["meta"]["bootstrap"]["method"].endswith("(meta.bootstrap.exceptions)")

    from results_examples import without_cohen

    found = result_differences(without_cohen(want), without_cohen(got))
    assert not found, found[:5]


def test_check_suite_with_engine_spark(spark, tmp_path):
    _, paths = _exported(tmp_path, PANDALM)
    res = CliRunner().invoke(cli, ["check", str(paths["data"]), "--spec", str(paths["spec"]),
                                   "--engine", "spark", "--suite",
                                   str(REPO / "expectations" / "pandalm.yaml"),
                                   "--bootstrap", "100"])
    assert res.exit_code == 0, res.output


def test_a_failed_spark_job_is_one_message_with_what_to_set(spark, monkeypatch, tmp_path):
    from pyspark.errors import PySparkException

    from audit.ingest.spark import encode

    def too_big(*args, **kwargs):
        raise PySparkException("Total size of serialized results of 9 tasks (1030.2 MiB) is "
                               "bigger than spark.driver.maxResultSize (1024.0 MiB)\nat ...")

    _, paths = _exported(tmp_path, PANDALM)
    monkeypatch.setattr(encode, "encode_table", too_big)
    res = CliRunner().invoke(cli, ["validate", str(paths["data"]), "--spec", str(paths["spec"]),
                                   "--engine", "spark"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "maxResultSize (1024.0 MiB)" in res.output
    assert "--spark-conf spark.driver.maxResultSize=4g" in res.output


# -- labels as written, conservation, preference recognised: as with pandas ---------------------
def _tables_agree(pandas_table, spark_table):
    assert spark_table.scale == pandas_table.scale
    for col in (C.ITEM, C.ANNOTATOR, C.LABEL):
        assert spark_table.frame[col].astype(str).tolist() == \
            pandas_table.frame[col].astype(str).tolist()
    for key in ("rows_read", "rows_dropped", "n_annotations"):
        assert spark_table.summary()[key] == pandas_table.summary()[key]


def test_labels_are_read_as_written_on_both_engines(spark, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    csv = tmp_path / "t.csv"
    csv.write_text("item,annotator,label\na,x,1.0\na,y,1\nb,x,-0.0\nb,y,0\nc,x,2.50\n"
                   "c,y, 2.5\nd,x,1e0\nd,y,+1\n")
    spec = tmp_path / "s.yaml"
    spec.write_text("label: {kind: interval}\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = load(str(csv), spec=spec)
        got = load(str(csv), spec=spec, engine="spark")
    assert [expected.scale.values[c] for c in got.label_codes] == [1, 1, 0, 0, 2.5, 2.5, 1, 1]
    _tables_agree(expected, got)
    typed = tmp_path / "typed.parquet"  # typed numbers are their shortest text, as in pandas
    pq.write_table(pa.table({C.ITEM: ["a", "a", "b", "b"], C.ANNOTATOR: ["x", "y", "x", "y"],
                             C.LABEL: [7.0, -0.0, 7.0, 2.5]}), typed)
    nominal = tmp_path / "nominal.csv"
    nominal.write_text("item,annotator,label\n007,x,007\n7,x,7\n007,y,nan\n7,y,NA\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for source in (typed, nominal):
            _tables_agree(load(str(source)), load(str(source), engine="spark"))
        assert load(str(typed), engine="spark").scale.values == (0, 2.5, 7)


def test_preference_is_recognised_on_both_engines(spark, tmp_path):
    src = tmp_path / "pairs.csv"
    src.write_text("item,annotator,model_a,model_b,label\n1,x,m1,m2,A\n1,y,m1,m2,tie (bothbad)\n"
                   "2,x,m2,m3,B\n2,y,m2,m3,a\n")
    with pytest.warns(UserWarning, match=r"'A' -> -1"):
        got = load(str(src), engine="spark")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _tables_agree(load(str(src)), got)
    bad = tmp_path / "bad.csv"
    bad.write_text("item,annotator,model_a,model_b,label\n1,x,m1,m2,better\n1,y,m1,m2,worse\n")
    res = CliRunner().invoke(cli, ["validate", str(bad), "--engine", "spark"])
    assert res.exit_code == 2 and "kind: preference" in res.output, res.output


def test_a_judgment_lost_on_spark_is_an_internal_error(spark, monkeypatch, tmp_path):
    from audit.errors import InternalError
    from audit.ingest.spark import frame

    data, spec, _ = _synthetic_dataset(tmp_path, n_items=60)
    count = frame.count_judgments

    def overcount(df, **options):
        df, distinct, info = count(df, **options)
        return df, distinct, {**info, "rows_read": info["rows_read"] + 1}

    monkeypatch.setattr(frame, "count_judgments", overcount)
    with pytest.raises(InternalError, match="bug in annotation-audit"):
        load(str(data), spec=spec, engine="spark")
    res = CliRunner().invoke(cli, ["validate", str(data), "--spec", str(spec), "--engine", "spark"])
    assert res.exit_code == 3 and "Traceback" not in res.output


# -- without pyspark or Java: one clear message --------------------------------------------------
def test_missing_pyspark_is_one_clear_message(monkeypatch, tmp_path):
    # a long table, which --engine spark reads (a named format such as PandaLM is told to be
    # exported first, before pyspark is looked for: 21a42f0)
    src = tmp_path / "t.csv"
    src.write_text("item,annotator,label\nq1,a,1\nq1,b,2\n", encoding="utf-8")
    monkeypatch.setitem(sys.modules, "pyspark", None)
    with pytest.raises(EngineError, match=r"pip install 'annotation-audit\[spark\]'"):
        load(str(src), engine="spark")
    res = CliRunner().invoke(cli, ["validate", str(src), "--engine", "spark"])
    assert res.exit_code == 2 and "annotation-audit[spark]" in res.output


def test_missing_java_is_one_clear_message(monkeypatch):
    spark_or_skip(java=False)  # Java itself is what this test takes away
    from pyspark.sql import SparkSession

    from audit.ingest.spark import session

    monkeypatch.setattr(session, "java_available", lambda: False)
    monkeypatch.setattr(SparkSession, "getActiveSession", staticmethod(lambda: None))
    with pytest.raises(EngineError, match="Java runtime"):
        session.get_session("local[1]")


def test_spark_master_without_spark_engine_is_refused():
    with pytest.raises(InputError, match="--spark-master needs --engine spark"):
        load(str(PANDALM), spark_master="local[2]")


def test_pandas_engine_never_imports_pyspark(tmp_path):
    """Installed or not, pyspark stays out of the pandas engine's run (pandera would load
    ``pyspark.pandas`` on import; :mod:`audit.contract.schema` hides it). great_expectations, on the
    ``check`` path, imports pyspark itself whenever it is installed; that is left to it."""
    script = tmp_path / "pandas_run.py"
    script.write_text("import sys, warnings; warnings.simplefilter('ignore')\n"
                      "from audit.pipeline import run\n"
                      f"run({str(PANDALM)!r}, n_bootstrap=5, out={str(tmp_path / 'o')!r})\n"
                      "print(sorted(m for m in sys.modules if m.startswith('pyspark')))")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         check=True, cwd=REPO)
    assert out.stdout.strip().splitlines()[-1] == "[]"
    assert (tmp_path / "o" / "report.html").exists()


# -- export: the canonical Parquet reads back exactly, with pandas alone -------------------------
def test_export_round_trip_pandas_engine(tmp_path):
    _, paths = _exported(tmp_path, PANDALM)
    assert (paths["data"] / "pool=annotator1").is_dir()
    expected = _audit(PANDALM)
    got = _audit(str(paths["data"]), load_options={"spec": paths["spec"]})
    found = result_differences({k: v for k, v in expected.items() if k != "meta"},
                   {k: v for k, v in got.items() if k != "meta"})
    assert not found, found[:5]


def test_export_refuses_to_overwrite(tmp_path):
    runner = CliRunner()
    first = runner.invoke(cli, ["export", str(PANDALM), str(tmp_path / "x")])
    assert first.exit_code == 0 and "2,997 judgments" in first.output
    again = runner.invoke(cli, ["export", str(PANDALM), str(tmp_path / "x")])
    assert again.exit_code == 2 and "already exists" in again.output


def test_a_missing_text_or_category_stays_missing_on_both_engines(spark, tmp_path):
    """An empty text / category cell (CSV) or a null (Parquet) is missing (code -1) on both
    engines, while the words "nan" and "None" written as text are kept as written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    csv = tmp_path / "t.csv"
    csv.write_text("item,annotator,label,text,category\n1,x,a,,c1\n1,y,b,,\n2,x,a,nan,None\n"
                   "2,y,a,nan,None\n3,x,b,hello,c1\n3,y,b,hello,c1\n")
    parquet = tmp_path / "t.parquet"
    pq.write_table(pa.table({C.ITEM: ["1", "1", "2", "2"], C.ANNOTATOR: ["x", "y", "x", "y"],
                             C.LABEL: ["a", "b", "a", "a"], C.TEXT: [None, None, "None", "t"],
                             C.CATEGORY: [None, "c", None, "c"]}), parquet)
    expected_text = {csv: [None, None, "nan", "nan", "hello", "hello"],
                     parquet: [None, None, "None", "t"]}
    expected_category = {csv: ["c1", None, "None", "None", "c1", "c1"],
                         parquet: [None, "c", None, "c"]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for source in (csv, parquet):
            tables = (load(str(source)), load(str(source), engine="spark"))
            for table in tables:
                for col, want in ((C.TEXT, expected_text), (C.CATEGORY, expected_category)):
                    got = table.frame[col].astype(object)
                    assert [None if pd.isna(v) else v for v in got] == want[source], col
            _tables_agree(*tables)
            assert tables[0].first_texts([0, 1]) == tables[1].first_texts([0, 1])
    assert load(str(csv)).first_texts([0, 1, 2]) == [None, "nan", "hello"]


# -- the audit kept on the cluster (pairwise preferences) ----------------------------------------
def test_pairwise_preferences_stay_on_the_cluster_other_tables_are_collected(spark, tmp_path,
                                                                           monkeypatch):
    """``run(engine="spark")`` audits a pairwise preference table from the cluster's aggregates
    (the judgments are never collected: the collect path is made to fail) and collects a
    table of plain labels (HS-Brexit), each equal to the pandas engine's audit."""
    from audit.ingest.spark import encode
    from audit.ingest.spark.coded import ClusterTable

    _, paths = _exported(tmp_path, PANDALM)
    seen = []
    real = ClusterTable.release

    def release(self):
        seen.append(self.source)
        real(self)

    def no_collect(*args, **kwargs):
        raise AssertionError("the judgments were collected")

    monkeypatch.setattr(ClusterTable, "release", release)
    with monkeypatch.context() as m:
        m.setattr(encode, "encode_table", no_collect)
        got = _audit(str(paths["data"]), engine="spark", load_options={"spec": paths["spec"]})
    assert seen == [str(paths["data"])]  # and its cached frames released after the audit
    assert got["advise"]["items"], "the advice lists items from the cluster"
    expected = _audit(str(paths["data"]), load_options={"spec": paths["spec"]})
    assert_same_results(expected, got)
    # keep_on_cluster=False: the collecting engine, the same results
    assert_same_results(expected, _audit(str(paths["data"]), engine="spark",
                                         keep_on_cluster=False,
                                         load_options={"spec": paths["spec"]}))
    assert seen == [str(paths["data"])]
    table, exported = _exported(tmp_path / "brexit", shared_data("lewidi2023/HS-Brexit"))
    assert not table.is_pairwise
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kept = load(str(exported["data"]), spec=exported["spec"], engine="spark",
                    keep_on_cluster="auto")
    assert not isinstance(kept, ClusterTable)  # collected: no aggregates path for it yet
    with pytest.raises(InputError, match="needs --engine spark"):
        load(str(PANDALM), keep_on_cluster=True)
    with pytest.raises(InputError, match="covers pairwise preference tables"):
        _audit(str(exported["data"]), engine="spark", keep_on_cluster=True,
               load_options={"spec": exported["spec"]})


def test_a_failed_spark_job_during_the_audit_is_one_message(spark, monkeypatch, tmp_path):
    """A Spark job failing after loading (in the cluster's aggregates) exits 2 with one
    message, not a traceback (the loading's rule, :mod:`audit.ingest.spark.failures`)."""
    from pyspark.errors import PySparkException

    from audit.ingest.spark import aggregates

    def lost(*args, **kwargs):
        raise PySparkException("Job aborted due to stage failure: ExecutorLostFailure\nat ...")

    _, paths = _exported(tmp_path, PANDALM)
    monkeypatch.setattr(aggregates, "spark_dataset_counts", lost)
    res = CliRunner().invoke(cli, ["run", str(paths["data"]), "--spec", str(paths["spec"]),
                                   "--engine", "spark", "--bootstrap", "20", "--quiet"])
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    assert "Spark failed on" in res.output and "ExecutorLostFailure" in res.output


def test_the_drivers_budget_is_checked_from_the_cluster_counts(spark, tmp_path):
    """Over the memory budget, the cluster path refuses before any aggregate is collected,
    naming the driver's share and its largest parts (exit 2)."""
    _, paths = _exported(tmp_path, PANDALM)
    res = CliRunner().invoke(cli, ["run", str(paths["data"]), "--spec", str(paths["spec"]),
                                   "--engine", "spark", "--bootstrap", "20", "--quiet",
                                   "--max-memory", "200K"])
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    assert "Spark driver's share" in res.output


def test_a_quote_inside_a_csv_field_reads_as_the_pandas_engine_reads_it(spark, tmp_path):
    """RFC 4180: a quote inside a quoted field is written doubled (pandas writes it so); the
    Spark reader gives the text back with one quote, as pandas does, and a backslash as it
    is (Spark's default escape, a backslash, kept both quotes: PandaLM's texts differed)."""
    from audit.ingest.spark.read import read_source

    texts = ['Use "|" to separate', 'a \\ backslash, and "quoted \\" text"', "plain"]
    path = tmp_path / "quotes.csv"
    pd.DataFrame({"item": ["1", "2", "3"], C.TEXT: texts}).to_csv(path, index=False)
    got = read_source(spark, str(path)).select("item", C.TEXT).toPandas()
    assert got.sort_values("item")[C.TEXT].tolist() == pd.read_csv(path)[C.TEXT].tolist()
    assert got.sort_values("item")[C.TEXT].tolist() == texts


def test_advise_csv_and_plan_on_the_cluster_print_the_pandas_engines_answer(spark, tmp_path):
    """``advise --csv`` (the advised rows queried from the cluster) and ``plan`` print, with
    ``--engine spark``, exactly what the pandas engine prints for the same data: the answer
    and its notes (PandaLM's single-annotator pools: one ``info:`` line, no warning), all but
    the timed progress lines."""
    import re

    def shown(res):
        assert res.exit_code == 0, res.output
        return [line for line in res.output.splitlines()
                if not re.match(r"\[\s*[\d.]+s\] .* done$", line)]

    _, paths = _exported(tmp_path, PANDALM)
    common = [str(paths["data"]), "--spec", str(paths["spec"]), "--bootstrap", "50"]
    for command in (["advise", "--csv", "--budget", "7"], ["plan", "--models", "8"]):
        got = shown(CliRunner().invoke(cli, [*command, *common, "--engine", "spark"]))
        want = shown(CliRunner().invoke(cli, [*command, *common]))
        assert got == want and len(got) > 3
