"""The label scale: its kind, its declared values, and how it reads raw labels onto codes.

A :class:`LabelScale` declares what a label may be and how two labels compare (the kinds and
the preference sign convention are stated in :mod:`audit.contract.labels`). It reads raw labels
by the rules of :mod:`.text`, :mod:`.numbers` and :mod:`.reading`, once per distinct raw value.
"""

from __future__ import annotations

import enum
import operator
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from ...errors import InputError
from .numbers import EXACT_INT, FLOAT_TYPES, INT_TYPES, number_floats, parse_numbers
from .reading import Aliases, alias_pairs, read_keys
from .text import is_missing, is_number, label_text


class LabelKind(str, enum.Enum):
    """What a label is: an unordered category, an ordered one, a number, or a signed preference."""

    NOMINAL = "nominal"
    ORDINAL = "ordinal"
    INTERVAL = "interval"
    PREFERENCE = "preference"


class Granularity(str, enum.Enum):
    """Which part of a preference label an analysis reads."""

    LABEL = "label"
    WINNER = "winner"


WINNER_NAMES = ("A", "tie", "B")

#: Interval scales with more distinct values than this are *continuous*: per-item moments, not
#: category counts, are their sufficient statistic (:mod:`audit.measure.moments`), and outputs
#: show their range instead of every value (:meth:`LabelScale.summary`). Up to 31 values a scale
#: is a list of points on which exact agreement is a meaningful event.
CATEGORY_LIMIT = 31



def _plain_values(values: tuple, numbers: list) -> tuple:
    """Declared values in plain Python form: typed numbers canonical (``numbers``, their
    :func:`parse_numbers`), text as written."""
    kinds = set(map(type, values))
    if kinds <= {str}:
        return values
    if kinds <= FLOAT_TYPES | INT_TYPES and None not in numbers:
        return tuple(numbers)
    return tuple(n if n is not None and is_number(v) else v for v, n in zip(values, numbers))


def is_continuous(scale: LabelScale) -> bool:
    """True for an interval scale with more than :data:`CATEGORY_LIMIT` values: per-item
    moments, not category counts, are its sufficient statistic (:mod:`audit.measure.moments`),
    and outputs show its range, not its values (:meth:`LabelScale.summary`)."""
    return scale.kind is LabelKind.INTERVAL and len(scale.values) > CATEGORY_LIMIT


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
    NO_ALIAS = Aliases.NONE

    def __post_init__(self):
        kind = LabelKind(self.kind)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "aliases", alias_pairs(self.aliases))
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
        if not self.reads_numbers or (np.abs(x) >= EXACT_INT).any():
            return None
        order = np.argsort(x, kind="stable")
        return x[order], order

    @cached_property
    def _text_index(self) -> pd.Index:
        return pd.Index([label_text(v) for v in self.values], dtype=object)

    @cached_property
    def _alias_reader(self) -> Aliases | None:
        return Aliases(self.aliases) if self.aliases else None

    def alias(self, raw):
        """The value ``raw`` is read as through :attr:`aliases`, or :attr:`NO_ALIAS`."""
        reader = self._alias_reader
        return self.NO_ALIAS if reader is None or is_missing(raw) else reader.get(raw)

    def read(self, raw: Iterable) -> list:
        """Each raw label as the key the scale compares it by (a number on a numeric scale,
        else its text), aliases applied; None when missing or not a number on a numeric scale."""
        return read_keys(raw, numeric=self.reads_numbers, aliases=self._alias_reader)

    def codes(self, raw: Iterable) -> np.ndarray:
        """The position in :attr:`values` of each raw label; -1 when missing or off the scale.

        Without aliases the raw labels are read all at once: numbers by :func:`parse_numbers`
        and a search of the sorted values, text by a hash lookup of the values' texts; the
        codes are those of reading each label by :meth:`read`.
        """
        raw = raw if isinstance(raw, list) else list(raw)
        observed = self.__dict__.get("_observed")  # set by remember_codes
        if observed is not None and len(raw) == len(observed[0]) and \
                all(map(operator.is_, raw, observed[0])):
            del self.__dict__["_observed"]  # read once, by validation: not kept with the table
            return observed[1]
        if self._alias_reader is None and self._float_index is not None:
            x, exact = number_floats(raw)
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

    def remember_codes(self, raw: list, codes: np.ndarray) -> None:
        """Keep ``codes``, already computed for the raw labels ``raw``, for the next
        :meth:`codes` call on that same list: validation reads again the labels
        :func:`audit.contract.labels.infer_scale` built the scale from, once."""
        object.__setattr__(self, "_observed", (raw, codes))

    # -- how statistics should read the scale -------------------------------------------------
    @property
    def level(self) -> str:
        """Krippendorff level of measurement: nominal, ordinal or interval."""
        return "ordinal" if self.kind is LabelKind.PREFERENCE else self.kind.value

    @property
    def is_preference(self) -> bool:
        """True for a pairwise preference scale (signed: negative = A better, 0 = tie)."""
        return self.kind is LabelKind.PREFERENCE

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
        """``value``'s display name (:attr:`names`) when the scale has one, else its text."""
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
    return bool((np.diff(x) > 0).all() and not (np.abs(x) >= EXACT_INT).any())


def _shown(values: tuple, limit: int = 20) -> list:
    """The first ``limit`` values for a message (and ``...`` when there are more)."""
    return [*values[:limit], "..."] if len(values) > limit else list(values)


def _jsonable(v):
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return float(v)
    return v
