"""What the adapters of annotation tools' exports share (:mod:`.label_studio`, :mod:`.prodigy`).

Such an export holds more records than judgments: skipped examples, a model's pre-annotations,
free-text answers. Each adapter walks its export once, keeps one row per judgment in
:class:`Judgments` (named by its record: ``task 3, annotation 1001``, ``line 7``) and counts
every record it leaves out under a rule; :func:`finish` hands the rows to the long-table path
(:func:`audit.ingest.adapters.table.from_frame`), so the label scale is read as a table's is
(preference with ``model_a`` / ``model_b`` and ``A`` / ``B`` / ``tie``, a spec's ``label``
block for kind, order and map), pools come from ``--pools`` or the spec's ``pools`` (one pool,
``all``, without them), and the dropped records are counted in ``results.json``
(``dataset.rows_read``, ``rows_dropped``) as a spec's ``dropped_before_export`` is.

A spec's ``columns`` names where a canonical column comes from in the export (a task's data
field, a record's key); keys that describe a table's layout (``layout``, ``annotator_columns``,
``label.from_columns``, ``label.from_counts``, ``read``, ``split``) and the annotator and pool
columns do not apply: :func:`check_spec` refuses them naming the key.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pandas as pd

from ...contract import columns as C
from ...contract.ids import id_text
from ...contract.table import AnnotationTable
from ...errors import InputError, Where
from ..common import Ledger, warn
from ..spec import DatasetSpec, read_spec

#: Canonical columns a spec's ``columns`` may name for an export.
SPEC_COLUMNS = (C.ITEM, C.LABEL, C.MODEL_A, C.MODEL_B, C.MODEL, C.CATEGORY, C.TURN, C.TEXT)
#: Canonical columns read, without a spec, from a data field or key of the same name.
DATA_COLUMNS = (C.MODEL_A, C.MODEL_B, C.MODEL, C.CATEGORY, C.TURN, C.TEXT)
#: How the choices of one answer with several (a multi-label question) are joined into the one
#: category the answer is read as.
MULTI_SEPARATOR = " + "


def check_spec(spec, *, fmt: str, columns=SPEC_COLUMNS) -> DatasetSpec:
    """``spec`` read (:func:`audit.ingest.spec.read_spec`), or an empty one; an InputError
    naming the first key that does not apply to an export (module docstring): ``columns``
    are the canonical columns its ``columns`` may name."""
    spec = read_spec(spec) if spec is not None else DatasetSpec()
    where = str(spec.path) if spec.path is not None else "spec"
    table_only = "read the file as a plain table with --format table and a spec"
    problems = [("layout", spec.layout != "long", "an export is one record per annotation"),
                ("annotator_columns", bool(spec.annotator_columns),
                 "an export is one record per annotation"),
                ("label.from_columns", bool(spec.label_from_columns), table_only),
                ("label.from_counts", bool(spec.label_from_counts), table_only),
                ("read", bool(spec.read), f"the {fmt} reader reads the export as it is written"),
                ("split", spec.split is not None, "an export has no splits")]
    read = "the annotator" if C.LABEL in columns else "the annotator and the label"
    problems += [(f"columns.{col}", True, f"the {fmt} adapter reads {read} from the export, "
                  "and pools from --pools or the spec's pools")
                 for col in spec.columns if col not in columns]
    for key, bad, why in problems:
        if bad:
            raise InputError(f"does not apply to the {fmt} format: {why}", path=where, key=key)
    return spec


def combined(choices) -> str:
    """The category an answer with several choices is read as: the choices, sorted, joined by
    :data:`MULTI_SEPARATOR` (``["b", "a"]`` is ``"a + b"``), so one set of choices is one
    category whatever order they were clicked in, and agreement counts it apart from each of
    its parts (as LeWiDi's VariErrNLI multi-labels are read, :mod:`.lewidi`)."""
    return MULTI_SEPARATOR.join(sorted(str(c) for c in choices))


def present(value) -> bool:
    """Whether a record's value is given: not None, NaN or empty text."""
    if value is None or (isinstance(value, float) and value != value):
        return False
    return not (isinstance(value, str) and not value.strip())


def shown(value) -> str:
    """An id as a message names it (``3``, not ``3.0``)."""
    return id_text(value) or repr(value)


class Judgments:
    """The judgments an adapter reads, one row each, and the records it leaves out.

    ``ledger`` counts the dropped records by rule (they are judgments' records that hold
    none); ``ignored`` counts, by kind, parts of kept records that are no label (a free-text
    answer beside the label: neither read nor dropped); ``notes`` are sentences for the one
    warning :func:`finish` gives; ``n_combined`` counts answers with several choices read as
    one category (:func:`combined`).
    """

    def __init__(self):
        self.rows: list[dict] = []
        self.where: list[Where] = []
        self.ledger = Ledger()
        self.ignored: Counter = Counter()
        self.notes: list[str] = []
        self.n_combined = 0

    def add(self, where: str, **cells) -> None:
        """One judgment, named ``where`` in messages (schema failures name it so)."""
        self.rows.append(cells)
        self.where.append(Where(where))

    def drop(self, rule: str, n: int = 1) -> None:
        """``n`` records that hold no judgment, left out under ``rule``."""
        self.ledger.count(rule, n)

    def frame(self) -> pd.DataFrame:
        """The judgments as a frame of the canonical columns present, indexed by record."""
        frame = pd.DataFrame.from_records(self.rows, index=pd.Index(self.where, dtype=object))
        return frame[[c for c in C.COLUMNS if c in frame.columns]]


def finish(judgments: Judgments, spec: DatasetSpec, *, fmt: str, source: str, pools=None,
           pool_column: str | None = None, min_pool_annotators: int | None = None,
           name: str | None = None, default_kind: str | None = None) -> AnnotationTable:
    """The table of ``judgments``, built as a long table's is (module docstring), with the
    dropped records counted as read and dropped, and ``info["format"]`` ``fmt``.

    ``default_kind`` is the label kind when the spec declares none (a rating control's
    answers are ordinal). One warning says what was left out and what was ignored.

    Raises
    ------
    InputError
        ``pool_column`` without ``pools``; no record holds a judgment.
    """
    from .table import from_frame

    if pools is None and pool_column is not None:
        raise InputError("--pool-column names a field of the --pools file; pass --pools too",
                         key="pool_column")
    dropped = list(judgments.ledger.dropped)
    _warn(judgments, source)
    if not judgments.rows:
        said = "; ".join(f"{d['n']} {d['rule']}" for d in dropped) or "no annotation"
        raise InputError(f"holds no judgment to audit ({said})", path=source)
    spec = replace(spec, columns={}, label_kind=spec.label_kind or default_kind,
                   dropped_before_export=(*spec.dropped_before_export, *dropped))
    table = from_frame(judgments.frame(), spec=spec, source=source, pools=pools,
                       pool_column=pool_column, min_pool_annotators=min_pool_annotators,
                       name=name)
    table.info["format"] = fmt
    table.info.pop("layout", None)
    return table


def _warn(judgments: Judgments, source: str) -> None:
    """One warning: the records left out (counted in results.json), the parts ignored, the
    answers read as one combined category, and the adapter's notes."""
    parts = []
    if judgments.ledger.dropped:
        parts.append("left out, counted in results.json dataset.rows_dropped: " + "; ".join(
            f"{d['n']} {d['rule']}" for d in judgments.ledger.dropped))
    if judgments.ignored:
        parts.append("ignored, no label: " + ", ".join(
            f"{n} {kind}" for kind, n in sorted(judgments.ignored.items())))
    if judgments.n_combined:
        parts.append(f"{judgments.n_combined} answer(s) with several choices, each read as "
                     f"one category of its own (the choices joined by {MULTI_SEPARATOR!r})")
    parts += judgments.notes
    if parts:
        warn(f"{source}: " + "; ".join(parts))
