"""Label Studio exports (HumanSignal's annotation tool) into the canonical table.

Read as Label Studio's Export dialog writes them: the JSON export and its task format
(https://labelstud.io/guide/export.html, "Label Studio JSON format of annotated tasks";
https://labelstud.io/guide/task_format), and the JSON-MIN and CSV / TSV exports as
label-studio-converter writes them (github.com/HumanSignal/label-studio-converter,
``label_studio_converter/converter.py``: ``convert_to_json_min``, ``convert_to_csv``):

* **JSON**: an array of tasks ``{"id", "data": {...}, "annotations": [...], "predictions":
  [...]}`` (snapshots add ``"drafts"``; exports before 1.0 say ``completions``). An annotation
  holds ``completed_by`` (the user's id, or in older exports an object with ``email``),
  ``was_cancelled`` (skipped) and ``result``: one entry ``{"from_name", "to_name", "type",
  "value"}`` per control answered (``{"choices": [...]}``, ``{"rating": 4}``, ``{"text":
  [...]}``, ``{"selected": "left"}`` for the Pairwise tag, ``{"number": 3}``).
* **JSON-MIN**: an array with one record per submitted annotation: the task's data fields,
  ``id`` (the task), one key per control answered (one choice as its text; several as
  ``{"choices": [...]}``; a rating as ``[{"rating": 4}]``), ``annotator`` (the user's id, or
  email), ``annotation_id``, ``created_at``, ``updated_at``, ``lead_time``.
* **CSV** / **TSV**: the JSON-MIN records as a table; a value that is not text is written as
  JSON (``[{"rating": 4}]``), the annotator as text.

Rules (README, "Label Studio and Prodigy exports"):

* a **judgment** is one submitted annotation's answer on the **label control**: a Choices,
  Rating, Number or Pairwise control answered for the whole task (not per region). The export's
  only such control is the label control; with several, the spec's ``columns: {label: NAME}``
  names it (else exit 2 naming them). In JSON-MIN / CSV, where one choice is plain text like a
  data field, the label control is the one column that is neither Label Studio's own (``id``,
  ``annotator``, ``annotation_id``, ``created_at``, ``updated_at``, ``lead_time``,
  ``agreement``) nor a canonical data column (``text``, ``model_a``, ...), else the spec names it.
* **the label**: one choice is its text; several (a multi-label question) are one category of
  their own (:func:`.tool_exports.combined`: ``"Negative + Neutral"``), with a warning saying
  how many; a rating or number its number (ordinal, interval unless the spec's ``label.kind``
  says otherwise); a Pairwise selection ``left`` / ``right`` (a preference with ``model_a`` /
  ``model_b``).
* **item**: the task's ``id`` (a data field with ``columns: {item: FIELD}``); **annotator**:
  ``completed_by`` (an object's ``email``, else its ``id``); **pool**: ``--pools`` or the spec's
  ``pools``, else one pool; ``model_a``, ``model_b``, ``model``, ``category``, ``turn`` and
  ``text`` from the task's data fields of those names (or the fields ``columns`` names).
* **left out and counted** in ``rows_dropped`` (``rows_read`` counts annotations,
  predictions and drafts): a skipped annotation (``was_cancelled: true``), an annotation with no
  answer on the label control (only a comment, say), a prediction (a model's pre-annotation is
  not a human judgment; with the JSON export only), a draft. JSON-MIN and CSV exports hold no
  skipped annotation, prediction or draft: Label Studio leaves them out.
* **ignored, not counted**: the other results of a kept annotation (a TextArea comment, another
  control, a region), named with their counts in one warning; a task without annotations holds
  no judgment (the warning says how many).
* **exit 2**, naming the record (``task 3, annotation 1001``; a CSV's line): an annotation
  without ``completed_by``, a task without ``id``, two answers on the label control in one
  annotation, a value that is no label; a file that is not such an export, naming what was
  expected.
"""

from __future__ import annotations

import json
from pathlib import Path

from ...contract import columns as C
from ...contract.labels import LabelKind
from ...contract.table import AnnotationTable
from ...errors import InputError, Where, join_names
from ..readers import read_json, read_table
from ..sources import existing_path
from .tool_exports import DATA_COLUMNS, Judgments, check_spec, combined, finish, present, shown

FORMAT = "label-studio"
#: Result types that answer for the whole task, and the key of ``value`` holding the answer.
LABEL_TYPES = {"choices": "choices", "rating": "rating", "number": "number",
               "pairwise": "selected"}
#: The label kind of a control type's answers when the spec declares none (choices: inferred).
KINDS = {"rating": LabelKind.ORDINAL.value, "number": LabelKind.INTERVAL.value}
#: Keys of a result or its value that place it on a region (a span, a box, a frame, one item
#: of several): per-region answers are not the item's label.
REGION_KEYS = frozenset({"x", "y", "width", "height", "points", "start", "end", "startOffset",
                         "endOffset", "globalOffsets", "start_time", "end_time", "frame",
                         "sequence", "item_index", "parentID"})
#: Label Studio's own keys of a JSON-MIN / CSV record (converter.py, ``convert_to_json_min``).
OWN_KEYS = ("id", "annotator", "annotation_id", "created_at", "updated_at", "lead_time",
            "agreement")

SKIPPED_RULE = "skipped annotation (was_cancelled: true)"
NO_ANSWER_RULE = "annotation without an answer on the label control"
PREDICTION_RULE = "prediction (a model's pre-annotation, not a human judgment)"
DRAFT_RULE = "draft annotation (saved, not submitted)"

_EXPECTED = ("a Label Studio export: a JSON array of tasks each with 'data' and 'annotations' "
             "(the JSON export), a JSON array of records with 'id', 'annotator' and "
             "'annotation_id' (JSON-MIN), or a CSV / TSV file with those columns")


def load_label_studio(source, *, spec=None, pools=None, pool_column: str | None = None,
                      min_pool_annotators: int | None = None,
                      name: str | None = None) -> AnnotationTable:
    """Load a Label Studio JSON, JSON-MIN or CSV / TSV export (see the module docstring).

    Parameters
    ----------
    source
        The exported file.
    spec
        Optional: ``columns`` (``label``: the control to audit; ``item``, ``model_a``, ...:
        the data fields to read them from), ``label`` (kind, order, map), ``pools``, ``name``.
    pools, pool_column, min_pool_annotators
        As for a table (:func:`audit.ingest.adapters.table.load_table`); one pool without them.

    Raises
    ------
    InputError
        Not such an export; a record without its ids; several label controls and no spec
        naming one (each message names the file and the record or key).
    SchemaError
        Judgments that break the canonical schema (a repeated judgment of a task by one
        annotator), each named by its record.
    """
    spec = check_spec(spec, fmt=FORMAT)
    path = existing_path(source)
    src = str(source)
    if path.suffix.lower() == ".json":
        data = read_json(path)
        if isinstance(data, dict) and ("data" in data or _annotations(data) is not None):
            data = [data]  # one task (a cloud storage target writes one file per task)
        if not isinstance(data, list) or not data or not all(isinstance(t, dict) for t in data):
            raise InputError(f"not {_EXPECTED}", path=src)
        if any(_annotations(t) is not None for t in data):
            judgments, kind = _from_tasks(data, spec=spec, source=src)
        elif {"annotator", "annotation_id"} <= set(data[0]):
            names = [f"record {k + 1} (task {shown(r.get('id'))})" for k, r in enumerate(data)]
            judgments, kind = _from_records(data, names, spec=spec, source=src)
        else:
            raise InputError(f"not {_EXPECTED}; the first record's keys: "
                             f"{join_names(data[0], limit=12)}", path=src)
    else:
        judgments, kind = _from_csv(path, spec=spec, source=src)
    return finish(judgments, spec, fmt=FORMAT, source=src, pools=pools, pool_column=pool_column,
                  min_pool_annotators=min_pool_annotators, name=name, default_kind=kind)


def _annotations(task: dict):
    """A task's annotations (``completions`` before Label Studio 1.0), or None without them."""
    return task.get("annotations", task.get("completions"))


def _from_tasks(tasks: list[dict], *, spec, source: str) -> tuple[Judgments, str | None]:
    """The judgments of the JSON export's tasks, and the default label kind."""
    control, kind = _label_control(tasks, spec, source)
    item_field = spec.columns.get(C.ITEM)
    fields = _data_fields([t.get("data") for t in tasks], spec, source)
    out = Judgments()
    unannotated = 0
    for pos, task in enumerate(tasks):
        task_id = task.get("id")
        where_task = f"task {shown(task_id)}" if present(task_id) else f"task record {pos + 1}"
        data = task.get("data") if isinstance(task.get("data"), dict) else {}
        annotations = _annotations(task) or []
        if not isinstance(annotations, list):
            raise InputError("'annotations' is not a list", path=source, row=Where(where_task))
        unannotated += not annotations
        for k, ann in enumerate(annotations):
            if not isinstance(ann, dict):
                raise InputError(f"annotation {k + 1} is not a JSON object", path=source,
                                 row=Where(where_task))
            where = (f"{where_task}, annotation {shown(ann['id'])}" if present(ann.get("id"))
                     else f"{where_task}, annotation {k + 1} (no id)")
            if ann.get("was_cancelled") is True or ann.get("skipped") is True:
                out.drop(SKIPPED_RULE)
                continue
            answers = []
            for result in ann.get("result") or []:
                if not isinstance(result, dict):
                    raise InputError("a result is not a JSON object", path=source,
                                     row=Where(where))
                if result.get("from_name") == control and _item_level(result):
                    answers.append(result)
                else:
                    out.ignored[_what(result)] += 1
            if len(answers) > 1:
                raise InputError(f"{len(answers)} answers on the label control {control!r}; an "
                                 "annotation gives one", path=source, row=Where(where))
            label = _answer(answers[0], out) if answers else None
            if label is None:
                out.drop(NO_ANSWER_RULE)
                continue
            annotator = _completed_by(ann.get("completed_by"))
            if annotator is None:
                raise InputError("no completed_by: the annotation does not say who made it",
                                 path=source, row=Where(where))
            item = data.get(item_field) if item_field else task_id
            if not present(item):
                raise InputError(f"no {'data field ' + repr(item_field) if item_field else 'id'}"
                                 ": the task's judgments have no item", path=source,
                                 row=Where(where))
            out.add(where, **{C.ITEM: item, C.ANNOTATOR: annotator, C.LABEL: label},
                    **{col: data.get(field) for col, field in fields.items()})
        for key, rule in (("predictions", PREDICTION_RULE), ("drafts", DRAFT_RULE)):
            entries = task.get(key)
            if isinstance(entries, list):
                out.drop(rule, len(entries))
    if unannotated:
        out.notes.append(f"{unannotated} task(s) without annotations hold no judgment")
    return out, kind


def _label_control(tasks: list[dict], spec, source: str) -> tuple[str, str | None]:
    """The label control's name (module docstring) and its answers' default kind."""
    types: dict[str, set] = {}
    for task in tasks:
        for ann in _annotations(task) or []:
            if (not isinstance(ann, dict) or ann.get("was_cancelled") is True
                    or ann.get("skipped") is True):
                continue
            for result in ann.get("result") or []:
                if isinstance(result, dict) and result.get("from_name") is not None:
                    types.setdefault(str(result["from_name"]), set()).add(_kind(result))
    labels = sorted(n for n, t in types.items() if t & LABEL_TYPES.keys())
    shown_controls = join_names(f"{n} ({'; '.join(sorted(t))})"
                                for n, t in sorted(types.items()))
    named = spec.columns.get(C.LABEL)
    if named is not None:
        if named not in types:
            raise InputError(f"no submitted annotation answers the control {named!r}; controls "
                             f"answered: {shown_controls or 'none'}", path=source,
                             key="columns.label")
        if named not in labels:
            raise InputError(f"the control {named!r} gives no label for the task (free text, "
                             f"regions and relations are not read); label controls are "
                             f"Choices, Rating, Number and Pairwise answered for the whole task;"
                             f" controls answered: {shown_controls}", path=source,
                             key="columns.label")
        control = named
    elif len(labels) == 1:
        control = labels[0]
    elif not labels:
        raise InputError("no submitted annotation answers a Choices, Rating, Number or Pairwise "
                         f"control for the whole task (controls answered: "
                         f"{shown_controls or 'none'}): there is no label to audit", path=source)
    else:
        raise InputError(f"the annotations answer several label controls ({join_names(labels)}); "
                         f"name the one to audit in a spec (--spec FILE): columns: {{label: "
                         f"{labels[0]}}}", path=source, key="columns.label")
    found = types[control] & LABEL_TYPES.keys()
    return control, KINDS.get(next(iter(found))) if len(found) == 1 else None


def _data_fields(records, spec, source: str, *, own=()) -> dict[str, str]:
    """``{canonical column: field}``: the data fields the extra columns are read from (the
    spec's ``columns``, else a field named as the column), among those some record holds."""
    held = set()
    for rec in records:
        if isinstance(rec, dict):
            held.update(map(str, rec))
    fields = {}
    for col in DATA_COLUMNS:
        field = spec.columns.get(col)
        if field is not None and field not in held:
            raise InputError(f"no task holds the data field {field!r} that columns.{col} names; "
                             f"data fields: {join_names(sorted(held - set(own)), limit=12)}",
                             path=source, key=f"columns.{col}")
        if field is None and col in held:
            field = col
        if field is not None:
            fields[col] = field
    item = spec.columns.get(C.ITEM)
    if item is not None and item not in held:
        raise InputError(f"no task holds the data field {item!r} that columns.item names; data "
                         f"fields: {join_names(sorted(held - set(own)), limit=12)}", path=source,
                         key="columns.item")
    return fields


def _item_level(result: dict) -> bool:
    """Whether a result answers for the whole task: a label type, no region keys."""
    value = result.get("value")
    return (result.get("type") in LABEL_TYPES and isinstance(value, dict)
            and not (REGION_KEYS & (set(value) | set(result))))


def _kind(result: dict) -> str:
    """A result's type, ``"choices, per region"`` for a label type answered per region."""
    kind = str(result.get("type") or "untyped")
    return f"{kind}, per region" if kind in LABEL_TYPES and not _item_level(result) else kind


def _what(result: dict) -> str:
    """How the warning names an ignored result: its control and type."""
    return f"{result.get('from_name')} ({_kind(result)})"


def _answer(result: dict, out: Judgments):
    """The label a result gives (module docstring), or None when it gives none."""
    value = result["value"].get(LABEL_TYPES[result["type"]])
    if result["type"] == "choices":
        return _choices(value, out)
    return value if present(value) else None


def _choices(value, out: Judgments):
    """One choice's text, several choices' combined category, None for none."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return None
    picked = [" / ".join(map(str, c)) if isinstance(c, list) else c for c in value
              if present(c)]
    if len(picked) > 1:
        out.n_combined += 1
        return combined(picked)
    return picked[0] if picked else None


def _completed_by(value):
    """The annotator: a user id as written, or an older export's user object's ``email``
    (its ``id`` without one); None when not given."""
    if isinstance(value, dict):
        value = next((value[k] for k in ("email", "id") if present(value.get(k))), None)
    return value if present(value) else None


# -- JSON-MIN and CSV / TSV ---------------------------------------------------------------------

def _from_csv(path: Path, *, spec, source: str) -> tuple[Judgments, str | None]:
    """The judgments of a CSV / TSV export (the JSON-MIN records as a table)."""
    from ..readers.lines import RecordLines

    frame = read_table(path)
    if not {"id", "annotator", "annotation_id"} <= set(map(str, frame.columns)):
        raise InputError(f"not {_EXPECTED}; columns: {join_names(frame.columns, limit=12)}",
                         path=source)
    lines = RecordLines(path).names(range(len(frame)))
    names = [lines.get(k, f"data row {k + 1}") for k in range(len(frame))]
    records = frame.astype(object).where(frame.notna(), None).to_dict("records")
    return _from_records(records, names, spec=spec, source=source, text=True)


def _from_records(records: list[dict], names: list[str], *, spec, source: str,
                  text: bool = False) -> tuple[Judgments, str | None]:
    """The judgments of JSON-MIN records (``text``: read from a CSV, non-text values as JSON)."""
    keys = list(dict.fromkeys(str(k) for r in records if isinstance(r, dict) for k in r))
    if not {"id", "annotator", "annotation_id"} <= set(keys):
        raise InputError(f"not {_EXPECTED}; keys: {join_names(keys, limit=12)}", path=source)
    fields = _data_fields(records, spec, source, own=OWN_KEYS)
    item_field = spec.columns.get(C.ITEM, "id")
    control = spec.columns.get(C.LABEL)
    if control is None:
        taken = set(OWN_KEYS) | set(fields.values()) | set(DATA_COLUMNS) | {item_field}
        candidates = [k for k in keys if k not in taken]
        if len(candidates) != 1:
            raise InputError(
                f"a JSON-MIN or CSV export does not say which column is the label control "
                f"(candidates: {join_names(candidates) or 'none'}); name it in a spec "
                f"(--spec FILE): columns: {{label: {candidates[0] if candidates else 'NAME'}}}",
                path=source, key="columns.label")
        control = candidates[0]
    elif control not in keys:
        raise InputError(f"no column {control!r}, which columns.label names; columns: "
                         f"{join_names(keys, limit=12)}", path=source, key="columns.label")
    out = Judgments()
    kinds = set()
    for rec, where in zip(records, names):
        if not isinstance(rec, dict):
            raise InputError("not a JSON object", path=source, row=Where(where))
        label, kind = _min_answer(rec.get(control), out, text=text, source=source, where=where)
        if label is None:
            out.drop(NO_ANSWER_RULE)
            continue
        kinds.add(kind)
        for col, what in ((item_field, "the item"), ("annotator", "who annotated it")):
            if not present(rec.get(col)):
                raise InputError(f"no {col!r}: the record does not say {what}", path=source,
                                 row=Where(where))
        out.add(where, **{C.ITEM: rec[item_field], C.ANNOTATOR: rec["annotator"], C.LABEL: label},
                **{col: rec.get(field) for col, field in fields.items()})
    kind = KINDS.get(next(iter(kinds))) if len(kinds) == 1 else None
    return out, kind


def _min_answer(value, out: Judgments, *, text: bool, source: str, where: str):
    """The label and control type of a JSON-MIN value (converter.py's ``_prettify``: one
    choice as text, several as ``{"choices": [...]}``, other controls as ``[{key: value}]``);
    ``(None, None)`` for no answer."""
    if not present(value):
        return None, None
    if text and isinstance(value, str) and value.lstrip()[:1] in ("[", "{"):
        try:
            value = json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            pass  # a choice that starts with a bracket
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict):
        value = value[0]
    if isinstance(value, dict):
        found = [(kind, key) for kind, key in LABEL_TYPES.items() if key in value]
        if len(found) == 1 and not REGION_KEYS & set(value):
            kind, key = found[0]
            if kind == "choices":
                return _choices(value[key], out), kind
            return (value[key], kind) if present(value[key]) else (None, None)
    elif isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return value, "choices" if isinstance(value, str) else None
    raise InputError(f"the label control's value {value!r} is not a choice, rating, number or "
                     "pairwise selection for the whole task", path=source, row=Where(where))
