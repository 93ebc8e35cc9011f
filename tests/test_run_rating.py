"""The whole analysis from ``annotation-audit run`` on HS-Brexit-like rating data: two named pools of
three annotators rating every output of several systems (a score per system and segment)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from audit.cli import cli
from benchmarks import synth


def test_rating_data_runs_end_to_end(tmp_path):
    pools = (synth.PoolSpec("target group", bias=0.4, noise=0.5, share=1.0, model_sd=0.3),
             synth.PoolSpec("control group", bias=0.0, noise=0.8, share=1.0, model_sd=0.3))
    raw = synth.generate(n_items=300, kind="rating", n_models=6, n_annotators=6, pools=pools,
                         per_item=(6, 6), seed=4)
    src = tmp_path / "ratings.csv"
    raw.to_csv(src, index=False)
    spec = tmp_path / "spec.yaml"
    spec.write_text("name: ratings\nlabel: {kind: ordinal, order: [1, 2, 3, 4, 5]}\n")

    result = CliRunner().invoke(cli, ["run", str(src), "--spec", str(spec), "--out",
                                      str(tmp_path / "o"), "--bootstrap", "200", "--no-report"])
    assert result.exit_code == 0, result.output
    res = json.loads((tmp_path / "o" / "results.json").read_text())

    assert set(res["dataset"]["pools"]) == {"target group", "control group"}
    assert res["leaderboard_method"]["metric"] == "mean_score"
    boards = res["leaderboards"]
    assert set(boards) == {"target group", "control group", "all"}
    # the mean score per system equals a plain pandas group-by of the raw ratings
    for pool, rows in boards.items():
        sub = raw if pool == "all" else raw[raw["pool"] == pool]
        expected = sub.assign(label=sub["label"].astype(float)).groupby("model", observed=True)[
            "label"].mean()
        for row in rows:
            assert abs(row["score"] - expected[row["model"]]) < 1e-12
            assert row["ci95"][0] <= row["score"] <= row["ci95"][1]
    pair = res["stability"]["pool_pairs"][0]
    assert {pair["pool_a"], pair["pool_b"]} == {"target group", "control group"}
    assert -1 <= pair["kendall_tau"] <= 1 and pair["score_shift_sd"] > 0
    assert [r["n_models"] for r in res["stability"]["simulation"]] == [6, 10, 20, 50, 100]
    assert res["within_pool"] and res["pool_disagreement"]
    assert "leaderboards" in result.output and "pool switch" in result.output
