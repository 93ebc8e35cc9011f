"""Names that one chart would cut to one label stay apart, and tooltips show names whole.

The report's charts cut a name to 32 characters (24 for a panel's title, 18 for a heatmap's
label) so that it fits its axis. Hugging Face model ids of one family are longer than that and
differ at the end (``meta-llama/Meta-Llama-3.1-70B-Instruct`` and ``...-Instruct-Turbo``), as do
long label names: the leaderboard chart drew two rows under one label, the heatmap two rows and
two columns, and the tooltips, cut the same way, could not tell them apart either. Now
:func:`audit.report.charts.shorts` cuts such names in the middle (keeping the end, where they
differ) and numbers those alike at both ends, and every tooltip shows the names up to
:data:`audit.report.charts.MAX_TIP` characters. Names no cut confuses are drawn as before.
"""

from __future__ import annotations

import copy
import json
import random
import xml.etree.ElementTree as ET

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from results_examples import parse_html

from audit.cli import cli
from audit.report import charts

NS = "{http://www.w3.org/2000/svg}"
FAMILY = ("meta-llama/Meta-Llama-3.1-70B-Instruct", "meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo",
          "meta-llama/Meta-Llama-3.1-70B-Instruct-FP8", "gpt-4")
POOLS = ("crowdworkers-recruited-2024-batch-1", "crowdworkers-recruited-2024-batch-2")
LABELS = ("Accuracy/Mistranslation", "Accuracy/Mistranslation (minor)", "Fluency/Grammar")


def svg_texts(svg: str, cls: str | None = None) -> list[str]:
    root = ET.fromstring(svg)
    return ["".join(t.itertext()) for t in root.iter(f"{NS}text")
            if cls is None or t.get("class") == cls]


def tooltips(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    return ["".join(t.itertext()) for el in root.iter() for t in el.findall(f"{NS}title")
            if el is not root]


def boards():
    rng = random.Random(3)
    return {pool: [{"model": m, "rank": i + 1, "score": rng.random(), "ci95": [0.1, 0.9]}
                   for i, m in enumerate(FAMILY)] for pool in POOLS}


def test_leaderboard_rows_and_panels_are_told_apart():
    svg = charts.leaderboard_chart(boards())
    names = [t for t in svg_texts(svg) if t.startswith("meta-llama")]
    assert len(names) == 3 and len(set(names)) == 3, names
    titles = svg_texts(svg, "panel-title")
    assert len(set(titles)) == 2, titles
    tips = tooltips(svg)
    for model in FAMILY:
        for pool in POOLS:
            assert any(t.startswith(f"{model} in {pool}: ") for t in tips), (model, pool)


def test_slope_and_swap_charts_tell_them_apart():
    svg = charts.slope_chart(boards())
    names = {t for t in svg_texts(svg, "name") if t.startswith("meta-llama")}
    assert len(names) == 3, names
    assert len(set(svg_texts(svg, "x-tick")[-2:])) == 2
    assert any(t.startswith(f"{FAMILY[1]}: ") for t in tooltips(svg))
    pairs = [{"model_hi": FAMILY[0], "model_lo": FAMILY[1], "pool": POOLS[0], "gap": 0.01,
              "swap_probability_bootstrap": 0.4,
              "swap_probability_bootstrap_mc_se": 0.05},
             {"model_hi": FAMILY[0], "model_lo": FAMILY[2], "pool": POOLS[1], "gap": 0.01,
              "swap_probability_bootstrap": 0.3,
              "swap_probability_bootstrap_mc_se": 0.05}]
    svg = charts.swap_chart(pairs)
    assert svg is not None
    labels = [t for t in svg_texts(svg) if " / " in t]
    assert len(set(labels)) == 2, labels
    tips = tooltips(svg)
    assert any(t.startswith(f"{FAMILY[0]} / {FAMILY[1]} ({POOLS[0]}): ") for t in tips), tips


def test_heatmap_labels_are_told_apart_and_cells_name_them_whole():
    counts = [[3, 1, 0], [1, 4, 0], [0, 0, 5]]
    svg = charts.confusion_heatmap(list(LABELS), list(LABELS), counts, pool_a=POOLS[0],
                                   pool_b=POOLS[1])
    rows = [t for t in svg_texts(svg) if t.startswith("Accuracy")]
    assert len(rows) == 4 and len(set(rows)) == 2, rows  # a row and a column each
    tips = tooltips(svg)
    assert f"{LABELS[1]} in {POOLS[0]}, {LABELS[0]} in {POOLS[1]}: 1 items" in tips
    root = ET.fromstring(svg)
    assert len(set(root.find(f"{NS}title").text.split(" against "))) == 2


def family_table(path, family=FAMILY, pools=POOLS):
    """A JSON Lines preference table at ``path``: 30 items, each a pair of ``family``'s four
    models judged -1 / 0 / 1 by two annotators of each of ``pools`` (seeded)."""
    rng = random.Random(5)
    rows = []
    for i in range(30):
        a, b = family[i % 4], family[(i + 1 + i % 3) % 4]
        for pool in pools:
            for j in range(2):
                rows.append({"item": f"q{i}", "annotator": f"{pool}-{j}", "pool": pool,
                             "model_a": a, "model_b": b, "label": rng.choice([-1, 0, 1])})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_the_report_draws_one_label_per_model(tmp_path):
    data = family_table(tmp_path / "prefs.jsonl")
    result = CliRunner().invoke(cli, ["run", str(data), "--out", str(tmp_path / "out"),
                                      "--bootstrap", "20", "--quiet"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    html = (tmp_path / "out" / "report.html").read_text("utf-8")
    start = html.index('<svg', html.index('id="chart-leaderboards-title"') - 400)
    svg = html[start:html.index("</svg>", start) + len("</svg>")]
    names = [t for t in svg_texts(svg) if t.startswith("meta-llama")]
    assert len(set(names)) == 3, names
    _, texts = parse_html(html)
    for model in FAMILY:  # the tables name them whole
        assert model in texts


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(st.sampled_from("ab \x1b\u200b…#1"), max_size=40), max_size=8),
       st.integers(4, 40))
def test_shorts_keeps_different_texts_apart(texts, limit):
    labels = charts.shorts(texts, limit)
    assert len(labels) == len(texts)
    for t, u, a, b in ((t, u, a, b) for t, a in zip(texts, labels)
                       for u, b in zip(texts, labels)):
        assert (t == u) == (a == b), (t, u, a, b)
    if len({charts.short(t, limit) for t in set(texts)}) == len(set(texts)):
        assert labels == [charts.short(t, limit) for t in texts]  # nothing to tell apart


def test_shorts_examples():
    assert charts.shorts(["x" * 80]) == ["x" * 31 + "…"]
    a, b = charts.shorts([FAMILY[1], FAMILY[2]])
    assert a == "meta-llama/Meta…3.1-70B-Instruct-Turbo"[:15] + "…" + FAMILY[1][-16:]
    assert b.endswith("70B-Instruct-FP8") and len(a) == len(b) == 32
    same_ends = ["p" * 20 + "1" + "q" * 20, "p" * 20 + "2" + "q" * 20]
    assert charts.shorts(same_ends, 12) == ["ppppp…qqqqqq #1", "ppppp…qqqqqq #2"]
    shown_alike = ["a\x1bb", "a\\x1bb"]  # one shows as the other's text
    assert charts.shorts(shown_alike) == ["a\\x1bb #1", "a\\x1bb #2"]
    assert copy.copy(charts.MAX_TIP) >= 200
