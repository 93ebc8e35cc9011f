"""Numbers as text: the one set of formatters every renderer uses.

The HTML report, the dataset card, the terminal summary, the findings, the suite messages, the
GitHub step summary and the judge verdict all show numbers from ``results.json``; each format
is written once here, so a number reads the same on every channel. Each function takes a
number as the result dict holds it (``None`` where it is undefined) and returns plain text:
escaping for the channel is the renderer's (:mod:`audit.escape`).

How the formats read:

- :func:`number`: ``0.712`` (fixed decimals), ``1,234`` (a whole number, thousands separated),
  ``NaN`` (undefined);
- :func:`percent`: ``9.2%``, a share; :func:`points`: ``+1.2``, a difference of two shares in
  percentage points;
- :func:`significant`: ``0.1235`` or ``12`` (four significant digits, whole numbers as
  integers), the observed values of suite expectations;
- :func:`p_value`: ``0.0330`` or ``< 0.0001``; :func:`p_is`: ``p = 0.0330`` or
  ``p < 0.0001``; :func:`p_bound`: ``0.0099``, the smallest p-value ``n`` permutations resolve
  (``1 / (n + 1)``, Phipson & Smyth 2010);
- :func:`with_interval`: ``0.712 [0.650, 0.770]`` (a cell), ``0.712, 95% CI 0.650 to 0.770``
  (a sentence) or ``0.712 (95% CI 0.650 to 0.770)`` (a parenthesis), with any of the formats
  above for the numbers;
- :func:`count`: ``1 annotator``, ``3 annotators``, a count with its noun;
- :func:`setting`: ``0.90``, ``0.999999``, a probability the user set (``--stay``) as the
  shortest decimal that reads back as it, at least two decimals; :func:`setting_percent`:
  ``90%``, ``99.9999%``, the same as a share of items;
- :func:`probability`: ``0.93``, ``0.9996``, ``> 0.999999``, an estimated probability in at
  least two decimals and as many more as it takes not to read as ``1.00`` (certain) or
  ``0.00`` (impossible) when it is neither; :func:`probability_percent`: ``99.96%`` the same
  as a percentage.

This module imports nothing heavy: the CLI and the suites use it.
"""

from __future__ import annotations

import math
import numbers

#: What an undefined number reads as.
NAN = "NaN"


def finite(x) -> bool:
    """``x`` is a real number (not a bool) and finite: a value the formats below show."""
    return (isinstance(x, numbers.Real) and not isinstance(x, bool)
            and math.isfinite(float(x)))


def number(x, digits: int = 3) -> str:
    """A number for a table cell or a sentence.

    Whole numbers (ints, and floats of a whole value of 1,000 or more) with thousands
    separators; other floats with ``digits`` decimals; ``None``, NaN and infinities as
    :data:`NAN`; a bool as ``yes`` / ``no``; anything else as ``str(x)``.
    """
    if x is None:
        return NAN
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, numbers.Integral):
        return f"{int(x):,}"
    if isinstance(x, numbers.Real):
        x = float(x)
        if not math.isfinite(x):
            return NAN
        if x.is_integer() and abs(x) >= 1000:
            return f"{int(x):,}"
        return f"{x:.{digits}f}"
    return str(x)


def standard_error(x, digits: int = 3) -> str:
    """A Monte-Carlo or bootstrap standard error beside its estimate: ``digits`` decimals, or as
    many more as show its first significant digit where those would round a positive error to
    ``0.000``, which reads as no uncertainty (``0.000158`` -> ``0.0002``, not ``0.000``); an
    error of exactly 0 stays ``0.000``; :data:`NAN` when undefined."""
    if not finite(x):
        return NAN
    x = float(x)
    text = f"{x:.{digits}f}"
    if x > 0 and float(text) == 0:
        return f"{x:.{max(digits, -math.floor(math.log10(x)))}f}"
    return text


def percent(x, digits: int = 1) -> str:
    """A share as a percentage, ``0.0924`` -> ``9.2%``; :data:`NAN` when undefined."""
    if not finite(x):
        return NAN
    return f"{100 * x:.{digits}f}%"


def points(x) -> str:
    """A difference of two shares in percentage points, always signed: ``0.012`` -> ``+1.2``
    (the unit, ``points`` or ``pt``, is the sentence's)."""
    if not finite(x):
        return NAN
    return f"{100 * x:+.1f}"


def significant(x, digits: int = 4) -> str:
    """A number in at most ``digits`` significant digits, a whole number (1 or more) as an
    integer: ``0.12345`` -> ``0.1235``, ``12.0`` -> ``12``; ``None`` / NaN as :data:`NAN`;
    anything else (a bool, a string) as ``str(x)``."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return NAN
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, int) or (isinstance(x, float) and x.is_integer() and abs(x) >= 1):
        return str(int(x))
    if isinstance(x, float):
        return f"{x:.{digits}g}"
    return str(x)


def p_value(p, digits: int = 4) -> str:
    """A p-value: ``digits`` decimals, or ``< 0.0001`` below what they show."""
    if not finite(p):
        return NAN
    floor = 10.0 ** -digits
    return f"< {floor:.{digits}f}" if p < floor else f"{p:.{digits}f}"


def p_is(p, digits: int = 4) -> str:
    """``p = 0.0330`` or ``p < 0.0001`` (:func:`p_value` with its relation)."""
    text = p_value(p, digits)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def p_bound(n_permutations: int) -> str:
    """``1 / (n + 1)``, the smallest p-value ``n`` permutations resolve, in four decimals
    (Phipson & Smyth 2010, "Permutation p-values should never be zero")."""
    return f"{1 / (n_permutations + 1):.4f}"


def interval(ci) -> list | None:
    """``[lo, hi]`` when ``ci`` holds two finite ends, else None (an interval not shown)."""
    if isinstance(ci, (list, tuple)) and len(ci) >= 2 and finite(ci[0]) and finite(ci[1]):
        return [ci[0], ci[1]]
    return None


def with_interval(value, ci, show=number, *, style: str = "cell") -> str:
    """A value with its 95% interval, each number shown by ``show``.

    Parameters
    ----------
    value, ci
        The estimate and its ``[lo, hi]``; the interval is left out unless both ends are
        finite (:func:`interval`); an undefined ``value`` is :data:`NAN`.
    show
        The number format (:func:`number`, :func:`percent`, or ``lambda x: number(x, 4)``).
    style
        ``cell``: ``v [lo, hi]``; ``sentence``: ``v, 95% CI lo to hi``; ``paren``:
        ``v (95% CI lo to hi)``.
    """
    if value is None:
        return NAN
    bounds = interval(ci)
    if bounds is None:
        return show(value)
    lo, hi = (show(b) for b in bounds)
    if style == "cell":
        return f"{show(value)} [{lo}, {hi}]"
    if style == "paren":
        return f"{show(value)} (95% CI {lo} to {hi})"
    if style == "sentence":
        return f"{show(value)}, 95% CI {lo} to {hi}"
    raise ValueError(f"style {style!r}: use cell, sentence or paren")


def setting(x, digits: int = 2) -> str:
    """A probability the user set (``--stay 0.999999``), as the shortest decimal that reads
    back as the same float, with at least ``digits`` decimals: ``0.9`` -> ``0.90``,
    ``0.995`` -> ``0.995``, ``0.999999`` -> ``0.999999`` (never ``1.00``: the sentence must say
    what was asked, and two settings read differently); :data:`NAN` when undefined."""
    if not finite(x):
        return NAN
    text = _plain(x)
    decimals = len(text.partition(".")[2])
    if decimals < digits:
        text = f"{text}{'' if '.' in text else '.'}{'0' * (digits - decimals)}"
    return text


def setting_percent(x) -> str:
    """:func:`setting` as a percentage, as many decimals as the setting has beyond two
    (``0.9`` -> ``90%``, ``0.995`` -> ``99.5%``, ``0.999999`` -> ``99.9999%``)."""
    import decimal

    if not finite(x):
        return NAN
    share = decimal.Decimal(_plain(x)) * 100
    text = format(share, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return f"{text}%"


def _plain(x) -> str:
    """The shortest decimal that reads back as ``float(x)`` (``repr``), never in exponent
    notation (``1e-05`` -> ``0.00001``)."""
    import decimal

    text = repr(float(x))
    if "e" in text or "E" in text:
        text = format(decimal.Decimal(text), "f")
    return text


#: :func:`probability` shows at most this many decimals; closer to 0 or 1 it shows a bound.
PROBABILITY_DECIMALS = 6


def probability(x, digits: int = 2) -> str:
    """An estimated probability with ``digits`` decimals, or more where those would round a
    value strictly between 0 and 1 to ``1.00`` or ``0.00``, which read as certainty and
    impossibility: ``0.9996`` -> ``0.9996``, ``0.93`` -> ``0.93``, ``1.0`` -> ``1.00``.
    Closer to 1 (or 0) than :data:`PROBABILITY_DECIMALS` decimals show it is ``> 0.999999``
    (``< 0.000001``); :data:`NAN` when undefined."""
    if not finite(x):
        return NAN
    x = float(x)
    most = max(digits, PROBABILITY_DECIMALS)
    for d in range(digits, most + 1):
        text = f"{x:.{d}f}"
        if not 0 < x < 1 or 0 < float(text) < 1:
            return text
    return f"> {1 - 10.0 ** -most:.{most}f}" if x > 0.5 else f"< {10.0 ** -most:.{most}f}"


def probability_percent(x, digits: int = 1) -> str:
    """:func:`probability` as a percentage with ``digits`` decimals or more (``0.9996`` ->
    ``99.96%``, never ``100.0%`` short of certainty); :data:`NAN` when undefined."""
    text = probability(x, digits + 2)
    if text == NAN:
        return text
    bound, _, value = text.rpartition(" ")
    places = len(value.partition('.')[2]) - 2
    if not bound:  # rounded once, from x: the shown 3-decimal value rounded again could move
        shown = f"{100 * float(x):.{places}f}"
        if not 0 < float(x) < 1 or 0 < float(shown) < 100:
            return shown + "%"
    shown = f"{100 * float(value):.{places}f}%"
    return f"{bound} {shown}" if bound else shown


def count(n, noun: str, plural: str | None = None) -> str:
    """``1 annotator``, ``1,200 annotators``, ``NaN annotators``: a count with its noun in the
    right number (``plural`` when it is not ``noun + 's'``)."""
    one = isinstance(n, numbers.Integral) and not isinstance(n, bool) and n == 1
    return f"{number(n)} {noun if one else (plural or noun + 's')}"


def percent_with_interval(x, ci) -> str:
    """A share and its interval with the percent sign once: ``9.2% [7.9, 10.6]`` (the compact
    form of findings and terminal cells; the interval is left out unless both ends are
    finite)."""
    if not finite(x):
        return NAN
    bounds = interval(ci)
    text = percent(x)
    return text + (f" [{100 * bounds[0]:.1f}, {100 * bounds[1]:.1f}]" if bounds else "")


def points_with_interval(x, ci, unit: str = "points") -> str:
    """A difference of two shares in signed percentage points with its interval:
    ``+8.8 [+7.2, +10.3] points`` (``unit`` ``pt`` in the terminal); ``+8.8 points`` without
    an interval."""
    if not finite(x):
        return NAN
    bounds = interval(ci)
    text = points(x) + (f" [{points(bounds[0])}, {points(bounds[1])}]" if bounds else "")
    return f"{text} {unit}"
