"""Conservation: every judgment read is audited or dropped by a counted, documented rule, and a
judgment lost anywhere between reading and encoding is an internal error (exit 3)."""

from __future__ import annotations

import csv
import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from audit.contract import columns as C
from audit.cli import cli
from audit.errors import AuditError, InternalError
from audit.ingest import load
from audit.ingest.adapters import table as table_adapter
from audit.ingest.common import REPEATED_RULE
from audit.ingest.adapters.multipref import NOT_A_RECORD_RULE
from audit.ingest.adapters.table import EMPTY_CELL_RULE
from tests.conftest import REPO, shared_data

FIXTURES = Path(__file__).resolve().parent / "fixtures"
WIDE, WIDE_SPEC = FIXTURES / "table" / "ratings_wide.csv", FIXTURES / "table" / "ratings_wide.yaml"
LONG = FIXTURES / "table" / "long.csv"
MTBENCH = FIXTURES / "mtbench"
MULTIPREF = FIXTURES / "multipref" / "multipref_sample.jsonl"
PANDALM = REPO / "data" / "pandalm" / "testset-v1.json"


def quiet_load(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load(*args, **kwargs)


def accounts(table) -> tuple[int, list, int]:
    summary = table.summary()
    read, dropped, audited = summary["rows_read"], summary["rows_dropped"], summary["n_annotations"]
    assert read - sum(d["n"] for d in dropped) == audited == len(table.frame)
    return read, dropped, audited


def test_internal_error_is_exit_3_and_an_audit_error():
    assert issubclass(InternalError, AuditError) and InternalError.exit_code == 3


def test_long_table_reads_every_row():
    n_rows = len(list(csv.DictReader(open(LONG, encoding="utf-8"))))
    assert accounts(quiet_load(LONG)) == (n_rows, [], n_rows)


def test_wide_table_counts_its_empty_cells():
    rows = list(csv.DictReader(open(WIDE, encoding="utf-8")))
    cells = [row[r] for row in rows for r in ("r1", "r2", "r3")]
    empty = sum(c == "" for c in cells)
    assert empty > 0
    assert accounts(quiet_load(WIDE, spec=WIDE_SPEC)) == (
        len(cells), [{"rule": EMPTY_CELL_RULE, "n": empty}], len(cells) - empty)


def test_mtbench_counts_its_repeated_judgments():
    raw = pd.concat([pd.read_parquet(p) for p in sorted((MTBENCH / "data").glob("*.parquet"))])
    judge = raw["judge"].map(lambda j: str(list(j)) if not isinstance(j, str) else j)
    pair = [tuple(sorted(p)) for p in zip(raw["model_a"], raw["model_b"])]
    keys = set(zip(raw["question_id"], raw["turn"], pair, judge))
    repeats = len(raw) - len(keys)
    assert repeats > 0
    assert accounts(quiet_load(MTBENCH)) == (
        len(raw), [{"rule": REPEATED_RULE, "n": repeats}], len(keys))


def test_multipref_counts_entries_that_are_not_records(tmp_path):
    rows = [json.loads(line) for line in MULTIPREF.read_text().splitlines() if line.strip()]
    rows[0]["normal_worker_annotations"].append(None)        # an entry that is no judgment
    rows[1]["expert_worker_annotations"] = []                  # a pool with no annotations
    src = tmp_path / "mp.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    entries = sum(len(r.get(col) or []) for r in rows
                  for col in ("normal_worker_annotations", "expert_worker_annotations"))
    assert accounts(quiet_load(src)) == (
        entries, [{"rule": NOT_A_RECORD_RULE, "n": 1}], entries - 1)


def test_pandalm_reads_three_judgments_per_record():
    records = json.loads(PANDALM.read_text())
    n = sum(1 for r in records for k in r if k.startswith("annotator"))
    assert accounts(quiet_load(PANDALM)) == (n, [], n) and n == 2997


def test_lewidi_counts_the_repeated_judgment():
    table = quiet_load(shared_data("lewidi2023/MD-Agreement"), split="test")
    read, dropped, audited = accounts(table)
    assert dropped == [{"rule": REPEATED_RULE, "n": 1}] and read == audited + 1


def test_a_subset_still_adds_up():
    table = quiet_load(WIDE, spec=WIDE_SPEC)
    for pool in table.pools:
        read, dropped, audited = accounts(table.pool(pool))
        assert read == table.summary()["rows_read"]
        assert dropped[-1] == {"rule": f"not in pool {pool!r}", "n": len(table.frame) - audited}


# -- a lost judgment is an internal error ---------------------------------------------------------
def test_an_uncounted_drop_is_an_internal_error(monkeypatch, tmp_path):
    melt = table_adapter._melt

    def leaky_melt(*args, **kwargs):
        return melt(*args, **kwargs).iloc[1:]   # one judgment lost, no rule counts it

    monkeypatch.setattr(table_adapter, "_melt", leaky_melt)
    rows = list(csv.DictReader(open(WIDE, encoding="utf-8")))
    cells = [row[r] for row in rows for r in ("r1", "r2", "r3")]
    empty = cells.count("")
    with pytest.raises(InternalError, match=rf"{len(cells)} read, {empty} dropped .* "
                                            rf"{len(cells) - empty - 1} validated"):
        quiet_load(WIDE, spec=WIDE_SPEC)
    result = CliRunner().invoke(cli, ["validate", str(WIDE), "--spec", str(WIDE_SPEC)])
    assert result.exit_code == 3, result.output
    assert "bug in annotation-audit" in result.output and "Traceback" not in result.output


def test_a_validated_label_that_loses_its_code_is_an_internal_error(monkeypatch):
    """The failure the issue found: a label passes validation and is then encoded as missing."""
    from audit.contract import schema
    from audit.contract.schema import Coded

    validate = schema.validate_raw

    def losing_validate(*args, **kwargs):
        coded = validate(*args, **kwargs)
        codes = np.asarray(coded.label.codes).copy()
        codes[0] = -1
        label = pd.Categorical.from_codes(codes, dtype=coded.label.dtype)
        return Coded(ids=coded.ids, label=label)

    monkeypatch.setattr(schema, "validate_raw", losing_validate)
    with pytest.raises(InternalError, match=r"2997 validated, 2996 encoded"):
        quiet_load(PANDALM)


def test_build_table_without_counts_takes_the_rows_it_is_given():
    from audit.contract.labels import LabelKind, LabelScale
    from audit.contract.table import build_table

    raw = pd.DataFrame({C.ITEM: [1, 1, 2], C.ANNOTATOR: ["a", "b", "a"], C.LABEL: ["x", "y", "x"]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = build_table(raw, LabelScale(LabelKind.NOMINAL, ("x", "y")), name="t", source="t")
        assert accounts(table) == (3, [], 3)
        with pytest.raises(InternalError, match="5 read, 1 dropped"):
            build_table(raw, table.scale, name="t", source="t",
                        info={"rows_read": 5, "dropped": [{"rule": "r", "n": 1}]})
        build_table(raw, table.scale, name="t", source="t",
                    info={"rows_read": 5, "dropped": [{"rule": "r", "n": 2}]})
