"""The report in a real browser (headless Chromium): sections render, nothing is fetched, no console
errors, no horizontal overflow at laptop and phone widths."""

from __future__ import annotations

from pathlib import Path

import chromium
import pytest
from conftest import shared_data
from results_examples import bare_results, full_results, minimal_results

from audit.report.html import SECTIONS, write_html

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not chromium.available(), reason=chromium.SKIP_REASON)]

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
SIZES = {"laptop": chromium.LAPTOP, "phone": chromium.PHONE}


@pytest.fixture(scope="module")
def driver():
    with chromium.browser() as d:
        yield d


def check_page(driver, report: Path, shots: Path, name: str) -> dict:
    """Open ``report`` at each width and assert what a reader needs; return facts per width."""
    url = report.resolve().as_uri()
    facts = {}
    for size, (w, h) in SIZES.items():
        driver.get_log("browser"), driver.get_log("performance")  # drop earlier pages' entries
        chromium.set_viewport(driver, w, h)
        driver.get(url)
        assert driver.execute_script("return document.readyState") == "complete"
        errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
        assert errors == [], errors
        fetched = [u for u in chromium.requested_urls(driver)
                   if u != url and not u.startswith("data:")]
        assert fetched == [], fetched
        for sid, heading in SECTIONS:
            el = driver.find_element("id", sid)
            assert el.is_displayed(), (size, sid)
            text = el.text.strip()
            assert text.startswith(heading) and len(text) > len(heading) + 10, (size, sid, text)
            assert el.rect["width"] > 0 and el.rect["height"] > 40
        widths = driver.execute_script(
            "const d = document.documentElement;"
            "return [d.scrollWidth, d.clientWidth, window.innerWidth, document.body.scrollWidth];")
        assert widths[2] == w, widths  # the emulated viewport is in force
        assert widths[0] <= widths[1] and widths[3] <= widths[1], (size, widths)
        charts = driver.execute_script(
            "return [...document.querySelectorAll('.chart svg')].map(s => "
            "[s.getBoundingClientRect().width, s.getBoundingClientRect().right, "
            "s.getAttribute('role'), (s.getAttribute('aria-labelledby') || '').split(' ')"
            ".map(i => (document.getElementById(i) || {}).textContent || '')])")
        for width, right, role, names in charts:
            assert 0 < width and right <= w + 0.5, (size, width, right)
            assert role == "img" and len(names) == 2 and all(names), (role, names)
        driver.save_screenshot(str(shots / f"{name}-{size}.png"))
        facts[size] = {"charts": len(charts), "widths": widths}
    return facts


@pytest.mark.parametrize("make", [full_results, minimal_results, bare_results])
def test_produced_reports_render(driver, tmp_path, make):
    report = write_html(make(), tmp_path / "report.html")
    facts = check_page(driver, report, tmp_path, make.__name__)
    assert (tmp_path / f"{make.__name__}-phone.png").stat().st_size > 10_000
    if make is full_results:
        assert facts["laptop"]["charts"] >= 8


def _real_sources():
    yield pytest.param(lambda: FIXTURES / "multipref" / "multipref_sample.jsonl", id="multipref")
    yield pytest.param(lambda: FIXTURES / "mtbench", id="mt-bench")
    yield pytest.param(lambda: shared_data("lewidi2023/HS-Brexit"), id="hs-brexit")
    yield pytest.param(lambda: shared_data("pandalm_testset/testset-v1.json"), id="pandalm")


@pytest.mark.parametrize("source", list(_real_sources()))
def test_real_audits_render(driver, tmp_path, source):
    import audit

    results = audit.run(source(), out=tmp_path, n_bootstrap=50)
    facts = check_page(driver, tmp_path / "report.html", tmp_path, "real")
    if results.get("leaderboards"):  # forest, slope, swap, displacement, simulation charts
        assert facts["laptop"]["charts"] >= 5


def _page(extra: str = "", *, drop: str = "") -> str:
    sections = "".join(f'<section id="{sid}"><h2>{heading}</h2><p>{"content " * 10}</p></section>'
                       for sid, heading in SECTIONS if sid != drop)
    return f"<!doctype html><html><head><meta name=viewport content='width=device-width'>" \
           f"</head><body>{sections}{extra}</body></html>"


@pytest.mark.parametrize(("page", "words"), [
    (_page('<div style="width:2000px">wide</div>'), "<= 1366"),
    (_page('<img src="http://127.0.0.1:9/x.png">'), "127.0.0.1"),
    (_page("<script>console.error('boom')</script>"), "boom"),
    (_page(drop="simulation"), "simulation"),
    (_page('<style>#method {display:none}</style>'), "method"),
], ids=["overflow", "network", "console", "missing", "hidden"])
def test_the_checks_catch_a_broken_page(driver, tmp_path, page, words):
    report = tmp_path / "broken.html"
    report.write_text(page)
    with pytest.raises(Exception) as err:
        check_page(driver, report, tmp_path, "broken")
    assert words in str(err.value) or "NoSuchElement" in type(err.value).__name__
