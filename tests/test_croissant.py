"""``croissant.json`` (issue 15, item 3): a complete Croissant document that the reference
implementation, ``mlcroissant``, loads without errors and reads records from, offline.

Hashes are recomputed with :mod:`hashlib`, records compared with the Parquet file read by pandas,
and the RAI fields with :func:`audit.report.card.croissant_rai`.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import warnings
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from audit.cli import cli
from audit.report import croissant as CR
from audit.report.croissant import croissant_rai
from audit.results import read

mlc = pytest.importorskip("mlcroissant")

DEMO = Path(__file__).resolve().parents[1] / "data" / "pandalm" / "testset-v1.json"
FLAGS = ["--license", "apache-2.0", "--language", "en", "--tag", "preference",
         "--pretty-name", "PandaLM test set"]


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load(path: Path):
    """mlcroissant's static analysis of ``path``; any error raises ``ValidationError``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = mlc.Dataset(jsonld=str(path))
    assert ds.metadata.ctx.issues.errors == set()
    return ds


def records(ds, n: int | None = None) -> list[dict]:
    rows = ds.records("items")
    return list(rows if n is None else itertools.islice(rows, n))


def text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else value


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "out"
    result = invoke("run", DEMO, "--out", out, "--bootstrap", 20, "--quiet", *FLAGS)
    assert result.exit_code == 0, result.output
    return out


def test_demo_document_loads_in_mlcroissant_without_errors(demo):
    ds = load(demo / "croissant.json")
    warned = "\n".join(ds.metadata.ctx.issues.warnings)
    assert "license" not in warned and "@context" not in warned
    doc = json.loads((demo / "croissant.json").read_text(encoding="utf-8"))
    assert doc["@type"] == "sc:Dataset"
    assert "http://mlcommons.org/croissant/1.0" in doc["conformsTo"]
    assert (doc["name"], doc["license"], doc["inLanguage"], doc["keywords"]) == (
        "PandaLM test set", "apache-2.0", ["en"], ["preference"])
    assert doc["description"].startswith("Human annotation of PandaLM test set")


def test_context_is_the_reference_context():
    from mlcroissant._src.core.rdf import make_context

    assert CR.CONTEXT == make_context()


def test_demo_records_are_the_items_table(demo):
    ds = load(demo / "croissant.json")
    rows = records(ds)
    items = pd.read_parquet(demo / "items.parquet")
    results = read(demo / "results.json")
    assert len(rows) == len(items) == results["dataset"]["n_items"] == 999
    doc = json.loads((demo / "croissant.json").read_text(encoding="utf-8"))
    fields = doc["recordSet"][0]["field"]
    assert [f["name"] for f in fields] == list(items.columns)
    for f in fields:
        got = [text(r[f["@id"]]) for r in rows]
        want = items[f["name"]].astype(object).where(items[f["name"]].notna(), None).tolist()
        if f["dataType"] == "sc:Float":
            assert got == pytest.approx(want, nan_ok=True)
        else:
            assert got == [str(w) if f["dataType"] == "sc:Text" and w is not None else w
                           for w in want], f["name"]


def test_distribution_hashes_and_formats(demo):
    doc = json.loads((demo / "croissant.json").read_text(encoding="utf-8"))
    by_name = {d["name"]: d for d in doc["distribution"]}
    assert set(by_name) == {"testset-v1.json", "items.parquet"}
    assert by_name["testset-v1.json"]["sha256"] == sha256(DEMO)
    assert by_name["testset-v1.json"]["encodingFormat"] == "application/json"
    assert by_name["items.parquet"]["sha256"] == sha256(demo / "items.parquet")
    assert by_name["items.parquet"]["encodingFormat"] == "application/x-parquet"
    assert by_name["items.parquet"]["contentSize"] == f"{(demo / 'items.parquet').stat().st_size} B"
    assert all(d["@type"] == "cr:FileObject" and d["contentUrl"] == d["name"]
               and not Path(d["contentUrl"]).is_absolute() for d in doc["distribution"])
    manifest = json.loads((demo / "manifest.json").read_text())
    assert manifest["files"]["croissant.json"]["sha256"] == sha256(demo / "croissant.json")


def test_rai_fields_are_the_croissant_rai_fields(demo):
    doc = json.loads((demo / "croissant.json").read_text(encoding="utf-8"))
    rai = croissant_rai(read(demo / "results.json"))
    assert {k: v for k, v in doc.items() if k.startswith("rai:")} == \
        {k: v for k, v in rai.items() if k.startswith("rai:")}
    assert doc["rai:dataLimitations"] and doc["rai:annotationsPerItem"]


def test_folder_source_lists_its_files_relative_and_skips_hidden(tmp_path):
    from audit.outputs import find_inputs

    (tmp_path / "d" / "sub").mkdir(parents=True)
    (tmp_path / "d" / ".git").mkdir()
    (tmp_path / "d" / "a.csv").write_text("x")
    (tmp_path / "d" / "sub" / "b.parquet").write_text("y")
    (tmp_path / "d" / ".git" / "HEAD").write_text("z")
    (tmp_path / "d" / ".hidden").write_text("z")
    got = CR.source_files(find_inputs(tmp_path / "d"))
    assert [name for name, _ in got] == ["a.csv", "sub/b.parquet"]


# -- hostile names cannot break the JSON-LD --------------------------------------------------------
HOSTILE_POOLS = ['cr"owd', "ex\n---\npert", "@id", "items/c0", "a: b", "</script>"]


def test_hostile_pool_names_stay_data(tmp_path):
    import csv

    src = tmp_path / "t.csv"
    with src.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["item", "annotator", "pool", "label"])
        for i in range(8):
            for j, pool in enumerate(HOSTILE_POOLS[:3]):
                for k in range(2):
                    w.writerow([i, f"{pool}-{k}", pool, "xy"[(i + j + k) % 2]])
    out = tmp_path / "o"
    result = invoke("run", src, "--out", out, "--bootstrap", 5, "--quiet",
                    "--pretty-name", 'n"a}me')
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "croissant.json").read_text(encoding="utf-8"))
    assert doc["name"] == 'n"a}me'
    sets = {r["@id"]: r for r in doc["recordSet"]}
    fields = sets["items"]["field"]
    ids = [f["@id"] for f in fields]
    assert len(set(ids)) == len(ids) and all(i.startswith("items/c") for i in ids)
    items = pd.read_parquet(out / "items.parquet")
    assert [f["name"] for f in fields] == list(items.columns)
    assert any("ex\n---\npert" in f["name"] for f in fields)
    ds = load(out / "croissant.json")
    rows = records(ds)
    assert len(rows) == 8
    (tmp_path / "croissant.json").write_text((out / "croissant.json").read_text("utf-8"))
    judged = list(load(tmp_path / "croissant.json").records("judgments"))
    assert [text(r["judgments/pool"]) for r in judged] == \
        pd.read_csv(src, dtype=str, keep_default_na=False)["pool"].tolist()
    assert "ex\n---\npert" in {text(r["judgments/pool"]) for r in judged}
    col = next(f for f in fields if f["name"] == 'cr"owd:majority')
    assert [text(r[col["@id"]]) for r in rows] == \
        items['cr"owd:majority'].astype(object).where(items['cr"owd:majority'].notna(),
                                                       None).tolist()


# -- the judgments record set of a long table ------------------------------------------------------
def test_long_csv_source_has_a_judgments_record_set(tmp_path):
    import shutil

    repo = Path(__file__).resolve().parents[1] / "data" / "wmt23_zhen_mqm"
    data = tmp_path / "repo"
    data.mkdir()
    for name in ("wmt23_zhen_mqm.csv", "wmt23_zhen_mqm.yaml"):
        shutil.copy(repo / name, data / name)
    out = tmp_path / "o"
    result = invoke("run", data / "wmt23_zhen_mqm.csv", "--spec", data / "wmt23_zhen_mqm.yaml",
                    "--out", out, "--bootstrap", 5, "--quiet", "--no-report")
    assert result.exit_code == 0, result.output
    assert not (out / "croissant.json").exists()  # --no-report: results.json only
    result = invoke("run", data / "wmt23_zhen_mqm.csv", "--spec", data / "wmt23_zhen_mqm.yaml",
                    "--out", out, "--bootstrap", 5, "--quiet")
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "croissant.json").read_text(encoding="utf-8"))
    judgments = next(r for r in doc["recordSet"] if r["@id"] == "judgments")
    names = [f["name"] for f in judgments["field"]]
    assert names == ["item", "annotator", "pool", "label", "model"]
    assert next(f for f in judgments["field"] if f["name"] == "label")["dataType"] == "sc:Float"
    # published beside the data, as in a dataset repository
    (data / "croissant.json").write_text((out / "croissant.json").read_text(encoding="utf-8"))
    rows = list(load(data / "croissant.json").records("judgments"))
    frame = pd.read_csv(data / "wmt23_zhen_mqm.csv", dtype=str)
    assert len(rows) == len(frame)
    for name in names:
        got = [text(r[f"judgments/{name}"]) for r in rows]
        want = frame[name].tolist()
        if name == "label":
            assert got == pytest.approx([float(x) for x in want])
        else:
            assert got == want


def test_no_judgments_record_set_for_an_adapter_format(demo):
    doc = json.loads((demo / "croissant.json").read_text(encoding="utf-8"))
    assert [r["@id"] for r in doc["recordSet"]] == ["items"]
