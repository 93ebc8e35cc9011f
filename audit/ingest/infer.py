"""What a table's labels are when no spec declares their kind: read from its columns and labels.

* **model_a and model_b columns: preference** (negative = model_a better, :mod:`audit.contract.labels`).
  Integers ``-k..k`` are read as they are; a recognised vocabulary (below) is read through a
  one-line notice of how each label was read; anything else is an InputError (exit 2) showing
  the distinct labels and the ``label: {kind: preference, map: {...}}`` lines that would read
  them. Positive integers without a negative one (``1`` / ``2``, ``0`` / ``1`` / ``2``: PandaLM's
  raw coding) are anything else: which side they favour cannot be told.
* **a model column (ratings) whose labels are numbers: ordinal** when every number is whole (a
  Likert item, a 0-100 slider), **interval** when some are fractions (averaged or continuous
  scores, MQM); a notice says which and how to declare the other. Rating labels that are not
  all numbers are an InputError showing the ``label: {kind: ordinal, order: [...]}`` lines: a
  rating's order cannot be guessed.
* **neither: nominal** on the observed labels, without a notice.

Recognised preference vocabularies (case and surrounding whitespace ignored; ``-``, ``_`` and
spaces inside a label are one separator): ``A`` / ``B``; ``model_a`` / ``model_b``;
``response_a`` / ``response_b``; ``left`` / ``right``; MultiPref's five points
``A-is-clearly-better`` (-2) .. ``B-is-clearly-better`` (2); ties are ``tie`` and its variants
(``tie (bothbad)``, ``tie (inconsistent)``), ``draw``, ``equal``, ``same``, ``both``,
``neither``. One table uses one vocabulary for its two sides (``A`` with ``right`` is not
recognised); labels that are numbers are read as numbers beside it (``A``, ``0``, ``B``).

The same reading applies when a spec declares ``kind: preference`` without ``label.map``: the
vocabulary is read with the same notice. Where fewer labels are not recognised than are
(``A``, ``B``, ``tie`` and one stray ``C``; ``-1``, ``0``, ``1`` and ``C``), the recognised ones
are read and the strays fail the schema check, each named with its source row; otherwise the
whole vocabulary is unknown and the InputError above shows how to declare it.

**The winning model's name** (``model_a, model_b, winner`` with ``winner`` = ``gpt-4``, as many
A/B tools export it) is read row by row, by :mod:`audit.ingest.winner`: a label that is not
missing, not a number and not a tie word, and that is its row's ``model_a`` (compared as ids
are, :mod:`audit.contract.ids`: as written) is -1, its row's ``model_b`` +1, with one notice
(``labels read as the winning model's name: ...``). The same rule for strays, counted in rows
since the reading is per row: where fewer rows name neither of their models (or name a model
that is both ``model_a`` and ``model_b``) than rows are read, those rows fail the schema check,
each named with its source row; otherwise exit 2 names one of them. A spec says it outright
with ``label: {kind: preference, names_winner: true}`` (``false``: never), which also settles a
table whose models are named like a vocabulary's sides (a model called ``A``): when the
vocabulary and the model names read some row differently, that is exit 2 naming the row and
both lines, never a guess. So is a label that is a tie word or a number and also its row's
``model_a`` or ``model_b`` (a model called ``Both-7B``, ``Same-LLM`` or ``7``) where the two
readings differ: declared ``true``, it is the model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from ..contract import columns as C
from ..errors import InputError
from ..contract.labels import (LabelKind, LabelScale, distinct_labels, infer_scale, is_missing, label_text,
                      parse_number)
from .common import warn

#: vocabulary name -> {normalised label: preference value}
VOCABULARIES = {
    "A / B": {"a": -1, "b": 1},
    "model_a / model_b": {"model_a": -1, "model_b": 1, "modela": -1, "modelb": 1},
    "response_a / response_b": {"response_a": -1, "response_b": 1},
    "left / right": {"left": -1, "right": 1},
    "MultiPref five-point": {"a_is_clearly_better": -2, "a_is_slightly_better": -1,
                             "b_is_slightly_better": 1, "b_is_clearly_better": 2},
}
_TIE = re.compile(r"(tie|tied|draw|equal|same|both|neither)\b")
_SEPARATORS = re.compile(r"[\s_\-]+")
#: Distinct labels shown in a message, at most.
SHOWN = 20


def _normalised(text: str) -> str:
    return _SEPARATORS.sub("_", text.strip().lower())


def is_tie(raw) -> bool:
    """Whether the raw label is a tie word (``tie``, ``tie (bothbad)``, ``draw``, ...)."""
    return (not is_missing(raw) and parse_number(raw) is None
            and _TIE.match(label_text(raw).strip().lower()) is not None)


def may_name_a_model(raw) -> bool:
    """Whether the raw label could be a model's name (:mod:`audit.ingest.winner`): it is not
    missing, not a number and not a tie word."""
    return not is_missing(raw) and parse_number(raw) is None and not is_tie(raw)


def recognise_preference(labels: Iterable) -> tuple[dict, str | None, list]:
    """Read distinct raw labels as a preference vocabulary.

    Returns ``(aliases, vocabulary, unrecognised)``: ``{raw label: value}`` for every text label
    recognised (numbers are left to be read as numbers), the name of the vocabulary of its two
    sides (None when only ties were recognised), and the text labels not recognised. Nothing is
    recognised (empty aliases) when the labels mix two vocabularies' sides. Both collections are
    sorted (aliases by value, then text), whatever order the labels came in: Spark's distinct
    labels come in no fixed order, and results must not depend on it.
    """
    labels = list(labels)
    aliases, families, unrecognised = {}, set(), []
    for raw in labels:
        if is_missing(raw) or parse_number(raw) is not None:
            continue
        text = label_text(raw)
        if _TIE.match(text.strip().lower()):
            aliases[raw] = 0
            continue
        key = _normalised(text)
        found = [(name, vocab[key]) for name, vocab in VOCABULARIES.items() if key in vocab]
        if found:
            families.add(found[0][0])
            aliases[raw] = found[0][1]
        else:
            unrecognised.append(raw)
    if len(families) > 1:
        aliases = {}
        unrecognised = [r for r in labels if not is_missing(r) and parse_number(r) is None]
    ordered = dict(sorted(aliases.items(), key=lambda kv: (kv[1], label_text(kv[0]))))
    return (ordered, (families.pop() if len(families) == 1 else None),
            sorted(unrecognised, key=label_text))


def kind_from_columns(columns: Sequence[str]) -> LabelKind | None:
    """Preference for ``model_a``/``model_b`` columns, None for a ``model`` column (ratings: the
    labels decide, :func:`rating_scale`), nominal otherwise."""
    if C.MODEL_A in columns or C.MODEL_B in columns:
        return LabelKind.PREFERENCE
    if C.MODEL in columns:
        return None
    return LabelKind.NOMINAL


def readable_vocabulary(distinct: list, *, order=None) -> tuple[dict, str | None, list, bool]:
    """:func:`recognise_preference` of the distinct labels, and whether the vocabulary reads
    them: False for positive integers without a negative one (without a declared order), or
    when as many labels are not recognised as are (the module docstring's rule)."""
    aliases, vocabulary, unrecognised = recognise_preference(distinct)
    numbers = [n for n in (parse_number(v) for v in distinct) if n is not None]
    unsigned = order is None and any(n > 0 for n in numbers) and not any(n < 0 for n in numbers)
    strays = bool(unrecognised) and len(unrecognised) >= len(aliases) + len(numbers)
    return aliases, vocabulary, unrecognised, not (unsigned or strays)


def preference_scale(observed, *, source: str, declared: bool, order=None,
                     names=None, winner=None) -> LabelScale:
    """A preference scale for labels without a ``label.map``: integers ``-k..k`` as they are, a
    recognised vocabulary through a notice (see the module docstring).

    Parameters
    ----------
    observed
        The raw labels (or their distinct values).
    declared
        Whether a spec declared ``kind: preference`` (no notice for plain integers then).
    order, names
        A declared ``label.order`` (and ``names``); the vocabulary is read onto it.
    winner
        A :class:`audit.ingest.winner.Reading`: the labels naming a model are already read
        (``-1`` / ``1``); the rest are read as numbers and tie words, its notice given.

    Raises
    ------
    InputError
        The labels are neither integers ``-k..k`` nor a recognised vocabulary (stray labels
        beside a recognised one are left to the schema check, which names their rows); the
        message shows the distinct labels and the spec lines that would read them.
    """
    distinct = _distinct(observed)
    if not distinct:
        return _no_labels(LabelKind.PREFERENCE)
    if winner is not None:
        return winner.scale(distinct, order=order, names=names, source=source)
    aliases, vocabulary, unrecognised, readable = readable_vocabulary(distinct, order=order)
    if not readable:
        raise preference_error(distinct, aliases, source=source, declared=declared)
    try:
        scale = infer_scale(LabelKind.PREFERENCE, distinct, order=order, names=names,
                            aliases=aliases)
    except InputError:
        raise preference_error(distinct, aliases, source=source, declared=declared) from None
    if aliases:
        read = ", ".join(f"{label_text(k)!r} -> {v}" for k, v in sorted(
            aliases.items(), key=lambda kv: (kv[1], label_text(kv[0]))))
        stray = (f"; not read: {', '.join(repr(label_text(u)) for u in unrecognised[:5])}"
                 if unrecognised else "")
        warn(f"{source}: labels read as preference ({vocabulary or 'tie'} vocabulary; negative "
             f"= model_a better): {read}{stray}; a spec's label.map reads them otherwise")
    elif not declared:
        warn(f"{source}: model_a / model_b columns and no spec: labels read as preference "
             f"{scale.values[0]}..{scale.values[-1]} (negative = model_a better)")
    return scale


def rating_scale(observed, *, source: str, aliases=None) -> LabelScale:
    """The scale of a ``model`` column's ratings when no kind is declared: ordinal when every
    number is whole, interval otherwise, with a notice; labels that are not all numbers (read
    through ``aliases``, a spec's ``label.map``) are an InputError showing the spec lines that
    would declare them."""
    distinct = _distinct(observed)
    if not distinct:
        return _no_labels(LabelKind.INTERVAL)
    reader = LabelScale(LabelKind.INTERVAL, (), None, aliases or ())
    numbers = reader.read(distinct)
    if None in numbers:
        read = {label_text(v): n for v, n in zip(distinct, numbers)}
        texts = sorted(read, key=lambda t: (read[t] is None, read[t] or 0, _natural(t)))
        unread = [t for t in texts if read[t] is None]
        how = "Declare how to read them in a spec (--spec FILE), worst first"
        if len(unread) < len(texts):  # numbers beside a few words: '-', 'N/A', '4 stars'
            one = len(unread) == 1
            how = (f"Of these, {_shown(unread)} {'is not a number' if one else 'are not numbers'}"
                   f": if {'it marks' if one else 'they mark'} no rating, delete those rows (a "
                   "spec's read: "
                   f"{{na_values: [{', '.join(map(_yaml, unread[:SHOWN]))}]}} names each as a "
                   "missing label); else declare the order in a spec (--spec FILE), worst "
                   "first, each word moved to its place")
        raise InputError(
            "a model column makes this rating data, and ratings without a declared kind must be "
            f"numbers; distinct labels: {_shown(texts)}. {how}:\n"
            f"  label:\n    kind: ordinal\n    order: [{', '.join(map(_yaml, texts[:SHOWN]))}]\n"
            "or `label: {kind: nominal}` to audit them as unordered categories",
            path=source, column=C.LABEL)
    whole = set(map(type, numbers)) <= {int}
    kind = LabelKind.ORDINAL if whole else LabelKind.INTERVAL
    scale = infer_scale(kind, distinct, aliases=aliases)
    other = LabelKind.INTERVAL if whole else LabelKind.ORDINAL
    warn(f"{source}: a model column and no declared kind: ratings read as {kind.value} "
         f"({len(scale.values)} distinct value(s), {scale.values[0]}..{scale.values[-1]}); "
         f"`label: {{kind: {other.value}}}` in a spec reads them as {other.value}")
    return scale


def _natural(text: str) -> tuple:
    """A key ordering texts by the numbers in them, as people read them: ``20%`` before
    ``100%``, ``2 stars`` before ``10 stars`` (a text sort puts ``100%`` first)."""
    return tuple((0, float(part), "") if k % 2 else (1, 0.0, part)
                 for k, part in enumerate(_DIGITS.split(text)))


_DIGITS = re.compile(r"(\d+(?:\.\d+)?)")


def _no_labels(kind: LabelKind) -> LabelScale:
    """The scale handed on when there is no label to read (a header-only table, or every label
    cell empty): validation then says what is wrong, "the table is empty" or each missing
    label with its source row. Reading the kind from no labels gave "distinct labels: ." and
    spec lines with nothing in them."""
    return LabelScale(kind, (-1, 0, 1) if kind is LabelKind.PREFERENCE else (), None, ())


class UnreadPreference(InputError):
    """:func:`preference_error`'s InputError; ``texts`` are the distinct labels, for
    :func:`audit.ingest.winner.names_hint` (labels that are also models' names)."""

    def __init__(self, message: str, *, texts: list, **where):
        super().__init__(message, **where)
        self.texts = texts


def preference_error(distinct: list, aliases: dict, *, source: str, declared: bool) -> InputError:
    """The InputError of preference labels no vocabulary reads: the distinct labels and the
    ``label.map`` lines that would read them."""
    texts = sorted({label_text(v) for v in distinct}, key=lambda t: (parse_number(t) is None,
                                                                     parse_number(t) or 0, t))
    read = {label_text(k): v for k, v in aliases.items()}
    entries = ", ".join(f"{_yaml(t)}: {read.get(t, '?')}" for t in texts[:SHOWN])
    why = ("the spec declares preference labels" if declared else
           "model_a / model_b columns make this pairwise data")
    return UnreadPreference(
        f"{why}, but its labels are neither the integers -k..k nor a preference vocabulary "
        f"annotation-audit recognises (A / B / tie, model_a / model_b, left / right, or the "
        f"winning model's name written as its row's model_a or model_b is); distinct "
        f"labels: {_shown(texts)}. Say how to read each (negative = model_a better, 0 = tie, "
        f"positive = model_b better) in a spec (--spec FILE), replacing each ?:\n"
        f"  label:\n    kind: preference\n    map: {{{entries}}}",
        texts=texts, path=source, column=C.LABEL)


def _distinct(observed) -> list:
    """The distinct labels, missing ones left out (one vectorised look first: ``pd.isna``
    finds every value :func:`audit.contract.labels.is_missing` finds)."""
    values = distinct_labels(observed)
    if not pd.isna(np.fromiter(values, dtype=object, count=len(values))).any():
        return values
    return [v for v in values if not is_missing(v)]


def _shown(texts: list[str]) -> str:
    more = f", ... ({len(texts)} in all)" if len(texts) > SHOWN else ""
    return ", ".join(repr(t) for t in texts[:SHOWN]) + more


def _yaml(text: str) -> str:
    """A label as a YAML flow scalar that reads back as the same text."""
    return json.dumps(text, ensure_ascii=False)
