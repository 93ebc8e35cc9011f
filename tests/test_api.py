"""The Python API on data in memory: ``audit.load`` / ``audit.run`` take a path, a pandas
DataFrame, a ``datasets.Dataset`` / ``DatasetDict`` (``split=``), with the CLI's options as
keywords (``spec=`` a path, a dict or a DatasetSpec); a misspelt keyword is a TypeError before
anything is read. Every in-memory route gives exactly the table and results of the file route."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

import audit
from audit.contract import columns as C
from audit.errors import InputError, SchemaError
from audit.ingest.readers import read_table
from audit.ingest.spec import DatasetSpec, read_spec, spec_from_dict
from audit.results import dumps

datasets = pytest.importorskip("datasets")

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TABLES = FIXTURES / "table"
WIDE, WIDE_SPEC = TABLES / "ratings_wide.csv", TABLES / "ratings_wide.yaml"
LONG = TABLES / "long.csv"


def same_table(got, want, *, index: bool = True):
    """Identical canonical tables: frame (values, dtypes, categories), scale, pools."""
    a, b = got.frame, want.frame
    if not index:
        a, b = a.reset_index(drop=True), b.reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)
    assert got.scale == want.scale
    assert got.pools == want.pools and got.judge_pools == want.judge_pools


def wide_spec_dict() -> dict:
    spec = yaml.safe_load(WIDE_SPEC.read_text())
    spec["pools"]["file"] = str(TABLES / spec["pools"]["file"])  # a dict has no folder
    return spec


def without_source(results: dict) -> dict:
    out = json.loads(json.dumps(results, default=str))
    out["meta"].pop("source")
    out["dataset"].pop("name", None)
    return out


# -- DataFrame --------------------------------------------------------------------------------------
def test_dataframe_long_is_the_csv_route():
    frame = read_table(LONG)  # the CSV as the table reader gives it
    table = audit.load(frame)
    same_table(table, audit.load(LONG))
    assert table.source == "<DataFrame>" and table.info["format"] == "table"
    assert audit.load(frame, name="reviews").name == "reviews"


def test_dataframe_with_typed_labels_is_the_parquet_route(tmp_path):
    frame = pd.DataFrame({"item": ["a", "a", "b", "b", "c", "c"], "annotator": list("xyxyxy"),
                          "label": [1, 2, 2, 2, 3, 1]})
    frame.to_parquet(tmp_path / "t.parquet")
    spec = {"label": {"kind": "ordinal", "order": [1, 2, 3]}}
    same_table(audit.load(frame, spec=spec), audit.load(tmp_path / "t.parquet", spec=spec))


@pytest.mark.parametrize("spec", [lambda: wide_spec_dict(), lambda: WIDE_SPEC,
                                  lambda: str(WIDE_SPEC), lambda: read_spec(WIDE_SPEC)],
                         ids=["dict", "path", "str", "DatasetSpec"])
def test_dataframe_wide_with_a_spec_in_every_form(spec):
    table = audit.load(read_table(WIDE), spec=spec())
    same_table(table, audit.load(WIDE, spec=WIDE_SPEC))
    assert table.name == "demo-ratings"
    assert list(table.pools) == ["crowd", "expert"]


def test_dataframe_is_not_modified():
    frame = read_table(WIDE)
    before = frame.copy()
    audit.load(frame, spec=wide_spec_dict())
    pd.testing.assert_frame_equal(frame, before)


def test_dataframe_rows_are_named_by_its_index():
    frame = pd.DataFrame({"item": ["1", "1", "1"], "annotator": ["a", "b", "a"],
                          "label": ["x", "y", "y"]}, index=["r1", "r2", "r3"])
    with pytest.raises(SchemaError, match=r"(?s)<DataFrame>: .*source row r3\)"):
        audit.load(frame)
    frame.index = [0, 0, 0]  # not unique: positions name the rows
    with pytest.raises(SchemaError, match=r"(?s)source row 0\).*source row 2\)"):
        audit.load(frame)


def test_dataframe_with_non_text_column_names():
    frame = pd.DataFrame({"item": ["1", "2", "3"], 0: ["x", "y", "x"], 1: ["y", "y", "x"]})
    table = audit.load(frame, spec={"layout": "wide", "annotator_columns": ["0", "1"]})
    assert sorted(table.frame[C.ANNOTATOR].astype(str).unique()) == ["0", "1"]
    frame.columns = ["item", "a", "a"]
    with pytest.raises(InputError, match="repeated column name.*'a'"):
        audit.load(frame, spec={"layout": "wide", "annotator_columns": ["a"]})


def test_dataframe_without_the_columns_names_them():
    frame = read_table(LONG).rename(columns={"item": "sentence"})
    with pytest.raises(InputError, match=r"cannot detect the format of this DataFrame "
                                         r"\(columns: 'sentence', 'annotator'.*spec="):
        audit.load(frame)


def test_dataframe_of_multipref_rows_is_the_jsonl_route():
    path = FIXTURES / "multipref" / "multipref_sample.jsonl"
    frame = pd.read_json(path, lines=True, dtype=False)
    table = audit.load(frame, aspect="helpful_pref")
    same_table(table, audit.load(path, aspect="helpful_pref"))
    assert table.info["format"] == "multipref"


def test_formats_that_read_their_own_files_refuse_a_dataframe():
    frame = pd.DataFrame({"idx": [1], "cmp_key": ["a_b"], "annotator1": [1]})
    with pytest.raises(InputError, match="pandalm format reads its published files") as err:
        audit.load(frame)
    assert err.value.key == "format"


def test_spark_engine_refuses_data_in_memory():
    with pytest.raises(InputError, match="engine 'spark'") as err:
        audit.load(read_table(LONG), engine="spark")
    assert err.value.key == "engine"


@pytest.mark.parametrize("source", [[{"item": 1}], pd.Series([1, 2]), 3.5, None])
def test_other_sources_are_a_type_error(source):
    with pytest.raises(TypeError, match="source must be a path, a hub name, a pandas DataFrame"):
        audit.load(source)


# -- datasets.Dataset / DatasetDict ----------------------------------------------------------------
def test_dataset_is_the_save_to_disk_route(tmp_path):
    ds = datasets.Dataset.from_pandas(read_table(LONG))
    ds.save_to_disk(str(tmp_path / "disk"))
    table = audit.load(ds)
    same_table(table, audit.load(tmp_path / "disk"))
    assert table.source == "<Dataset>" and table.info["format"] == "hf"
    same_table(table, audit.load(LONG), index=False)


def test_dataset_dict_split(tmp_path):
    frame = read_table(WIDE)
    dd = datasets.DatasetDict({"train": datasets.Dataset.from_pandas(frame.iloc[:6]),
                               "test": datasets.Dataset.from_pandas(frame.iloc[6:])})
    dd.save_to_disk(str(tmp_path / "disk"))
    for split in (None, "test"):
        got = audit.load(dd, spec=wide_spec_dict(), split=split)
        same_table(got, audit.load(tmp_path / "disk", spec=WIDE_SPEC, split=split))
    test_only = audit.load(dd, spec=wide_spec_dict(), split="test")
    assert set(test_only.frame[C.ITEM].astype(str)) == set(frame["tweet_id"].iloc[6:])
    assert test_only.info["splits"] == ["test"]
    with pytest.raises(InputError, match=r"no split 'dev'; splits present: 'train', 'test'"):
        audit.load(dd, spec=wide_spec_dict(), split="dev")


def test_mtbench_dataset_dict_is_detected_by_columns():
    folder = FIXTURES / "mtbench"
    dd = datasets.DatasetDict({
        split: datasets.Dataset.from_pandas(
            pd.read_parquet(folder / "data" / f"{split}-00000-of-00001.parquet"))
        for split in ("human", "gpt4_pair")})
    table = audit.load(dd)
    same_table(table, audit.load(folder))
    assert table.info["format"] == "mt-bench" and table.judge_pools == ("gpt-4",)
    same_table(audit.load(dd, split="human"), audit.load(folder, split="human"))


def test_multipref_dataset_is_detected_by_columns():
    path = FIXTURES / "multipref" / "multipref_sample.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    table = audit.load(datasets.Dataset.from_list(records))
    same_table(table, audit.load(path))
    assert table.info["format"] == "multipref"


# -- spec as a dict: the YAML file's checks --------------------------------------------------------
@pytest.mark.parametrize("spec, key, words", [
    ({"lable": {"kind": "ordinal"}}, "lable", "unknown key 'lable'"),
    ({"label": {"kind": "ordnial"}}, "label.kind", "must be one of"),
    ({"label": {"order": 3}}, "label.order", "must be a list"),
    ({"columns": {"item": 7}}, "columns.item", "must be text; got 7"),
    ({"layout": "wide"}, "annotator_columns", "needs annotator_columns"),
    ({"pools": {"column": "g"}}, "pools.column", "needs pools.file"),
    ({"label": {"names": ["a"]}}, "label.names", "needs label.order"),
    ({"name": object()}, "name", "must be text, a number, a list or a mapping"),
])
def test_bad_spec_dict_names_the_key(spec, key, words):
    with pytest.raises(InputError) as err:
        audit.load(read_table(LONG), spec=spec)
    assert err.value.key == key and words in str(err.value)
    assert str(err.value).startswith(f"spec, key {key!r}: ")


def test_dict_and_yaml_specs_agree(tmp_path):
    """Same keys, same result, same refusals (the message differs only by file and line)."""
    good = wide_spec_dict()
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(good))
    # the dict names the fixtures' pools file by an absolute path: outside the YAML's folder
    from_yaml = read_spec(tmp_path / "s.yaml", allow_outside=True)
    assert spec_from_dict(good) == DatasetSpec(**{**vars(from_yaml), "path": None})
    bad = {"label": {"kind": "ordinal", "order": "1,2,3"}}
    (tmp_path / "b.yaml").write_text(yaml.safe_dump(bad))
    with pytest.raises(InputError) as from_file:
        read_spec(tmp_path / "b.yaml")
    with pytest.raises(InputError) as from_dict:
        spec_from_dict(bad)
    assert from_file.value.key == from_dict.value.key == "label.order"
    assert from_file.value.message.split(": ", 1)[1] == from_dict.value.message


# -- audit.run -------------------------------------------------------------------------------------
def test_run_takes_the_load_options_and_gives_the_file_results(tmp_path):
    frame = read_table(WIDE)
    from_path = audit.run(WIDE, spec=WIDE_SPEC, n_bootstrap=20, seed=4)
    from_frame = audit.run(frame, spec=wide_spec_dict(), n_bootstrap=20, seed=4)
    assert from_path["dataset"]["label_kind"] == "ordinal"  # the spec was used, not dropped
    assert from_frame["meta"]["source"] == "<DataFrame>"
    assert without_source(from_frame) == without_source(from_path)


def test_run_on_a_dataset_dict_with_split():
    frame = read_table(WIDE)
    dd = datasets.DatasetDict({"train": datasets.Dataset.from_pandas(frame.iloc[:6]),
                               "test": datasets.Dataset.from_pandas(frame.iloc[6:])})
    res = audit.run(dd, spec=wide_spec_dict(), split="train", n_bootstrap=10)
    assert res["dataset"]["n_items"] == 6
    assert res["meta"]["source"] == "<DatasetDict>"


def test_run_keeps_load_options_for_old_callers():
    new = audit.run(LONG, pool_column="category", n_bootstrap=10)
    old = audit.run(LONG, load_options={"pool_column": "category"}, n_bootstrap=10)
    assert set(new["dataset"]["pools"]) == {"forum", "news", "review"}
    assert dumps(new) == dumps(old)  # NaN != NaN, so compare the written form


def fail(*args, **kwargs):
    raise AssertionError("work started before the keywords were checked")


def test_run_unknown_keyword_is_a_type_error_before_load(monkeypatch):
    import audit.ingest as load_pkg

    monkeypatch.setattr(load_pkg, "load", fail)
    with pytest.raises(TypeError, match="unexpected keyword argument 'sepc'"):
        audit.run(LONG, sepc="s.yaml")
    with pytest.raises(TypeError, match="unexpected keyword argument 'bootstrap'"):
        audit.run(read_table(LONG), bootstrap=10)
    with pytest.raises(TypeError, match=r"unknown load option\(s\) 'sepc'"):
        audit.run(LONG, load_options={"sepc": "s.yaml"})


def test_load_unknown_keyword_is_a_type_error_before_reading(monkeypatch):
    import audit.ingest as load_pkg

    monkeypatch.setattr(load_pkg, "wrap", fail)  # the first thing load() does
    with pytest.raises(TypeError, match="unexpected keyword argument 'sepc'"):
        audit.load(LONG, sepc="s.yaml")
    with pytest.raises(TypeError, match="unexpected keyword argument 'sepc'"):
        audit.load(read_table(LONG), sepc="s.yaml")


def test_run_accepts_every_load_option():
    """A loading option added to load() must be a keyword of run() too (and of the CLI)."""
    from audit.ingest import load
    from audit.pipeline import run

    load_options = set(inspect.signature(load).parameters) - {"source"}
    run_options = set(inspect.signature(run).parameters)
    assert load_options <= run_options, load_options - run_options
    assert audit.run is run


@pytest.mark.parametrize("call, key", [
    (lambda: audit.load(""), "source"),
    (lambda: audit.load(LONG, spec=""), "spec"),
    (lambda: audit.load(LONG, pools=""), "pools"),
    (lambda: audit.load("", engine="spark"), "source"),
    (lambda: audit.run("", report=False, n_bootstrap=10), "source"),
    (lambda: audit.run(LONG, spec="", report=False, n_bootstrap=10), "spec"),
    (lambda: audit.run(LONG, out="", report=False, n_bootstrap=10), "out"),
])
def test_an_empty_path_is_refused_as_the_cli_refuses_it(tmp_path, monkeypatch, call, key):
    """To the system '' is the current folder: audit.load("") audited whatever table was there
    (the CLI refuses it since 092069b); spec="" and pools="" were named '.'."""
    read_table(LONG).to_parquet(tmp_path / "judgments.parquet")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError) as err:
        call()
    assert err.value.key == key
    assert str(err.value) == f"key {key!r}: an empty path (an unset shell variable?)"


@pytest.mark.parametrize("call, key", [
    (lambda: audit.load("-"), "source"),
    (lambda: audit.load(LONG, spec="-"), "spec"),
    (lambda: audit.load(LONG, pools="-"), "pools"),
])
def test_a_dash_is_refused_as_the_cli_refuses_it(call, key):
    """``-`` is no file and not standard input (a source is read more than once)."""
    with pytest.raises(InputError) as err:
        call()
    assert err.value.key == key and "'-' is not standard input" in str(err.value)


def test_a_dash_is_no_output_folder_of_run(tmp_path, monkeypatch):
    """``out="-"`` wrote a folder named ``-``; the CLI refuses it as not standard output."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError) as err:
        audit.run(LONG, out="-", n_bootstrap=10)
    assert err.value.key == "out" and "'-' is not standard output" in str(err.value)
    assert not (tmp_path / "-").exists()
