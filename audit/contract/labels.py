"""Label kinds and scales, and how a raw label is read onto its scale.

A :class:`LabelScale` declares what a label may be and how to compare two labels:

``nominal``
    unordered categories (hate speech yes / no; NLI classes);
``ordinal``
    ordered categories (a Likert item, ConvAbuse's -3..1);
``interval``
    numbers whose differences mean something (a 0-100 quality score);
``preference``
    a pairwise comparison of ``model_a`` and ``model_b`` on a *signed* ordinal scale.

Preference sign convention (the only place it is stated)
-------------------------------------------------------
A preference label is an integer in ``-k .. k``. **Negative means model_a (response A) is better,
positive means model_b (response B) is better, 0 is a tie**; the magnitude is the strength
("slightly" = 1, "clearly" = 2 on a five-point scale). The *winner* of a judgment is the sign of its
label: ``-1`` = A, ``0`` = tie, ``+1`` = B. Preference analyses run either on the full label
(``granularity="label"``) or on the winner only (``granularity="winner"``). Two labels name
*opposite winners* when their signs are -1 and +1; a tie is never opposite to anything.

Reading raw labels (the only place it is done)
----------------------------------------------
A raw label is read once, per distinct raw value, by :meth:`LabelScale.codes`, which both engines
use; what cannot be read is a schema failure naming its row, never a NaN. Numbers are read for
all distinct values at once (:func:`parse_numbers`, the same rules as :func:`parse_number`), so
a scale of half a million observed numbers costs a few array passes, not a Python call each.

* **Numbers.** An interval or preference scale, and an ordinal scale whose values are numbers,
  read every raw label as the number it writes (:func:`parse_number`): ``-0.0``, ``0`` and
  ``0.0`` are one label, as are ``2.50`` and ``2.5``, ``1e0`` and ``1``, `` 1`` and ``1``
  (surrounding whitespace is ignored). Text that writes no finite decimal number (``two``,
  ``nan``, ``inf``, ``1_000``) is not a number. Whole numbers are integers: a scale read from
  ``0.0`` and ``1.0`` has the values ``0, 1``.
* **Text.** A nominal scale (and an ordinal scale declared with text values) compares labels as
  text, exactly as written (:func:`label_text`): ``007`` and ``7`` are two labels, ``A`` and
  `` A`` are two labels, and ``NA`` or ``nan`` is a label (missing only when a spec's
  ``read.na_values`` says so). A *typed* number (a Parquet or JSON number, not text) is its
  shortest text, ``7`` for ``7`` and ``7.0``, so a numeric column and the same column written as
  text give the same labels; a JSON column mixing ``1`` and ``"a"`` is the text labels ``"1"``
  and ``"a"``. Observed nominal labels that are all numbers written in that shortest form are
  shown as numbers (values ``0, 1``, not ``"0", "1"``).
* **Aliases.** A spec's ``label.map``, or a recognised preference vocabulary
  (:mod:`audit.ingest.infer`), reads a raw label as a scale value before the scale is matched. A
  key matches a raw label written the same way, or the same way but for surrounding whitespace;
  a key written as a number (YAML ``1``, not ``"1"``) also matches any label naming that number.
"""

from __future__ import annotations

import decimal
import enum
import math
import operator
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from ..errors import InputError


class LabelKind(str, enum.Enum):
    NOMINAL = "nominal"
    ORDINAL = "ordinal"
    INTERVAL = "interval"
    PREFERENCE = "preference"


class Granularity(str, enum.Enum):
    """Which part of a preference label an analysis reads."""

    LABEL = "label"
    WINNER = "winner"


WINNER_NAMES = ("A", "tie", "B")

_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")

#: Interval scales with more distinct values than this are *continuous*: per-item moments, not
#: category counts, are their sufficient statistic (:mod:`audit.measure.moments`), and outputs
#: show their range instead of every value (:meth:`LabelScale.summary`). Up to 31 values a scale
#: is a list of points on which exact agreement is a meaningful event.
CATEGORY_LIMIT = 31


# -- one raw value ---------------------------------------------------------------------------------
def is_missing(value) -> bool:
    """True for a missing value (None, NaN, ``pd.NA``); text such as ``"NA"`` is not missing."""
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, (float, np.floating)) and math.isnan(value)


def _is_number(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating, decimal.Decimal)) and not \
        isinstance(value, (bool, np.bool_))


def _canonical(x: float):
    """A finite float as an int when it is whole, else itself; None when not finite."""
    if not math.isfinite(x):
        return None
    return int(x) if x.is_integer() else x


def parse_number(value):
    """The finite number ``value`` writes: an ``int`` when it is whole, else a ``float``.

    Typed numbers are taken as they are; text is a decimal number with optional sign, fraction
    and exponent, surrounding whitespace ignored (``" 2.50"`` -> 2.5, ``"-0.0"`` -> 0,
    ``"1e0"`` -> 1). Anything else (``"nan"``, ``"inf"``, ``"1_000"``, ``"0x1"``, booleans,
    missing values) is None.
    """
    if isinstance(value, str):
        text = value.strip()
        if _INTEGER.fullmatch(text):
            return int(text)
        if _DECIMAL.fullmatch(text):
            return _canonical(float(text))
        return None
    if not _is_number(value):
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    return _canonical(float(value))


def label_text(value) -> str | None:
    """A label's text: text as written; a typed number in its shortest form (``7.0`` -> ``"7"``,
    ``2.5`` -> ``"2.5"``); None when missing."""
    if isinstance(value, str):
        return value
    if is_missing(value):
        return None
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating, decimal.Decimal)):
        x = float(value)
        if math.isnan(x):
            return None
        return str(int(x)) if x.is_integer() else repr(x)
    return str(value)


def _is_canonical_number(text: str) -> bool:
    """True for text a typed number prints as (``0``, ``-3``, ``2.5``; not ``007``, ``1.0``)."""
    number = parse_number(text)
    return number is not None and label_text(number) == text


# -- many raw values at once ---------------------------------------------------------------------
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
    """The transition table of ``\\s*`` :data:`_DECIMAL` ``\\s*`` (states x classes, flattened),
    and its accepting states for integers (:data:`_INTEGER`) and for other decimals."""
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
_EXACT_INT = 2.0 ** 53


def parse_numbers(values: Sequence) -> list:
    """``[parse_number(v) for v in values]``, computed for all values at once.

    Text is classified by a vectorised automaton of the :func:`parse_number` grammar (sign,
    digits, fraction, exponent, surrounding ASCII whitespace) and what it accepts is converted
    by ``float``; typed numbers are converted as arrays. Values the arrays cannot carry exactly
    — integers beyond 2**53, text with other whitespace, ``Decimal`` — are read one by one by
    :func:`parse_number`, so the result is the same list either way.
    """
    x, exact = _number_floats(values)
    out = _canonical_objects(x)
    for i, number in exact.items():
        out[i] = number
    return out.tolist()


def _canonical_objects(x: np.ndarray) -> np.ndarray:
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


def _number_floats(values: Sequence) -> tuple[np.ndarray, dict]:
    """The number each value writes as float64 (NaN when none) and, by position, the numbers
    float64 does not carry exactly (read by :func:`parse_number`; their float is NaN)."""
    values = values if isinstance(values, list) else list(values)
    n = len(values)
    x = np.full(n, np.nan)
    exact: dict = {}
    kinds = set(map(type, values))
    if kinds <= {str}:
        _text_floats(values, np.arange(n), x, exact)
    elif kinds <= _FLOAT_TYPES | _INT_TYPES and kinds & _FLOAT_TYPES:
        x = _typed_floats(values, kinds, exact)
    else:
        _mixed_floats(values, x, exact)
    x[~np.isfinite(x)] = np.nan  # "1e999", inf: no finite number
    return x, exact


_FLOAT_TYPES = frozenset({float, np.float64, np.float32, np.float16})
_INT_TYPES = frozenset({int, np.int64, np.int32, np.int16, np.int8, np.uint64, np.uint32,
                        np.uint16, np.uint8})


def _typed_floats(values: list, kinds: set, exact: dict) -> np.ndarray:
    """:func:`_number_floats` of typed numbers (floats, maybe with integers): one array
    conversion; integers beyond 2**53 are kept exactly in ``exact``."""
    try:
        x = np.array(values, dtype=np.float64).reshape(len(values))
    except OverflowError:  # an integer beyond float64's range
        x = np.full(len(values), np.nan)
        _mixed_floats(values, x, exact)
        return x
    if kinds & _INT_TYPES:
        for i in np.flatnonzero(np.abs(x) >= _EXACT_INT):
            if type(values[i]) in _INT_TYPES:
                x[i] = np.nan
                exact[int(i)] = int(values[i])
    return x


def _mixed_floats(values: list, x: np.ndarray, exact: dict) -> None:
    """:func:`_number_floats` of values of several types, one group of types at a time."""
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
        if abs(v) < _EXACT_INT:
            x[i] = v
        else:
            exact[i] = v
    for i in groups["other"]:
        _read_one(values[i], i, x, exact)


def _text_floats(texts: list, at: np.ndarray, x: np.ndarray, exact: dict) -> None:
    """Fill ``x[at]`` (and ``exact``) with the numbers ``texts`` write (:func:`_number_floats`)."""
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
        big = integer[number] & ~(np.abs(y) < _EXACT_INT)  # integers beyond float64
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


# -- aliases ---------------------------------------------------------------------------------------
class _Aliases:
    """How raw labels are read through a mapping (a spec's ``label.map``): by exact text, by
    text without surrounding whitespace, and, for keys written as numbers, by number."""

    _NONE = object()

    def __init__(self, pairs: Sequence[tuple]):
        self.exact, self.stripped, self.numbers = {}, {}, {}
        for key, value in pairs:
            text = label_text(key)
            self.exact.setdefault(text, value)
            self.stripped.setdefault(text.strip(), value)
            if _is_number(key):
                self.numbers.setdefault(parse_number(key), value)

    def get(self, raw):
        """The value ``raw`` is read as, or :attr:`_NONE` when no key matches it."""
        text = label_text(raw)
        if text in self.exact:
            return self.exact[text]
        if text.strip() in self.stripped:
            return self.stripped[text.strip()]
        if self.numbers:
            number = parse_number(raw)
            if number is not None and number in self.numbers:
                return self.numbers[number]
        return self._NONE


def _alias_pairs(aliases) -> tuple:
    if aliases is None:
        return ()
    items = aliases.items() if isinstance(aliases, Mapping) else aliases
    return tuple((k, v) for k, v in items)


def _read(values: Iterable, *, numeric: bool, aliases: _Aliases | None) -> list:
    """Each raw value as the key it is compared by: a number (numeric scales) or its text; None
    when missing or, on a numeric scale, not a number."""
    if numeric and aliases is None:
        return parse_numbers(values)
    out = []
    for raw in values:
        if is_missing(raw):
            out.append(None)
            continue
        if aliases is not None:
            mapped = aliases.get(raw)
            if mapped is not _Aliases._NONE:
                raw = mapped
        out.append(parse_number(raw) if numeric else label_text(raw))
    return out


def distinct_numbers(raw: Iterable, aliases=None) -> tuple:
    """The distinct numbers among raw labels, read as :func:`parse_number` reads them (through
    ``aliases``, a mapping or pairs, first), sorted; text that writes no number is left out."""
    return _numbers_and_codes(raw if isinstance(raw, list) else list(raw), aliases)[0]


def _numbers_and_codes(raw: list, aliases=None) -> tuple[tuple, np.ndarray | None]:
    """:func:`distinct_numbers` and, when float64 holds every number exactly and there are no
    aliases, the position of each raw label's number among them (-1 for no number)."""
    pairs = _alias_pairs(aliases)
    if not pairs:
        x, exact = _number_floats(raw)
        if not exact:  # every number is its float: sort and compare as floats
            ok = ~np.isnan(x)
            ordered, inverse = np.unique(x[ok], return_inverse=True)
            codes = np.full(len(x), -1, dtype=np.int64)
            codes[ok] = inverse.reshape(-1)
            return tuple(_canonical_objects(ordered).tolist()), codes
    reader = _Aliases(pairs) if pairs else None
    numbers = sorted({n for n in _read(raw, numeric=True, aliases=reader) if n is not None})
    return tuple(numbers), None


def _plain_values(values: tuple, numbers: list) -> tuple:
    """Declared values in plain Python form: typed numbers canonical (``numbers``, their
    :func:`parse_numbers`), text as written."""
    kinds = set(map(type, values))
    if kinds <= {str}:
        return values
    if kinds <= _FLOAT_TYPES | _INT_TYPES and None not in numbers:
        return tuple(numbers)
    return tuple(n if n is not None and _is_number(v) else v for v, n in zip(values, numbers))


def is_continuous(scale: LabelScale) -> bool:
    """True for an interval scale with more than :data:`CATEGORY_LIMIT` values: per-item
    moments, not category counts, are its sufficient statistic (:mod:`audit.measure.moments`),
    and outputs show its range, not its values (:meth:`LabelScale.summary`)."""
    return scale.kind is LabelKind.INTERVAL and len(scale.values) > CATEGORY_LIMIT


# -- the scale -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LabelScale:
    """The declared values of a label, how they compare, and how raw labels are read onto them.

    Parameters
    ----------
    kind
        One of :class:`LabelKind`.
    values
        Every legal value, in scale order for ordinal, interval and preference labels. For interval
        labels with an open range (any number) pass an empty tuple: the observed values are used.
        Values of a numeric scale (see :attr:`reads_numbers`) are stored as numbers, whole ones as
        ``int``.
    names
        Optional display names, one per value (e.g. ``"A-is-clearly-better"`` for ``-2``).
    aliases
        Raw labels read as scale values first (a mapping or ``(raw, value)`` pairs): a spec's
        ``label.map`` or a recognised preference vocabulary. Stored as a tuple of pairs.

    Raises
    ------
    InputError
        Names and values differ in length, values repeat (as numbers on a numeric scale, as text
        otherwise), an interval value is not a number, or a preference scale is not ``-k..k``.
    """

    kind: LabelKind
    values: tuple = ()
    names: tuple[str, ...] | None = None
    aliases: tuple = ()

    #: What :meth:`alias` returns for a raw label no alias matches.
    NO_ALIAS = _Aliases._NONE

    def __post_init__(self):
        kind = LabelKind(self.kind)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "aliases", _alias_pairs(self.aliases))
        numbers = parse_numbers(self.values)  # those of the plain values too
        values = _plain_values(tuple(self.values), numbers)
        if self.names is not None:
            object.__setattr__(self, "names", tuple(str(n) for n in self.names))
            if len(self.names) != len(values):
                raise InputError("label names and values differ in length", key="label_names")
        all_numbers = None not in numbers
        numeric = kind in (LabelKind.INTERVAL, LabelKind.PREFERENCE) or (
            kind is LabelKind.ORDINAL and all_numbers)
        if kind is LabelKind.PREFERENCE:
            ints = [n for n in numbers if isinstance(n, int)]
            k = max((abs(n) for n in ints), default=0)
            if len(ints) != len(values) or sorted(ints) != list(range(-k, k + 1)) or k == 0:
                raise InputError(
                    "a preference scale is the integers -k..k (negative = A better, "
                    f"positive = B better, 0 = tie); got {list(self.values)}",
                    key="label_values",
                )
        if numeric and not all_numbers:
            bad = [v for v, n in zip(values, numbers) if n is None]
            raise InputError(f"{kind.value} label values must be numbers; got {[*bad]!r}",
                             key="label_values")
        if numeric:
            values = tuple(numbers)
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "_numeric", numeric)
        if numeric and _increasing(self.numeric_values):  # sorted floats: distinct at a glance
            return
        keys = values if numeric or set(map(type, values)) <= {str} else \
            [label_text(v) for v in values]
        if len(set(keys)) != len(keys):
            raise InputError(f"label values repeat: {_shown(values)}", key="label_values")

    # -- reading raw labels ---------------------------------------------------------------------
    @property
    def reads_numbers(self) -> bool:
        """True when raw labels are read as numbers (interval, preference, numeric ordinal)."""
        return self._numeric

    @cached_property
    def _index(self) -> dict:
        if self.reads_numbers:
            return {v: i for i, v in enumerate(self.values)}
        return {label_text(v): i for i, v in enumerate(self.values)}

    @cached_property
    def _float_index(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The values as sorted float64 and their positions, when float64 holds every value
        exactly (no integer beyond 2**53): numbers are then looked up as floats."""
        x = self.numeric_values
        if not self.reads_numbers or (np.abs(x) >= _EXACT_INT).any():
            return None
        order = np.argsort(x, kind="stable")
        return x[order], order

    @cached_property
    def _text_index(self) -> pd.Index:
        return pd.Index([label_text(v) for v in self.values], dtype=object)

    @cached_property
    def _alias_reader(self) -> _Aliases | None:
        return _Aliases(self.aliases) if self.aliases else None

    def alias(self, raw):
        """The value ``raw`` is read as through :attr:`aliases`, or :attr:`NO_ALIAS`."""
        reader = self._alias_reader
        return self.NO_ALIAS if reader is None or is_missing(raw) else reader.get(raw)

    def read(self, raw: Iterable) -> list:
        """Each raw label as the key the scale compares it by (a number on a numeric scale,
        else its text), aliases applied; None when missing or not a number on a numeric scale."""
        return _read(raw, numeric=self.reads_numbers, aliases=self._alias_reader)

    def codes(self, raw: Iterable) -> np.ndarray:
        """The position in :attr:`values` of each raw label; -1 when missing or off the scale.

        Without aliases the raw labels are read all at once: numbers by :func:`parse_numbers`
        and a search of the sorted values, text by a hash lookup of the values' texts; the
        codes are those of reading each label by :meth:`read`.
        """
        raw = raw if isinstance(raw, list) else list(raw)
        observed = self.__dict__.get("_observed")  # the labels infer_scale read the scale from
        if observed is not None and len(raw) == len(observed[0]) and \
                all(map(operator.is_, raw, observed[0])):
            del self.__dict__["_observed"]  # read once, by validation: not kept with the table
            return observed[1]
        if self._alias_reader is None and self._float_index is not None:
            x, exact = _number_floats(raw)
            ordered, order = self._float_index
            at = np.minimum(np.searchsorted(ordered, x), max(len(ordered) - 1, 0))
            found = ordered[at] == x if len(ordered) else np.zeros(len(x), dtype=bool)
            out = np.where(found, order[at] if len(order) else -1, -1).astype(np.int64)
            for i, number in exact.items():
                out[i] = self._index.get(number, -1)
            return out
        if self._alias_reader is None and not self.reads_numbers and \
                set(map(type, raw)) <= {str}:
            return np.asarray(self._text_index.get_indexer(raw), dtype=np.int64)
        index = self._index
        keys = self.read(raw)
        return np.fromiter((-1 if k is None else index.get(k, -1) for k in keys),
                           dtype=np.int64, count=len(keys))

    # -- how statistics should read the scale -------------------------------------------------
    @property
    def level(self) -> str:
        """Krippendorff level of measurement: nominal, ordinal or interval."""
        return "ordinal" if self.kind is LabelKind.PREFERENCE else self.kind.value

    @property
    def is_preference(self) -> bool:
        return self.kind is LabelKind.PREFERENCE

    @property
    def has_strength(self) -> bool:
        """True for a preference scale with more than one strength (e.g. slightly / clearly)."""
        return self.is_preference and len(self.values) > 3

    @cached_property
    def numeric_values(self) -> np.ndarray:
        """The values as floats (interval distances, ordinal ranks for non-numeric values);
        read-only."""
        if self.reads_numbers:
            x = np.array(self.values, dtype=float).reshape(len(self.values))
        else:
            x = np.arange(len(self.values), dtype=float)
        x.flags.writeable = False
        return x

    def display(self, value) -> str:
        if self.names is not None:
            for v, n in zip(self.values, self.names):
                if str(v) == str(value):
                    return n
        return str(value)

    def winner_scale(self) -> LabelScale:
        """The three-valued winner scale (-1 = A, 0 = tie, +1 = B) of a preference scale."""
        if not self.is_preference:
            raise InputError("the winner granularity exists only for preference labels",
                             key="granularity")
        return LabelScale(LabelKind.PREFERENCE, (-1, 0, 1), WINNER_NAMES)

    def to_dict(self) -> dict:
        """``kind``, ``values`` (and ``names``, and ``aliases`` as ``{raw text: value}``)."""
        out = {"kind": self.kind.value, "values": [_jsonable(v) for v in self.values]}
        if self.names is not None:
            out["names"] = list(self.names)
        if self.aliases:
            out["aliases"] = {label_text(k): _jsonable(v) for k, v in self.aliases}
        return out

    def summary(self) -> dict:
        """The scale as outputs show it (``results.json``'s ``dataset.label_scale``).

        A scale of categories is :meth:`to_dict`, every value listed. A continuous scale
        (:func:`is_continuous`: the observed numbers of an interval label, often one value per
        judgment) is its range instead — ``kind``, ``n_values``, ``min``, ``max`` (numbers as
        the labels write them: whole ones are integers), and ``aliases`` when there are any —
        as a list of half a million numbers says nothing a reader can use and costs more to
        write than the audit's statistics.
        """
        if not is_continuous(self):
            return self.to_dict()
        x = self.numeric_values
        out = {"kind": self.kind.value, "n_values": len(self.values),
               "min": _jsonable(self.values[int(np.argmin(x))]),
               "max": _jsonable(self.values[int(np.argmax(x))])}
        if self.aliases:
            out["aliases"] = {label_text(k): _jsonable(v) for k, v in self.aliases}
        return out


def _increasing(x: np.ndarray) -> bool:
    """True when ``x`` is strictly increasing and float64 holds it exactly (no whole number
    beyond 2**53, where two integers can share a float)."""
    return bool((np.diff(x) > 0).all() and not (np.abs(x) >= _EXACT_INT).any())


def _shown(values: tuple, limit: int = 20) -> list:
    """The first ``limit`` values for a message (and ``...`` when there are more)."""
    return [*values[:limit], "..."] if len(values) > limit else list(values)


def _jsonable(v):
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return float(v)
    return v


def infer_scale(kind: str | LabelKind, observed: Iterable, order: Sequence | None = None,
                names: Sequence[str] | None = None, *, aliases=None) -> LabelScale:
    """Build a scale from a declared order, or from the observed raw labels when none is declared.

    Observed labels are read as :class:`LabelScale` reads them (aliases first):

    * interval: the distinct numbers, sorted; a label that is no number fails the schema check;
    * preference: ``-k..k`` for the largest magnitude ``k`` observed (a scale from ``-1, 1``
      alone is ``-1, 0, 1``);
    * ordinal: the distinct numbers, sorted; text labels beside them fail the schema check;
      ordinal text needs a declared order (its order cannot be guessed);
    * nominal: the distinct texts, sorted; shown as numbers, sorted numerically, when every text
      is a number in its shortest form.

    Raises
    ------
    InputError
        Preference labels that are not integers, or no number at all on a preference scale or
        an ordinal scale without ``order`` (key ``label``).
    """
    kind = LabelKind(kind)
    pairs = _alias_pairs(aliases)
    if order is not None:
        return LabelScale(kind, tuple(order), tuple(names) if names is not None else None, pairs)
    distinct = distinct_labels(observed)
    reader = _Aliases(pairs) if pairs else None
    if kind is LabelKind.NOMINAL:
        texts = sorted({t for t in _read(distinct, numeric=False, aliases=reader)
                        if t is not None})
        numbers = parse_numbers(texts) if texts and _is_canonical_number(texts[0]) else [None]
        if all(n is not None and label_text(n) == t for n, t in zip(numbers, texts)):
            return LabelScale(kind, tuple(sorted(numbers)), None, pairs)
        return LabelScale(kind, tuple(texts), None, pairs)
    numbers, codes = _numbers_and_codes(distinct, pairs)
    if kind is LabelKind.PREFERENCE:
        fractions = [n for n in numbers if not isinstance(n, int)]
        if not numbers or fractions:
            what = f"non-integer labels {fractions[:5]}" if fractions else "no number"
            raise InputError(f"preference labels are the integers -k..k (negative = model_a "
                             f"better, 0 = tie, positive = model_b better); found {what}",
                             key="label")
        k = max(1, max(abs(n) for n in numbers))
        return LabelScale(kind, tuple(range(-k, k + 1)), None, pairs)
    if kind is LabelKind.ORDINAL and not numbers and distinct:
        shown = sorted({label_text(v) for v in distinct if not is_missing(v)})
        raise InputError(f"ordinal labels that are not numbers need their order declared "
                         f"(label.order); labels: {shown[:20]}", key="label")
    scale = LabelScale(kind, numbers, None, pairs)
    if codes is not None:  # validation reads the same labels again: their codes are known
        object.__setattr__(scale, "_observed", (distinct, codes))
    return scale


def encode(raw: pd.Series, scale: LabelScale) -> tuple[pd.Categorical, np.ndarray]:
    """Map raw labels onto the scale (:meth:`LabelScale.codes`, once per distinct raw value).

    Returns the categorical labels and a boolean mask of rows whose raw value is *not* on the
    scale (a missing value counts as off-scale).
    """
    raw_codes, distinct = factorize_labels(raw)
    per_value = scale.codes(distinct)
    codes = np.where(raw_codes >= 0, per_value[raw_codes] if len(per_value) else -1, -1)
    bad = codes < 0
    out = pd.Categorical.from_codes(codes, categories=pd.Index(scale.values),
                                    ordered=scale.kind is not LabelKind.NOMINAL)
    return out, bad


def distinct_labels(observed: Iterable) -> list:
    """The distinct raw labels among ``observed``, missing ones left out (``True`` kept apart
    from ``1``, as :func:`factorize_labels` keeps them)."""
    values = observed if isinstance(observed, pd.Series) else pd.Series(list(observed),
                                                                         dtype=object)
    return factorize_labels(values)[1]


def factorize_labels(raw: pd.Series) -> tuple[np.ndarray, list]:
    """``pd.factorize`` of a raw label column, keeping ``True`` apart from ``1`` (pandas hashes
    them together in an object column): the codes and the distinct raw values."""
    values = pd.Series(raw)
    if values.dtype == object and pd.api.types.infer_dtype(values, skipna=True) in (
            "mixed", "mixed-integer", "mixed-integer-float"):
        is_bool = values.map(lambda v: isinstance(v, (bool, np.bool_))).to_numpy(dtype=bool)
        if is_bool.any():
            values = values.where(~is_bool, values.map(label_text))
    try:
        codes, distinct = pd.factorize(values, use_na_sentinel=True)
    except TypeError:  # unhashable values: lists, arrays, mappings (Parquet list / struct)
        raise _not_single(values) from None
    return np.asarray(codes, dtype=np.int64), list(distinct)


#: Characters text cannot carry through the toolkit: NUL (pandas hashes text as C strings, which
#: end at the first NUL, so ``"x\\x00y"`` and ``"x"`` would become one value) and lone UTF-16
#: surrogates (JSON's ``"\\ud800"``: not Unicode, so no file, hash or report can hold them).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def first_unstorable(values: pd.Series):
    """``(index, what)`` of the first text value holding a NUL character or a lone surrogate
    (:data:`_UNSTORABLE`), or None: such text cannot be kept as written."""
    values = pd.Series(values)
    if values.dtype != object and not pd.api.types.is_string_dtype(values):
        return None
    try:
        if not _UNSTORABLE.search("".join(values.dropna())):  # one pass in the common case
            return None
    except TypeError:  # not all text: look value by value
        pass
    hit = values.map(lambda v: isinstance(v, str) and bool(_UNSTORABLE.search(v)))
    hit = hit.to_numpy(dtype=bool)
    if not hit.any():
        return None
    row = values.index[hit.argmax()]
    char = _UNSTORABLE.search(values.loc[row] if values.index.is_unique
                              else values.iloc[hit.argmax()]).group(0)
    what = ("a NUL character (U+0000): pandas compares text only up to it, so this value could "
            "not be kept apart from others" if char == "\x00" else
            f"a lone surrogate (U+{ord(char):04X}): not Unicode text, so it cannot be written to "
            "any output")
    return row, what


def _not_single(values: pd.Series) -> InputError:
    """The InputError for a label column holding lists or mappings, naming the first row."""
    import reprlib

    for row, value in values.items():
        if isinstance(value, (list, tuple, dict, set, np.ndarray)):
            kind = "mapping (a struct)" if isinstance(value, dict) else "list"
            return InputError(f"labels must be single values (text, a number or a boolean); "
                              f"source row {row} holds a {kind} of type "
                              f"{type(value).__name__}: {reprlib.repr(value)}", column="label")
    return InputError("labels must be single values (text, a number or a boolean)",
                      column="label")
