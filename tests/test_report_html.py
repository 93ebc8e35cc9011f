"""The HTML report: every section, the numbers in it, self-containment, sanitised charts, size."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from results_examples import (bare_results, full_results, minimal_results, parse_html,
                              section_html, section_text)

from audit.contract import columns as C
from audit.errors import DegenerateDataWarning
from audit.contract.labels import LabelKind, LabelScale
from audit.report import charts, write_reports
from audit.report.svg import sanitize_svg
from audit.report.html import SECTIONS, confusion_matrix, page_sections, render_html

REPO = Path(__file__).resolve().parents[1]
MULTIPREF = REPO / "tests" / "fixtures" / "multipref" / "multipref_sample.jsonl"
SECTION_IDS = [s for s, _ in SECTIONS]


def section_ids(html: str) -> list[str]:
    tags, _ = parse_html(html)
    return [a.get("id") for t, a in tags if t == "section"]


# -- structure ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [full_results, minimal_results, bare_results])
def test_every_section_is_present_in_order(make):
    results = make()
    ids = section_ids(render_html(results))
    assert sorted(ids) == sorted(SECTION_IDS)
    assert ids == [s for s, _ in page_sections(expectations_first=bool(results.get("expectations")))]
    assert ids[0] == "findings"
    if results.get("expectations"):
        assert ids[1] == "expectations"
    else:  # a "not applicable" expectations box does not open the page
        assert ids.index("expectations") > ids.index("flipped-items")


def test_absent_blocks_say_not_applicable():
    html = render_html(bare_results())
    for sid in ("expectations", "reliability", "pool-disagreement", "leaderboards",
                "closest-pairs", "displacement", "simulation", "judge-alignment",
                "flipped-items"):
        assert "Not applicable" in section_text(html, sid), sid
    assert "Not applicable" not in section_text(html, "overview")
    # HS-Brexit shape: reliability and disagreement present, no models
    html = render_html(minimal_results())
    assert "Not applicable" not in section_text(html, "reliability")
    assert "Not applicable: the dataset compares no models" in section_text(html, "leaderboards")


def f3(x, digits: int = 3) -> str:
    return f"{x:.{digits}f}"


def pc(x) -> str:
    return f"{100 * x:.1f}%"


def pt(x) -> str:
    return f"{100 * x:+.1f}".replace("-", "−")


def test_numbers_are_rendered_where_they_belong():
    r = full_results()
    html = render_html(r)
    rel = section_text(html, "reliability")
    for pool in ("crowd", "expert"):
        e = r["reliability"]["by_pool"][pool]["krippendorff_alpha"]
        assert f"{f3(e['value'])} [{f3(e['ci95'][0])}, {f3(e['ci95'][1])}]" in rel
    pd_text = section_text(html, "pool-disagreement")
    (row,) = [x for x in r["pool_disagreement"] if x["pool_b"] == "expert"
              and x["granularity"] == "label"]
    null, e = row["null"], row["excess"]["majority_differs_rate"]
    lo, hi = row["ci95"]["majority_differs_rate"]
    p = (f"≤ {1 / (null['n_permutations'] + 1):.4f}" if null["p_value"] * (
        null["n_permutations"] + 1) <= 1 + 1e-9 else f"{null['p_value']:.4f} ± {null['mc_se']:.4f}")
    assert (f"labels differ {pc(row['majority_differs_rate'])} [{pc(lo)}, {pc(hi)}] "
            f"{pc(null['majority_differs_rate'])} {pt(e['estimate'])} [{pt(e['ci95'][0])}, "
            f"{pt(e['ci95'][1])}] points {p} ({null['n_permutations']:,} perm.)") in pd_text
    w = {x["pool"]: x for x in r["within_pool"]}["crowd"]
    assert (f"within-item permutation {w['test']['p_value']:.4f}" in pd_text
            or "within-item permutation ≤" in pd_text)
    assert f"{f3(w['effect_size'])} (Cramér's V)" in pd_text
    lb = section_text(html, "leaderboards")
    top = min(r["leaderboards"]["crowd"], key=lambda x: x["rank"])
    assert f"{f3(top['score'])} [{f3(top['ci95'][0])}, {f3(top['ci95'][1])}] (#1)" in lb
    cp = section_text(html, "closest-pairs")
    pairs = sorted(r["stability"]["closest_pairs"],
                   key=lambda x: -x["swap_probability_bootstrap"])
    first = pairs[0]
    assert (f"{f3(first['swap_probability_bootstrap'])} ± "
            f"{f3(first['swap_probability_bootstrap_mc_se'])}") in cp
    sim = r["stability"]["simulation"][-1]
    assert (f"{sim['n_models']} {f3(sim['displacement_probability'])} "
            f"{f3(sim['mc_se'], 4)}") in section_text(html, "simulation")
    ja = section_text(html, "judge-alignment")
    a = r["judge_alignment"][0]["agreement"][0]
    assert (f"{a['pool']} {f3(a['agreement'])} [{f3(a['ci95'][0])}, {f3(a['ci95'][1])}] "
            f"{a['n']:,}") in ja
    assert r["judge_alignment"][0]["verdict"] in ja
    ex = section_text(html, "expectations")
    assert ex.count("FAIL") == 1 and "2 passed" in ex and "1 failed" in ex
    method = section_text(html, "method")
    assert "200" in method and f"numpy {r['meta']['versions']['numpy']}" in method


def test_a_failed_expectation_says_why_in_the_report():
    """The table showed 'FAIL NaN >= 0.667' for a claim on an undefined measurement, without
    the reason the terminal prints; a failed row now carries its message (escaped), a passed
    row none."""
    r = full_results()
    rows = r["expectations"]["results"]
    failed = next(x for x in rows if not x["passed"])
    failed["observed"] = float("nan")
    failed["message"] = ("krippendorff_alpha[crowd] is undefined (NaN) on this data, so the "
                         "claim cannot hold <b>")
    ex = section_text(render_html(r), "expectations")
    assert "is undefined (NaN) on this data, so the claim cannot hold <b>" in ex
    passed = next(x for x in rows if x["passed"])
    assert passed["message"] not in ex
    assert "<b>" not in section_html(render_html(r), "expectations")


def test_flipped_items_are_capped_and_counted():
    r = full_results()
    html = render_html(r, max_items=5)
    sec = section_html(html, "flipped-items")
    n = r["stability"]["flipped_items"]["count"]
    assert n > 5 and sec.count("<tr>") == 1 + 5  # header + 5 items
    assert f"{n} items where" in section_text(html, "flipped-items")
    assert f"showing 5 of {n}" in section_text(html, "flipped-items")


def test_page_is_self_contained():
    html = render_html(full_results())
    tags, _ = parse_html(html)
    names = {t for t, _ in tags}
    assert not names & {"script", "link", "img", "iframe", "object", "embed", "image",
                        "foreignobject", "base", "form"}
    for tag, attrs in tags:
        assert "src" not in attrs, tag
        assert not any(k.startswith("on") for k in attrs), (tag, attrs)
        for k in ("href", "xlink:href"):
            if k in attrs:
                assert attrs[k].startswith("#"), (tag, attrs)
    csp = [a["content"] for t, a in tags if t == "meta" and a.get("http-equiv") ==
           "Content-Security-Policy"]
    assert csp and "default-src 'none'" in csp[0]
    assert "http://" not in re.sub(r'xmlns(:\w+)?="[^"]+"', "", html)
    assert "https://" not in html


def test_render_is_deterministic():
    assert render_html(full_results()) == render_html(full_results())


def test_every_section_has_a_chart_when_data_allow():
    html = render_html(full_results())
    for sid in ("reliability", "pool-disagreement", "leaderboards", "closest-pairs",
                "displacement", "simulation"):
        assert "<svg" in section_html(html, sid), sid
    assert section_html(html, "leaderboards").count("<svg") == 2  # forest + slope chart


# -- charts ------------------------------------------------------------------------------------------
def test_sanitize_svg_removes_active_content():
    evil = """<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"
      onload="alert(1)" viewBox="0 0 10 10" role="img">
      <script>alert(1)</script>
      <style>@import url(http://x/y.css);</style>
      <style>* { stroke-linejoin: round; stroke-linecap: butt }</style>
      <foreignObject><div xmlns="http://www.w3.org/1999/xhtml">x</div></foreignObject>
      <a xlink:href="javascript:alert(1)"><text>link</text></a>
      <image href="http://example.org/a.png"/>
      <g style="fill: #fff" fill="url(http://x/#p)" onclick="alert(1)"><path d="M0 0L1 1"
        fill="#fff" stroke="url(#ok)" xlink:title="x"/></g>
      <use xlink:href="http://x/#a"/><use xlink:href="#ok"/>
      <rect width="1" height="1"><title>&lt;b&gt;tip</title><set attributeName="fill"/></rect>
      <text x="1">&lt;script&gt;alert(1)&lt;/script&gt;</text>
    </svg>"""
    out = sanitize_svg(evil)
    low = out.lower()
    for bad in ("<script", "onload", "onclick", "foreignobject", "javascript:", "http://x",
                "example.org", "@import", "<image", "<a ", "<style", "style=", "<use", "href",
                "<set", "xlink"):
        assert bad not in low, bad
    root = ET.fromstring(out)
    ns = "{http://www.w3.org/2000/svg}"
    path = root.find(f".//{ns}path")
    assert path.attrib == {"d": "M0 0L1 1", "fill": "#fff", "stroke": "url(#ok)"}
    assert root.find(f".//{ns}g").attrib == {}
    assert root.get("role") == "img" and root.get("viewBox") == "0 0 10 10"
    assert [t.text for t in root.iter(f"{ns}text")] == ["<script>alert(1)</script>"]
    assert root.find(f".//{ns}rect/{ns}title").text == "<b>tip"
    assert "&lt;script&gt;" in out


def _texts(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    return ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")]


def test_chart_labels_are_text_and_escaped():
    evil = ["<script>alert(1)</script>", "$\\frac{a}{$", "a&b\"c'd", "x" * 80]
    boards = {"p<1>": [{"model": m, "score": 0.5 - 0.1 * i, "ci95": [0.4 - 0.1 * i, 0.6 - 0.1 * i],
                        "rank": i + 1} for i, m in enumerate(evil)],
              "p2": [{"model": m, "score": 0.1 * i, "ci95": None, "rank": 4 - i}
                     for i, m in enumerate(evil)]}
    for svg in (charts.leaderboard_chart(boards), charts.slope_chart(boards)):
        texts = _texts(svg)
        for m in evil:
            assert charts.short(m) in texts or charts.short(m, 24) in texts, m
        assert "<script" not in svg and "&lt;script&gt;" in svg
    assert charts.short("x" * 80) == "x" * 31 + "…"


def test_reliability_chart_skips_undefined_pools_and_odd_intervals():
    rel = {"overall": {"krippendorff_alpha": {"value": 0.5, "ci95": [0.55, 0.7]}},  # CI above
           "by_pool": {"solo": {"krippendorff_alpha": {"value": None, "ci95": [None, None]}},
                       "duo": {"krippendorff_alpha": {"value": 0.4, "ci95": None}}}}
    texts = _texts(charts.reliability_chart(rel))
    assert "all humans" in texts and "duo" in texts and "solo" not in texts


def test_charts_are_none_without_data():
    assert charts.reliability_chart(None) is None
    assert charts.reliability_chart({"overall": {}, "by_pool": {}}) is None
    assert charts.leaderboard_chart({}) is None
    assert charts.slope_chart({"only": [{"model": "m", "score": 1.0, "rank": 1}]}) is None
    assert charts.swap_chart([]) is None
    assert charts.displacement_histogram({"p": {}}) is None
    assert charts.simulation_curve([{"n_models": 6, "displacement_probability": None}]) is None
    assert charts.confusion_heatmap(["a"], ["a", "b"], [[1]], pool_a="x", pool_b="y") is None


def test_heatmap_writes_every_count():
    counts = [[388, 16, 23], [0, 89, 8], [29, 11, 1435]]
    svg = charts.confusion_heatmap(["A", "tie", "B"], ["A", "tie", "B"], counts,
                                   pool_a="p1", pool_b="p2")
    texts = _texts(svg)
    for row in counts:
        for c in row:
            assert f"{c:,}" in texts
    assert "<image" not in svg  # vector cells, no raster


def test_confusion_matrix_reads_the_producers_layout():
    """The pool-vs-pool table as audit.measure writes it: pool A's majority labels as rows, pool
    B's as columns, the both-unanimous items as counts; one heatmap per pair and granularity."""
    r = full_results()
    for row in r["pool_disagreement"]:
        if not row.get("confusion"):
            continue
        la, lb, counts = confusion_matrix(row)
        assert la == lb == list(row["confusion"])
        assert int(np.asarray(counts).sum()) == row["n_items_both_unanimous"]
        off = sum(c for i, line in enumerate(counts) for j, c in enumerate(line) if i != j)
        assert off == round(row["majority_differs_rate"] * row["n_items_both_unanimous"])
    assert confusion_matrix({"confusion": None}) is None
    html = section_html(render_html(r), "pool-disagreement")
    assert html.count("<svg") == sum(bool(row.get("confusion")) for row in r["pool_disagreement"])


# -- files, pipeline, size ---------------------------------------------------------------------------
def test_write_reports_writes_three_files(tmp_path):
    paths = write_reports(full_results(), tmp_path / "out")
    assert set(paths) == {"report", "card", "croissant_rai", "croissant"}
    assert paths["report"].name == "report.html" and paths["card"].name == "dataset_card.md"
    assert section_ids(paths["report"].read_text()) == SECTION_IDS
    assert json.loads(paths["croissant_rai"].read_text())["@type"] == "sc:Dataset"


def test_help_does_not_import_the_renderers():
    code = ("import sys; from audit.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print([m for m in ('matplotlib', 'jinja2', 'huggingface_hub') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_cli_run_writes_report_and_card(tmp_path):
    from audit.cli import cli

    result = CliRunner().invoke(cli, ["run", str(MULTIPREF), "--out", str(tmp_path),
                                      "--bootstrap", "30", "--quiet"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    res = json.loads((tmp_path / "results.json").read_text())
    html = (tmp_path / "report.html").read_text()
    assert section_ids(html) == [s for s, _ in page_sections(expectations_first=False)]
    assert res["dataset"]["name"] in section_text(html, "overview")
    alpha = res["reliability"]["overall"]["krippendorff_alpha"]
    if alpha["value"] is not None:
        assert f"{alpha['value']:.3f}" in section_text(html, "reliability")
    for p in res["dataset"]["pools"]:
        assert p in section_text(html, "overview")
    assert (tmp_path / "dataset_card.md").exists() and (tmp_path / "croissant_rai.json").exists()


def synthetic_table(n_items: int, *, seed: int = 0, n_models: int = 8):
    """A MultiPref-shaped table: crowd and expert pools (2 judgments each) and a judge pool."""
    from audit.contract.table import build_table

    rng = np.random.default_rng(seed)
    models = np.array([f"model-{k}" for k in range(n_models)])
    a = rng.integers(0, n_models, n_items)
    b = (a + rng.integers(1, n_models, n_items)) % n_models
    strength = np.linspace(1, -1, n_models)
    items = np.arange(n_items).astype(str)
    frames = []
    for pool, n_ann, noise in (("crowd", 20, 1.0), ("expert", 6, 0.5), ("gpt-4", 1, 0.3)):
        for rep in range(1 if pool == "gpt-4" else 2):
            label = np.clip(np.round(strength[b] - strength[a]
                                     + rng.normal(0, noise, n_items)), -2, 2).astype(int)
            frames.append(pd.DataFrame({
                C.ITEM: items, C.POOL: pool, C.LABEL: label,
                C.ANNOTATOR: pd.Series(rng.integers(0, n_ann, n_items)).map(
                    lambda x, p=pool, r=rep: f"{p}-{x}-{r}"),
                C.MODEL_A: models[a], C.MODEL_B: models[b], C.TEXT: "a long prompt " * 40}))
    return build_table(pd.concat(frames, ignore_index=True),
                       LabelScale(LabelKind.PREFERENCE, (-2, -1, 0, 1, 2)),
                       name=f"synthetic-{n_items}", source="synthetic", judge_pools=("gpt-4",))


@pytest.mark.slow
def test_report_size_is_set_by_aggregates_not_items(record_property):
    from audit.pipeline import audit_table
    from audit.resample import Bootstrap
    from audit.results import json_form

    sizes = {}
    for n in (1_000, 10_000):
        with warnings.catch_warnings():  # the one-annotator judge pool has NaN reliability
            warnings.simplefilter("ignore", DegenerateDataWarning)
            results = json_form(audit_table(synthetic_table(n), bootstrap=Bootstrap(50, 0)))
        html = render_html(results)
        assert section_ids(html) == [s for s, _ in page_sections(expectations_first=False)]
        sizes[n] = len(html.encode("utf-8"))
    record_property("report_bytes_10k_items", sizes[10_000])
    print(f"report size: 1k items {sizes[1_000]:,} B, 10k items {sizes[10_000]:,} B")
    assert sizes[10_000] < 2_000_000
    assert abs(sizes[10_000] - sizes[1_000]) < 100_000  # 10x the items, not 10x the bytes


def test_swap_and_simulation_charts_draw_the_new_uncertainty():
    st = full_results()["stability"]
    texts = _texts(charts.swap_chart(st["closest_pairs"]))
    assert "closed form Φ(−gap/(√2·SD))" in texts and "bootstrap share (±2 MC s.e.)" in texts
    bare = [{k: v for k, v in r.items() if "closed" not in k} for r in st["closest_pairs"]]
    assert "closed form Φ(−gap/(√2·SD))" not in _texts(charts.swap_chart(bare))
    texts = _texts(charts.simulation_curve(st["simulation"]))
    assert "95% interval over the SD's uncertainty" in texts and "±2 Monte-Carlo s.e." in texts
    no_interval = [dict(r, interval95=[None, None]) for r in st["simulation"]]
    assert "95% interval over the SD's uncertainty" not in _texts(
        charts.simulation_curve(no_interval))


def test_baseline_section_and_flipped_count(tmp_path):
    """``check --baseline --out`` gives the report a section of what changed — label names,
    per pool, per annotator — from results.json's ``baseline``; the flipped-items list says
    how many it shows of how many and where the rest are."""
    import json as _json
    import re as _re

    from click.testing import CliRunner

    from audit.cli import cli

    repo = Path(__file__).resolve().parents[1]
    old = repo / "data" / "pandalm" / "testset-v1.json"
    records = _json.loads(old.read_text())
    for r in records[:30]:
        r["annotator2"] = (r["annotator2"] + 1) % 3
    new = tmp_path / "new.json"
    new.write_text(_json.dumps(records))
    res = CliRunner().invoke(cli, ["check", str(new), "--baseline", str(old), "--suite",
                                   str(repo / "expectations" / "pandalm.yaml"), "--bootstrap",
                                   "20", "--out", str(tmp_path / "o"), "--quiet"])
    assert res.exit_code in (0, 1), res.output
    results = _json.loads((tmp_path / "o" / "results.json").read_text())
    rel = results["baseline"]["relabelled"]
    html = (tmp_path / "o" / "report.html").read_text()
    section = html[html.index('id="baseline"'):]
    section = section[:section.index("</section>")]
    text = _re.sub(r"\s+", " ", _re.sub(r"<[^>]+>", " ", section))
    assert f"{rel['count']} judgments relabelled" in text
    for t in rel["transitions"]:
        assert f"{t['old']} {t['new']} {t['count']}" in text
    assert rel["by_pool"]["annotator2"]["n_relabelled"] == 30
    assert "annotator2 annotator2 30 999 3.0%" in text
    fl = results["stability"]["flipped_items"]
    shown = len(fl["items"])
    if fl["truncated"]:
        assert f"showing {shown} of {fl['n_flipped']}" in html
    assert "items.parquet" in html[html.index('id="flipped-items"'):]
    plain = CliRunner().invoke(cli, ["run", str(old), "--bootstrap", "20", "--out",
                                     str(tmp_path / "r"), "--quiet"])
    assert plain.exit_code == 0
    assert "Not applicable: no baseline" in (tmp_path / "r" / "report.html").read_text()
