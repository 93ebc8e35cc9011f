"""An interval that is not the item bootstrap's percentiles (``reliability.*.cohen_kappa.
interval``: Cohen's kappa's mean over pairs, whose interval is the basic bootstrap interval, or
linearised on a Spark cluster) is said so under the reliability table of the HTML report, the
dataset card and the terminal summary, the dataset's strings escaped for each. Without one,
nothing is added. Cohen's kappa is a summary coefficient: every channel shows it, and a NaN mean
over pairs says why."""

from __future__ import annotations

import copy

from results_examples import parse_html

from audit.measure.cohen_interval import MEAN_INTERVAL
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


def _percentiles_only(results: dict) -> dict:
    """``results`` with every entry's ``interval`` taken away: every interval the bootstrap's
    percentiles."""
    results = copy.deepcopy(results)
    rel = results["reliability"]
    for block in [rel["overall"], *rel["by_pool"].values()]:
        for entry in block.values():
            entry.pop("interval", None)
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
    from audit.report.html import build_view, environment

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
        **build_view(_percentiles_only(preference_results), charts=False))
    assert "not the item bootstrap's" not in page


def test_the_mean_over_pairs_says_its_basic_interval(preference_results):
    """The audit's own results: Cohen's kappa's mean has the basic interval wherever it is
    defined, and the report says so."""
    from audit.report.html import build_view, environment

    rel = preference_results["reliability"]
    assert rel["overall"]["cohen_kappa"]["interval"] == MEAN_INTERVAL
    page = environment().get_template("report.html.j2").render(
        **build_view(preference_results, charts=False))
    _, texts = parse_html(page)
    text = " ".join(" ".join(texts).split())
    assert f"{COHEN} in all humans" in text and MEAN_INTERVAL in text


def _terminal(results: dict) -> str:
    import io

    from rich.console import Console

    from audit.report.summary import print_summary

    buf = io.StringIO()
    print_summary(results, console=Console(file=buf, width=400, highlight=False, soft_wrap=True,
                                           emoji=False))
    return buf.getvalue()


def test_card_and_terminal_show_cohen_and_say_how_its_interval_was_computed(
        preference_results):
    from audit.report.card import annotations_block

    pool = next(iter(preference_results["reliability"]["by_pool"]))
    results = _linearised(_renamed(preference_results, pool, HOSTILE_POOL),
                          [None, HOSTILE_POOL])
    kappa = results["reliability"]["overall"]["cohen_kappa"]
    assert kappa["value"] is not None
    card = annotations_block(results)
    row = next(line for line in card.splitlines() if line.startswith(f"| {COHEN} |"))
    assert f"{kappa['value']:.3f}" in row
    note = next(line for line in card.splitlines() if "not the item bootstrap's" in line)
    assert f"{COHEN} in all humans and " in note and LINEARISED_INTERVAL in note
    assert HOSTILE_POOL not in note and "<b>" not in note  # Markdown-escaped
    terminal = _terminal(results)
    assert any(line.startswith("│ cohen_kappa") and f"{kappa['value']:.3f}" in line
               for line in terminal.splitlines())
    said = " ".join(terminal.split())
    assert f"{COHEN} in all humans and {HOSTILE_POOL}: {LINEARISED_INTERVAL}" in said
    # with every interval the bootstrap's percentiles, neither says anything about it
    plain = _percentiles_only(preference_results)
    assert "not the item bootstrap's" not in annotations_block(plain)
    assert "not the item bootstrap's" not in _terminal(plain)


def test_a_nan_mean_over_pairs_says_why_in_the_card():
    """Two annotators who share fewer than ``min_overlap`` items: the mean over pairs is NaN
    and the card's note gives the results' reason (not "no item judged twice")."""
    import pandas as pd

    from audit.contract import columns as C
    from audit.contract.labels import LabelKind, LabelScale
    from audit.contract.table import build_table
    from audit.report.card import annotations_block
    from audit.results import jsonable
    from conftest import audited

    labels = ["x", "y", "x", "x", "y", "y"]
    rows = [{C.ITEM: f"i{i}", C.ANNOTATOR: "a" if i % 2 else "b", C.POOL: "crowd",
             C.LABEL: lab} for i, lab in enumerate(labels)]
    for i, (la, lb) in enumerate([("x", "x"), ("y", "x"), ("y", "y")]):  # 3 < 10 shared items
        rows += [{C.ITEM: f"s{i}", C.ANNOTATOR: "a", C.POOL: "crowd", C.LABEL: la},
                 {C.ITEM: f"s{i}", C.ANNOTATOR: "b", C.POOL: "crowd", C.LABEL: lb}]
    table = build_table(pd.DataFrame(rows), LabelScale(LabelKind.NOMINAL, ("x", "y")),
                        name="n", source="n.csv")
    results = jsonable(audited(table))
    entry = results["reliability"]["by_pool"]["crowd"]["cohen_kappa"]
    assert entry["value"] is None and entry["n_pairs"] == 0
    assert entry["not_defined"].startswith("not defined: no annotator pair shares 10")
    card = annotations_block(results)
    assert f"{COHEN} is not defined: no annotator pair shares 10 or more items" in card


def test_one_pool_is_named_as_all_humans_not_beside_it():
    """With "all humans" and one pool the table's only columns (a source naming no pools has
    the one pool ``all``), both are the same annotators: the note says "all humans (one pool:
    all)", where it said "in all humans and all"."""
    columns = [("all humans", {"cohen_kappa": {"value": 0.4, "interval": "normal"}}),
               ("all", {"cohen_kappa": {"value": 0.4, "interval": "normal"}})]
    note = interval_note(columns, ["cohen_kappa"])
    assert note == ("Intervals that are not the item bootstrap's percentiles: "
                    f"{COHEN} in all humans (one pool: all): normal.")
    # a pool beside others is still listed as a column of its own
    more = columns + [("expert", {"cohen_kappa": {"value": 0.5}})]
    assert f"{COHEN} in all humans and all: normal" in interval_note(more, ["cohen_kappa"])


def test_a_source_without_pools_reads_right_in_every_channel():
    """End to end: an audit of a table with no pool column has Cohen's kappa's basic interval
    in "all humans" and in its one pool ``all``; the report, the card and the terminal say
    "all humans (one pool: all)"."""
    import numpy as np
    import pandas as pd

    from audit.contract import columns as C
    from audit.contract.labels import LabelKind, LabelScale
    from audit.contract.table import build_table
    from audit.report.card import annotations_block
    from audit.report.html import build_view, environment
    from audit.results import jsonable
    from conftest import audited

    rng = np.random.default_rng(0)
    rows = [{C.ITEM: f"i{i}", C.ANNOTATOR: f"a{a}", C.LABEL: int(rng.integers(1, 4))}
            for i in range(40) for a in rng.choice(5, size=3, replace=False)]
    table = build_table(pd.DataFrame(rows), LabelScale(LabelKind.ORDINAL, (1, 2, 3)),
                        name="nopools", source="nopools.csv")
    results = jsonable(audited(table, n_bootstrap=50))
    assert list(results["reliability"]["by_pool"]) == [C.DEFAULT_POOL]
    said = f"{COHEN} in all humans (one pool: all): {MEAN_INTERVAL}"
    page = environment().get_template("report.html.j2").render(
        **build_view(results, charts=False))
    _, texts = parse_html(page)
    assert said in " ".join(" ".join(texts).split())
    assert said in annotations_block(results)
    assert said in " ".join(_terminal(results).split())
    assert "all humans and all" not in annotations_block(results)
