"""An interval that is not the item bootstrap's percentiles (Cohen's kappa linearised on a
Spark cluster, ``reliability.*.cohen_kappa.interval``) is said so under the HTML report's
reliability table, the dataset's strings escaped. Without one, nothing is added."""

from __future__ import annotations

import copy

from results_examples import parse_html

from audit.measure.scope import LINEARISED_INTERVAL
from audit.metrics import display_name
from audit.report.prose import interval_note

HOSTILE_POOL = "<b>crowd</b> [/x] | *a*"
COHEN = display_name("cohen_kappa")


def _linearised(results: dict, scopes) -> dict:
    results = copy.deepcopy(results)
    rel = results["reliability"]
    for scope in scopes:
        entry = rel["overall"] if scope is None else rel["by_pool"][scope]
        entry["cohen_kappa"]["interval"] = LINEARISED_INTERVAL
    return results


def _renamed(results: dict, old: str, new: str) -> dict:
    results = copy.deepcopy(results)
    rel = results["reliability"]
    rel["by_pool"] = {new if k == old else k: v for k, v in rel["by_pool"].items()}
    return results


def test_the_note_names_the_metric_the_columns_and_the_method():
    columns = [("all humans", {"cohen_kappa": {"value": 0.4, "interval": "normal"}}),
               ("crowd", {"cohen_kappa": {"value": 0.3, "interval": "normal"}}),
               ("expert", {"cohen_kappa": {"value": 0.5}, "fleiss_kappa": {"value": 0.2}})]
    note = interval_note(columns, ["cohen_kappa", "fleiss_kappa"])
    assert note == ("Intervals that are not the item bootstrap's percentiles: "
                    f"{COHEN} in all humans and crowd: normal.")
    assert interval_note(columns[2:], ["cohen_kappa", "fleiss_kappa"]) == ""
    assert interval_note([("x", None)], ["cohen_kappa"]) == ""


def test_the_report_says_it_with_the_names_escaped(preference_results):
    """The HTML report, the one channel that lists Cohen's kappa (the terminal summary and the
    card show the summary coefficients only)."""
    from audit.metrics import keys
    from audit.report.html import build_view, environment

    assert "cohen_kappa" not in keys(summary=True)
    pool = next(iter(preference_results["reliability"]["by_pool"]))
    assert "cohen_kappa" in preference_results["reliability"]["overall"]
    results = _linearised(_renamed(preference_results, pool, HOSTILE_POOL),
                          [None, HOSTILE_POOL])
    page = environment().get_template("report.html.j2").render(
        **build_view(results, charts=False))
    _, texts = parse_html(page)
    text = " ".join(" ".join(texts).split())
    assert f"{COHEN} in all humans and {HOSTILE_POOL}: {LINEARISED_INTERVAL}" in text
    assert "<b>crowd</b>" not in page


def test_nothing_is_added_when_every_interval_is_the_bootstraps(preference_results):
    from audit.report.html import build_view, environment

    page = environment().get_template("report.html.j2").render(
        **build_view(preference_results, charts=False))
    assert "not the item bootstrap's" not in page
