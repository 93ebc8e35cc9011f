"""Raw labels read as the keys a scale compares them by: through aliases first (a spec's
``label.map``, a recognised preference vocabulary), then as a number or as text.

An alias key matches a raw label written the same way, or the same way but for surrounding
whitespace; a key written as a number (YAML ``1``, not ``"1"``) also matches any label naming
that number.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from .numbers import canonical_objects, number_floats, parse_numbers
from .text import is_missing, is_number, label_text, parse_number


class Aliases:
    """How raw labels are read through a mapping (a spec's ``label.map``): by exact text, by
    text without surrounding whitespace, and, for keys written as numbers, by number."""

    #: What :meth:`get` returns for a raw label no key matches.
    NONE = object()

    def __init__(self, pairs: Sequence[tuple]):
        self.exact, self.stripped, self.numbers = {}, {}, {}
        for key, value in pairs:
            text = label_text(key)
            self.exact.setdefault(text, value)
            self.stripped.setdefault(text.strip(), value)
            if is_number(key):
                self.numbers.setdefault(parse_number(key), value)

    def get(self, raw):
        """The value ``raw`` is read as, or :attr:`NONE` when no key matches it."""
        text = label_text(raw)
        if text in self.exact:
            return self.exact[text]
        if text.strip() in self.stripped:
            return self.stripped[text.strip()]
        if self.numbers:
            number = parse_number(raw)
            if number is not None and number in self.numbers:
                return self.numbers[number]
        return self.NONE


def unused_keys(pairs: Sequence[tuple], observed: Iterable) -> list:
    """The keys of ``pairs`` (a ``label.map``'s) that no label of ``observed`` (distinct raw
    labels) is read through, by :class:`Aliases`' rules: the key's text without surrounding
    whitespace is some label's so, or the key is a number some label names. A key for a label
    the data does not hold is legal (one spec for several versions of a dataset), but a key
    written otherwise than the data writes its label (``Tie`` for ``tie``, ``true`` unquoted
    for the text ``true``) reads nothing, and that label is read as it is."""
    texts, numbers = set(), set()
    for raw in observed:
        if is_missing(raw):
            continue
        texts.add(label_text(raw).strip())
        number = parse_number(raw)
        if number is not None:
            numbers.add(number)
    return [key for key, _ in pairs
            if label_text(key).strip() not in texts
            and not (is_number(key) and parse_number(key) in numbers)]


def alias_pairs(aliases) -> tuple:
    """``aliases`` (a mapping, pairs or None) as a tuple of ``(raw, value)`` pairs."""
    if aliases is None:
        return ()
    items = aliases.items() if isinstance(aliases, Mapping) else aliases
    return tuple((k, v) for k, v in items)


def read_keys(values: Iterable, *, numeric: bool, aliases: Aliases | None) -> list:
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
            if mapped is not Aliases.NONE:
                raw = mapped
        out.append(parse_number(raw) if numeric else label_text(raw))
    return out


def distinct_numbers(raw: Iterable, aliases=None) -> tuple:
    """The distinct numbers among raw labels, read as :func:`parse_number` reads them (through
    ``aliases``, a mapping or pairs, first), sorted; text that writes no number is left out."""
    return numbers_and_codes(raw if isinstance(raw, list) else list(raw), aliases)[0]


def numbers_and_codes(raw: list, aliases=None) -> tuple[tuple, np.ndarray | None]:
    """:func:`distinct_numbers` and, when float64 holds every number exactly and there are no
    aliases, the position of each raw label's number among them (-1 for no number)."""
    pairs = alias_pairs(aliases)
    if not pairs:
        x, exact = number_floats(raw)
        if not exact:  # every number is its float: sort and compare as floats
            ok = ~np.isnan(x)
            ordered, inverse = np.unique(x[ok], return_inverse=True)
            codes = np.full(len(x), -1, dtype=np.int64)
            codes[ok] = inverse.reshape(-1)
            return tuple(canonical_objects(ordered).tolist()), codes
    reader = Aliases(pairs) if pairs else None
    numbers = sorted({n for n in read_keys(raw, numeric=True, aliases=reader) if n is not None})
    return tuple(numbers), None
