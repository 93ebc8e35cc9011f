"""Proof on data nobody here wrote: WMT23 zh-en side-by-side MQM (Google; Apache-2.0).

``examples/wmt23_zhen_mqm.py`` turns the error table into one negated MQM score per (system,
segment, rater). Checked here, each against something the recipe does not compute:

* the judgments and their scores against a separate reading of the raw TSV (the ``csv`` module,
  weights by ``numpy.select``), and the mean over raters against the per-segment MQM the data's
  authors published in the metadata;
* the audit of the long table (``audit.run``, rating leaderboard, two rater pools): every
  judgment counted, Krippendorff's interval alpha overall and per pool equal to the
  ``krippendorff`` package, and each pool's leaderboard equal to a pandas group-by mean.

Skips, naming the path, where ``../shared/data/wmt23_sxs_mqm_zhen`` is absent; the shipped
sample (``data/wmt23_zhen_mqm``, the recipe's first eight documents) is audited either way.
"""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import sys
import tarfile

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import audit
from audit.contract import columns as C
from audit.cli import cli
from alpha_reference import package_alpha
from conftest import REPO, shared_data

ARCHIVE = "wmt23_sxs_mqm_zhen/sxs_mqm_generalMT2023_zhen.3ratingsPerSegment.tsv.tar.gz"
TOL = 1e-9


def _recipe():
    spec = importlib.util.spec_from_file_location("wmt23_zhen_mqm",
                                                  REPO / "examples" / "wmt23_zhen_mqm.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


recipe = _recipe()


@pytest.fixture(scope="module")
def archive():
    return shared_data(ARCHIVE)


@pytest.fixture(scope="module")
def raw(archive) -> pd.DataFrame:
    """The error table read with the csv module: header of 10 names (+ one documentation link),
    every data row exactly 10 tab-separated fields, no quoting."""
    with tarfile.open(archive, "r:gz") as tar:
        (member,) = [m for m in tar.getmembers() if m.isfile()]
        text = tar.extractfile(member).read().decode("utf-8")
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter="\t",
                           quoting=csv.QUOTE_NONE))
    header, body = rows[0], rows[1:]
    assert {len(r) for r in body} == {10}
    return pd.DataFrame(body, columns=header[:10])


@pytest.fixture(scope="module")
def expected(raw) -> pd.Series:
    """MQM per (system, globalSegId, rater), lower is better, from the raw rows directly."""
    sev, cat = raw["severity"], raw["category"]
    weight = np.select(
        [sev == "HOTW-test", sev == "No-error", cat == "Source issue",
         cat == "Accuracy/Creative Reinterpretation", cat == "Non-translation!",
         (sev == "Minor") & (cat == "Fluency/Punctuation"), sev == "Major", sev == "Minor"],
        [0.0, 0.0, 0.0, 0.0, 25.0, 0.1, 5.0, 1.0], default=np.inf)
    assert np.isfinite(weight).all()
    return raw.assign(w=weight).groupby(["system", "globalSegId", "rater"])["w"].sum()


@pytest.fixture(scope="module")
def written(archive, tmp_path_factory):
    out = tmp_path_factory.mktemp("wmt23")
    table, spec, counts = recipe.write(out, archive)
    return table, spec, counts


@pytest.fixture(scope="module")
def long(written) -> pd.DataFrame:
    return pd.read_csv(written[0], dtype=str, keep_default_na=False)


@pytest.fixture(scope="module")
def results(written):
    table, spec, _ = written
    return audit.run(table, spec=spec, n_bootstrap=50, seed=0, report=False)


def test_every_row_is_counted(raw, expected, written):
    counts = written[2]
    probes = raw["severity"] == "HOTW-test"
    assert counts.rows_read == len(raw) == 25_060
    assert counts.probe_rows == int(probes.sum()) == 461
    assert counts.scored_rows == int((~probes).sum())
    assert counts.judgments == len(expected) == 11_310
    assert counts.judgments_probe_only == 0
    assert counts.system_segments == raw[["system", "globalSegId"]].drop_duplicates().shape[0]
    assert (counts.systems, counts.segments, counts.raters) == (10, 377, 8)
    assert counts.distinct_scores == expected.round(6).nunique()


def test_scores_match_the_raw_table(expected, long):
    got = long.assign(label=long["label"].astype(float))
    assert not got.duplicated(["model", "segment", "annotator"]).any()
    got = got.set_index(["model", "segment", "annotator"])["label"]
    got.index.names = expected.index.names
    assert set(got.index) == set(expected.index)
    diff = (got + expected.reindex(got.index)).abs()  # label is the negated MQM
    assert diff.max() < TOL
    assert (long["item"] == long["model"] + "|" + long["segment"]).all()
    assert "-0.0" not in set(long["label"])


def test_pools_split_raters_by_id(long):
    number = long["annotator"].str.removeprefix("rater").astype(int)
    assert set(number) == set(range(1, 9))
    assert (long["pool"] == np.where(number <= 4, "raters 1-4", "raters 5-8")).all()


def test_mean_over_raters_is_the_published_segment_mqm(raw, expected):
    published = {}
    for system, seg, meta in zip(raw["system"], raw["globalSegId"], raw["metadata"]):
        mqm = (json.loads(meta).get("segment") or {}).get("metrics", {}).get("MQM")
        if mqm is not None:
            assert published.setdefault((system, seg), mqm) == mqm
    ours = expected.groupby(["system", "globalSegId"]).mean()
    assert set(published) == set(ours.index) and len(published) == 3_770
    theirs = pd.Series(published).reindex(ours.index)
    assert (ours - theirs).abs().max() < TOL


def test_creative_reinterpretation_weighs_nothing(raw, expected):
    """Without the rule, Freitag et al.'s Table 2 alone misses the published scores."""
    creative = raw["category"] == "Accuracy/Creative Reinterpretation"
    assert creative.sum() == 58
    extra = np.where(raw["severity"] == "Major", 5.0, 1.0) * creative
    units = ["system", "globalSegId", "rater"]
    as_errors = expected + raw.assign(w=extra).groupby(units)["w"].sum()
    moved = (as_errors - expected).groupby(["system", "globalSegId"]).mean().abs() > TOL
    assert moved.sum() == raw.loc[creative, ["system", "globalSegId"]].drop_duplicates().shape[0]


def test_audit_counts_every_judgment(written, results, long):
    table = audit.load(written[0], spec=written[1])
    f = table.frame
    assert len(f) == len(long) and f.index.tolist() == list(range(len(long)))
    assert (f[C.ITEM].astype(str).to_numpy() == long["item"].to_numpy()).all()
    labels = np.asarray(f[C.LABEL].astype(float))
    assert np.abs(labels - long["label"].astype(float).to_numpy()).max() < TOL
    ds = results["dataset"]
    assert ds["label_kind"] == "interval"
    assert (ds["n_annotations"], ds["n_items"], ds["n_annotators"]) == (11_310, 3_770, 8)
    assert {p: v["n_annotations"] for p, v in ds["pools"].items()} == \
        long["pool"].value_counts().to_dict() == {"raters 1-4": 5_670, "raters 5-8": 5_640}
    assert ds["models"] == sorted(long["model"].unique())


def _alpha(frame: pd.DataFrame) -> float:
    """The ``krippendorff`` package's interval alpha, by the package's own steps without its
    dense (items x values x values) array (:mod:`alpha_reference`)."""
    return package_alpha(frame.assign(label=frame["label"].astype(float)).pivot(
        index="item", columns="annotator", values="label"))


def assert_alpha_matches_krippendorff(results, long):
    rel = results["reliability"]
    assert rel["level"] == "interval"
    assert abs(rel["overall"]["krippendorff_alpha"]["value"] - _alpha(long)) < TOL
    assert set(rel["by_pool"]) == {"raters 1-4", "raters 5-8"}
    for pool, metrics in rel["by_pool"].items():
        expected = _alpha(long[long["pool"] == pool])
        assert abs(metrics["krippendorff_alpha"]["value"] - expected) < TOL
        lo, hi = metrics["krippendorff_alpha"]["ci95"]
        assert lo <= metrics["krippendorff_alpha"]["value"] <= hi


def assert_leaderboards_are_pandas_means(results, long):
    assert results["leaderboard_method"]["metric"] == "mean_score"
    boards = results["leaderboards"]
    assert set(boards) == {"raters 1-4", "raters 5-8", "all"}
    scored = long.assign(label=long["label"].astype(float))
    for pool, rows in boards.items():
        sub = scored if pool == "all" else scored[scored["pool"] == pool]
        means = sub.groupby("model")["label"].mean()
        assert {r["model"] for r in rows} == set(means.index)
        for row in rows:
            assert abs(row["score"] - means[row["model"]]) < TOL
            assert row["ci95"][0] <= row["score"] <= row["ci95"][1]
        assert [r["model"] for r in rows] == means.sort_values(ascending=False).index.tolist()


def test_alpha_matches_krippendorff(results, long):
    assert_alpha_matches_krippendorff(results, long)


def test_leaderboards_are_pandas_means(results, long):
    assert_leaderboards_are_pandas_means(results, long)


# -- the shipped sample (data/wmt23_zhen_mqm): runs on a fresh clone too -----------------------
SAMPLE = REPO / "data" / "wmt23_zhen_mqm"


def test_shipped_sample_is_the_recipe_output(archive, tmp_path):
    table, spec, _ = recipe.write(tmp_path, archive, n_docs=8)
    assert table.read_bytes() == (SAMPLE / recipe.CSV_NAME).read_bytes()
    assert spec.read_bytes() == (SAMPLE / recipe.SPEC.name).read_bytes()


def test_shipped_sample_audit():
    path, spec = SAMPLE / recipe.CSV_NAME, SAMPLE / recipe.SPEC.name
    long = pd.read_csv(path, dtype=str, keep_default_na=False)
    assert len(long) == 2_400 and long["doc"].nunique() == 8
    assert long["label"].astype(float).nunique() > 32  # a continuous scale, not categories
    results = audit.run(path, spec=spec, n_bootstrap=50, seed=0, report=False)
    assert results["dataset"]["n_annotations"] == 2_400
    assert_alpha_matches_krippendorff(results, long)
    assert_leaderboards_are_pandas_means(results, long)


def test_shipped_sample_runs_from_the_cli(tmp_path):
    """What the recipe prints, as a user runs it: exit 0, the results, report and card written."""
    out = tmp_path / "audit"
    result = CliRunner().invoke(cli, ["run", str(SAMPLE / recipe.CSV_NAME), "--spec",
                                      str(SAMPLE / recipe.SPEC.name), "--out", str(out),
                                      "--bootstrap", "20"])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    res = json.loads((out / "results.json").read_text())
    assert res["dataset"]["n_annotations"] == 2_400
    assert (out / "report.html").stat().st_size > 0
    card = (out / "dataset_card.md").read_text()
    assert "NaN item" not in card and "the NaN items" not in card  # no count is ever NaN
    # a continuous scale's pool comparison is a score difference, stated with its numbers
    row = res["pool_disagreement"][0]
    assert row["majority_differs_rate"] is None and row["mean_difference"] is not None
    assert (f"On the {row['n_items_shared']:,} items both raters 1-4 and raters 5-8 rated, "
            f"raters 5-8's mean score minus raters 1-4's is {row['mean_difference']:.3f}") in card
    for w in res["within_pool"]:
        assert f"{w['pool']}: scores of one item differ between its annotators with a " \
               f"standard deviation of {w['within_item_sd']:.3f}" in card
    html = (out / "report.html").read_text()
    assert "mean |difference|" in html and "within-item SD of scores" in html
    assert "rating data has no winner to flip" in html and "NaN item(s)" not in html


def test_readme_figures_of_the_full_set_are_the_recipes(written):
    """README's figures for the full set are what its command gives (`python
    examples/wmt23_zhen_mqm.py --out DIR --run`: 1,000 resamples, seed 0). Its interval read
    [0.425, 0.482] where the audit has given [0.424, 0.486] since the sentence was written."""
    table, spec, counts = written
    results = audit.run(table, spec=spec, n_bootstrap=1000, seed=0, report=False)
    rel = results["reliability"]
    overall = rel["overall"]["krippendorff_alpha"]
    pools = {p: m["krippendorff_alpha"]["value"] for p, m in rel["by_pool"].items()}
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    assert (f"{counts.rows_read:,} error rows -> {counts.judgments:,} judgments, "
            f"{counts.distinct_scores} distinct scores, {counts.probe_rows} "
            "quality-control probe rows excluded and counted) interval alpha is "
            f"{overall['value']:.3f} [{overall['ci95'][0]:.3f}, {overall['ci95'][1]:.3f}] "
            f"overall, {pools['raters 1-4']:.3f} for raters 1-4 and {pools['raters 5-8']:.3f} "
            "for raters 5-8") in readme
