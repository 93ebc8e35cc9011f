"""Labels read all at once: ``parse_numbers`` and ``LabelScale.codes`` give exactly what reading
each label by ``parse_number`` gives, and a continuous scale is written as its range."""

from __future__ import annotations

import decimal
import json
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.contract import columns as C
from audit.contract.labels import (CATEGORY_LIMIT, LabelKind, LabelScale, distinct_numbers,
                          infer_scale, is_continuous, parse_number, parse_numbers)
from audit.report.html import render_html
from audit.contract.table import build_table

# characters the reading rules treat differently: digits, signs, dot, exponent, ASCII spaces,
# spaces only str.strip knows, NUL, non-ASCII digits, letters of nan / inf, underscores
ALPHABET = "0123456789+-.eE_ \t\n\r\x0b\x0c\x1c\x1f\x85\xa0\u2003\0\u0663nafiNx"


def same(a, b) -> bool:
    return (a is None and b is None) or (type(a) is type(b) and a == b)


def number_text():
    digits = st.text("0123456789", min_size=1, max_size=22)
    return st.builds(
        lambda sign, whole, frac, exp, lead, trail: f"{lead}{sign}{whole}{frac}{exp}{trail}",
        st.sampled_from(["", "+", "-"]), digits,
        st.one_of(st.just(""), st.just("."), digits.map(lambda d: "." + d)),
        st.one_of(st.just(""), st.integers(-400, 400).map(lambda e: f"e{e}"),
                  st.integers(0, 30).map(lambda e: f"E+{e}")),
        st.sampled_from(["", " ", "\t", "\xa0", "\x1c"]),
        st.sampled_from(["", " ", "\r\n", "\u2003", "\x1f"]))


TYPED = st.sampled_from([1, -0.0, 0.0, 2.5, float("nan"), float("inf"), True, False, None,
                         np.int64(7), np.float32(0.1), np.float64(3.0), 2 ** 60, 2 ** 70,
                         -2 ** 53 - 1, decimal.Decimal("2.50"), np.uint64(2 ** 64 - 1),
                         np.bool_(True), 1e300, pd.NA, b"1"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(number_text(), st.text(ALPHABET, max_size=12),
                          st.text(ALPHABET, min_size=30, max_size=40),
                          st.sampled_from(["9007199254740993", " -12345678901234567890 ",
                                           "1" * 40, "1e999", "nan", "inf", "1_000", ""])),
                max_size=60))
def test_parse_numbers_is_parse_number_of_each_text(texts):
    got = parse_numbers(texts)
    assert len(got) == len(texts)
    for text, g in zip(texts, got):
        assert same(g, parse_number(text)), repr(text)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(number_text(), TYPED), max_size=40))
def test_parse_numbers_is_parse_number_of_each_typed_value(values):
    for value, g in zip(values, parse_numbers(values)):
        assert same(g, parse_number(value)), repr(value)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(number_text(), TYPED), max_size=40), st.data())
def test_codes_are_the_codes_of_reading_each_label(raw, data):
    numbers = sorted({n for n in map(parse_number, raw) if n is not None})
    kept = data.draw(st.lists(st.sampled_from(numbers), unique=True)) if numbers else []
    for kind in (LabelKind.INTERVAL, LabelKind.ORDINAL):
        scale = LabelScale(kind, tuple(kept))
        index = {v: i for i, v in enumerate(scale.values)}
        expected = [index.get(parse_number(v), -1) for v in raw]
        assert scale.codes(raw).tolist() == expected
    assert distinct_numbers(raw) == tuple(numbers)


def test_text_codes_compare_text_exactly():
    scale = LabelScale(LabelKind.NOMINAL, ("007", "7", " A", "A", "NA"))
    assert scale.codes(["7", "007", "A", " A", "a", "NA", "7.0"]).tolist() == \
        [1, 0, 3, 2, -1, 4, -1]
    assert scale.codes(["7", None, 7]).tolist() == [1, -1, 1]  # typed 7 reads as "7"


def test_scale_values_are_canonical_numbers_and_repeats_fail():
    scale = LabelScale(LabelKind.INTERVAL, (1.0, 2.5, np.int64(3), -0.0, 2 ** 60))
    assert scale.values == (1, 2.5, 3, 0, 2 ** 60)
    assert [type(v) for v in scale.values] == [int, float, int, int, int]
    with pytest.raises(Exception, match="repeat"):
        LabelScale(LabelKind.INTERVAL, (1, 1.0))
    with pytest.raises(Exception, match="must be numbers"):
        LabelScale(LabelKind.INTERVAL, (1, float("nan")))
    big = LabelScale(LabelKind.INTERVAL, (2 ** 53 + 1, 2 ** 53))  # not exact in float64
    assert big.codes(["9007199254740993", "9007199254740992", 2 ** 53 + 1]).tolist() == [0, 1, 0]


def test_a_large_scale_reads_every_label():
    rng = np.random.default_rng(0)
    texts = [f"{x:.4f}" for x in rng.normal(50, 15, 200_000)] + ["-0.0000", " 50.5000 "]
    scale = infer_scale(LabelKind.INTERVAL, texts)
    expected = sorted({parse_number(t) for t in texts})
    assert scale.values == tuple(expected)
    position = {v: i for i, v in enumerate(expected)}
    assert scale.codes(texts).tolist() == [position[parse_number(t)] for t in texts]


# -- the scale in outputs ----------------------------------------------------------------------
def test_a_continuous_scale_is_written_as_its_range():
    values = tuple(range(CATEGORY_LIMIT + 1)) + (2.5,)
    scale = LabelScale(LabelKind.INTERVAL, values)
    assert is_continuous(scale)
    assert scale.summary() == {"kind": "interval", "n_values": len(values), "min": 0,
                               "max": CATEGORY_LIMIT}
    assert type(scale.summary()["min"]) is int
    assert json.dumps(scale.summary()) == (
        '{"kind": "interval", "n_values": 33, "min": 0, "max": 31}')
    for small in (LabelScale(LabelKind.INTERVAL, tuple(range(CATEGORY_LIMIT))),
                  LabelScale(LabelKind.ORDINAL, tuple(range(101))),
                  LabelScale(LabelKind.PREFERENCE, (-1, 0, 1), ("A", "tie", "B"))):
        assert not is_continuous(small)
        assert small.summary() == small.to_dict()


def test_results_and_report_show_a_continuous_scale_by_its_range():
    rng = np.random.default_rng(1)
    n = 400
    raw = pd.DataFrame({C.ITEM: [f"i{k // 4}" for k in range(n)],
                        C.ANNOTATOR: [f"a{k % 4}" for k in range(n)],
                        C.LABEL: [f"{x:.3f}" for x in rng.normal(size=n)]})
    scale = infer_scale(LabelKind.INTERVAL, raw[C.LABEL])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = build_table(raw, scale, name="t", source="t.csv")
    block = table.summary()["label_scale"]
    numbers = sorted(float(t) for t in set(raw[C.LABEL]))
    assert block == {"kind": "interval", "n_values": len(numbers), "min": numbers[0],
                     "max": numbers[-1]}
    from audit.pipeline import meta
    from audit.resample import Bootstrap

    page = render_html({"meta": meta(table, Bootstrap(20, 0)), "dataset": table.summary()})
    assert f"{len(numbers):,} distinct values from {numbers[0]} to {numbers[-1]}" in page


def test_a_scale_inferred_from_labels_codes_them_as_reading_each_does():
    raw = ["2.50", "1", "-0.0", "x", " 1e0", "7", "2.5"]
    scale = infer_scale(LabelKind.INTERVAL, raw)
    assert scale.values == (0, 1, 2.5, 7)
    from audit.contract.labels import distinct_labels
    distinct = distinct_labels(raw)  # the list validation reads the scale's codes of
    index = {v: i for i, v in enumerate(scale.values)}
    assert scale.codes(distinct).tolist() == [index.get(parse_number(v), -1) for v in distinct]
    typed = infer_scale(LabelKind.INTERVAL, [1, 2.5, 3])
    assert typed.codes([True, 2.5, 3]).tolist() == [-1, 1, 2]  # a list equal to the observed
    assert typed.codes([1, 2.5, 3]).tolist() == [0, 1, 2]  # one (True == 1), not the same
