"""``export`` keeps the record of the judgments its source's reading dropped.

MD-Agreement's test split lists one annotator twice on one item; the LeWiDi adapter keeps the
last and counts the other in results.json ``dataset.rows_dropped``. The export wrote the 53,764
judgments kept and nothing about the one dropped, so auditing the export reported
``rows_read`` 53,764 and no ``rows_dropped``: the record was lost. ``spec.yaml`` now carries
``dropped_before_export`` (rule and count), which loading the export counts as read and
dropped, on both engines, so the two audits' ``dataset`` blocks agree; ``export`` says so.
"""

from __future__ import annotations

import json
import warnings

import pytest
import yaml
from click.testing import CliRunner

from audit.cli import cli
from audit.ingest import load
from conftest import shared_data


def quiet_load(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load(*args, **kwargs)


def counts(table) -> dict:
    summary = table.summary()
    return {k: summary[k] for k in ("rows_read", "rows_dropped", "n_annotations")}


def repeated_lewidi(folder):
    """A LeWiDi 2023 file listing Ann2 twice on item 2, as MD-Agreement's test split does."""
    records = {"1": {"text": "a", "annotation task": "offensiveness detection",
                     "annotators": "Ann1,Ann2,Ann3", "annotations": "0,1,1"},
               "2": {"text": "b", "annotation task": "offensiveness detection",
                     "annotators": "Ann1,Ann2,Ann2", "annotations": "1,0,1"}}
    folder.mkdir()
    path = folder / "Toy_test.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def export(source, out):
    result = CliRunner().invoke(cli, ["export", str(source), str(out)])
    assert result.exit_code == 0, result.output
    return result


def test_the_export_counts_what_its_source_dropped(tmp_path):
    source = repeated_lewidi(tmp_path / "src")
    result = export(source, tmp_path / "out")
    assert ("the 1 judgment(s) that reading SOURCE dropped are counted in its "
            "dropped_before_export") in result.stdout
    spec_path = tmp_path / "out" / "spec.yaml"
    spec = yaml.safe_load(spec_path.read_text(encoding="utf-8"))
    original = quiet_load(source)
    assert spec["dropped_before_export"] == original.summary()["rows_dropped"] == [
        {"rule": original.summary()["rows_dropped"][0]["rule"], "n": 1}]
    again = quiet_load(tmp_path / "out" / "judgments", spec=spec_path)
    assert counts(again) == counts(original) == {
        "rows_read": 6, "rows_dropped": original.summary()["rows_dropped"], "n_annotations": 5}


def test_exporting_the_export_keeps_the_count_once(tmp_path):
    source = repeated_lewidi(tmp_path / "src")
    export(source, tmp_path / "one")
    result = CliRunner().invoke(cli, ["export", str(tmp_path / "one" / "judgments"),
                                      str(tmp_path / "two"), "--spec",
                                      str(tmp_path / "one" / "spec.yaml")])
    assert result.exit_code == 0, result.output
    twice = quiet_load(tmp_path / "two" / "judgments", spec=tmp_path / "two" / "spec.yaml")
    assert counts(twice) == counts(quiet_load(source))


def test_a_source_that_dropped_nothing_writes_no_such_key(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("item,annotator,label\n1,a,x\n1,b,y\n2,a,x\n2,b,x\n", encoding="utf-8")
    result = export(path, tmp_path / "out")
    assert "dropped_before_export" not in result.stdout
    assert "dropped_before_export" not in (tmp_path / "out" / "spec.yaml").read_text()


@pytest.mark.parametrize("entry, words", [
    ("[{rule: r, n: -1}]", "dropped_before_export"),
    ("[{rule: r}]", "dropped_before_export"),
    ("[{n: 1}]", "dropped_before_export"),
    ("{rule: r, n: 1}", "dropped_before_export"),
])
def test_a_bad_entry_is_exit_2_naming_the_key(tmp_path, entry, words):
    path = tmp_path / "t.csv"
    path.write_text("item,annotator,label\n1,a,x\n1,b,y\n", encoding="utf-8")
    spec = tmp_path / "s.yaml"
    spec.write_text(f"dropped_before_export: {entry}\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["validate", str(path), "--spec", str(spec)])
    assert result.exit_code == 2
    assert words in result.output and "Traceback" not in result.output


def test_md_agreement_export_reports_the_repeated_judgment(tmp_path):
    source = shared_data("lewidi2023/MD-Agreement")
    original = quiet_load(source)
    assert original.summary()["rows_dropped"][0]["n"] == 1
    export(source, tmp_path / "out")
    again = quiet_load(tmp_path / "out" / "judgments", spec=tmp_path / "out" / "spec.yaml")
    assert counts(again) == counts(original)


def test_the_spark_engine_counts_them_alike(spark, tmp_path):
    source = repeated_lewidi(tmp_path / "src")
    export(source, tmp_path / "out")
    on_spark = quiet_load(str(tmp_path / "out" / "judgments"),
                          spec=tmp_path / "out" / "spec.yaml", engine="spark")
    assert counts(on_spark) == counts(quiet_load(source))
