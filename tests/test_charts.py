"""The report's SVG charts: every mark is the results' number, every string is text, every
chart is accessible, inert and cheap, and degenerate blocks draw or give None without error.

Numbers are read back from the drawing itself: tick labels sit at their values, so two ticks
give the axis' map, and each dot, bar end or cell is inverted through it and compared with the
result dict it was drawn from.
"""

from __future__ import annotations

import math
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest
from results_examples import PAYLOADS, full_results

from audit.report import charts
from audit.report.html import render_html
from audit.report.read import swap
from audit.report.svg import sanitize_svg
from audit.report.svgaxes import nice_domain, nice_number, tick_label, ticks_within
from audit.report.svgdraw import Drawing

NS = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def by_class(el: ET.Element, cls: str, tag: str = "*") -> list[ET.Element]:
    return [e for e in el.iter(f"{NS}{tag}" if tag != "*" else tag) if e.get("class") == cls]


def texts(svg: str) -> list[str]:
    return ["".join(t.itertext()) for t in parse(svg).iter(f"{NS}text")]


def axis(el: ET.Element, cls: str, attr: str):
    """The map from a coordinate to a value, from the first and last tick labels of class
    ``cls`` (``x-tick`` read at ``x``, ``y-tick`` at ``y``)."""
    ticks = [(float(t.get(attr)), float(t.text.replace("−", "-"))) for t in by_class(el, cls,
                                                                                     "text")]
    assert len(ticks) >= 2, ticks
    (p0, v0), (p1, v1) = ticks[0], ticks[-1]
    return lambda p: v0 + (float(p) - p0) * (v1 - v0) / (p1 - p0)


def interval_ends(estimate: ET.Element, inv) -> tuple[float, float]:
    (line,) = by_class(estimate, "interval", "line")
    return inv(line.get("x1")), inv(line.get("x2"))


def expected_ends(value, ci):
    lo, hi = (ci or [None, None])[:2]
    ok = lambda v: v is not None and math.isfinite(v)
    return (min(lo, value) if ok(lo) else value, max(hi, value) if ok(hi) else value)


TOL = 2e-4  # coordinates are written to 0.01 units over a few hundred units


# -- the numbers -----------------------------------------------------------------------------------
def test_reliability_marks_are_the_coefficients():
    rel = full_results()["reliability"]
    svg = charts.reliability_chart(rel)
    root = parse(svg)
    inv = axis(root, "x-tick", "x")
    series = {"all humans": rel["overall"], **rel["by_pool"]}
    metrics = [m for m in charts._metrics(series) if m not in charts.NOT_CHARTED]
    want = [(e["value"], e.get("ci95")) for stats in series.values() for m in metrics
            if (e := stats.get(m) or {}).get("value") is not None
            and math.isfinite(e["value"])]
    got = by_class(root, "estimate", "g")
    assert len(got) == len(want) > 0
    for g, (value, ci) in zip(got, want):
        (dot,) = by_class(g, "point", "circle")
        assert inv(dot.get("cx")) == pytest.approx(value, abs=TOL)
        assert interval_ends(g, inv) == pytest.approx(expected_ends(value, ci), abs=TOL)
    refs = [inv(line.get("x1")) for line in by_class(root, "reference", "line")]
    assert refs == pytest.approx([0.667, 0.8], abs=TOL)


def test_leaderboard_marks_are_the_scores_per_panel():
    boards = full_results()["leaderboards"]
    root = parse(charts.leaderboard_chart(boards))
    panels = by_class(root, "panel", "g")
    assert [p.find(f"{NS}text").text for p in panels] == list(boards)
    order = charts.model_order(boards)
    ys = {float(t.get("y")): t.text for t in by_class(root, "y-label", "text")}
    assert list(ys.values()) == [charts.short(m) for m in order]
    for panel, (pool, rows) in zip(panels, boards.items()):
        inv = axis(panel, "x-tick", "x")
        by_model = {r["model"]: r for r in rows}
        marks = by_class(panel, "estimate", "g")
        assert len(marks) == len(rows)
        for g in marks:
            (dot,) = by_class(g, "point", "circle")
            r = by_model[order[list(ys).index(float(dot.get("cy")))]]
            assert inv(dot.get("cx")) == pytest.approx(r["score"], abs=TOL)
            assert interval_ends(g, inv) == pytest.approx(expected_ends(r["score"], r["ci95"]),
                                                          abs=TOL)


def test_slope_points_are_the_ranks():
    boards = full_results()["leaderboards"]
    root = parse(charts.slope_chart(boards))
    inv = axis(root, "y-tick", "y")
    cols = [float(t.get("x")) for t in by_class(root, "x-tick", "text")]
    assert [t.text for t in by_class(root, "x-tick", "text")] == [charts.short(p, 20)
                                                                    for p in boards]
    ranks = {p: {r["model"]: r["rank"] for r in rows} for p, rows in boards.items()}
    models = by_class(root, "model", "g")
    assert len(models) == len(charts.model_order(boards))
    for g, model in zip(models, charts.model_order(boards)):
        dots = by_class(g, "point", "circle")
        assert [inv(c.get("cy")) for c in dots] == pytest.approx(
            [ranks[p][model] for p in boards], abs=1e-3)
        assert [float(c.get("cx")) for c in dots] == cols
        moved = len({ranks[p][model] for p in boards}) > 1
        assert (g.find(f"{NS}polyline").get("stroke") == charts.INK) is moved


def test_swap_bars_and_diamonds_are_the_probabilities():
    pairs = full_results()["stability"]["closest_pairs"]
    root = parse(charts.swap_chart(pairs))
    inv = axis(root, "x-tick", "x")
    groups = by_class(root, "pair", "g")
    assert len(groups) == len(pairs)
    for g, r in zip(groups, pairs):
        s = swap(r)
        (bar,) = by_class(g, "bar", "rect")
        assert inv(float(bar.get("x")) + float(bar.get("width"))) == pytest.approx(
            s["bootstrap"], abs=TOL)
        assert inv(bar.get("x")) == pytest.approx(0.0, abs=TOL)
        (err,) = by_class(g, "error", "line")
        assert inv(err.get("x2")) - inv(err.get("x1")) == pytest.approx(
            min(s["bootstrap"] + 2 * s["mc_se"], 1) - max(s["bootstrap"] - 2 * s["mc_se"], 0),
            abs=2 * TOL)
        (diamond,) = by_class(g, "closed", "polygon")
        xs = [float(p.split(",")[0]) for p in diamond.get("points").split()]
        assert inv((min(xs) + max(xs)) / 2) == pytest.approx(s["closed_form"], abs=TOL)
    (ref,) = by_class(root, "reference", "line")
    assert inv(ref.get("x1")) == pytest.approx(0.05, abs=TOL)


def test_histogram_bars_are_the_shares():
    hist = full_results()["stability"]["displacement_histogram"]
    root = parse(charts.displacement_histogram(hist))
    inv_y = axis(root, "y-tick", "y")
    inv_x = axis(root, "x-tick", "x")
    series = by_class(root, "series", "g")
    assert len(series) == len(hist)
    for g, (pool, h) in zip(series, hist.items()):
        total = sum(h.values())
        bars = by_class(g, "bar", "rect")
        assert len(bars) == len(h)
        for bar, (k, v) in zip(bars, sorted(h.items(), key=lambda kv: int(kv[0]))):
            top, base = float(bar.get("y")), float(bar.get("y")) + float(bar.get("height"))
            assert inv_y(top) - inv_y(base) == pytest.approx(v / total, abs=TOL)
            assert inv_y(base) == pytest.approx(0.0, abs=TOL)
            left = inv_x(bar.get("x"))
            assert int(k) - 0.4 - 1e-3 <= left <= int(k) + 0.4, (k, left)


def test_simulation_points_and_bands_are_the_probabilities():
    sim = full_results()["stability"]["simulation"]
    root = parse(charts.simulation_curve(sim))
    inv_x, inv_y = axis(root, "x-tick", "x"), axis(root, "y-tick", "y")
    dots = by_class(root, "point", "circle")
    rows = sorted(sim, key=lambda r: r["n_models"])
    assert len(dots) == len(rows)
    for dot, r in zip(dots, rows):
        assert inv_x(dot.get("cx")) == pytest.approx(r["n_models"], abs=1e-2)
        assert inv_y(dot.get("cy")) == pytest.approx(r["displacement_probability"], abs=TOL)
    (band,) = by_class(root, "band-interval", "polygon")
    pts = [tuple(map(float, p.split(","))) for p in band.get("points").split()]
    upper = [inv_y(y) for _, y in pts[:len(rows)]]
    lower = [inv_y(y) for _, y in pts[len(rows):]][::-1]
    assert upper == pytest.approx([r["interval95"][1] for r in rows], abs=TOL)
    assert lower == pytest.approx([r["interval95"][0] for r in rows], abs=TOL)


def test_heatmap_cells_are_the_counts_shaded_by_row_share():
    counts = [[388, 16, 23], [0, 89, 8], [29, 11, 1435]]
    root = parse(charts.confusion_heatmap(["A", "tie", "B"], ["A", "tie", "B"], counts,
                                          pool_a="p1", pool_b="p2"))
    got = [t.text for t in by_class(root, "count", "text")]
    assert got == [f"{c:,}" for line in counts for c in line]
    fills = [c.get("fill") for c in by_class(root, "cell", "rect")]
    darkness = [-sum(int(f[k:k + 2], 16) for k in (1, 3, 5)) for f in fills]
    shares = [c / sum(line) for line in counts for c in line]
    order = sorted(range(len(shares)), key=shares.__getitem__)
    assert [darkness[i] for i in order] == sorted(darkness)  # darker where the share is larger
    assert charts._blues(0.0) == charts.BLUES[0] and charts._blues(1.0) == charts.BLUES[-1]


# -- strings ---------------------------------------------------------------------------------------
HOSTILE = PAYLOADS + ("a\x1bb\x00c", "\ud800lone", "rtl\u202eevil", "]]><!--", "tab\there",
                      "  spaced\n\nname  ", "ünïcødé 模型 🚀", "x" * 80)


def hostile_blocks():
    names = list(HOSTILE)
    boards = {f"p{i}{names[i]}": [{"model": m, "score": 0.1 * k, "ci95": [0.1 * k - 0.05,
                                                                         0.1 * k + 0.05],
                                   "rank": len(names) - k} for k, m in enumerate(names)]
              for i in range(2)}
    rel = {"overall": {"krippendorff_alpha": {"value": 0.5, "ci95": [0.4, 0.6]}},
           "by_pool": {p: {"krippendorff_alpha": {"value": 0.3, "ci95": [0.2, 0.4]}}
                       for p in boards}}
    pairs = [{"pool": p, "model_hi": names[0], "model_lo": names[-1],
              "swap_probability_bootstrap": 0.3, "swap_probability_bootstrap_mc_se": 0.02}
             for p in boards]
    hist = {p: {"0": 3, "1": 5} for p in boards}
    return boards, rel, pairs, hist, names


def hostile_charts():
    boards, rel, pairs, hist, names = hostile_blocks()
    return [charts.leaderboard_chart(boards), charts.slope_chart(boards),
            charts.reliability_chart(rel), charts.swap_chart(pairs),
            charts.displacement_histogram(hist),
            charts.confusion_heatmap(names[:3], names[:3], [[1, 2, 3]] * 3,
                                     pool_a=names[0], pool_b=names[1])]


def test_hostile_names_are_text_in_every_chart():
    boards, _, _, _, names = hostile_blocks()
    for svg in hostile_charts():
        assert svg is not None
        root = parse(svg)  # every chart parses, whatever the names hold
        low = svg.lower()
        for bad in ("<script", "<img", "<svg onload", "<!--", "<style", "</title><script"):
            assert bad not in low, bad
        for el in root.iter():
            assert not any(k.startswith("on") for k in el.attrib), el.attrib
        assert "\x1b" not in svg and "\x00" not in svg
    shown = set(texts(charts.leaderboard_chart(boards)))
    for m in names:
        assert charts.short(m) in shown, m
    assert charts.short("a\x1bb\x00c") == "a\\x1bb\\x00c"
    assert charts.short("\ud800lone") == "\\ud800lone"


def test_tooltips_and_titles_hold_names_as_text():
    _, rel, _, _, _ = hostile_blocks()
    root = parse(charts.reliability_chart(rel))
    tips = ["".join(t.itertext()) for g in by_class(root, "estimate", "g")
            for t in g.findall(f"{NS}title")]
    for pool in rel["by_pool"]:  # escaped on output, read back as written, whole
        assert any(t.startswith(f"{charts.short(pool, charts.MAX_TIP)}, ") for t in tips), pool


# -- accessibility, the sanitiser, cost ------------------------------------------------------------
def every_chart():
    r = full_results()
    st = r["stability"]
    row = next(x for x in r["pool_disagreement"] if x.get("confusion"))
    from audit.report.html import confusion_matrix

    return {"reliability": charts.reliability_chart(r["reliability"]),
            "leaderboards": charts.leaderboard_chart(r["leaderboards"]),
            "slope": charts.slope_chart(r["leaderboards"]),
            "swaps": charts.swap_chart(st["closest_pairs"]),
            "displacement": charts.displacement_histogram(st["displacement_histogram"]),
            "simulation": charts.simulation_curve(st["simulation"]),
            "confusion": charts.confusion_heatmap(*confusion_matrix(row), pool_a="a",
                                                  pool_b="b")}


def test_every_chart_is_a_named_image():
    for name, svg in every_chart().items():
        root = parse(svg)
        assert root.get("role") == "img"
        ids = root.get("aria-labelledby").split()
        assert ids == [f"chart-{name}-title", f"chart-{name}-desc"]
        found = {e.get("id"): "".join(e.itertext()) for e in root.iter() if e.get("id")}
        assert set(found) == set(ids)
        assert all(len(found[i]) > 10 for i in ids), found
        assert root.find(f"{NS}title").get("id") == ids[0]
        assert root.find(f"{NS}desc").get("id") == ids[1]
        assert root.get("viewBox") == f"0 0 {root.get('width')} {root.get('height')}"


def test_page_ids_are_unique():
    html = render_html(full_results())
    import re

    ids = re.findall(r'\sid="([^"]+)"', html)
    assert len(ids) == len(set(ids))


def test_charts_are_what_the_sanitiser_keeps():
    """The builder writes only allowed elements and attributes: sanitising changes nothing."""
    for name, svg in [*every_chart().items(), *enumerate(hostile_charts())]:
        assert sanitize_svg(svg) == svg, name


def test_charts_use_the_okabe_ito_colours_for_pools():
    r = full_results()
    colours = charts.dataset_colours(r["dataset"])
    svg = charts.leaderboard_chart(r["leaderboards"], colours=colours)
    fills = {c.get("fill") for c in parse(svg).iter(f"{NS}circle")}
    assert fills == {colours["crowd"], colours["expert"], colours["gpt-4"], charts.NEUTRAL}


def test_rendering_is_cheap_and_imports_no_plotting_library():
    boards = {p: [{"model": f"m{k:02d}", "score": 1 - k / 50, "ci95": [0.9 - k / 50, 1.1 - k / 50],
                   "rank": k + 1} for k in range(50)] for p in ("a", "b", "all")}
    start = time.perf_counter()
    for _ in range(5):
        charts.leaderboard_chart(boards)
        charts.slope_chart(boards)
    assert (time.perf_counter() - start) / 5 < 0.5  # matplotlib took ~2 s for these two
    code = ("import sys; sys.path.insert(0, 'tests'); from results_examples import full_results;"
            "from audit.report.html import render_html; render_html(full_results());"
            "print(sorted(m for m in ('matplotlib', 'cycler', 'PIL') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_chart_size_is_capped_by_models_not_rows():
    def boards(n):
        return {p: [{"model": f"m{k}", "score": k / n, "ci95": None, "rank": n - k}
                    for k in range(n)] for p in ("a", "b")}
    assert len(charts.leaderboard_chart(boards(400))) < 1.2 * len(
        charts.leaderboard_chart(boards(charts.MAX_MODELS)))


# -- degenerate blocks -----------------------------------------------------------------------------
def test_degenerate_blocks_draw_or_give_none():
    one = {"only": [{"model": "m", "score": 0.7, "ci95": [0.7, 0.7], "rank": 1}]}
    svg = charts.leaderboard_chart(one)
    inv = axis(parse(svg), "x-tick", "x")
    (dot,) = by_class(parse(svg), "point", "circle")
    assert inv(dot.get("cx")) == pytest.approx(0.7, abs=TOL)
    assert charts.slope_chart(one) is None
    nan = {"a": [{"model": "m", "score": float("nan"), "ci95": None, "rank": None}]}
    assert charts.leaderboard_chart(nan) is None and charts.slope_chart({**nan, "b": nan["a"]}) \
        is None
    half = {"a": one["only"], "b": nan["a"]}
    assert charts.leaderboard_chart(half).count('class="panel"') == 1
    assert charts.slope_chart(half) is not None
    ties = {"a": [{"model": "x", "score": 0.5, "ci95": None, "rank": 1},
                  {"model": "y", "score": 0.5, "ci95": None, "rank": 1}],
            "b": [{"model": "x", "score": 0.5, "ci95": None, "rank": 2},
                  {"model": "y", "score": 0.5, "ci95": None, "rank": 1}]}
    assert charts.slope_chart(ties) and charts.leaderboard_chart(ties)
    mid = {p: [dict(r, rank=1.5) if r["model"] == "x" else r for r in rows]
           for p, rows in ties.items()}
    tips = ["".join(t.itertext()) for t in parse(charts.slope_chart(mid)).iter(f"{NS}title")]
    assert "x: #1.5 in a, #1.5 in b" in tips and "y: #1 in a, #1 in b" in tips
    rel = {"by_pool": {"solo": {"icc": {"value": -0.2, "ci95": [float("nan"), 0.1]}}}}
    root = parse(charts.reliability_chart(rel))
    (g,) = by_class(root, "estimate", "g")
    assert interval_ends(g, axis(root, "x-tick", "x")) == pytest.approx((-0.2, 0.1), abs=TOL)
    assert charts.swap_chart([{"swap_probability_bootstrap": 0.0,
                               "swap_probability_bootstrap_mc_se": None}]) is not None
    assert charts.displacement_histogram({"p": {"3": 7}}) is not None
    assert charts.simulation_curve([{"n_models": 6, "displacement_probability": 0.5}])
    assert charts.confusion_heatmap(["a"], ["a"], [[0]], pool_a="x", pool_b="y") is not None
    assert charts.confusion_heatmap([], [], [], pool_a="x", pool_b="y") is None


# -- the builder and the ticks ---------------------------------------------------------------------
def test_nice_numbers_follow_heckbert():
    assert [nice_number(x, round_it=True) for x in (0.13, 0.26, 0.6, 0.8, 1.2, 3.4)] == \
        pytest.approx([0.1, 0.2, 0.5, 1.0, 1.0, 5.0])
    assert nice_domain(0.213, 0.821) == pytest.approx((0.2, 1.0, 0.2))  # Heckbert's loose labels
    assert nice_domain(-0.03, 0.41) == pytest.approx((-0.1, 0.5, 0.1))
    assert nice_domain(0.7, 0.7)[0] < 0.7 < nice_domain(0.7, 0.7)[1]
    assert ticks_within(0.0, 0.55) == pytest.approx([0.0, 0.2, 0.4])
    assert ticks_within(0.0, 0.55, step=0.1) == pytest.approx([0.0, 0.1, 0.2, 0.3, 0.4, 0.5])
    assert ticks_within(1, 5, n=2, integer=True) == [1, 2, 3, 4, 5]  # never a lone tick
    assert ticks_within(1, 40, n=20, integer=True)[:3] == [2, 4, 6]
    assert tick_label(-0.5, 0.1) == "−0.5" and tick_label(-1e-17, 0.1) == "0.0"
    assert tick_label(20, 5) == "20"


def test_drawing_escapes_and_parses_back():
    d = Drawing("t", 10, 10, title="<b>&", desc="d\x07")
    d.text(1, 1, "</text><script>x</script>")
    d.rect(5, 5, -2, -3, tip="a\"b'c")
    root = parse(d.to_svg())
    assert "".join(root.find(f"{NS}text").itertext()) == "</text><script>x</script>"
    assert root.find(f"{NS}title").text == "<b>&" and root.find(f"{NS}desc").text == "d\\x07"
    rect = root.find(f"{NS}rect")
    assert (rect.get("x"), rect.get("y"), rect.get("width"), rect.get("height")) == \
        ("3", "2", "2", "3")
    assert rect.find(f"{NS}title").text == "a\"b'c"
