"""Generic ``datasets`` sources: save_to_disk folders (built here from fixtures), hub-download folders."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from audit.contract import columns as C
from audit.errors import InputError
from audit.ingest import detect_format, load
from audit.ingest.readers import read_table

datasets = pytest.importorskip("datasets")

TABLES = Path(__file__).resolve().parent / "fixtures" / "table"


def canon(table):
    f = table.frame
    return sorted(zip(f[C.ITEM].astype(str), f[C.ANNOTATOR].astype(str), f[C.POOL].astype(str),
                      f[C.LABEL].astype(str)))


def test_save_to_disk_with_canonical_columns(tmp_path):
    frame = read_table(TABLES / "long.csv")
    out = tmp_path / "long_disk"
    datasets.Dataset.from_pandas(frame).save_to_disk(str(out))
    assert detect_format(out) == "hf"
    table = load(out)
    assert canon(table) == canon(load(TABLES / "long.csv"))
    assert table.info["format"] == "hf"
    assert table.frame.index[0] == "train/0"


def test_save_to_disk_dataset_dict_with_a_spec(tmp_path):
    frame = read_table(TABLES / "ratings_wide.csv")
    dd = datasets.DatasetDict({"train": datasets.Dataset.from_pandas(frame.iloc[:6]),
                               "test": datasets.Dataset.from_pandas(frame.iloc[6:])})
    out = tmp_path / "wide_disk"
    dd.save_to_disk(str(out))
    spec = TABLES / "ratings_wide.yaml"
    table = load(out, spec=spec)
    assert canon(table) == canon(load(TABLES / "ratings_wide.csv", spec=spec))
    test_only = load(out, spec=spec, split="test")
    assert set(test_only.frame[C.ITEM].astype(str)) == set(frame["tweet_id"].iloc[6:])
    with pytest.raises(InputError, match=r"no split 'dev'.*'train', 'test'"):
        load(out, spec=spec, split="dev")


def test_hub_download_folder_of_parquet(tmp_path):
    frame = read_table(TABLES / "long.csv")
    (tmp_path / "data").mkdir()
    frame.iloc[:9].to_parquet(tmp_path / "data" / "train-00000-of-00001-abc123.parquet")
    frame.iloc[9:].to_parquet(tmp_path / "data" / "test-00000-of-00001-def456.parquet")
    assert detect_format(tmp_path) == "hf"
    table = load(tmp_path)
    assert canon(table) == canon(load(TABLES / "long.csv"))
    assert sorted(table.info["splits"]) == ["test", "train"]


def test_unknown_hub_name_offline(monkeypatch):
    monkeypatch.setattr(datasets, "load_dataset",
                        lambda *a, **k: (_ for _ in ()).throw(ConnectionError("offline")))
    assert detect_format("someone/some-ratings") == "hf"
    with pytest.raises(InputError, match=r"(?s)'someone/some-ratings'.*hub.*local path"):
        load("someone/some-ratings")


def test_folder_without_data(tmp_path):
    (tmp_path / "notes.md").write_text("nothing here")
    with pytest.raises(InputError, match="cannot detect the format"):
        load(tmp_path)
    with pytest.raises(InputError, match="no data files"):
        load(tmp_path, format="hf")


def test_hub_folder_with_jsonl(tmp_path):
    frame = read_table(TABLES / "long.csv")
    frame.to_json(tmp_path / "train.jsonl", orient="records", lines=True)
    assert detect_format(tmp_path) == "hf"
    assert canon(load(tmp_path)) == canon(load(TABLES / "long.csv"))
    assert isinstance(read_table(tmp_path / "train.jsonl"), pd.DataFrame)
