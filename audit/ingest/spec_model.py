"""The pydantic model of a dataset spec: which keys a spec may have and the type of each.

:func:`audit.ingest.spec.read_spec` validates a spec file (or dict) with :class:`SpecFile`
through :func:`audit.ingest.yamlmodel.validate`, so an unknown key or a value of the wrong type
is one message naming the key and its line. What the keys mean, and the checks that relate two
keys (a wide layout needs ``annotator_columns``), are in :mod:`audit.ingest.spec`.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, create_model

from ..contract import columns as C
from ..contract.labels import LabelKind
from .decimal_comma import DECIMAL_MARKS
from .readers.tables import QUOTE_STYLES
from .yamlmodel import Boolean, Character, Scalar, Strict, Text, count, failure, one_of

#: ``layout``: one row per judgment, or one column per annotator.
LAYOUTS = ("long", "wide")
#: Most lines ``read.skiprows`` may skip: a preamble, not a file (pandas holds the numbers of
#: the lines it skips, so 10**18 ran out of memory).
MAX_SKIPROWS = 1_000_000


def _no_line_break(value: str) -> str:
    if "\n" in value or "\r" in value:
        raise failure(f" cannot hold a line break (records end at one); got {value!r}")
    return value


#: ``read.sep``: the separator (longer than one character: a regular expression).
Separator = Annotated[Text, AfterValidator(_no_line_break)]

#: ``columns``: a canonical column's name in the source, for any canonical column.
Columns = create_model("Columns", __base__=Strict, **{col: (Text, None) for col in C.COLUMNS})


class Label(Strict):
    """``label``: the scale's kind, its values in order, how raw labels read, value names, and
    whether a preference label is the winning model's name (:mod:`audit.ingest.winner`)."""

    kind: one_of(k.value for k in LabelKind) = None
    order: list[Scalar] = None
    map: dict[Scalar, Scalar] = None
    names: list[Text] = None
    names_winner: Boolean = None
    from_columns: dict[Text, Scalar] = None
    from_counts: dict[Text, Scalar] = None


class Pools(Strict):
    """``pools``: each annotator's pool, from a file in the spec's folder or a mapping."""

    file: Text = None
    column: Text = None
    map: dict[Scalar, Text] = None


class Read(Strict):
    """``read``: options for reading a delimited text file; ``decimal`` is the decimal mark of
    its labels (:mod:`audit.ingest.decimal_comma`), ``quote`` whether ``"`` quotes a value
    (``double``) or is an ordinary character (``none``: :func:`audit.ingest.readers.read_table`);
    ``sheet`` the sheet of an Excel workbook (:mod:`audit.ingest.readers.workbooks`)."""

    sep: Separator = None
    na_values: list[Scalar] = None
    skiprows: count(at_most=MAX_SKIPROWS) = None
    comment: Character = None
    decimal: one_of(DECIMAL_MARKS) = None
    quote: one_of(QUOTE_STYLES) = None
    sheet: Scalar = None


class Card(Strict):
    """``card``: publishing metadata for the dataset card and croissant.json
    (:mod:`audit.report.card_meta`)."""

    license: Text = None
    language: list[Text] = None
    task_categories: list[Text] = None
    tags: list[Text] = None
    pretty_name: Text = None
    description: Text = None
    url: Text = None


class DroppedRows(Strict):
    """One entry of ``dropped_before_export``: judgments of an exported table's source that a
    documented rule dropped (results.json ``dataset.rows_dropped``), written by ``export``."""

    rule: Text
    n: count(at_most=10**15)


class FoldedPoolEntry(Strict):
    """One pool of ``pools_folded_before_export``."""

    pool: Text
    reason: Text
    n_annotators: count(at_most=10**15)
    n_judgments: count(at_most=10**15)


class PoolsFoldedBefore(Strict):
    """``pools_folded_before_export``: what ``--min-pool-annotators`` folded when the exported
    table was read (results.json ``dataset.pools_folded``), written by ``export``."""

    min_annotators: count(at_most=10**15)
    into: Text
    pools: list[FoldedPoolEntry]
    n_annotators: count(at_most=10**15)
    n_judgments: count(at_most=10**15)


class SpecFile(Strict):
    """A dataset spec as written (:mod:`audit.ingest.spec`); every key is optional."""

    name: Text = None
    layout: one_of(LAYOUTS) = None
    columns: Columns = None
    annotator_columns: list[Text] = None
    label: Label = None
    pools: Pools = None
    judge_pools: list[Text] = None
    read: Read = None
    split: Text = None
    card: Card = None
    dropped_before_export: list[DroppedRows] = None
    pools_folded_before_export: PoolsFoldedBefore = None
