"""Many raw labels read as numbers at once, by the rules of :func:`.text.parse_number`.

Text is classified by a vectorised automaton of the number grammar and what it accepts is
converted by ``float``; typed numbers are converted as arrays. Values float64 cannot carry
exactly are read one by one, so the result is the same as reading each value alone; a scale of
half a million observed numbers costs a few array passes, not a Python call each.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .text import parse_number

#: Whitespace ``str.strip`` and numpy's float parser both skip around a number (``str.strip``
#: also strips ``\x1c``-``\x1f`` and non-ASCII spaces; text holding those is read one by one).
_SPACE = " \t\n\r\x0b\x0c"
#: Character classes of the number automaton; ``_END`` is the NUL that pads a short string.
_DIGIT, _SIGN, _DOT, _EXP, _WS, _END, _OTHER = range(7)
_CLASS = np.full(128, _OTHER, dtype=np.int8)
_CLASS[np.frombuffer(b"0123456789", dtype=np.uint8)] = _DIGIT
_CLASS[np.frombuffer(b"+-", dtype=np.uint8)] = _SIGN
_CLASS[ord(".")] = _DOT
_CLASS[np.frombuffer(b"eE", dtype=np.uint8)] = _EXP
_CLASS[np.frombuffer(_SPACE.encode(), dtype=np.uint8)] = _WS
_CLASS[0] = _END


def _automaton() -> tuple[np.ndarray, tuple, tuple]:
    """The transition table of ``\\s*`` :data:`.text.DECIMAL` ``\\s*`` (states x classes, flattened),
    and its accepting states for integers (:data:`.text.INTEGER`) and for other decimals."""
    edges = {  # state: {class: next state}; 0 = start, 11 = dead
        0: {_WS: 0, _SIGN: 1, _DIGIT: 2, _DOT: 4},
        1: {_DIGIT: 2, _DOT: 4},                      # sign
        2: {_DIGIT: 2, _DOT: 3, _EXP: 6, _WS: 9},     # integer digits
        3: {_DIGIT: 5, _EXP: 6, _WS: 10},             # "1."
        4: {_DIGIT: 5},                               # "." without digits before it
        5: {_DIGIT: 5, _EXP: 6, _WS: 10},             # fraction digits
        6: {_SIGN: 7, _DIGIT: 8},                     # "e"
        7: {_DIGIT: 8},                               # exponent sign
        8: {_DIGIT: 8, _WS: 10},                      # exponent digits
        9: {_WS: 9},                                  # space after an integer
        10: {_WS: 10},                                # space after a decimal
    }
    table = np.full((12, 7), 11, dtype=np.int8)
    for state, out in edges.items():
        table[state, _END] = state
        for cls, to in out.items():
            table[state, cls] = to
    return table.ravel(), (2, 9), (3, 5, 8, 10)


_TRANSITIONS, _INTEGER_STATES, _DECIMAL_STATES = _automaton()
#: Longest text read by the automaton, and strings per pass (bounds its memory to ~8 MiB).
_FAST_WIDTH, _FAST_CHUNK = 32, 1 << 16
#: Whole numbers up to this magnitude are exact in float64.
EXACT_INT = 2.0 ** 53
#: Types of typed numbers read as arrays (others are read one by one).
FLOAT_TYPES = frozenset({float, np.float64, np.float32, np.float16})
INT_TYPES = frozenset({int, np.int64, np.int32, np.int16, np.int8, np.uint64, np.uint32,
                        np.uint16, np.uint8})


def parse_numbers(values: Sequence) -> list:
    """``[parse_number(v) for v in values]``, computed for all values at once.

    Text is classified by a vectorised automaton of the :func:`parse_number` grammar (sign,
    digits, fraction, exponent, surrounding ASCII whitespace) and what it accepts is converted
    by ``float``; typed numbers are converted as arrays. Values the arrays cannot carry exactly
    — integers beyond 2**53, text with other whitespace, ``Decimal`` — are read one by one by
    :func:`parse_number`, so the result is the same list either way.
    """
    x, exact = number_floats(values)
    out = canonical_objects(x)
    for i, number in exact.items():
        out[i] = number
    return out.tolist()


def canonical_objects(x: np.ndarray) -> np.ndarray:
    """An object array of the canonical Python numbers of float64 ``x``: an ``int`` when whole,
    else a ``float``; None where ``x`` is not finite."""
    out = np.empty(len(x), dtype=object)
    finite = np.isfinite(x)
    whole = finite & (x == np.floor(x))
    frac = finite & ~whole
    out[frac] = x[frac]
    small = whole & (np.abs(x) < 2.0 ** 63)
    out[small] = x[small].astype(np.int64)
    for i in np.flatnonzero(whole & ~small):
        out[i] = int(x[i])
    return out


def number_floats(values: Sequence) -> tuple[np.ndarray, dict]:
    """The number each value writes as float64 (NaN when none) and, by position, the numbers
    float64 does not carry exactly (read by :func:`parse_number`; their float is NaN)."""
    values = values if isinstance(values, list) else list(values)
    n = len(values)
    x = np.full(n, np.nan)
    exact: dict = {}
    kinds = set(map(type, values))
    if kinds <= {str}:
        _text_floats(values, np.arange(n), x, exact)
    elif kinds <= FLOAT_TYPES | INT_TYPES and kinds & FLOAT_TYPES:
        x = _typed_floats(values, kinds, exact)
    else:
        _mixed_floats(values, x, exact)
    x[~np.isfinite(x)] = np.nan  # "1e999", inf: no finite number
    return x, exact


def _typed_floats(values: list, kinds: set, exact: dict) -> np.ndarray:
    """:func:`number_floats` of typed numbers (floats, maybe with integers): one array
    conversion; integers beyond 2**53 are kept exactly in ``exact``."""
    try:
        x = np.array(values, dtype=np.float64).reshape(len(values))
    except OverflowError:  # an integer beyond float64's range
        x = np.full(len(values), np.nan)
        _mixed_floats(values, x, exact)
        return x
    if kinds & INT_TYPES:
        for i in np.flatnonzero(np.abs(x) >= EXACT_INT):
            if type(values[i]) in INT_TYPES:
                x[i] = np.nan
                exact[int(i)] = int(values[i])
    return x


def _mixed_floats(values: list, x: np.ndarray, exact: dict) -> None:
    """:func:`number_floats` of values of several types, one group of types at a time."""
    groups: dict[str, list] = {"text": [], "int": [], "float": [], "other": []}
    for i, v in enumerate(values):
        if isinstance(v, str):
            groups["text"].append(i)
        elif isinstance(v, (bool, np.bool_)):
            continue
        elif isinstance(v, (int, np.integer)):
            groups["int"].append(i)
        elif isinstance(v, (float, np.floating)):
            groups["float"].append(i)
        else:
            groups["other"].append(i)
    if groups["text"]:
        at = np.asarray(groups["text"], dtype=np.int64)
        _text_floats([values[i] for i in at], at, x, exact)
    if groups["float"]:
        x[groups["float"]] = np.array([values[i] for i in groups["float"]], dtype=np.float64)
    for i in groups["int"]:
        v = int(values[i])
        if abs(v) < EXACT_INT:
            x[i] = v
        else:
            exact[i] = v
    for i in groups["other"]:
        _read_one(values[i], i, x, exact)


def _text_floats(texts: list, at: np.ndarray, x: np.ndarray, exact: dict) -> None:
    """Fill ``x[at]`` (and ``exact``) with the numbers ``texts`` write (:func:`number_floats`)."""
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    short = lengths <= _FAST_WIDTH
    if "\0" in "".join(texts):  # a NUL would read as the padding that ends a string
        short &= np.fromiter(("\0" not in t for t in texts), dtype=bool, count=len(texts))
    fast = np.flatnonzero(short)
    contiguous = len(fast) == len(texts)
    for a in range(0, len(fast), _FAST_CHUNK):
        part = fast[a:a + _FAST_CHUNK]
        chunk = texts[a:a + len(part)] if contiguous else [texts[i] for i in part]
        width = max(1, int(lengths[part].max()))
        points = np.array(chunk, dtype=f"<U{width}").view(np.uint32).reshape(len(part), -1)
        classes = np.where(points < 128, _CLASS[np.minimum(points, 127)], _OTHER)
        state = np.zeros(len(part), dtype=np.int64)
        for column in classes.T:
            state = _TRANSITIONS[state * 7 + column]
        integer = np.isin(state, _INTEGER_STATES)
        number = np.flatnonzero(integer | np.isin(state, _DECIMAL_STATES))
        read = chunk if len(number) == len(chunk) else [chunk[i] for i in number]
        y = np.fromiter(map(float, read), dtype=np.float64, count=len(number))  # what the
        # automaton accepts, float() reads: as Python does, correctly rounded
        big = integer[number] & ~(np.abs(y) < EXACT_INT)  # integers beyond float64
        y[big] = np.nan
        x[at[part[number]]] = y
        for i in number[big]:
            exact[int(at[part[i]])] = int(chunk[i])
        for i in np.flatnonzero(state == 11):  # other whitespace around it: str.strip's rules
            text = chunk[i]
            if text[:1].isspace() or text[-1:].isspace():
                _read_one(text, int(at[part[i]]), x, exact)
    for i in np.flatnonzero(~short):
        _read_one(texts[i], int(at[i]), x, exact)


def _read_one(value, i: int, x: np.ndarray, exact: dict) -> None:
    number = parse_number(value)
    if number is not None:
        x[i] = np.nan
        exact[i] = number
