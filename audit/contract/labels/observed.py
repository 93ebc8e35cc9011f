"""A label scale built from the labels observed, when the spec declares no order."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ...errors import InputError
from .column import distinct_labels
from .numbers import parse_numbers
from .reading import Aliases, alias_pairs, numbers_and_codes, read_keys
from .scale import LabelKind, LabelScale
from .text import is_canonical_number, is_missing, label_text

#: The refusal of an ordinal scale of text labels without ``label.order`` (the ``hf`` adapter
#: adds a ``ClassLabel``'s order to it).
ORDINAL_WITHOUT_ORDER = "ordinal labels that are not numbers need their order declared"


def infer_scale(kind: str | LabelKind, observed: Iterable, order: Sequence | None = None,
                names: Sequence[str] | None = None, *, aliases=None) -> LabelScale:
    """Build a scale from a declared order, or from the observed raw labels when none is declared.

    Observed labels are read as :class:`LabelScale` reads them (aliases first):

    * interval: the distinct numbers, sorted; a label that is no number fails the schema check;
    * preference: ``-k..k`` for the largest magnitude ``k`` observed (a scale from ``-1, 1``
      alone is ``-1, 0, 1``); when no observed label reads as a number but ``aliases`` (a
      spec's ``label.map``) are declared, for the largest magnitude among their values, so
      each label the map lacks is a schema failure naming its row;
    * ordinal: the distinct numbers, sorted; text labels beside them fail the schema check;
      ordinal text needs a declared order (its order cannot be guessed); when no observed
      label reads as a number, the values of ``aliases``, if declared, as for preference;
    * nominal: the distinct texts, sorted; shown as numbers, sorted numerically, when every text
      is a number in its shortest form.

    Raises
    ------
    InputError
        Preference labels that are not integers, or no number at all on a preference scale or
        an ordinal scale without ``order`` (key ``label``).
    """
    kind = LabelKind(kind)
    pairs = alias_pairs(aliases)
    if order is not None:
        return LabelScale(kind, tuple(order), tuple(names) if names is not None else None, pairs)
    distinct = distinct_labels(observed)
    reader = Aliases(pairs) if pairs else None
    if kind is LabelKind.NOMINAL:
        texts = sorted({t for t in read_keys(distinct, numeric=False, aliases=reader)
                        if t is not None})
        if not texts:  # every label missing: the not-null check names each row
            return LabelScale(kind, (), None, pairs)
        numbers = parse_numbers(texts) if is_canonical_number(texts[0]) else [None]
        if all(n is not None and label_text(n) == t for n, t in zip(numbers, texts)):
            return LabelScale(kind, tuple(sorted(numbers)), None, pairs)
        return LabelScale(kind, tuple(texts), None, pairs)
    numbers, codes = numbers_and_codes(distinct, pairs)
    if not numbers and pairs and kind is not LabelKind.INTERVAL:
        # no observed label is on the declared map: the map's values make the scale, and the
        # schema check names each label it does not hold, with its row
        numbers = sorted({n for n in parse_numbers([v for _, v in pairs]) if n is not None})
        codes = None
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
        raise InputError(f"{ORDINAL_WITHOUT_ORDER} (label.order); labels: {shown[:20]}",
                         key="label")
    scale = LabelScale(kind, numbers, None, pairs)
    if codes is not None:  # validation reads the same labels again: their codes are known
        scale.remember_codes(distinct, codes)
    return scale
