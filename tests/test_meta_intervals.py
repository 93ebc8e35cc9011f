"""``meta.bootstrap`` says the truth about the audit's intervals: its ``method`` is the default
(the item bootstrap's percentiles) "unless a figure names another", and ``exceptions`` lists
every figure whose interval is computed otherwise, where it sits in results.json, with the
method the figure names beside it (Cohen's kappa's mean over pairs and each pair's kappa,
Wilson intervals of rates, the pool nulls' excess). Before, ``method`` said "percentile
bootstrap" for the whole audit while the Cohen mean's ``interval`` said basic.

Checked against the results themselves: every place an exception names holds that method, and
every method a figure names (``interval``, ``pair_interval``, ``ci_method``) other than the
default is listed; readers (report, card) show it; a result with nothing computed otherwise
keeps the plain default."""

from __future__ import annotations

import copy

from audit.measure.cohen_interval import MEAN_INTERVAL, PAIR_INTERVAL
from audit.pipeline import OTHERWISE, interval_exceptions, note_interval_methods
from audit.resample import METHOD


def _places(results, where):
    """The blocks ``where`` (an exceptions key) names: ``[]`` every row, ``*`` every pool."""
    parts = where.replace("[]", ".[]").split(".")
    nodes = [results]
    for part in parts:
        nxt = []
        for node in nodes:
            if part == "[]":
                nxt += list(node)
            elif part == "*":
                nxt += list(node.values())
            elif isinstance(node, dict) and part in node:
                nxt.append(node[part])
        nodes = nxt
    return nodes


def _named_methods(results):
    """Every (place, method) a figure names, walked independently of the code under test."""
    out = []

    def walk(node, trail):
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("interval", "pair_interval", "ci_method") and isinstance(value, str):
                    out.append((trail + (key,), value))
                elif key != "meta":
                    walk(value, trail + (key,))
        elif isinstance(node, list):
            for row in node:
                walk(row, trail + ("[]",))

    walk(results, ())
    return out


def test_the_method_is_the_default_and_the_exceptions_are_listed(preference_results):
    boot = preference_results["meta"]["bootstrap"]
    assert boot["method"] == METHOD + OTHERWISE
    exceptions = boot["exceptions"]
    assert exceptions["reliability.overall.cohen_kappa.ci95"] == MEAN_INTERVAL
    assert exceptions["reliability.cohen_pairs.overall.ci95.mean"] == MEAN_INTERVAL
    assert exceptions["reliability.cohen_pairs.by_pool.*.pairs[].ci95"] == PAIR_INTERVAL
    assert exceptions["pool_disagreement[].ci95"].startswith("Wilson score interval")
    # every exception names a place that holds that method
    for where, method in exceptions.items():
        if where.endswith(".pairs[].ci95"):
            blocks, field = _places(preference_results, where[:-len(".pairs[].ci95")]), \
                "pair_interval"
        elif where.endswith(".ci95.mean"):
            blocks, field = _places(preference_results, where[:-len(".ci95.mean")]), "interval"
        elif where.endswith(".ci95") and where.startswith("reliability."):
            blocks, field = _places(preference_results, where[:-len(".ci95")]), "interval"
        else:
            stem = where[:-len(".ci95")] if where.endswith(".ci95") else where
            blocks, field = _places(preference_results, stem), "ci_method"
        named = {b.get(field) for b in blocks if isinstance(b, dict) and b.get(field)}
        assert named and set(method.split(" | ")) == named, (where, named)
    # and every method a figure names, other than the default, is listed
    listed = set()
    for method in exceptions.values():
        listed.update(method.split(" | "))
    for trail, method in _named_methods(preference_results):
        assert method == METHOD or method in listed, (trail, method)


def test_the_leaderboards_own_ci_block_is_left_alone(preference_results):
    ci = (preference_results.get("leaderboard_method") or {}).get("ci") or {}
    assert "exceptions" not in ci and OTHERWISE not in ci.get("method", "")


def test_without_an_interval_computed_otherwise_the_method_is_the_plain_default(
        preference_results):
    """The audit's results with every figure's own method taken away: nothing is listed and
    the method is the plain default; two methods in one place are both named."""
    results = copy.deepcopy(preference_results)

    def strip(node):
        if isinstance(node, dict):
            for key in ("interval", "pair_interval", "ci_method"):
                node.pop(key, None)
            for key, value in node.items():
                if key != "meta":
                    strip(value)
        elif isinstance(node, list):
            for row in node:
                strip(row)

    strip(results)
    note_interval_methods(results)
    assert results["meta"]["bootstrap"]["method"] == METHOD
    assert results["meta"]["bootstrap"]["exceptions"] == {}
    # several methods in one place (a pool's pairs collected, another's on a cluster)
    pools = list(results["reliability"]["by_pool"])
    for pool, method in zip(pools, ("x", "y")):
        results["reliability"]["by_pool"][pool]["krippendorff_alpha"]["interval"] = method
    assert interval_exceptions(results) == {
        "reliability.by_pool.*.krippendorff_alpha.ci95": "x | y"}


def test_the_report_and_the_card_show_it(preference_results):
    from results_examples import parse_html

    from audit.report.card import annotations_block, render_card
    from audit.report.html import build_view, environment

    results = copy.deepcopy(preference_results)
    page = environment().get_template("report.html.j2").render(
        **build_view(results, charts=False))
    _, texts = parse_html(page)
    text = " ".join(" ".join(texts).split())
    assert "intervals computed otherwise" in text
    assert "reliability.cohen_pairs.overall.ci95.mean" in text and PAIR_INTERVAL in text
    assert METHOD + OTHERWISE in text
    assert annotations_block(results)  # the card's reader still reads the block
    assert METHOD + OTHERWISE in render_card(results)
