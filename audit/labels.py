"""Label kinds and scales.

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
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .errors import InputError


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


@dataclass(frozen=True)
class LabelScale:
    """The declared values of a label and how they compare.

    Parameters
    ----------
    kind
        One of :class:`LabelKind`.
    values
        Every legal value, in scale order for ordinal, interval and preference labels. For interval
        labels with an open range (any number) pass an empty tuple: the observed values are used.
    names
        Optional display names, one per value (e.g. ``"A-is-clearly-better"`` for ``-2``).
    """

    kind: LabelKind
    values: tuple = ()
    names: tuple[str, ...] | None = None

    def __post_init__(self):
        object.__setattr__(self, "kind", LabelKind(self.kind))
        object.__setattr__(self, "values", tuple(self.values))
        if self.names is not None:
            object.__setattr__(self, "names", tuple(str(n) for n in self.names))
            if len(self.names) != len(self.values):
                raise InputError("label names and values differ in length", key="label_names")
        if len(set(map(str, self.values))) != len(self.values):
            raise InputError(f"label values repeat: {list(self.values)}", key="label_values")
        if self.kind is LabelKind.PREFERENCE:
            vals = [int(v) for v in self.values]
            k = max(abs(v) for v in vals) if vals else 0
            if sorted(vals) != list(range(-k, k + 1)) or k == 0:
                raise InputError(
                    "a preference scale is the integers -k..k (negative = A better, "
                    f"positive = B better, 0 = tie); got {list(self.values)}",
                    key="label_values",
                )
            object.__setattr__(self, "values", tuple(vals))

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

    @property
    def numeric_values(self) -> np.ndarray:
        """The values as floats (interval distances, ordinal ranks for non-numeric values)."""
        try:
            return np.asarray([float(v) for v in self.values])
        except (TypeError, ValueError):
            return np.arange(len(self.values), dtype=float)

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
        out = {"kind": self.kind.value, "values": [_jsonable(v) for v in self.values]}
        if self.names is not None:
            out["names"] = list(self.names)
        return out


def _jsonable(v):
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return float(v)
    return v


def infer_scale(kind: str | LabelKind, observed: Sequence, order: Sequence | None = None,
                names: Sequence[str] | None = None) -> LabelScale:
    """Build a scale from a declared order, or from the observed labels when none is declared.

    Observed values are sorted numerically when they all parse as numbers, else as strings.
    """
    kind = LabelKind(kind)
    if order is not None:
        return LabelScale(kind, tuple(order), tuple(names) if names is not None else None)
    uniq = pd.unique(pd.Series(list(observed)).dropna())
    try:
        nums = sorted({float(v) for v in uniq})
        vals = tuple(int(v) if float(v).is_integer() else v for v in nums)
    except (TypeError, ValueError):
        vals = tuple(sorted(map(str, uniq)))
    return LabelScale(kind, vals, None)


def encode(raw: pd.Series, scale: LabelScale) -> tuple[pd.Categorical, np.ndarray]:
    """Map raw labels onto the scale.

    Returns the categorical labels and a boolean mask of rows whose raw value is *not* on the
    scale (NaN counts as off-scale). Matching is by string form, so ``"1"`` matches ``1``.
    """
    values = list(scale.values)
    lookup = {}
    for i, v in enumerate(values):
        lookup[str(v)] = i
        if isinstance(v, (int, np.integer)) or (isinstance(v, float) and float(v).is_integer()):
            lookup[str(float(v))] = i
            lookup[str(int(v))] = i
    cats = pd.Categorical(raw.astype("object"))
    code_of_cat = np.array([lookup.get(str(c).strip(), -1) for c in cats.categories], dtype=np.int64)
    raw_codes = cats.codes.astype(np.int64)
    codes = np.where(raw_codes >= 0, code_of_cat[raw_codes] if len(code_of_cat) else -1, -1)
    bad = codes < 0
    out = pd.Categorical.from_codes(np.where(bad, -1, codes), categories=pd.Index(values),
                                    ordered=scale.kind is not LabelKind.NOMINAL)
    return out, bad
