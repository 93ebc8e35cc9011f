"""Prodigy exports (Explosion's annotation tool: ``prodigy db-out DATASET > annotations.jsonl``)
into the canonical table.

Read as Prodigy writes annotated examples (https://prodi.gy/docs/api-interfaces: "Annotated
tasks contain an additional ``answer`` key mapping to either ``accept``, ``reject`` or
``ignore``"; the ``choice`` recipe's examples carry ``"accept": [...]``, "the ID(s) of the selected
option(s)", github.com/explosion/prodigy-recipes ``other/choice.py``; A/B ``compare`` tasks
carry ``"mapping": {"A": "accept", "B": "reject"}``, ``compare.py`` there; multi-user sessions
name each annotation ``_annotator_id`` / ``_session_id`` = ``<dataset>-<session>``, e.g.
``ner_person-alex``, support.prodi.gy "Multi-user sessions"; ``_input_hash`` identifies the
input, ``_task_hash`` the question asked about it, prodi.gy/docs/api-loaders#hashing): JSON
Lines, one annotated example a line (or a JSON array of them).

Rules (README, "Annotation tools' exports"):

* a **judgment** is one example an annotator answered ``accept`` or ``reject``, read by its
  task's kind:

  - a **choice** task (``options``, or an ``accept`` list): the option id the annotator
    selected; several ids (``choice_style: multiple``) are one category of their own
    (:func:`.tool_exports.combined`, ``"A + B"``), with a warning; ``reject`` refuses the
    question (no option is the answer) and an ``accept`` with no option selected answers
    nothing: both are left out and counted;
  - a **compare** task (``mapping``): the side (``A`` / ``B``) the mapping puts under the
    answer: ``accept`` prefers the output shown as ``accept``, ``reject`` the other;
  - a **binary** task (neither: ``textcat.teach``, ``mark``, a suggested span): the answer
    itself, ``accept`` or ``reject``; a rejected example is the annotator's "no" to the question
    (the label or span shown does not apply), a judgment like any other.

* ``ignore`` (the annotator skipped the example) is left out and counted in ``rows_dropped``
  (``rows_read`` counts every example of the file).
* **item**: ``_task_hash``, the question (one input asked about two labels is two items;
  ``columns: {item: _input_hash}`` groups by input, or names another key or ``meta`` field);
  **annotator**: ``_annotator_id`` (``_session_id`` in exports before Prodigy 1.7), written as
  the export writes it: ``dataset-alice`` (without named sessions, each session's timestamp is
  an annotator of its own); **pool**: ``--pools`` (keyed as the export writes annotators) or the
  spec's ``pools``, else one pool; ``model_a``, ``model_b``, ``model``, ``category``, ``turn``,
  ``text`` from the example's keys of those names, or its ``meta``'s.
* **exit 2**, naming the line: an example without ``answer`` (the input data, not the
  export?), with another answer, without ``_task_hash`` or an annotator id; a manual span,
  region or free-text annotation (``_view_id`` ``ner_manual``, ``spans_manual``,
  ``image_manual``, ``relations``, ``text_input`` ...), which labels no example; a file mixing
  binary, choice and compare tasks.
"""

from __future__ import annotations

from pathlib import Path

from ...contract import columns as C
from ...contract.table import AnnotationTable
from ...errors import InputError, Where, join_names
from ..readers import read_json
from ..readers.json_files import is_json_lines, jsonl_records
from ..sources import existing_path
from .tool_exports import DATA_COLUMNS, Judgments, check_spec, combined, finish, present

FORMAT = "prodigy"
ANSWERS = ("accept", "reject", "ignore")
#: Interfaces whose annotations mark spans, regions or free text: no label of the example.
MANUAL_VIEWS = frozenset({"ner_manual", "spans_manual", "pos_manual", "dep_manual",
                          "relations", "image_manual", "audio_manual", "video_manual",
                          "text_input"})

#: The canonical columns a spec's ``columns`` may name: no label column (an example's answer
#: is its label).
SPEC_COLUMNS = (C.ITEM, *DATA_COLUMNS)

IGNORED_RULE = "ignored example (answer: ignore, the annotator skipped it)"
REJECTED_CHOICE_RULE = "rejected choice task (answer: reject, no option chosen)"
NO_OPTION_RULE = "accepted choice task with no option selected"


def load_prodigy(source, *, spec=None, pools=None, pool_column: str | None = None,
                 min_pool_annotators: int | None = None,
                 name: str | None = None) -> AnnotationTable:
    """Load a Prodigy export (see the module docstring).

    Parameters
    ----------
    source
        The JSON Lines file ``prodigy db-out`` writes (or a JSON array of its examples).
    spec
        Optional: ``columns`` (``item``, ``model_a``, ...: the example's keys or ``meta``
        fields to read them from), ``label`` (kind, order, map), ``pools``, ``name``.
    pools, pool_column, min_pool_annotators
        As for a table (:func:`audit.ingest.adapters.table.load_table`); one pool without them.

    Raises
    ------
    InputError
        Not such an export, or an example without its ids (the message names its line).
    SchemaError
        Judgments that break the canonical schema (an annotator answering one question twice),
        each named by its line.
    """
    spec = check_spec(spec, fmt=FORMAT, columns=SPEC_COLUMNS)
    path = existing_path(source)
    src = str(source)
    examples, names = _examples(path, src)
    fields = _fields(examples, spec, src)
    item_key = spec.columns.get(C.ITEM, "_task_hash")
    out = Judgments()
    kinds: dict[str, str] = {}
    for eg, where in zip(examples, names):
        answer = eg.get("answer")
        if not present(answer):
            raise InputError("no 'answer': every example of a Prodigy export has one (accept, "
                             "reject or ignore); is this the input data rather than "
                             "'prodigy db-out'?", path=src, row=Where(where))
        if answer not in ANSWERS:
            raise InputError(f"answer {answer!r} is none of {join_names(ANSWERS)}", path=src,
                             row=Where(where))
        view = eg.get("_view_id")
        if view in MANUAL_VIEWS:
            raise InputError(f"a {view} annotation marks spans, regions or text, not a label of "
                             "the example: there is no judgment to audit", path=src,
                             row=Where(where))
        kind = _kind(eg)
        kinds.setdefault(kind, where)
        if len(kinds) > 1:
            (first, at), (other, here) = list(kinds.items())[:2]
            raise InputError(f"the export mixes {first} tasks ({at}) and {other} tasks: audit "
                             "one kind of question at a time", path=src, row=Where(here))
        if answer == "ignore":
            out.drop(IGNORED_RULE)
            continue
        label = _label(eg, kind, answer, out, source=src, where=where)
        if label is None:
            continue
        annotator = next((eg[k] for k in ("_annotator_id", "_session_id") if present(eg.get(k))),
                         None)
        if annotator is None:
            raise InputError("no '_annotator_id' or '_session_id': the example does not say who "
                             "annotated it", path=src, row=Where(where))
        item = _value(eg, item_key)
        if not present(item):
            raise InputError(f"no {item_key!r}: the example's judgment has no item", path=src,
                             row=Where(where))
        out.add(where, **{C.ITEM: item, C.ANNOTATOR: annotator, C.LABEL: label},
                **{col: _value(eg, key) for col, key in fields.items()})
    return finish(out, spec, fmt=FORMAT, source=src, pools=pools, pool_column=pool_column,
                  min_pool_annotators=min_pool_annotators, name=name)


def _examples(path: Path, source: str) -> tuple[list[dict], list[str]]:
    """The export's examples and how messages name each (``line 7``, ``record 3``)."""
    if path.suffix.lower() == ".json" and not is_json_lines(path):  # JSON Lines: below
        data = read_json(path)
        if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
            raise InputError("not a Prodigy export: expected JSON Lines of annotated examples "
                             "(prodigy db-out) or a JSON array of them", path=source)
        return data, [f"record {k + 1}" for k in range(len(data))]
    from ..readers.lines import RecordLines

    examples = jsonl_records(path)
    lines = RecordLines(path).names(range(len(examples)))
    return examples, [lines.get(k, f"record {k + 1}") for k in range(len(examples))]


def _kind(eg: dict) -> str:
    """``compare``, ``choice`` or ``binary`` (module docstring)."""
    if isinstance(eg.get("mapping"), dict):
        return "compare"
    if isinstance(eg.get("options"), list) or isinstance(eg.get("accept"), list):
        return "choice"
    return "binary"


def _label(eg: dict, kind: str, answer: str, out: Judgments, *, source: str, where: str):
    """The judgment's label, or None with the record counted under its rule."""
    if kind == "binary":
        return answer
    if kind == "compare":
        side = {v: k for k, v in eg["mapping"].items()}.get(answer)
        if not present(side):
            raise InputError(f"the mapping {eg['mapping']!r} names no side for the answer "
                             f"{answer!r}", path=source, row=Where(where))
        return side
    if answer == "reject":
        out.drop(REJECTED_CHOICE_RULE)
        return None
    picked = [c for c in eg.get("accept") or [] if present(c)]
    if not picked:
        out.drop(NO_OPTION_RULE)
        return None
    if len(picked) > 1:
        out.n_combined += 1
        return combined(picked)
    return picked[0]


def _value(eg: dict, key: str):
    """The example's ``key``, else its ``meta``'s."""
    if key in eg:
        return eg[key]
    meta = eg.get("meta")
    return meta.get(key) if isinstance(meta, dict) else None


def _fields(examples: list[dict], spec, source: str) -> dict[str, str]:
    """``{canonical column: key}`` for the extra columns (the spec's ``columns``, else a key
    of the column's name), among the keys some example or its ``meta`` holds."""
    held = set()
    for eg in examples:
        held.update(map(str, eg))
        if isinstance(eg.get("meta"), dict):
            held.update(map(str, eg["meta"]))
    fields = {}
    for col in (C.ITEM, *DATA_COLUMNS):
        key = spec.columns.get(col)
        if key is not None and key not in held:
            raise InputError(f"no example holds the key {key!r} that columns.{col} names (nor "
                             "does its meta)", path=source, key=f"columns.{col}")
        if col != C.ITEM and (key is not None or col in held):
            fields[col] = key or col
    return fields
