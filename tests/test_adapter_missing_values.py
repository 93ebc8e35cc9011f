"""A missing value in a named format's source is missing, never the text ``nan`` or ``None``.

Each adapter used to write some ids with ``astype(str)`` / ``str()``: an MT-Bench row with no
``model_a`` was a model named ``None`` and one with no ``question_id`` an item ``qnan/...``, a
MultiPref record with no ``comparison_id`` an item ``None``, a PandaLM record with no ``idx``
an item ``nan`` (and every other ``idx`` of that float column ``1.0``, not ``1``), a LeWiDi
2025 null annotation the label ``'None'`` and a NaN ``domain`` the category ``nan``. Each is
now read as missing: a missing id or label is exit 2 naming the record (the schema's not-null
check, as for a table), a missing category no category.
"""

from __future__ import annotations

import json
import shutil
import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from audit.cli import cli
from audit.contract import columns as C
from audit.errors import SchemaError
from audit.ingest import LoadWarning, load
from conftest import REPO

FIXTURES = REPO / "tests" / "fixtures"

MTBENCH = FIXTURES / "mtbench" / "data" / "human-00000-of-00001.parquet"
MULTIPREF = FIXTURES / "multipref" / "multipref_sample.jsonl"


def refused(path, fmt, *words):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LoadWarning)
        with pytest.raises(SchemaError) as err:
            load(path, format=fmt)
    message = str(err.value)
    assert "'nan'" not in message and "'None'" not in message
    for word in words:
        assert word in message
    return message


def mtbench_copy(tmp_path, change):
    frame = pd.read_parquet(MTBENCH)
    change(frame)
    (tmp_path / "data").mkdir()
    frame.to_parquet(tmp_path / "data" / MTBENCH.name)
    return tmp_path


def test_mtbench_row_without_a_model_is_refused_not_a_model_named_none(tmp_path):
    def no_model(frame):
        frame.loc[0, "model_a"] = None
    refused(mtbench_copy(tmp_path, no_model), "mt-bench",
            "column 'model_a': not null failed", "column 'item': not null failed",
            "source row human/0")


def test_mtbench_row_without_a_question_is_refused_not_item_qnan(tmp_path):
    def no_question(frame):
        frame["question_id"] = frame["question_id"].astype(float)
        frame.loc[3, "question_id"] = np.nan
    refused(mtbench_copy(tmp_path, no_question), "mt-bench",
            "column 'item': not null failed", "source row human/3")


def test_mtbench_judge_list_with_a_null_part_is_refused_not_a_judge_named_none(tmp_path):
    """A judge written ["gpt-4", null] (the string form as the published split writes it, or
    a list) was the annotator 'gpt-4/None' of the pool gpt-4: a judge nobody named. Which
    judge it was is not known, so the judgment has no annotator and is refused by its row,
    as a missing id is."""
    gpt4 = FIXTURES / "mtbench" / "data" / "gpt4_pair-00000-of-00001.parquet"
    for written in ("['gpt-4', None]", "[None, 'pair-v2']"):
        frame = pd.read_parquet(gpt4)
        frame.loc[2, "judge"] = written
        folder = tmp_path / f"j{len(list(tmp_path.iterdir()))}"
        (folder / "data").mkdir(parents=True)
        frame.to_parquet(folder / "data" / gpt4.name)
        pd.read_parquet(MTBENCH).to_parquet(folder / "data" / MTBENCH.name)
        message = refused(folder, "mt-bench", "column 'annotator': not null failed",
                          "source row gpt4_pair/2")
        assert "gpt-4/None" not in message


def test_mtbench_float_question_ids_are_the_integer_ids(tmp_path):
    def as_float(frame):
        frame["question_id"] = frame["question_id"].astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LoadWarning)
        typed = load(mtbench_copy(tmp_path, as_float), format="mt-bench")
        shutil.rmtree(tmp_path / "data")
        plain = load(mtbench_copy(tmp_path, lambda f: None), format="mt-bench")
    assert sorted(typed.frame[C.ITEM].astype(str)) == sorted(plain.frame[C.ITEM].astype(str))
    assert not typed.frame[C.ITEM].astype(str).str.startswith("qnan").any()


def test_multipref_record_without_an_id_is_refused_by_its_place(tmp_path):
    rows = [json.loads(line) for line in MULTIPREF.read_text(encoding="utf-8").splitlines()]
    rows[2]["comparison_id"] = None
    path = tmp_path / "mp.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    refused(path, "multipref", "column 'item': not null failed", "record 3 (no comparison_id)")


def pandalm(tmp_path, idx):
    records = [{"idx": i, "cmp_key": "m1_m2", "annotator1": 1, "annotator2": 2, "annotator3": 0}
               for i in idx]
    path = tmp_path / "pandalm.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def test_pandalm_record_without_idx_is_refused_by_its_place(tmp_path):
    refused(pandalm(tmp_path, [1, None, 3]), "pandalm", "column 'item': not null failed",
            "record 2 (no idx)")


def test_pandalm_idx_beside_a_null_is_the_integer_id(tmp_path):
    """A JSON ``idx`` column that also holds a null is read as floats: ``1.0`` is the id ``1``
    (audit.contract.ids), as it is without the null."""
    table = load(pandalm(tmp_path, [1, 2.0, 3]), format="pandalm")
    assert set(table.frame[C.ITEM].astype(str)) == {"1", "2", "3"}


def lewidi(tmp_path, records):
    path = tmp_path / "Toy_dev.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def rec(annotations, other_info=None):
    return {"text": "t", "annotation task": "sarcasm detection",
            "annotators": ",".join(annotations), "annotations": annotations,
            "other_info": other_info or {}}


def test_lewidi_null_annotation_is_a_missing_label_not_the_label_none(tmp_path):
    path = lewidi(tmp_path, {"1": rec({"Ann1": 1, "Ann2": None}), "2": rec({"Ann1": 2, "Ann2": 3})})
    refused(path, "lewidi", "column 'label': not null failed", "source row dev/1")
    result = CliRunner().invoke(cli, ["validate", str(path)])
    assert result.exit_code == 2 and "not null" in result.output


def test_lewidi_missing_domain_is_no_category(tmp_path):
    path = tmp_path / "Toy_dev.json"
    records = {"1": rec({"Ann1": 1, "Ann2": 2}, {"domain": float("nan")}),
               "2": rec({"Ann1": 2, "Ann2": 3}, {"domain": "news"})}
    path.write_text(json.dumps(records), encoding="utf-8")   # json writes NaN, Python reads it
    table = load(path)
    category = table.frame.set_index(C.ITEM)[C.CATEGORY]
    assert category["dev/2"].unique().tolist() == ["news"]
    assert category["dev/1"].isna().all()
