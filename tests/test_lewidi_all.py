"""Every LeWiDi set in ../shared/data, with every annotator-metadata field as pools, end to end
(issue 12, item 8(c)).

For each set and each pool source (the data's own groups, then each field of its
``*_annotators_meta.json``) the whole audit runs (:func:`audit.run`, 20 bootstrap resamples, no
report) and its ``dataset`` block is compared pool by pool with counts made here from the raw JSON
by plain ``json.load``: items, judgments and annotators per pool, and a pool ``unknown`` holding
exactly the judgments of annotators the metadata lacks. The same matrix is loaded once more with
``min_pool_annotators=2``: nothing dropped, ``unknown`` unchanged, and the folded judgments
exactly those of the pools (counted here) held by one annotator or named by a placeholder.

The full matrix runs (16 audits, 16 folded loads): measured at 15 s of test time on the shared
2-core project machine (``pytest --durations``), a third of it the audit of CSC by ``Age``
(63 pools, most held by one annotator), kept because it is the case with the most tiny pools.
"""

from __future__ import annotations

import json
import re
import warnings
from collections import defaultdict

import pytest

import audit
from audit.contract import columns as C
from audit.ingest import LoadWarning, load
from conftest import SHARED_DATA, shared_data

SPLITS = ("train", "dev", "test")
SETS = {"lewidi2023/HS-Brexit": (), "lewidi2023/MD-Agreement": (), "lewidi2023/ConvAbuse": (),
        "lewidi2025/CSC": ("Age", "Gender"),
        "lewidi2025/Paraphrase": ("Age", "Education", "Gender", "Nationality"),
        "lewidi2025/VariErrNLI": ("Age", "Education", "Gender", "Nationality")}
CASES = [(folder, None) for folder in SETS] + [
    (folder, field) for folder, fields in SETS.items() for field in fields]
PLACEHOLDERS = {"", "nan", "none", "null", "na", "n/a", "data_expired", "consent_revoked",
                "missing"}


def meta_file(folder: str):
    found = sorted(shared_data(folder).glob("*_annotators_meta.json"))
    return found[0] if found else None


def read_meta(path) -> dict:
    return json.loads(re.sub(r",(\s*[}\]])", r"\1", path.read_text(encoding="utf-8")))


def raw_judgments(folder: str) -> dict:
    """{(item, annotator): group or None} from the raw files; a repeated judgment counts once."""
    out = {}
    for path in sorted(shared_data(folder).glob("*.json")):
        m = re.match(r"(.+)_(train|dev|test)\.json$", path.name)
        if not m:
            continue
        for key, rec in json.loads(path.read_text(encoding="utf-8")).items():
            info = rec.get("other_info") or {}
            if isinstance(rec["annotations"], dict):
                anns = list(rec["annotations"])
            else:
                anns = rec["annotators"].split(",")
            groups = info.get("annotators group")
            groups = [info[g] for g in groups.split(",")] if groups else [None] * len(anns)
            for ann, group in zip(anns, groups):
                out[(f"{m.group(2)}/{key}", ann)] = group
    return out


def expected_pools(folder: str, field: str | None) -> tuple[dict, int]:
    """{pool: (items, judgments, annotators)} and the judgments of annotators the metadata lacks."""
    raw = raw_judgments(folder)
    meta = read_meta(meta_file(folder)) if field else {}

    def pool(ann, group):
        if field is None:
            return group if group is not None else C.DEFAULT_POOL
        if ann not in meta:
            return "unknown"
        value = str(meta[ann].get(field) or "").strip()
        return "missing" if value.casefold() in ("", "nan") else value  # CSC writes 'nan'

    stats = defaultdict(lambda: (set(), [0], set()))
    for (item, ann), group in raw.items():
        items, n, anns = stats[pool(ann, group)]
        items.add(item)
        n[0] += 1
        anns.add(ann)
    absent = sum(1 for (_, ann) in raw if field and ann not in meta)
    return {p: (len(i), n[0], len(a)) for p, (i, n, a) in stats.items()}, absent


def options(folder: str, field: str | None) -> dict:
    return {} if field is None else {"pools": meta_file(folder), "pool_column": field}


def test_the_matrix_covers_every_set_and_every_metadata_field():
    for year in ("lewidi2023", "lewidi2025"):
        shared_data(year)
    found = {}
    for folder in sorted(p for year in ("lewidi2023", "lewidi2025")
                         for p in (SHARED_DATA / year).iterdir() if p.is_dir()):
        rel = folder.relative_to(SHARED_DATA).as_posix()
        meta = meta_file(rel)
        found[rel] = tuple(sorted({f for v in read_meta(meta).values() for f in v})) if meta else ()
    assert found == SETS


@pytest.mark.parametrize("folder, field", CASES, ids=[f"{f}-{c or 'data'}" for f, c in CASES])
def test_audit_runs_with_the_pools_the_metadata_implies(folder, field):
    expected, absent = expected_pools(folder, field)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LoadWarning)
        results = audit.run(shared_data(folder), n_bootstrap=20, report=False,
                            load_options=options(folder, field))
    got = {p: (v["n_items"], v["n_annotations"], v["n_annotators"])
           for p, v in results["dataset"]["pools"].items()}
    assert got == expected
    assert got.get("unknown", (0, 0, 0))[1] == absent
    assert results["dataset"]["n_annotations"] == sum(n for _, n, _ in expected.values())
    assert results["reliability"]


@pytest.mark.parametrize("folder, field", CASES, ids=[f"{f}-{c or 'data'}" for f, c in CASES])
def test_folding_tiny_pools_drops_nothing(folder, field):
    expected, absent = expected_pools(folder, field)
    to_fold = {p for p, (_, _, k) in expected.items()
               if p != "unknown" and (k < 2 or p.casefold() in PLACEHOLDERS)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LoadWarning)
        table = load(shared_data(folder), min_pool_annotators=2, **options(folder, field))
    per_pool = table.frame[C.POOL].astype(str).value_counts().to_dict()
    assert len(table.frame) == sum(n for _, n, _ in expected.values())
    assert per_pool.get("unknown", 0) == absent
    report = table.info["pools_folded"]
    assert {f["pool"] for f in report["pools"]} == to_fold
    assert report["n_judgments"] == sum(expected[p][1] for p in to_fold)
    assert per_pool.get("other", 0) == report["n_judgments"]
    for p in set(per_pool) - {"other", "unknown"}:
        assert expected[p][2] >= 2 and p.casefold() not in PLACEHOLDERS
