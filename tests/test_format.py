"""The one set of number formatters (audit/format.py): each format as its docstring states it,
undefined numbers as NaN, and the formats reading back to the number they show."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from audit import format as F

FLOATS = st.floats(allow_nan=True, allow_infinity=True, width=64)


@pytest.mark.parametrize("x, digits, text", [
    (0.7123, 3, "0.712"), (1234, 3, "1,234"), (1234.0, 3, "1,234"), (12.0, 3, "12.000"),
    (0.5, 1, "0.5"), (None, 3, "NaN"), (math.nan, 3, "NaN"), (math.inf, 3, "NaN"),
    (True, 3, "yes"), (False, 3, "no"), (np.int64(5000), 3, "5,000"), (np.float64(0.25), 2, "0.25"),
    ("text", 3, "text"),
])
def test_number(x, digits, text):
    assert F.number(x, digits) == text


@pytest.mark.parametrize("x, text", [(0.0924, "9.2%"), (1, "100.0%"), (None, "NaN"),
                                     (math.nan, "NaN"), ("x", "NaN")])
def test_percent(x, text):
    assert F.percent(x) == text


def test_points_are_signed():
    assert F.points(0.012) == "+1.2" and F.points(-0.003) == "-0.3" and F.points(None) == "NaN"
    assert F.points_with_interval(0.088, [0.072, 0.103]) == "+8.8 [+7.2, +10.3] points"
    assert F.points_with_interval(0.088, None, unit="pt") == "+8.8 pt"


@pytest.mark.parametrize("x, text", [(0.12345, "0.1235"), (12.0, "12"), (3, "3"), (0.5, "0.5"),
                                     (None, "NaN"), (math.nan, "NaN"), (True, "True"),
                                     ("a", "a"), (1234.5678, "1235")])
def test_significant(x, text):
    assert F.significant(x) == text


def test_p_values():
    assert F.p_value(0.033) == "0.0330" and F.p_value(0.00001) == "< 0.0001"
    assert F.p_is(0.033) == "p = 0.0330" and F.p_is(0.00001) == "p < 0.0001"
    assert F.p_value(None) == "NaN" and F.p_bound(100) == "0.0099"


def test_with_interval_styles():
    assert F.with_interval(0.712, [0.65, 0.77]) == "0.712 [0.650, 0.770]"
    assert F.with_interval(0.712, [0.65, 0.77], style="sentence") == \
        "0.712, 95% CI 0.650 to 0.770"
    assert F.with_interval(0.712, [0.65, 0.77], style="paren") == "0.712 (95% CI 0.650 to 0.770)"
    assert F.with_interval(0.31, [0.27, 0.35], F.percent) == "31.0% [27.0%, 35.0%]"
    assert F.percent_with_interval(0.092, [0.079, 0.106]) == "9.2% [7.9, 10.6]"
    # an interval is shown only when both ends are finite
    for ci in (None, [], [None, 0.8], [0.6, math.nan]):
        assert F.with_interval(0.7, ci) == "0.700"
    assert F.with_interval(None, [0.1, 0.2]) == "NaN"
    with pytest.raises(ValueError, match="style"):
        F.with_interval(0.7, [0.6, 0.8], style="table")


def test_count_takes_the_right_number():
    assert F.count(1, "model") == "1 model" and F.count(2, "model") == "2 models"
    assert F.count(1234, "item") == "1,234 items" and F.count(None, "item") == "NaN items"
    assert F.count(2, "analysis", "analyses") == "2 analyses"


@given(FLOATS, st.integers(0, 6))
def test_number_reads_back(x, digits):
    text = F.number(x, digits)
    if not math.isfinite(x):
        assert text == "NaN"
    else:
        assert abs(float(text.replace(",", "")) - x) <= 0.5 * 10.0 ** -digits * (1 + 1e-9) \
            + 1e-9 * abs(x)


@given(st.one_of(st.floats(-1e12, 1e12), st.sampled_from([math.nan, math.inf, -math.inf])))
def test_percent_reads_back(x):
    text = F.percent(x)
    if not math.isfinite(x):
        assert text == "NaN"
    else:
        assert text.endswith("%") and abs(float(text[:-1]) - 100 * x) <= 0.05 + 1e-9 * abs(x)
