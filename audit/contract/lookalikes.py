"""Ids and labels that look alike but differ: said, never merged.

Ids and text labels are kept exactly as written (:mod:`audit.contract.ids`,
:mod:`audit.contract.labels`): ``José`` typed on one keyboard and ``José`` pasted from another
application can be two texts, the precomposed ``é`` (U+00E9, Unicode normal form NFC) and
``e`` followed by a combining accent (U+0065 U+0301, NFD); an id can carry an invisible format
character (a zero-width space, a right-to-left mark that an RTL editor inserts) or a space a
spreadsheet kept. Such texts are different ids to every comparison, so one annotator becomes
two, one item two items, one label two categories counted as a disagreement, with nothing on
the screen to tell them apart.

Merging them would change what the source says (and which texts ``check --baseline``, a pools
mapping or an export compare), so they stay apart; instead :func:`warn_lookalikes` names them,
one warning per column, each text shown with its invisible differences escaped
(``'Jos\\xe9' / 'Jose\\u0301'``). Two texts look alike when they have the same key
(:func:`lookalike_groups`, :func:`lookalike_key`): the text in Unicode normal form NFKC (which
also writes a fullwidth ``１`` as ``1`` and a no-break or narrow no-break space as a space),
without format characters (Unicode category Cf: zero-width space and joiner, soft hyphen, a
byte-order mark, direction marks), every run of whitespace inside it one space and none
around it, and a text that then writes a decimal number (in any script's digits, with ``-``
or U+2212 for minus) written as that number's one form: ``7``, ``7.0``, ``007``, ``+7``,
``7e0`` and ``٧`` are one key, as ``0.5`` and ``.50`` are; and in a text that writes no number,
each character that Unicode's confusables data (UTS #39) draws like an ASCII one written as
that character (:func:`_confusables`): a Cyrillic ``а`` in ``аnna``, a Greek ``Ο``, an en dash
or a non-breaking hyphen in ``gpt‑4``, a typographic ``’``. Such a text is what a copy from a
word processor or a web page gives, and what a contributor's data can use to make one model
show as two rows of one name. Case is in the key of model and pool names only
(:data:`CASE_COLUMNS`: ``GPT-4`` and ``gpt-4`` are said), not of items, annotators and labels,
whose ids may differ by case alone.

The check costs a few vectorised passes over each column's distinct values (pyarrow's NFKC
normalisation on the non-ASCII ones, two regular expressions and a trim), and Python only for
the texts that write a number in a form other than a plain integer's.
"""

from __future__ import annotations

import decimal
import re
import sys
import unicodedata
import warnings
from functools import cache

import numpy as np
import pandas as pd

from . import columns as C
from ..errors import AuditWarning

#: Groups shown in a warning, at most.
SHOWN = 3


class LookalikeWarning(AuditWarning):
    """Ids (or text labels) of one column that look alike but differ: audited apart."""


#: A run of whitespace (what ``str.split`` splits at, and Unicode's other spaces) in RE2.
_SPACES = r"[\s\x0b\x1c-\x1f\x85\p{Z}]+"
#: Text that may write a decimal number in some script's digits (RE2), checked by
#: :func:`_number_key`; and an integer written in the one form :func:`_number_key` gives it.
_NUMBERISH = r"^[+\-\x{2212}]?[\p{Nd}.]+(?:[eE][+\-\x{2212}]?\p{Nd}+)?$"
_PLAIN_INTEGER = r"^(?:0|-?[1-9][0-9]*)$"
#: A decimal number in ASCII (:data:`audit.contract.labels.text.DECIMAL`).
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
#: Exponents past which a whole number is not written out digit by digit.
_LONGEST = 1000


@cache
def _ascii_digits() -> dict:
    """``str.translate``'s table writing every decimal digit (Unicode category Nd) as its ASCII
    digit, and U+2212 MINUS SIGN as ``-``."""
    table = {c: str(unicodedata.decimal(chr(c))) for c in range(sys.maxunicode + 1)
             if c > 127 and unicodedata.category(chr(c)) == "Nd"}
    return {**table, 0x2212: "-"}


def _number_key(text: str) -> str:
    """The one form of the decimal number ``text`` writes (``7.0``, ``007``, ``+7``, ``٧`` ->
    ``7``; ``.50`` -> ``0.5``; ``-0`` -> ``0``), else ``text`` itself."""
    ascii_text = text.translate(_ascii_digits())
    if not _DECIMAL.fullmatch(ascii_text):
        return text
    number = decimal.Decimal(ascii_text)
    if number.is_zero():
        return "0"
    if number == number.to_integral_value() and number.adjusted() < _LONGEST:
        return str(int(number))
    return str(number.normalize())


#: Columns whose names are compared without case too: a model or pool is named by a person
#: (``GPT-4`` / ``gpt-4`` from two tools' exports), where ids of items and annotators may
#: differ by case alone (base64 keys, platform ids). A pairwise table's two model columns are
#: one set of models, checked as one (``GPT-4`` as model_a beside ``gpt-4`` as model_b), named
#: :data:`MODELS` in the warning on both engines.
MODELS = f"{C.MODEL_A} / {C.MODEL_B}"
CASE_COLUMNS = (C.MODEL, MODELS, C.POOL)


def lookalike_key(text: str, *, case: bool = False) -> str:
    """The key of one text (module docstring), as :func:`lookalike_groups` computes it for many
    at once; with ``case``, lower-cased too."""
    text = "".join(ch for ch in unicodedata.normalize("NFKC", text)
                   if unicodedata.category(ch) != "Cf")
    spaced = " ".join(text.split())
    key = _number_key(spaced)
    if not key.isascii():  # a number is written in ASCII by now
        key = _fold(key)
    return key.lower() if case else key


@cache
def _confusables() -> dict[int, str]:
    """``str.translate``'s table writing each non-ASCII character that Unicode's confusables
    data (UTS #39, *Unicode Security Mechanisms*, ``confusables.txt``, as the
    ``confusable_homoglyphs`` package ships it) gives an ASCII prototype as that prototype:
    Cyrillic ``а`` and Greek ``ο`` as ``a`` and ``o``, an en dash or a non-breaking hyphen as
    ``-``, ``’`` as ``'``.

    Left out: characters NFKC already rewrites (the key is taken after it), format characters
    (dropped), spaces (one space), decimal digits (a text that writes a number is keyed as the
    number) and combining marks (a mark belongs to the letter before it). Why a table here and
    not the package's ``is_confusable``: that answers for one string at a time, and the key
    must be one text per text. ASCII's own look-alikes (``l``, ``I``, ``1``, ``|``; ``0`` and
    ``O``; ``rn`` and ``m``) are different texts a person types, and stay apart; a non-ASCII
    character whose prototype is one of ``l I 1 |`` is written ``I`` when it is a capital
    letter (Cyrillic ``І``, Greek ``Ι``), else ``l``, so that ``ІBM`` and ``IBM`` meet.
    """
    from confusable_homoglyphs.confusables import confusables_data

    table: dict[int, str] = {}
    for code in range(0x20, 0x7F):
        prototype = chr(code)
        for entry in confusables_data.get(prototype, ()):
            ch = entry["c"]
            if (len(ch) != 1 or ch.isascii() or unicodedata.normalize("NFKC", ch) != ch
                    or unicodedata.category(ch)[0] in "MZ"
                    or unicodedata.category(ch) in ("Cf", "Nd")):
                continue
            if prototype in "lI1|":
                prototype_of_ch = "I" if ch.isupper() else "l"
            else:
                prototype_of_ch = prototype
            table.setdefault(ord(ch), prototype_of_ch)
    return table


@cache
def _foldable() -> str:
    """An RE2 class of the characters :func:`_confusables` rewrites."""
    return "[" + "".join(f"\\x{{{code:x}}}" for code in sorted(_confusables())) + "]"


def _fold(text: str) -> str:
    """``text`` with the characters :func:`_confusables` rewrites written as their ASCII
    prototypes, and its spaces made one again."""
    return " ".join(text.translate(_confusables()).split())


def lookalike_groups(texts, *, case: bool = False) -> list[tuple[str, ...]]:
    """The groups of distinct ``texts`` that look alike (module docstring), each sorted, in the
    order of their first member; texts that look like no other, and values that are not text,
    are left out.

    Only texts that change under the key can look like another (of two distinct texts with one
    key, at least one is not its key), and only non-ASCII texts can change under NFKC or lose a
    format character: the ASCII ones are only spaced and read as numbers, and the rest is done
    on the few that change. With ``case``, texts that differ by case alone look alike too
    (:data:`CASE_COLUMNS`).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(texts, pd.Index) and texts.is_unique:  # a categorical's categories
        values = np.asarray(texts, dtype=object)
    else:
        values = pd.unique(np.asarray(texts, dtype=object))
    if len(values) < 2:
        return []
    if pd.api.types.infer_dtype(values, skipna=False) != "string":  # numbers of a scale too
        values = [v for v in values if isinstance(v, str)]
        if len(values) < 2:
            return []
    arr = pa.array(values, type=pa.string())
    wide = pc.invert(pc.string_is_ascii(arr))
    keys = arr
    if pc.any(wide).as_py():
        keys = pc.if_else(wide, pc.replace_substring_regex(
            pc.utf8_normalize(arr, "NFKC"), r"\p{Cf}", ""), keys)
    keys = pc.utf8_trim_whitespace(pc.replace_substring_regex(keys, _SPACES, " "))
    numbers = pc.and_(pc.match_substring_regex(keys, _NUMBERISH),
                      pc.invert(pc.match_substring_regex(keys, _PLAIN_INTEGER)))
    if pc.any(numbers).as_py():
        at = np.flatnonzero(numbers.to_numpy(zero_copy_only=False))
        written = keys.to_pylist()
        for i in at:
            written[i] = _number_key(written[i])
        keys = pa.array(written, type=pa.string())
    wide = pc.invert(pc.string_is_ascii(keys))  # a number is written in ASCII by now
    if pc.any(wide).as_py():  # letters of one script that look like another's, dashes, quotes
        foldable = pc.and_(wide, pc.match_substring_regex(keys, _foldable()))
        if pc.any(foldable).as_py():
            written = keys.to_pylist()
            for i in np.flatnonzero(foldable.to_numpy(zero_copy_only=False)):
                written[i] = _fold(written[i])
            keys = pa.array(written, type=pa.string())
    if case:
        keys = pc.utf8_lower(keys)
    if not pc.any(pc.not_equal(keys, arr)).as_py():  # every text is its own key
        return []
    # the texts are distinct, so a key two of them share is a group (hashed as arrays: the
    # texts of a column written alike, each with a no-break space, all change and share none)
    shared = np.flatnonzero(pd.Series(keys.to_numpy(zero_copy_only=False))
                            .duplicated(keep=False).to_numpy())
    groups: dict[str, list[str]] = {}
    for i in shared:
        groups.setdefault(keys[i].as_py(), []).append(arr[i].as_py())
    return [tuple(sorted(g)) for g in groups.values()]


def shown(text: str) -> str:
    """``text`` quoted with every character that is not plain ASCII escaped, so texts that
    look alike show their difference (``'Jose\\u0301'``)."""
    return ascii(text)


def warn_lookalikes(table) -> None:
    """One :class:`LookalikeWarning` per id column of ``table`` (an
    :class:`audit.contract.table.AnnotationTable`) whose values look alike (module docstring),
    and one for the label column when its values are text. Both engines call it on the table
    they build."""
    frame = table.frame
    columns = {col: frame[col].cat.categories for col in C.ID_COLUMNS if col in frame.columns
               and (col != C.ANNOTATOR or getattr(table, "annotators_given", True))}
    if C.MODEL_A in columns and C.MODEL_B in columns:  # one set of models, as on the cluster
        both = columns.pop(C.MODEL_A).union(columns.pop(C.MODEL_B))
        columns[MODELS] = both
    warn_lookalike_values(table.source, {**columns, C.LABEL: table.scale.values})


def warn_lookalike_values(source: str, columns: dict) -> None:
    """:func:`warn_lookalikes` of ``{column: distinct values}``: what the Spark engine's
    cluster path holds on the driver (the pools', annotators' and models' dictionaries and the
    label scale; the item ids stay on the cluster and are not checked there)."""
    for col, values in columns.items():
        case = col in CASE_COLUMNS
        groups = lookalike_groups(values, case=case)
        if not groups:
            continue
        what = "labels" if col == C.LABEL else "ids"
        listed = "; ".join(" / ".join(shown(t) for t in g) for g in groups[:SHOWN])
        more = f"; ... ({len(groups)} groups in all)" if len(groups) > SHOWN else ""
        ways = ("Unicode normal form, invisible characters, spaces, one number written two "
                "ways, letters or signs of other scripts drawn alike, or case" if case else
                "Unicode normal form, invisible characters, spaces, one number written two "
                "ways, or letters or signs of other scripts drawn alike")
        warnings.warn(LookalikeWarning(
            f"{source}: column {col!r} holds {what} that look alike but differ ({ways}), "
            f"audited as different "
            f"{what}: {listed}{more}; if they are one, write them alike in the source"),
            stacklevel=4)
