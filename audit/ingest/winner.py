"""Preference labels written as the winning model's name, read row by row.

Many A/B tools and exports write a comparison as ``model_a, model_b, winner`` with ``winner`` the
winning model's name (``gpt-4``, ``llama-2-70b``) or a tie word (``tie``, ``tie (bothbad)``).
Whether ``gpt-4`` is -1 or +1 depends on the row, so no ``label.map`` can read it. Read here:

* a label that may name a model (:func:`audit.ingest.infer.may_name_a_model`: not missing, not
  a number, not a tie word) and that is its row's ``model_a`` is -1, its row's ``model_b`` +1
  (negative = model_a better, :mod:`audit.contract.labels`). Label and model are compared as
  ids are (:mod:`audit.contract.ids`): as written, surrounding blanks and Unicode included
  (``gpt-4`` does not name the model `` gpt-4``, as the two are two models in the audit);
* every other label is read as without this reading: numbers as numbers, tie words as 0;
* a label naming neither of its row's models, or naming a model that is both ``model_a`` and
  ``model_b``, is a *stray*;
* a label that is a tie word or a number and also its row's ``model_a`` or ``model_b`` (a model
  called ``Both-7B``, ``Same-LLM`` or ``7``) is a *look-alike*: as the model's name it is -1 or
  +1, as a tie word 0, as a number the number.

Without a spec the reading is inferred (:func:`decide`) when some row's label names one of its
models: with fewer strays than rows read (named, tie and number rows), each stray fails the
schema check naming its source row, as stray vocabulary labels do (:mod:`audit.ingest.infer`);
otherwise exit 2 names a stray row, unless the vocabulary reads the labels. When the labels are
also a vocabulary's sides (models called ``A`` and ``B``, labelled ``A`` / ``B``), both
readings are compared row by row: agreeing on every row, the table is read with the
vocabulary's notice; differing on a row, exit 2 names that row and the two spec lines that
settle it (``label.names_winner: true`` or ``false``, :mod:`audit.ingest.spec`). So are
look-alikes whose two readings differ (a tie word always; a number unless it is the same value,
``1`` naming its row's ``model_b``), before any other rule: exit 2 names the row, how each
reading reads it and the spec line that settles it, never a guess. A look-alike number is
compared only where some label that is text names its row's model (a table of the integers
``-k..k`` whose models are numbered ``0``, ``1``, ... is the integer table it always was). Declared
``true``, the reading applies without these checks (each stray a schema failure, each
look-alike the model it names); declared ``false``, never (a look-alike is the tie word or the
number).

A table without a ``label`` column whose ``winner`` column stands beside ``item``,
``annotator``, ``model_a`` and ``model_b`` (no spec needed, or a spec that maps no label) takes
its labels from ``winner``, with a notice (:func:`winner_as_label`); format detection reads such
columns as a table (:func:`audit.ingest.detect.format_from_columns`; MT-Bench's columns,
``judge`` and ``question_id`` among them, are still MT-Bench).

The decision is made once, from a :class:`Tally` of rows per distinct label and side, which the
pandas engine counts here (:func:`read_frame`) and the Spark engine with one group-by
(:mod:`audit.ingest.spark.winner`); the labels read are then rewritten as ``-1`` / ``1`` (a
column expression on Spark), so the label scale, validation and encoding are the usual ones.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
import pandas as pd

from ..contract import columns as C
from ..contract.labels import LabelKind, infer_scale, label_text, parse_number
from ..errors import InputError, SchemaError
from . import infer
from .common import warn

#: What a row's label names: neither of its models, its model_a, its model_b, or a model that
#: is both (model_a == model_b). Columns of :attr:`Tally.counts`.
NEITHER, SIDE_A, SIDE_B, BOTH = 0, 1, 2, 3
N_SIDES = 4
#: The preference value of a label naming its row's model_a / model_b (None: not read).
VALUE = {SIDE_A: -1, SIDE_B: 1}
#: The labels a named row is rewritten as, before the scale reads them.
WRITTEN = {SIDE_A: "-1", SIDE_B: "1"}
#: The spec lines that declare the reading, or that it never applies.
DECLARE = ("  label: {kind: preference, names_winner: true}    "
           "# the label is the winning model's name")
NEVER = "  label: {kind: preference, names_winner: false}   # the label is a side"
#: Labels (or names) shown in a message, at most.
SHOWN = 5
#: The column a table without a ``label`` column takes its labels from (:func:`takes_winner`).
WINNER = "winner"


def takes_winner(columns, spec=None) -> bool:
    """Whether a table of source ``columns`` read by ``spec`` (None: no spec) takes its labels
    from its ``winner`` column: it has no ``label`` column and the spec maps none (nor maps
    ``winner`` to another column), its layout is long, and its other columns fit a table:
    ``item``, ``annotator``, ``model_a`` and ``model_b``, as named or as the spec maps them."""
    mapped = spec.columns if spec is not None else {}
    if spec is not None and spec.layout == "wide" or C.LABEL in mapped \
            or WINNER in mapped.values():
        return False
    cols = {str(c) for c in columns}
    if C.LABEL in cols or WINNER not in cols:
        return False
    return all(mapped.get(c, c) in cols for c in (C.ITEM, C.ANNOTATOR, *C.PAIRWISE))


def winner_as_label(spec, columns, *, source: str):
    """``spec`` reading the labels from the ``winner`` column, with a notice, where
    :func:`takes_winner`; else ``spec`` itself."""
    if not takes_winner(columns, spec):
        return spec
    warn(f"{source}: no label column: labels read from the column {WINNER!r} (beside model_a / "
         f"model_b); a spec's columns: {{label: COLUMN}} reads them from another")
    return replace(spec, columns={**spec.columns, C.LABEL: WINNER})


@dataclass(frozen=True)
class Tally:
    """Rows per distinct raw label (missing ones left out) and what the label names on them.

    ``labels`` are the distinct raw labels (in any order) and ``counts`` their rows by side
    (``counts[i, SIDE_A]``: rows whose label ``labels[i]`` is their model_a). Labels that may
    name a model (:attr:`candidates`) are compared with the models; so are tie words and
    numbers that are some model's name (look-alikes, :meth:`lookalikes`); every other label's
    rows are counted under :data:`NEITHER`.
    """

    labels: tuple
    counts: np.ndarray

    @cached_property
    def candidates(self) -> np.ndarray:
        return np.fromiter((infer.may_name_a_model(v) for v in self.labels), dtype=bool,
                           count=len(self.labels))

    @property
    def named(self) -> int:
        """Rows whose label names exactly one of their models."""
        return int(self.counts[self.candidates][:, [SIDE_A, SIDE_B]].sum())

    @property
    def strays(self) -> int:
        """Rows whose label may name a model but names neither of theirs (or both)."""
        return int(self.counts[self.candidates][:, [NEITHER, BOTH]].sum())

    @property
    def read(self) -> int:
        """Rows the reading reads: named, and those of numbers and tie words."""
        return self.named + int(self.counts[~self.candidates].sum())

    def lookalikes(self, *, numbers: bool) -> dict:
        """``{label: sides}`` of the rows whose label is a tie word (or, with ``numbers``, a
        number) and its row's model_a or model_b, where the two readings differ: a tie word
        always (0 against -1 / +1), a number unless it is the side's value (``1`` naming its
        row's model_b)."""
        out = {}
        for i, label in enumerate(self.labels):
            if self.candidates[i]:
                continue
            tie = infer.is_tie(label)
            if not (tie or numbers):
                continue
            value = 0 if tie else parse_number(label)
            sides = [s for s in (SIDE_A, SIDE_B) if self.counts[i, s] and value != VALUE[s]]
            if sides:
                out[label] = sides
        return out

    def kept(self) -> np.ndarray:
        """Per label, whether some of its rows keep it once named rows (:data:`SIDE_A`,
        :data:`SIDE_B`) are rewritten as ``-1`` / ``1``."""
        return self.counts[:, [NEITHER, BOTH]].sum(axis=1) > 0

    def rows(self, pairs: dict) -> int:
        """Rows of the ``{label: sides}`` in ``pairs``."""
        at = {v: i for i, v in enumerate(self.labels)}
        return int(sum(self.counts[at[v], list(s)].sum() for v, s in pairs.items()))

    def named_labels(self) -> list:
        """The labels naming a model on some row, sorted by text."""
        hit = self.candidates & (self.counts[:, [SIDE_A, SIDE_B]].sum(axis=1) > 0)
        return sorted((v for v, h in zip(self.labels, hit) if h), key=label_text)

    def stray_pairs(self) -> dict:
        """``{label: sides}`` of the stray rows."""
        return {v: [s for s in (NEITHER, BOTH) if self.counts[i, s]]
                for i, v in enumerate(self.labels)
                if self.candidates[i] and self.counts[i, [NEITHER, BOTH]].sum()}

    def after(self, distinct: list) -> list:
        """``distinct`` (the raw distinct labels, None kept) as they are once the named rows
        (look-alikes' too) are rewritten: a label whose every row is named is gone, ``-1`` /
        ``1`` are added."""
        at = {v: i for i, v in enumerate(self.labels)}
        kept = self.kept()
        out = [v for v in distinct if v not in at or kept[at[v]]]
        for side, text in WRITTEN.items():
            if self.counts[:, side].sum():
                out.append(text)
        return list(dict.fromkeys(out))


@dataclass(frozen=True)
class Reading:
    """The labels read as the winning model's name: the named rows are -1 / +1 (see the module
    docstring); :meth:`scale` reads the rest and gives the notice."""

    tally: Tally
    declared: bool = False

    def scale(self, distinct: list, *, order=None, names=None, source: str):
        """The preference scale of the labels once the named rows read ``-1`` / ``1``
        (``distinct``): numbers as numbers, tie words 0, every stray off the scale (a schema
        failure naming its row); the notice, unless the reading is declared.

        Raises
        ------
        InputError
            The other labels' numbers are positive without a negative one (PandaLM's
            ``1`` / ``2``: which side they favour cannot be told) or not integers.
        """
        raw_numbers = [n for n in (parse_number(v) for v, c, k in
                                   zip(self.tally.labels, self.tally.candidates,
                                       self.tally.kept()) if not c and k)
                       if n is not None]
        if order is None and any(n > 0 for n in raw_numbers) and not any(
                n < 0 for n in raw_numbers):
            raise infer.preference_error(list(self.tally.labels), {}, source=source,
                                         declared=self.declared)
        ties = {v: 0 for v in distinct if infer.is_tie(v)}
        scale = infer_scale(LabelKind.PREFERENCE, [*distinct, -1, 1], order=order, names=names,
                            aliases=ties)
        if not self.declared:
            warn(self.notice(source, ties))
        return scale

    def notice(self, source: str, ties: dict) -> str:
        """One line: which labels were read as names, on how many rows, the ties, the strays."""
        tally = self.tally
        named = tally.named_labels()
        shown = ", ".join(repr(label_text(v)) for v in named[:SHOWN])
        more = f", ... ({len(named)} names)" if len(named) > SHOWN else ""
        tied = "".join(f", {label_text(v)!r} -> 0" for v in sorted(ties, key=label_text))
        strays = sorted(tally.stray_pairs(), key=label_text)
        stray = (f"; not read: {tally.strays} row(s) whose label names neither of its row's "
                 f"models ({', '.join(repr(label_text(v)) for v in strays[:SHOWN])})"
                 if strays else "")
        return (f"{source}: labels read as the winning model's name (its row's model_a -> -1, "
                f"model_b -> 1; negative = model_a better): {shown}{more} on {tally.named} "
                f"row(s){tied}{stray}; a spec's label.names_winner: false reads them otherwise")

    @property
    def hint(self) -> str:
        """The last line of a schema failure of stray labels."""
        return ("the labels are read as the winning model's name: a label that names neither "
                "of its row's models (model_a, model_b) is not read; correct it, or write the "
                "model exactly as the row's model_a or model_b has it")


@dataclass(frozen=True)
class Conflict:
    """Exit 2 about one row: ``pairs`` (``{label: sides}``) are the rows it is about, of which
    the engine names one; :meth:`message` says what is wrong with it."""

    tally: Tally
    pairs: dict
    vocabulary: str | None = None
    aliases: dict | None = None
    lookalike: bool = False

    def message(self, raw, model_a, model_b) -> str:
        """The message about the row whose raw label (a key of :attr:`pairs`) and models (as
        text) are given."""
        label = label_text(raw)
        row = f"label {label!r}, model_a {model_a!r}, model_b {model_b!r}"
        if self.lookalike:
            return self._lookalike(raw, row, model_a, model_b)
        if self.vocabulary is None:
            close = next((f" ({label!r} differs from {name} {model!r} only in surrounding "
                          "blanks: ids are read as written)"
                          for name, model in (("model_a", model_a), ("model_b", model_b))
                          if model is not None and model != label
                          and model.strip() == label.strip()), "")
            return (f"{self.tally.named} row(s) name one of their models, as a label written "
                    f"as the winning model's name does, but {self.tally.strays} row(s) name "
                    f"neither of theirs, not fewer than the {self.tally.read} row(s) read; as "
                    f"this row: {row}{close}. Correct those rows, or declare the reading in a "
                    f"spec (--spec FILE), which reads each row naming one of its models and "
                    f"fails each other one, naming it:\n{DECLARE}")
        side = (SIDE_A if label == model_a and label != model_b else
                SIDE_B if label == model_b and label != model_a else NEITHER)
        as_side = self.aliases.get(raw)
        return (f"{row}: the label reads two ways, which differ on "
                f"{self.tally.rows(self.pairs)} row(s): as the {self.vocabulary} vocabulary "
                f"{_value(as_side)}, as the winning model's name {_value(VALUE.get(side))}. "
                f"annotation-audit does not guess; say which the table means in a spec "
                f"(--spec FILE):\n{DECLARE}\nor\n{NEVER} ({self.vocabulary} vocabulary)")


    def _lookalike(self, raw, row: str, model_a, model_b) -> str:
        """The message of a look-alike row: its two readings and what settles them."""
        label = label_text(raw)
        side = SIDE_A if label == model_a else SIDE_B
        tie = infer.is_tie(raw)
        what = "a tie word" if tie else "a number"
        as_written = 0 if tie else parse_number(raw)
        said = (f"{row}: the label reads two ways, which differ on "
                f"{self.tally.rows(self.pairs)} row(s): as {what} {_value(as_written)}, as "
                f"the winning model's name {_value(VALUE[side])}. annotation-audit does not "
                f"guess; ")
        if not self.tally.named:
            never = NEVER.replace("the label is a side", "never a model's name")
            return (f"{said}say which the table means in a spec (--spec FILE):\n{DECLARE}\n"
                    f"or\n{never} ({label!r} {what})")
        named = self.tally.named_labels()
        shown = ", ".join(repr(label_text(v)) for v in named[:SHOWN])
        more = ", ..." if len(named) > SHOWN else ""
        return (f"{said}if the label is the model, say so in a spec (--spec FILE):\n"
                f"{DECLARE}\nelse correct the row: {self.tally.named} other row(s) name their "
                f"models ({shown}{more}), which names_winner: false would leave unread")


def names_hint(err: "infer.UnreadPreference", names, *, spec) -> InputError:
    """``err`` (preference labels no vocabulary reads) with a last line when some of its labels
    are also models' names (``names``: the model_a / model_b ids among them, a set): a table
    whose models are named ``1`` and ``2`` and whose winner column names them reads as numbers
    without a negative one, which :func:`decide` leaves to that message; the name reading is
    declared, not guessed. ``err`` itself when none is, or the spec says
    ``names_winner: false``."""
    named = [t for t in err.texts if t in names]
    if not named or spec.label_names_winner is False:
        return err
    shown = ", ".join(repr(t) for t in named[:SHOWN])
    more = ", ..." if len(named) > SHOWN else ""
    return InputError(f"{err.message}\nor, as {shown}{more} {'is' if len(named) == 1 else 'are'}"
                      f" also the name{'s' if len(named) > 1 else ''} of models in model_a / "
                      "model_b, if the label names the winning model, say so instead:\n"
                      f"{DECLARE}", path=err.path, column=err.column, row=err.row)


def _value(value) -> str:
    if value is None:
        return "it is not read"
    better = "a tie" if value == 0 else f"model_{'a' if value < 0 else 'b'} better"
    return f"it is {value} ({better})"


def decide(tally: Tally, *, declared: bool = False, order=None) -> Reading | Conflict | None:
    """How to read the labels of ``tally`` (the module docstring's rules): a
    :class:`Reading`, a :class:`Conflict` (exit 2 about one of its rows), or None (no label
    is read as a name: the usual reading)."""
    if declared:
        return Reading(tally, declared=True)
    differ = tally.lookalikes(numbers=tally.named > 0)
    if differ:
        return Conflict(tally, differ, lookalike=True)
    if not tally.named:
        return None
    aliases, vocabulary, _, readable = infer.readable_vocabulary(list(tally.labels),
                                                                order=order)
    if tally.strays >= tally.read:
        return None if readable else Conflict(tally, tally.stray_pairs())
    if vocabulary is None or not readable:
        return Reading(tally)
    differ = {}
    for i, label in enumerate(tally.labels):
        if tally.candidates[i]:
            sides = [s for s in range(N_SIDES)
                     if tally.counts[i, s] and VALUE.get(s) != aliases.get(label)]
            if sides:
                differ[label] = sides
    if not differ:
        return None  # both read every row alike: the vocabulary's reading and notice
    return Conflict(tally, differ, vocabulary=vocabulary, aliases=aliases)


def mode(spec, columns, *, source: str) -> bool | None:
    """Whether the reading is declared (True), may be inferred (False), or cannot apply (None:
    ``label.names_winner: false``, a ``label.map``, another kind, no model columns).

    Raises
    ------
    InputError
        ``label.names_winner: true`` on a table without ``model_a`` and ``model_b``.
    """
    pairwise = C.MODEL_A in columns and C.MODEL_B in columns
    if spec.label_names_winner:
        if not pairwise:
            missing = [c for c in C.PAIRWISE if c not in columns]
            raise InputError("label.names_winner reads the label as the winning model's name, "
                             f"which needs model_a and model_b columns; {missing[0]!r} is "
                             "missing", path=source, key="label.names_winner")
        return True
    if spec.label_names_winner is False or spec.label_map or not pairwise:
        return None
    return False if spec.label_kind in (None, LabelKind.PREFERENCE.value) else None


# -- the pandas engine ---------------------------------------------------------------------------
def read_frame(raw: pd.DataFrame, *, spec, source: str) -> tuple[pd.DataFrame, Reading | None]:
    """``raw`` (canonical columns) with the labels naming a model read as ``-1`` / ``1``, and
    the :class:`Reading`; ``raw`` and None when the reading does not apply.

    Raises
    ------
    InputError
        A :class:`Conflict`, naming the first of its rows (by its index: the source row, or
        the line of a text file once :mod:`audit.ingest.adapters.table` names it).
    """
    declared = mode(spec, raw.columns, source=source)
    labels = raw[C.LABEL]
    # typed numbers name a model only where declared (look-alike numbers are compared only
    # beside labels that are text naming a model, :func:`decide`)
    if declared is None or (not declared and labels.dtype.kind in "iufb"):
        return raw, None
    from ..contract.labels import factorize_labels
    from ..contract.schema import string_categorical

    codes, distinct = factorize_labels(labels)
    candidates = np.fromiter((infer.may_name_a_model(v) for v in distinct), dtype=bool,
                             count=len(distinct))
    ties = np.fromiter((infer.is_tie(v) for v in distinct), dtype=bool, count=len(distinct))
    if not (candidates.any() or ties.any() or declared):
        return raw, None
    models = [string_categorical(raw[c]) for c in C.PAIRWISE]
    texts = np.array([label_text(v) for v in distinct], dtype=object)
    names = _names(models)
    is_name = np.fromiter((t in names for t in texts), dtype=bool, count=len(texts))
    if not declared and not (is_name & (candidates | ties)).any():
        return raw, None
    compared = candidates | is_name  # a candidate that is no model's name: a stray
    if not compared.any():
        return raw, None
    rows = np.flatnonzero(np.append(compared, False)[codes])
    label = texts[codes[rows]]
    model_a, model_b = (_texts_at(m, rows) for m in models)
    is_a, is_b = model_a == label, model_b == label
    side = np.zeros(len(raw), dtype=np.int8)
    side[rows] = np.select([is_a & is_b, is_a, is_b], [BOTH, SIDE_A, SIDE_B], NEITHER)
    counted = codes >= 0
    counts = np.bincount(codes[counted] * N_SIDES + side[counted],
                         minlength=len(distinct) * N_SIDES).reshape(len(distinct), N_SIDES)
    tally = Tally(tuple(distinct), counts)
    outcome = decide(tally, declared=declared, order=spec.label_order)
    if outcome is None:
        return raw, None
    if isinstance(outcome, Conflict):
        at = _first_row(outcome.pairs, distinct, codes, side)
        pos = int(np.searchsorted(rows, at))
        raise InputError(outcome.message(distinct[codes[at]], model_a[pos], model_b[pos]),
                         path=source,
                         column=C.LABEL, row=raw.index[at])
    values = labels.astype(object).to_numpy(copy=True)
    for s, text in WRITTEN.items():
        values[side == s] = text
    out = raw.copy(deep=False)
    out[C.LABEL] = values
    return out, outcome


def model_names(raw: pd.DataFrame) -> set:
    """The model ids of ``raw``'s model_a / model_b columns, as text (none without them)."""
    if not all(c in raw.columns for c in C.PAIRWISE):
        return set()
    from ..contract.schema import string_categorical

    return _names([string_categorical(raw[c]) for c in C.PAIRWISE])


def _names(models: list) -> set:
    """The models' names (their categories' text)."""
    return set(models[0].categories).union(models[1].categories)


def _texts_at(model: pd.Categorical, rows: np.ndarray) -> np.ndarray:
    """The model id text of each of ``rows`` (None where missing)."""
    names = np.append(model.categories.to_numpy(dtype=object), None)
    return names[np.asarray(model.codes)[rows]]


def _first_row(pairs: dict, distinct: list, codes: np.ndarray, side: np.ndarray) -> int:
    """The position of the first row whose (label, side) is in ``pairs``."""
    at = {v: i for i, v in enumerate(distinct)}
    hit = np.zeros(len(codes), dtype=bool)
    for label, sides in pairs.items():
        hit |= (codes == at[label]) & np.isin(side, sides)
    return int(np.argmax(hit))


def with_hint(err: SchemaError, reading: Reading | None) -> SchemaError:
    """``err`` with :attr:`Reading.hint` as its last line when labels failed and some rows
    were stray under ``reading``; else ``err`` itself."""
    if reading is None or not reading.tally.strays or err.hint or \
            not (err.failures["column"] == C.LABEL).any():
        return err
    return SchemaError(err.failures, source=err.source, limit=err.limit, hint=reading.hint,
                       rows=err.rows)
