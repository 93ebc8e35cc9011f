"""A table of vote counts per item (``label.from_counts``, :mod:`audit.ingest.label_counts`):
how many raters chose each outcome, not who chose it.

Each count table is checked against the same votes written as a long table, one row per vote
by an annotator of its own: every statistic that does not need to know who voted has the same
``results.json`` entry, bit for bit, at the same seed; those that need it are NaN with the
reason "the table gives vote counts per item, not who voted"; no annotator count is reported.
Alpha is also checked against the ``krippendorff`` package computed from the counts alone.
"""

from __future__ import annotations

import json
import random
import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from audit.cli import cli
from audit.contract.table import NOT_WHO_VOTED, VOTE_COUNTS
from audit.errors import DegenerateDataWarning, InputError
from audit.ingest import load
from audit.ingest.label_counts import BAD, MAX_CELL, NO_VOTE_RULE, count
from audit.pipeline import run
from audit.results import json_form
from benchmarks.compare import result_differences

SPEC = ("columns: {item: id, pool: rater_group, model_a: left, model_b: right}\n"
        "label:\n  from_counts: {votes_a: A, votes_b: B, votes_tie: tie}\n")
COUNTS = {"votes_a": "A", "votes_b": "B", "votes_tie": "tie"}
#: What does not need annotators: compared with the long table's, exactly.
SAME_BLOCKS = ("pool_disagreement", "leaderboards", "leaderboard_method", "stability",
               "judge_alignment", "plan", "advise")
FREE_METRICS = ("krippendorff_alpha", "fleiss_kappa", "gwet_ac1", "percent_agreement")
NEED_ANNOTATORS = ("cohen_kappa", "icc", "icc_k")


def count_rows(seed: int = 3, n_items: int = 30) -> list[dict]:
    """Vote counts per (item, pool) of a pairwise table, some rows without a vote."""
    rng = random.Random(seed)
    models = ["gpt-4", "llama-2", "claude", "mistral"]
    rows = []
    for i in range(n_items):
        a, b = rng.sample(models, 2)
        for pool in ("crowd", "expert"):
            votes = [rng.randint(0, 4), rng.randint(0, 3), rng.randint(0, 2)]
            if i % 11 == 5 and pool == "expert":
                votes = [0, 0, 0]  # no vote: skipped and counted
            rows.append({"id": f"q{i:03d}", "rater_group": pool, "left": a, "right": b,
                         **dict(zip(COUNTS, votes))})
    return rows


def long_rows(rows: list[dict], counts: dict = COUNTS) -> pd.DataFrame:
    """The votes of ``rows`` one row each, in row and column order, each by its own
    annotator."""
    out = []
    for r in rows:
        for col, label in counts.items():
            for _ in range(int(r[col] or 0)):
                out.append({"item": r["id"], "annotator": f"rater{len(out)}",
                            "pool": r["rater_group"], "model_a": r["left"],
                            "model_b": r["right"], "label": label})
    return pd.DataFrame(out)


def audit_both(tmp_path, rows, *, spec: str = SPEC, counts: dict = COUNTS, long_spec=None,
               frame: pd.DataFrame | None = None):
    (tmp_path / "counts.csv").write_text((frame if frame is not None else pd.DataFrame(rows))
                                         .to_csv(index=False), encoding="utf-8")
    (tmp_path / "counts.yaml").write_text(spec, encoding="utf-8")
    long_rows(rows, counts).to_csv(tmp_path / "long.csv", index=False)
    options = {"n_bootstrap": 50, "seed": 4, "report": False}
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        ours = run(tmp_path / "counts.csv", spec=tmp_path / "counts.yaml", **options)
    theirs = run(tmp_path / "long.csv", spec=long_spec, **options)
    return json_form(ours), json_form(theirs), [str(w.message) for w in said]


def same(a, b) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def test_counts_audit_as_the_long_table_of_their_votes(tmp_path):
    rows = count_rows()
    ours, theirs, said = audit_both(tmp_path, rows)
    for block in SAME_BLOCKS:
        assert same(ours[block], theirs[block]), block
    rel, ref = ours["reliability"], theirs["reliability"]
    for scope, entries in [("overall", rel["overall"]), *rel["by_pool"].items()]:
        expected = ref["overall"] if scope == "overall" else ref["by_pool"][scope]
        for m in FREE_METRICS:
            assert same(entries[m], expected[m]), (scope, m)
        for m in NEED_ANNOTATORS:
            assert entries[m]["value"] is None
            assert entries[m]["not_defined"] == f"not defined: {NOT_WHO_VOTED}"
            assert "annotators" not in entries[m]  # no synthetic names
    for cohen in [rel["cohen_pairs"]["overall"], *rel["cohen_pairs"]["by_pool"].values()]:
        assert cohen["pairs"] == [] and cohen["not_defined"] == NOT_WHO_VOTED
    for w, v in zip(ours["within_pool"], theirs["within_pool"]):
        assert w["disagreement_rate"] == v["disagreement_rate"] and w["ci95"] == v["ci95"]
        assert w["annotator_effect_p"] is None and w["not_defined"] == NOT_WHO_VOTED
        assert w["n_annotators"] is None and w["n_annotators_tested"] is None
    ds, ref_ds = ours["dataset"], theirs["dataset"]
    for key in ("n_items", "n_annotations", "judgments_per_item", "label_scale", "models"):
        assert ds[key] == ref_ds[key], key
    assert ds["annotators"] == VOTE_COUNTS and ds["n_annotators"] is None
    assert all(p["n_annotators"] is None for p in ds["pools"].values())
    skipped = sum(1 for r in rows if not any(r[c] for c in COUNTS))
    assert ds["rows_dropped"] == [{"rule": NO_VOTE_RULE, "n": skipped}]
    assert ds["rows_read"] - skipped == ds["n_annotations"] == \
        sum(int(r[c]) for r in rows for c in COUNTS)
    # one warning for what needs annotators, never the misleading reasons
    assert sum(NOT_WHO_VOTED in s for s in said) == 1
    assert not any("no annotator pair shares" in s or "needs at least two items rated" in s
                   for s in said)
    assert any(f"{skipped} row(s) with no vote skipped" in s for s in said)


def test_an_ordinal_scale_from_counts(tmp_path):
    rng = random.Random(9)
    cols = {f"r{k}": k for k in range(1, 6)}
    rows = [{"id": f"s{i}", "rater_group": "all", "left": "x", "right": "y",
             **{c: rng.randint(0, 3) for c in cols}} for i in range(25)]
    frame = pd.DataFrame(rows).drop(columns=["left", "right", "rater_group"])
    spec = ("columns: {item: id}\nlabel:\n  kind: ordinal\n  order: [1, 2, 3, 4, 5]\n"
            f"  from_counts: {json.dumps(cols)}\n")
    long_spec = {"label": {"kind": "ordinal", "order": [1, 2, 3, 4, 5]}}
    ours, theirs, _ = audit_both(tmp_path, rows, spec=spec, counts=cols,
                                 long_spec=long_spec, frame=frame)
    for m in FREE_METRICS:
        assert same(ours["reliability"]["overall"][m], theirs["reliability"]["overall"][m]), m
    assert ours["reliability"]["overall"]["icc"]["not_defined"].endswith(NOT_WHO_VOTED)


def test_spreadsheet_cells_read_as_their_counts(tmp_path):
    rows = count_rows(seed=5, n_items=12)
    styles = {0: ["0", "", " ", "0.0", "-0"], 1: ["1", " 1 ", "1.0", "+1"], 2: ["2", "2.00"],
              3: ["3", "3e0"], 4: ["4", "4."]}
    rng = random.Random(2)
    messy = pd.DataFrame([{**r, **{c: rng.choice(styles[r[c]]) for c in COUNTS}}
                          for r in rows])
    ours, theirs, _ = audit_both(tmp_path, rows, frame=messy)
    for block in ("pool_disagreement", "leaderboards"):
        assert same(ours[block], theirs[block])
    assert same(ours["reliability"]["overall"]["krippendorff_alpha"],
                theirs["reliability"]["overall"]["krippendorff_alpha"])


def test_cell_readings():
    for value, votes in [("3", 3), (" 3 ", 3), ("3.0", 3), ("", 0), ("  ", 0), (None, 0),
                         (float("nan"), 0), (0, 0), (7, 7), (2.0, 2), (np.int64(5), 5),
                         ("1e3", 1000), (str(MAX_CELL), MAX_CELL)]:
        assert count(value) == votes, value
    for value in ["-1", "2.5", "x", "inf", "nan", "true", True, "٣", "３", "1_000",
                  str(MAX_CELL + 1), "1e400", -1, 2.5, float("inf"), "0x1", [1]]:
        assert count(value) == BAD, value


def cli_run(tmp_path, text, spec=SPEC, *args):
    (tmp_path / "t.csv").write_text(text, encoding="utf-8")
    (tmp_path / "s.yaml").write_text(spec, encoding="utf-8")
    return CliRunner().invoke(cli, ["validate", str(tmp_path / "t.csv"), "--spec",
                                    str(tmp_path / "s.yaml"), *args])


HEAD = "id,rater_group,left,right,votes_a,votes_b,votes_tie\n"


@pytest.mark.parametrize("cell", ["-1", "2.5", "x", "inf", "true", "1000001", "٣"])
def test_a_cell_that_is_no_count_is_exit_2_naming_it(tmp_path, cell):
    text = HEAD + f"q1,crowd,m1,m2,1,{cell},0\nq2,crowd,m1,m2,1,{cell},0\nq3,crowd,m1,m2,1,1,1\n"
    result = cli_run(tmp_path, text)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert "t.csv" in lines[0] and "'votes_b'" in lines[0] and "line 2" in lines[0]
    assert "not a count of votes" in lines[0] and "2 row(s) of this column" in lines[0]


@pytest.mark.parametrize("spec, said", [
    ("layout: wide\nannotator_columns: [a, b]\nlabel:\n  from_counts: {a: A, b: B}\n",
     "wide layout"),
    ("columns: {annotator: rater_group}\nlabel:\n  from_counts: {votes_a: A, votes_b: B}\n",
     "columns.annotator"),
    ("columns: {label: rater_group}\nlabel:\n  from_counts: {votes_a: A, votes_b: B}\n",
     "columns.label"),
    ("label:\n  from_counts: {votes_a: A, votes_b: B}\n  from_columns: {votes_a: A, votes_b: B}\n",
     "label.from_columns"),
    ("label:\n  from_counts: {votes_a: A}\n", "two or more count columns"),
    ("pools: {map: {w1: crowd}}\nlabel:\n  from_counts: {votes_a: A, votes_b: B}\n",
     "pools.map"),
    ("columns: {item: votes_tie}\nlabel:\n  from_counts: {votes_a: A, votes_tie: tie}\n",
     "both a count column and columns.item"),
])
def test_keys_that_contradict_it_are_exit_2_naming_the_key(tmp_path, spec, said):
    result = cli_run(tmp_path, HEAD + "q1,crowd,m1,m2,1,1,0\n", spec)
    assert result.exit_code == 2, result.output
    assert "label.from_counts" in result.output and said in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output


@pytest.mark.parametrize("extra, said", [
    ((), "'nope'"),
    (("--pools", "POOLS"), "--pools"),
    (("--min-pool-annotators", "2"), "--min-pool-annotators"),
])
def test_what_reads_annotators_is_exit_2(tmp_path, extra, said):
    (tmp_path / "pools.csv").write_text("annotator,pool\nw1,crowd\n", encoding="utf-8")
    extra = [str(tmp_path / "pools.csv") if a == "POOLS" else a for a in extra]
    spec = SPEC if extra else SPEC.replace("votes_tie: tie", "nope: tie")
    result = cli_run(tmp_path, HEAD + "q1,crowd,m1,m2,1,1,0\n", spec, *extra)
    assert result.exit_code == 2, result.output
    assert said in result.output and len(result.output.strip().splitlines()) == 1


def test_an_annotator_or_label_column_beside_the_counts_is_exit_2(tmp_path):
    text = "id,annotator,votes_a,votes_b\nq1,w1,1,2\n"
    result = cli_run(tmp_path, text, "columns: {item: id}\nlabel:\n  from_counts: "
                                     "{votes_a: A, votes_b: B}\n")
    assert result.exit_code == 2 and "'annotator'" in result.output
    assert "label.from_counts" in result.output


def test_export_refuses_it_in_one_line(tmp_path):
    cli_run(tmp_path, HEAD + "q1,crowd,m1,m2,1,1,0\n", SPEC)
    result = CliRunner().invoke(cli, ["export", str(tmp_path / "t.csv"), str(tmp_path / "out"),
                                      "--spec", str(tmp_path / "s.yaml")])
    assert result.exit_code == 2, result.output
    assert "not who voted" in result.output and not (tmp_path / "out" / "judgments").exists()


def test_hostile_column_names_and_ids(tmp_path):
    """Count columns named like canonical columns or formulas, ids with markup, look-alike
    characters and a pool called like the synthetic ids: read as the long table is."""
    counts = {"label": "A", "annotator": "B", "=1+1": "tie"}
    rng = random.Random(4)
    rows = [{"id": f"<b>{i}</b>\u00a0=cmd|' /C calc'!A0" if i % 2 else f"vote {i}",
             "rater_group": "vote 1" if i % 3 else "Zoë", "left": "gpt-4", "right": "GPT-4 ",
             **{c: rng.randint(0, 3) for c in counts}} for i in range(20)]
    spec = ("columns: {item: id, pool: rater_group, model_a: left, model_b: right}\n"
            "label:\n  from_counts: {label: A, annotator: B, \"=1+1\": tie}\n")
    ours, theirs, said = audit_both(tmp_path, rows, spec=spec, counts=counts)
    for block in ("pool_disagreement", "leaderboards"):
        assert same(ours[block], theirs[block]), block
    assert same(ours["reliability"]["overall"]["krippendorff_alpha"],
                theirs["reliability"]["overall"]["krippendorff_alpha"])
    assert not any("column 'annotator' holds ids that look alike" in s for s in said)


def test_outputs_report_no_synthetic_annotators(tmp_path):
    rows = count_rows(n_items=12)
    pd.DataFrame(rows).to_csv(tmp_path / "c.csv", index=False)
    (tmp_path / "c.yaml").write_text(SPEC, encoding="utf-8")
    result = CliRunner().invoke(cli, ["run", str(tmp_path / "c.csv"), "--spec",
                                      str(tmp_path / "c.yaml"), "--bootstrap", "20", "--out",
                                      str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert f"annotators {VOTE_COUNTS}" in result.output
    n_votes = sum(int(r[c]) for r in rows for c in COUNTS)
    assert f"{n_votes} annotators" not in result.output
    assert result.output.count(NOT_WHO_VOTED) == 1  # one warning, not one per scope
    for name in ("report.html", "dataset_card.md", "croissant_rai.json", "results.json",
                 "advice.csv"):
        text = (tmp_path / "out" / name).read_text(encoding="utf-8")
        assert "vote 1" not in text and f"{n_votes:,} annotator" not in text, name
    card = (tmp_path / "out" / "dataset_card.md").read_text(encoding="utf-8")
    assert "| not given |" in card and NOT_WHO_VOTED in card
    report = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert VOTE_COUNTS in report and "no item with two of its annotators" not in report


def test_format_detection_points_to_from_counts(tmp_path):
    (tmp_path / "v.csv").write_text("item,A,B,tie\n1,3,1,1\n2,0,2,0\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["validate", str(tmp_path / "v.csv")])
    assert result.exit_code == 2
    assert ('label: {from_counts: {"A": "A", "B": "B", "tie": "tie"}}' in result.output)
    assert "from_columns: {" not in result.output
    (tmp_path / "m.csv").write_text("item,A,B,tie\n1,1,0,0\n2,0,1,0\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["validate", str(tmp_path / "m.csv")])
    assert result.exit_code == 2 and "from_columns: {" in result.output
    assert "from_counts: {" not in result.output  # 0 / 1 marks are read as marks
    spec = "label:\n  from_columns: {A: A, B: B, tie: tie}\n"
    (tmp_path / "s.yaml").write_text(spec, encoding="utf-8")
    (tmp_path / "w.csv").write_text("item,annotator,A,B,tie\n1,w1,3,0,0\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["validate", str(tmp_path / "w.csv"), "--spec",
                                      str(tmp_path / "s.yaml")])
    assert result.exit_code == 2 and "label.from_counts instead" in result.output


def test_a_frame_in_memory_reads_counts_too():
    rows = count_rows(n_items=8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = load(pd.DataFrame(rows), spec={
            "columns": {"item": "id", "pool": "rater_group", "model_a": "left",
                        "model_b": "right"},
            "label": {"from_counts": COUNTS}})
    assert not table.annotators_given
    assert len(table.frame) == sum(int(r[c]) for r in rows for c in COUNTS)
    assert table.frame["annotator"].nunique() == len(table.frame)
    with pytest.raises(InputError, match="label.from_counts"):
        load(pd.DataFrame(rows), spec={"label": {"from_counts": {"votes_a": "A"}}})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), q=st.integers(2, 4), n_items=st.integers(2, 12),
       level=st.sampled_from(["nominal", "ordinal"]))
def test_alpha_equals_the_krippendorff_package_on_the_counts(data, q, n_items, level):
    import krippendorff

    from audit.measure import reliability
    from audit.resample import Bootstrap

    votes = np.array(data.draw(st.lists(st.lists(st.integers(0, 4), min_size=q, max_size=q),
                                        min_size=n_items, max_size=n_items)))
    pairable = votes[votes.sum(axis=1) >= 2]  # defined: two such items, two labels in use
    assume(len(pairable) >= 2 and (pairable.sum(axis=0) > 0).sum() >= 2)
    cols = {f"c{k}": k + 1 for k in range(q)}
    frame = pd.DataFrame(votes, columns=list(cols))
    frame.insert(0, "id", [f"i{i}" for i in range(n_items)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = load(frame, spec={"columns": {"item": "id"},
                                  "label": {"kind": level, "order": list(range(1, q + 1)),
                                            "from_counts": cols}})
        ours = reliability(table, bootstrap=Bootstrap(5, 0))["overall"]["krippendorff_alpha"]
    ref = krippendorff.alpha(value_counts=votes, level_of_measurement=level)
    assert ours["value"] == pytest.approx(ref, abs=1e-9)


def test_measure_alone_says_it_once(recwarn):
    from audit.measure import measure
    from audit.resample import Bootstrap

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = load(pd.DataFrame(count_rows(n_items=10)), spec={
            "columns": {"item": "id", "pool": "rater_group"},
            "label": {"from_counts": COUNTS}})
    warnings.simplefilter("always")
    out = measure(table, bootstrap=Bootstrap(10, 0))
    said = [str(w.message) for w in recwarn if issubclass(w.category, DegenerateDataWarning)]
    assert sum(NOT_WHO_VOTED in s for s in said) == 1
    assert out["reliability"]["overall"]["cohen_kappa"]["not_defined"].endswith(NOT_WHO_VOTED)


def test_many_votes_per_item_fit_the_memory_budget():
    """The memory estimate counts no annotator pairs for vote counts (none is paired): 600
    votes on each of 200 items were estimated as 180,000 within-item pairs of annotators to
    resample for Cohen's kappa, and refused."""
    frame = pd.DataFrame({"id": [f"q{i}" for i in range(200)], "A": 300, "B": 250, "tie": 50})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = run(frame, spec={"columns": {"item": "id"},
                               "label": {"from_counts": {"A": "A", "B": "B", "tie": "tie"}}},
                  n_bootstrap=200, max_memory="1G", report=False)
    assert out["dataset"]["n_annotations"] == 120_000
    assert out["reliability"]["overall"]["cohen_kappa"]["not_defined"].endswith(NOT_WHO_VOTED)


@pytest.mark.parametrize("claim", ["annotators_per_pool\n    min: 5", "unique_judgments"])
def test_a_suite_counting_annotators_is_refused_naming_its_line(tmp_path, claim):
    """A suite claiming five annotators per pool passed on a table of vote counts: its
    annotators are one per vote, made up, so the claim held whatever the data. Such a claim
    (and one judgment per (item, annotator), true by construction) is now exit 2 naming the
    suite's line, before anything runs; a claim on a measurement that needs annotators
    (annotators_interchangeable) fails with its NaN reason, as on any data."""
    rows = count_rows(n_items=12)
    pd.DataFrame(rows).to_csv(tmp_path / "c.csv", index=False)
    (tmp_path / "c.yaml").write_text(SPEC, encoding="utf-8")
    (tmp_path / "suite.yaml").write_text(
        f"suite: counts\nexpectations:\n  - expect: {claim}\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["check", str(tmp_path / "c.csv"), "--spec",
                                      str(tmp_path / "c.yaml"), "--suite",
                                      str(tmp_path / "suite.yaml"), "--bootstrap", "20"])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "suite.yaml" in lines[0] and "line 3" in lines[0], result.output
    assert NOT_WHO_VOTED in lines[0]
    (tmp_path / "suite.yaml").write_text(
        "suite: counts\nexpectations:\n  - expect: annotators_interchangeable\n    min: 0.05\n",
        encoding="utf-8")
    result = CliRunner().invoke(cli, ["check", str(tmp_path / "c.csv"), "--spec",
                                      str(tmp_path / "c.yaml"), "--suite",
                                      str(tmp_path / "suite.yaml"), "--bootstrap", "20"])
    assert result.exit_code == 1, result.output
    assert "NaN" in result.output or "undefined" in result.output


# -- the Spark engine ------------------------------------------------------------------------------
def _spark_tables(tmp_path) -> dict:
    """``{name: (csv, spec)}``: pools and pairs with rows without a vote, an ordinal scale
    without models, messy spreadsheet cells with completely empty records."""
    rows = count_rows(n_items=24)
    pd.DataFrame(rows).to_csv(tmp_path / "pools.csv", index=False)
    rng = random.Random(9)
    cols = {f"r{k}": k for k in range(1, 6)}
    ordinal = pd.DataFrame([{"id": f"s{i}", **{c: rng.randint(0, 3) for c in cols}}
                            for i in range(25)])
    ordinal.to_csv(tmp_path / "ordinal.csv", index=False)
    styles = {0: ["0", "", " ", "0.0", "-0", "\t0 "], 1: ["1", " 1 ", "1.0", "+1", "1e0"],
              2: ["2", "2.00", "0002"], 3: ["3", "3e0", ".3e1"], 4: ["4", "4.", "4.000"]}
    messy = pd.DataFrame([{**r, **{c: rng.choice(styles[r[c]]) for c in COUNTS}}
                          for r in count_rows(seed=5, n_items=12)])
    (tmp_path / "messy.csv").write_text(messy.to_csv(index=False) + ",,,,,,\n,,,, ,,\n",
                                        encoding="utf-8")
    (tmp_path / "pairs.yaml").write_text(SPEC, encoding="utf-8")
    (tmp_path / "ordinal.yaml").write_text(
        "columns: {item: id}\nlabel:\n  kind: ordinal\n  order: [1, 2, 3, 4, 5]\n"
        f"  from_counts: {json.dumps(cols)}\n", encoding="utf-8")
    return {"pools": (tmp_path / "pools.csv", tmp_path / "pairs.yaml"),
            "ordinal": (tmp_path / "ordinal.csv", tmp_path / "ordinal.yaml"),
            "messy": (tmp_path / "messy.csv", tmp_path / "pairs.yaml")}


def _audit(source, spec, **options) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = run(source, spec=spec, n_bootstrap=60, seed=4, report=False, **options)
    return {k: v for k, v in out.items() if k != "meta"}


def _quiet_load(source, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load(source, **options)


def _by_vote(table) -> pd.DataFrame:
    """The judgments in one order (each synthetic annotator once), as plain text."""
    frame = table.frame.astype(str).sort_values(["annotator"]).reset_index(drop=True)
    return frame[sorted(frame.columns)]


@pytest.mark.spark
@pytest.mark.parametrize("name", ["pools", "ordinal", "messy"])
def test_spark_audits_counts_as_the_pandas_engine(spark, tmp_path, name):
    """--engine spark refused label.from_counts ('read by the pandas engine'); it reads the
    counts on the executors now, with the pandas engine's judgments (the same synthetic
    annotator on the same vote) and results.json to 1e-12: from the cluster's aggregates (a
    pairwise table) and collected."""
    source, spec = _spark_tables(tmp_path)[name]
    want = _audit(source, spec)
    for keep in ("auto", False):
        got = _audit(source, spec, engine="spark", keep_on_cluster=keep)
        found = result_differences(want, got)
        assert not found, (keep, found[:5])
    assert want["dataset"]["annotators"] == VOTE_COUNTS
    if name != "ordinal":
        assert want["dataset"]["rows_dropped"], "rows without a vote are counted"
    pd.testing.assert_frame_equal(_by_vote(_quiet_load(source, spec=spec, engine="spark")),
                                  _by_vote(_quiet_load(source, spec=spec)))


@pytest.mark.spark
def test_spark_says_what_the_pandas_engine_says(spark, tmp_path):
    source, spec = _spark_tables(tmp_path)["pools"]
    said = {}
    for engine in ("pandas", "spark"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            load(source, spec=spec, engine=engine)
        said[engine] = sorted({str(w.message) for w in caught
                               if "no vote" in str(w.message)})
    assert said["spark"] == said["pandas"] and len(said["pandas"]) == 1
    assert "first: line 13" in said["pandas"][0], said


@pytest.mark.spark
@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_spark_numbers_votes_in_file_order_across_splits(spark, tmp_path, fmt):
    """The synthetic annotators are numbered in the order of the file: across Spark's splits
    of it (a 600-byte split: dozens of them, read by two tasks in no set order) too."""
    rows = count_rows(seed=8, n_items=60)
    path = tmp_path / f"c.{fmt}"
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    else:
        pd.DataFrame(rows).to_parquet(path, row_group_size=10)
    spec = {"columns": {"item": "id", "pool": "rater_group", "model_a": "left",
                        "model_b": "right"}, "label": {"from_counts": COUNTS}}
    want = _by_vote(_quiet_load(path, spec=spec))
    before = {k: spark.conf.get(k) for k in ("spark.sql.files.maxPartitionBytes",
                                             "spark.sql.files.openCostInBytes")}
    spark.conf.set("spark.sql.files.maxPartitionBytes", "600")
    spark.conf.set("spark.sql.files.openCostInBytes", "100")
    try:
        got = _by_vote(_quiet_load(path, spec=spec, engine="spark"))
    finally:
        for k, v in before.items():
            spark.conf.set(k, v)
    pd.testing.assert_frame_equal(got, want)


@pytest.mark.spark
def test_spark_reads_an_empty_table_as_pandas(spark, tmp_path):
    for text in (HEAD, HEAD + "q1,crowd,m1,m2,0,0,\n,,,,,,\n"):
        lines = {}
        for engine in ("pandas", "spark"):
            result = cli_run(tmp_path, text, SPEC, "--engine", engine)
            assert result.exit_code == 2, result.output
            lines[engine] = result.output.strip().splitlines()
        assert lines["spark"] == lines["pandas"], lines
        errors = [line for line in lines["pandas"] if line.startswith("error:")]
        assert len(errors) == 1 and "the table is empty" in errors[0], lines


#: A spec of two count columns and no other mapping.
TWO = "columns: {item: id}\nlabel:\n  from_counts: {votes_a: A, votes_b: B}\n"
#: A table the CLI refuses, as written (``HEAD`` and its rows) with the spec and options.
SPARK_REFUSED = {
    "a word": (HEAD + "q1,crowd,m1,m2,1,x,0\nq2,crowd,m1,m2,1,2,0\nq3,crowd,m1,m2,1,x,0\n",
               SPEC, ()),
    "negative, second column": (HEAD + "q1,crowd,m1,m2,1,2,y\nq2,crowd,m1,m2,-1,2,0\n",
                                SPEC, ()),
    "digits of another script": (HEAD + 'q1,crowd,m1,m2,1,2,0\n"q\n2",crowd,m1,m2,1,2,0\n'
                                 "q3,crowd,m1,m2,1,\u0663,0\n", SPEC, ()),
    "after blank lines": (HEAD + "q1,crowd,m1,m2,1,2,0\n\n   \n,,,,,,\nq3,crowd,m1,m2,1,2.5,0\n",
                          SPEC, ()),
    "too many": (HEAD + "q1,crowd,m1,m2,1000001,2,0\n", SPEC, ()),
    "a missing count column": (HEAD + "q1,crowd,m1,m2,1,1,0\n",
                               SPEC.replace("votes_tie: tie", "nope: tie"), ()),
    "an annotator column": ("id,annotator,votes_a,votes_b\nq1,w1,1,2\n", TWO, ()),
    "a label column": ("id,label,votes_a,votes_b\nq1,w1,1,2\n", TWO, ()),
    "a repeated header": (HEAD + "q1,crowd,m1,m2,1,2,0\n" + HEAD + "q3,crowd,m1,m2,1,x,0\n",
                          SPEC, ()),
    "a long record": (HEAD + "q1,crowd,m1,m2,1,2,0,9\nq3,crowd,m1,m2,1,x,0\n", SPEC, ()),
    "--pools": (HEAD + "q1,crowd,m1,m2,1,1,0\n", SPEC, ("--pools", "POOLS")),
    "--min-pool-annotators": (HEAD + "q1,crowd,m1,m2,1,1,0\n", SPEC,
                              ("--min-pool-annotators", "2")),
}


@pytest.mark.spark
@pytest.mark.parametrize("case", sorted(SPARK_REFUSED))
def test_spark_refuses_in_the_pandas_engines_words(spark, tmp_path, case):
    text, spec, extra = SPARK_REFUSED[case]
    (tmp_path / "pools.csv").write_text("annotator,pool\nw1,crowd\n", encoding="utf-8")
    extra = [str(tmp_path / "pools.csv") if a == "POOLS" else a for a in extra]
    lines = {}
    for engine in ("pandas", "spark"):
        result = cli_run(tmp_path, text, spec, *extra, "--engine", engine)
        assert result.exit_code == 2, (engine, result.output)
        lines[engine] = result.output.strip().splitlines()
    assert lines["spark"] == lines["pandas"], lines
    assert len(lines["pandas"]) == 1, lines


@pytest.mark.spark
def test_spark_checks_the_most_votes_alike(spark, tmp_path, monkeypatch):
    import audit.ingest.label_counts as counts

    monkeypatch.setattr(counts, "MAX_VOTES", 5)
    text = HEAD + "q1,crowd,m1,m2,3,2,0\nq2,crowd,m1,m2,1,0,0\n"
    pandas, spark_ = (cli_run(tmp_path, text, SPEC, "--engine", e) for e in ("pandas", "spark"))
    assert pandas.exit_code == spark_.exit_code == 2
    assert spark_.output == pandas.output and "6 votes, more than the 5" in pandas.output


@pytest.mark.spark
@pytest.mark.parametrize("fmt, named", [("parquet", "-1.0"), ("jsonl", "-1.0"), ("json", "-1.0"),
                                        ("text.jsonl", "-1")])
def test_spark_names_a_typed_cell_as_pandas(spark, tmp_path, fmt, named):
    """A typed count that is none is named as the pandas engine names it, at its line or source
    row: -1 beside 2.5 as the float -1.0 (Parquet, and JSON, whose field of numbers both engines
    read as floats), and beside a text cell as the JSON value -1 (which Spark reads as the
    text '-1')."""
    rows = [dict(r) for r in count_rows(n_items=3)]
    rows[1]["votes_b"], rows[3]["votes_b"] = -1, 2.5
    if fmt.startswith("text"):
        rows[4]["votes_b"] = "x"
    path = tmp_path / f"c.{fmt}"
    if fmt == "parquet":
        pd.DataFrame(rows).to_parquet(path)
    elif fmt.endswith("jsonl"):
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    else:
        path.write_text(json.dumps(rows), encoding="utf-8")
    spec = {"columns": {"item": "id", "pool": "rater_group", "model_a": "left",
                        "model_b": "right"}, "label": {"from_counts": COUNTS}}
    said = {}
    for engine in ("pandas", "spark"):
        with pytest.raises(InputError) as err:
            _quiet_load(path, spec=spec, engine=engine)
        said[engine] = str(err.value)
    assert said["spark"] == said["pandas"], said
    assert f"the cell {named} is not a count" in said["pandas"], said
    assert ("line 2" if "jsonl" in fmt else "source row 1") in said["pandas"]


@pytest.mark.spark
def test_spark_cell_readings_equal_pandas(spark):
    from audit.ingest.spark.label_counts import count_cell

    values = ["3", " 3 ", "3.0", "", "  ", None, "1e3", str(MAX_CELL), "0003", "-0", "+1",
              ".3e1", "4.", "\x0b3\x0c", "\t2\r\n", "-1", "2.5", "x", "inf", "nan", "true",
              "\u0663", "\uff13", "1_000", str(MAX_CELL + 1), "1e400", "0x1", "\u00a03",
              "1d", "3 x", "99999999999", "00000000007", "-0.0", "1e-400", "0.99999999999999999"]
    df = spark.createDataFrame([(v,) for v in values], "c string")
    got = [r["n"] for r in df.select(count_cell(df, "c", []).alias("n")).collect()]
    assert got == [count(v) for v in values]
    typed = spark.createDataFrame(
        [(1, 1.0, True), (-1, float("nan"), None), (None, 2.5, False), (MAX_CELL + 1, 1e400, None),
         (7, -0.0, None), (0, float("-inf"), None)], "i long, d double, b boolean")
    for col in ("i", "d", "b"):
        got = [r["n"] for r in typed.select(count_cell(typed, col, []).alias("n")).collect()]
        want = [count(v) for v in typed.toPandas()[col].astype(object)]
        assert got == want, col


@pytest.mark.spark
def test_spark_outputs_report_no_synthetic_annotators(spark, tmp_path):
    """From the cluster's aggregates, no output names or counts a synthetic annotator: the
    judgments kept on the cluster have no annotator column at all."""
    rows = count_rows(n_items=12)
    pd.DataFrame(rows).to_csv(tmp_path / "c.csv", index=False)
    (tmp_path / "c.yaml").write_text(SPEC, encoding="utf-8")
    kept = _quiet_load(tmp_path / "c.csv", spec=tmp_path / "c.yaml", engine="spark",
                       keep_on_cluster=True)
    assert "annotator" not in kept.coded.columns and kept.annotators == ()
    kept.release()
    result = CliRunner().invoke(cli, ["run", str(tmp_path / "c.csv"), "--spec",
                                      str(tmp_path / "c.yaml"), "--bootstrap", "20", "--out",
                                      str(tmp_path / "out"), "--engine", "spark"])
    assert result.exit_code == 0, result.output
    assert f"annotators {VOTE_COUNTS}" in result.output
    assert result.output.count(NOT_WHO_VOTED) == 1
    n_votes = sum(int(r[c]) for r in rows for c in COUNTS)
    for name in ("report.html", "dataset_card.md", "croissant_rai.json", "results.json",
                 "advice.csv"):
        text = (tmp_path / "out" / name).read_text(encoding="utf-8")
        assert "vote 1" not in text and f"{n_votes:,} annotator" not in text, name
