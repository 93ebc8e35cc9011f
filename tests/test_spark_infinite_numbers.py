"""JSON ``Infinity`` / ``-Infinity`` (Python's ``json`` writes them, pandas and Spark read them)
in a typed label or id column: the pandas engine reads them as ``inf`` / ``-inf``. Spark's
job failed (exit 2, "Spark failed ... [ARITHMETIC_OVERFLOW]", a Java stack trace logged on the
terminal): the label's whole-number test took ``floor`` of every double before its bound, and
an infinite double's floor overflows a long under ANSI mode. Now both engines read alike; ids
(and fields mixing types, read as variants) check the bound first and read alike already."""

from __future__ import annotations

import json
import warnings

import pytest

from audit.contract import columns as C
from audit.ingest import load

pytestmark = pytest.mark.spark


def _write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _read(path, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = load(path, **options)
    f = table.frame
    return sorted(zip(f[C.ITEM].astype(str), f[C.ANNOTATOR].astype(str),
                      (str(table.scale.values[c]) for c in table.label_codes)))


@pytest.mark.parametrize("labels", [
    [1.5, 2.0, float("inf"), float("-inf")],     # a double column: label_text
    [1, "two", float("inf"), float("-inf")],     # a field mixing types: a variant
])
def test_infinite_labels_read_alike_on_both_engines(spark, tmp_path, labels):
    records = [{"item": f"q{i // 2}", "annotator": f"a{i % 2}", "label": v}
               for i, v in enumerate(labels * 2)]
    src = _write(tmp_path / "t.jsonl", records)
    ours = _read(src, engine="spark")
    assert ours == _read(src)
    assert {"inf", "-inf"} <= {v for _, _, v in ours}


@pytest.mark.parametrize("items", [
    [1.5, float("inf"), float("-inf"), 2.0],
    [1, "q", float("inf"), float("-inf")],
])
def test_infinite_ids_read_alike_on_both_engines(spark, tmp_path, items):
    records = [{"item": v, "annotator": a, "label": i % 3}
               for i, v in enumerate(items) for a in ("x", "y")]
    src = _write(tmp_path / "t.jsonl", records)
    ours = _read(src, engine="spark")
    assert ours == _read(src)
    assert {"inf", "-inf"} <= {i for i, _, _ in ours}
