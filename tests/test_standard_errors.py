"""A Monte-Carlo standard error is never shown as ``0.000`` when it is not 0.

Found on WMT23 zh-en's full set (``examples/wmt23_zhen_mqm.py --run``): the card read "50 models
0.9995 ± 0.000 [0.99, 1.00]" for a simulated displacement probability whose Monte-Carlo s.e. is
0.00016 (20,000 simulations), as if the estimate had no uncertainty; the report, its chart
tooltips and the terminal summary wrote the same errors with ``number(se, 3)``.
"""

from __future__ import annotations

import copy
import json
import math

from conftest import REPO
from hypothesis import example, given
from hypothesis import strategies as st

from audit.format import NAN, standard_error
from audit.report.card import render_card
from audit.report.html import render_html

DEMO = json.loads((REPO / "reports" / "pandalm" / "results.json").read_text(encoding="utf-8"))


@given(st.floats(min_value=0, max_value=1, allow_nan=False), st.integers(1, 6))
@example(0.000158, 3)
@example(0.00049999, 3)
@example(0.0, 3)
def test_a_positive_error_shows_a_digit_and_zero_stays_zero(se, digits):
    text = standard_error(se, digits)
    assert float(text) > 0 if se > 0 else text == f"{0:.{digits}f}"
    decimals = len(text.partition(".")[2])
    assert decimals >= digits
    if decimals > digits:  # more places only for the first significant digit
        assert decimals == -math.floor(math.log10(se))
    else:
        assert text == f"{se:.{digits}f}"


def test_examples():
    assert standard_error(0.000158) == "0.0002"
    assert standard_error(0.013) == "0.013"
    assert standard_error(0.0015, 4) == "0.0015"
    assert standard_error(None) == NAN and standard_error(float("nan")) == NAN


def _tiny_errors(results: dict) -> dict:
    """The demo with WMT's simulation at 50 models: P 0.9995, MC s.e. 0.000158."""
    results = copy.deepcopy(results)
    for row in results["stability"]["simulation"]:
        if row["n_models"] == 50:
            row.update(displacement_probability=0.9995, mc_se=0.00015807434959536366)
    return results


def test_card_and_report_show_the_tiny_error():
    results = _tiny_errors(DEMO)
    card = render_card(results)
    assert "50 models 0.9995 ± 0.0002" in card
    assert "± 0.000 " not in card and "± 0.000]" not in card
    page = render_html(results)
    assert "0.0002" in page
