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
(``'Jos\\xe9' / 'Jose\\u0301'``). Two texts look alike when they are equal once both are in
normal form NFC, without format characters (Unicode category Cf) and without surrounding
whitespace (:func:`lookalike_groups`).

The check costs one vectorised pass over each column's distinct values (pyarrow's NFC
normalisation, regular expression and trim), and nothing more when no value changes under it.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from . import columns as C
from ..errors import AuditWarning

#: Groups shown in a warning, at most.
SHOWN = 3


class LookalikeWarning(AuditWarning):
    """Ids (or text labels) of one column that look alike but differ: audited apart."""


def lookalike_groups(texts) -> list[tuple[str, ...]]:
    """The groups of distinct ``texts`` that look alike (module docstring), each sorted, in the
    order of their first member; texts that look like no other, and values that are not text,
    are left out.

    Only texts that change under the key can look like another (of two distinct texts with one
    key, at least one is not its key), and only non-ASCII texts can change under NFC or lose a
    format character: the ASCII ones are only trimmed, and the rest is done on the few that
    change.
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
    keys = pc.utf8_trim_whitespace(arr)
    if pc.any(wide).as_py():
        keys = pc.if_else(wide, pc.utf8_trim_whitespace(pc.replace_substring_regex(
            pc.utf8_normalize(arr, "NFC"), r"\p{Cf}", "")), keys)
    changed = pc.not_equal(keys, arr)
    if not pc.any(changed).as_py():  # every text is its own key: nothing looks alike
        return []
    involved = set(pc.filter(keys, changed).to_pylist())
    groups: dict[str, list[str]] = {}
    for text, key in zip(arr.to_pylist(), keys.to_pylist()):
        if key in involved:
            groups.setdefault(key, []).append(text)
    return [tuple(sorted(g)) for g in groups.values() if len(g) > 1]


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
    columns = {col: frame[col].cat.categories for col in C.ID_COLUMNS if col in frame.columns}
    warn_lookalike_values(table.source, {**columns, C.LABEL: table.scale.values})


def warn_lookalike_values(source: str, columns: dict) -> None:
    """:func:`warn_lookalikes` of ``{column: distinct values}``: what the Spark engine's
    cluster path holds on the driver (the pools', annotators' and models' dictionaries and the
    label scale; the item ids stay on the cluster and are not checked there)."""
    for col, values in columns.items():
        groups = lookalike_groups(values)
        if not groups:
            continue
        what = "labels" if col == C.LABEL else "ids"
        listed = "; ".join(" / ".join(shown(t) for t in g) for g in groups[:SHOWN])
        more = f"; ... ({len(groups)} groups in all)" if len(groups) > SHOWN else ""
        warnings.warn(LookalikeWarning(
            f"{source}: column {col!r} holds {what} that look alike but differ (Unicode "
            f"normal form, invisible characters or surrounding spaces), audited as different "
            f"{what}: {listed}{more}; if they are one, write them alike in the source"),
            stacklevel=4)
