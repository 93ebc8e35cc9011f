"""LeWiDi ("Learning With Disagreements") shared-task data into the canonical table.

Both published shapes are read: one JSON object ``{item_key: record}`` per file, where

* 2023 (HS-Brexit, MD-Agreement, ConvAbuse): ``annotators`` and ``annotations`` are
  comma-separated strings aligned by position;
* 2025 (CSC, Paraphrase, VariErrNLI): ``annotations`` is an object ``{annotator: label}``. It is
  the one read: VariErrNLI's ``annotators`` string repeats ids.

A source is one file or a dataset folder; a folder loads every ``<DS>_{train,dev,test}.json``
present (``split=`` keeps one). Item ids are ``"<split>/<key>"`` so ids never collide across
splits; ``category`` carries ``other_info``'s ``domain`` (MD-Agreement) or ``bot`` (ConvAbuse).

Label scales, from the ``annotation task`` field (or the dataset name):

=========================  =================  ==========================================
task                       kind               values
=========================  =================  ==========================================
hate speech (HS-Brexit)    nominal            0, 1
offensiveness (MD-Agr.)    nominal            0, 1
abusiveness (ConvAbuse)    ordinal            -3, -2, -1, 0, 1
paraphrase                 ordinal            -5 .. 5
sarcasm (CSC)              ordinal            1 .. 6
NLI (VariErrNLI)           nominal            the observed labels
=========================  =================  ==========================================

VariErrNLI lets an annotator give several labels at once (``"entailment,neutral"``); such a value
is kept as one category of its own, so agreement treats it as different from both of its parts.

Pools, first match wins:

1. ``pools=``: an annotator -> pool file or mapping, or a metadata file such as
   ``Paraphrase_annotators_meta.json`` with ``pool_column="Nationality"`` (any field);
2. ``pool_column`` alone: that field of the dataset's own ``<DS>_annotators_meta.json``, found
   beside the data files;
3. annotator groups in ``other_info``, in any of these shapes: a field named
   ``annotators group`` (or ``annotator_groups``, ...) holding a comma-separated string or a list
   aligned with ``annotators`` (HS-Brexit), or an object ``{annotator: group}``; or
   ``other_info`` itself mapping the record's annotators to their group
   (``{"Ann1": "group_a", "Ann2": "group_b"}``). A group token naming another ``other_info``
   field takes its value (HS-Brexit's ``group1`` -> ``"target group"``);
4. the single default pool.

Metadata and group objects may key annotators with or without the data's id prefix (``17`` for
the data's ``Ann17``): :func:`audit.ingest.pools.match_keys` matches them, with a warning saying how
many ids were matched so. Annotators the pools source lacks get the pool ``"unknown"``, with a
warning naming how many; annotators it names without a value (null, empty, or the text ``nan``
a missing value is written as: CSC's metadata) get ``"missing"``, with a warning naming how many.
``min_pool_annotators=N`` folds pools held by fewer than N annotators and placeholder values
(``nan``, ``DATA_EXPIRED``) into ``"other"`` (:func:`audit.ingest.pools.fold_pools`).

MD-Agreement's test split lists one annotator twice on one item; the last judgment is kept and a
warning names the count.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from ...contract import columns as C
from ...contract.ids import id_text
from ...errors import InputError, join_names
from ...contract.labels import LabelKind, LabelScale, infer_scale
from ...contract.table import AnnotationTable, build_table
from ..common import Ledger, drop_repeated_judgments, excerpt, warn
from ..pools import (MISSING_POOL, UNKNOWN_POOL, assign_pools,
                     check_min_pool_annotators, fold_pools, match_keys, pool_name, resolve_pools)
from ..readers import read_json
from ..sources import existing_path
from ..spec import read_spec

SPLITS = ("train", "dev", "test")
#: A LeWiDi data file's name, ``<DS>_<split>.json``: the dataset and the split it holds.
FILE_NAME = re.compile(r"^(?P<ds>.+)_(?P<split>train|dev|test)\.json$", re.IGNORECASE)
_ORD = LabelKind.ORDINAL.value
_NOM = LabelKind.NOMINAL.value

#: annotation task -> (kind, declared values or None for the observed ones)
TASK_SCALES = {
    "hate speech detection": (_NOM, (0, 1)),
    "offensiveness detection": (_NOM, (0, 1)),
    "abusivness detection": (_ORD, (-3, -2, -1, 0, 1)),
    "abusiveness detection": (_ORD, (-3, -2, -1, 0, 1)),
    "paraphrase detection": (_ORD, tuple(range(-5, 6))),
    "sarcasm detection": (_ORD, tuple(range(1, 7))),
    "natural language inference": (_NOM, None),
}
DATASET_TASKS = {
    "hs-brexit": "hate speech detection", "md-agreement": "offensiveness detection",
    "convabuse": "abusivness detection", "paraphrase": "paraphrase detection",
    "csc": "sarcasm detection", "varierrnli": "natural language inference",
}
_CATEGORY_FIELDS = ("domain", "bot")
_GROUP_FIELD = re.compile(r"^annotators?[\s_-]*groups?$", re.IGNORECASE)
_META_FILE = "{}_annotators_meta.json"


def load_lewidi(source, *, split: str | None = None, pools=None, pool_column: str | None = None,
                min_pool_annotators: int | None = None, spec=None, kind: str | None = None,
                order=None, name: str | None = None) -> AnnotationTable:
    """Load a LeWiDi file or dataset folder (see the module docstring).

    Parameters
    ----------
    source
        ``<DS>_<split>.json`` or the folder holding them.
    split
        ``"train"``, ``"dev"`` or ``"test"``; None loads every split present.
    pools, pool_column
        Annotator -> pool file or mapping; a metadata JSON needs ``pool_column``. Without
        ``pools``, ``pool_column`` names a field of the dataset's ``<DS>_annotators_meta.json``.
    min_pool_annotators
        Fold pools held by fewer annotators, and placeholder values, into ``"other"``
        (:func:`audit.ingest.pools.fold_pools`); None (default) folds nothing.
    spec, kind, order
        Override the label scale: a dataset spec's ``label`` block, or ``kind`` / ``order``
        (``kind`` alone keeps the task's declared values).
    """
    min_pool_annotators = check_min_pool_annotators(min_pool_annotators)
    files, dataset = _files(source, split)
    frames, file_tasks = zip(*(_judgments(path, split_name) for split_name, path in files))
    raw = pd.concat(frames)
    tasks = sorted({t for t in file_tasks if t})
    task = tasks[0] if len(tasks) == 1 else DATASET_TASKS.get(dataset.lower())
    src = str(source)
    ledger = Ledger(rows_read=len(raw))
    raw = drop_repeated_judgments(raw, source=src, what="annotator", ledger=ledger)
    if pools is None and pool_column is not None:
        pools = _metadata_file(files, dataset)
    mapping = resolve_pools(pools, pool_column=pool_column)
    pools_from = None
    if mapping is not None:
        raw[C.POOL] = assign_pools(raw[C.ANNOTATOR], mapping, source=src)
        pools_from = "pools" if isinstance(pools, Mapping) else str(pools)
    elif raw[C.POOL].isna().all():
        raw = raw.drop(columns=[C.POOL])
    else:
        pools_from = "other_info"
        none = raw[C.POOL].isna().to_numpy()
        if none.any():
            absent = pd.unique(raw.loc[none, C.ANNOTATOR])
            warn(f"{src}: {len(absent)} annotator(s) ({int(none.sum())} judgment(s)) have no "
                 f"annotator group in other_info (e.g. {join_names(absent, limit=3)}); their "
                 f"pool is {UNKNOWN_POOL!r}")
            raw.loc[none, C.POOL] = UNKNOWN_POOL
    raw, folded = fold_pools(raw, min_pool_annotators, source=src)
    spec = read_spec(spec) if spec is not None else None
    if spec is not None and spec.label_map:
        lookup = {str(k): v for k, v in spec.label_map.items()}
        hit = raw[C.LABEL].astype(str).isin(lookup).to_numpy()
        raw.loc[hit, C.LABEL] = raw.loc[hit, C.LABEL].astype(str).map(lookup).to_numpy()
    scale = _scale(raw[C.LABEL], task, spec=spec, kind=kind, order=order)
    raw = raw[[c for c in C.COLUMNS if c in raw.columns]]
    info = {"format": "lewidi", "task": task, "splits": [s for s, _ in files]}
    if pools_from is not None:
        info["pools_from"] = pools_from
    return build_table(raw, scale, name=name or dataset, source=src,
                       info={**info, **folded, **ledger.info()})


def _metadata_file(files, dataset: str) -> Path:
    """The dataset's ``<DS>_annotators_meta.json`` beside its data files."""
    folder = files[0][1].parent
    wanted = _META_FILE.format(dataset).lower()
    found = [p for p in folder.iterdir() if p.name.lower() == wanted and p.is_file()]
    if not found:
        raise InputError(f"--pool-column names a field of the annotator metadata, and there is no "
                         f"{_META_FILE.format(dataset)} beside the data; pass it with --pools",
                         path=str(folder), key="pool_column")
    return found[0]


def _files(source, split) -> tuple[list[tuple[str, Path]], str]:
    if split is not None and split not in SPLITS:
        raise InputError(f"LeWiDi splits are {join_names(SPLITS)}; got {split!r}", key="split")
    path = existing_path(source)
    if path.is_file():
        m = FILE_NAME.match(path.name)
        file_split = m.group("split").lower() if m else path.stem
        if split is not None and m and file_split != split:
            raise InputError(f"this file is the {file_split!r} split, not {split!r}",
                             path=str(path), key="split")
        return [(file_split, path)], (m.group("ds") if m else path.stem)
    found = {}
    for f in sorted(path.iterdir()):
        m = FILE_NAME.match(f.name)
        if m and f.is_file():
            found.setdefault(m.group("ds"), []).append((m.group("split").lower(), f))
    if not found:
        raise InputError("no LeWiDi files <DS>_{train,dev,test}.json in this folder",
                         path=str(path))
    if len(found) > 1:
        raise InputError(f"more than one dataset in this folder ({join_names(found)}); pass one "
                         "file or a folder per dataset", path=str(path))
    dataset, files = next(iter(found.items()))
    files.sort(key=lambda sf: SPLITS.index(sf[0]))
    if split is not None:
        files = [sf for sf in files if sf[0] == split]
        if not files:
            raise InputError(f"no {split!r} split in this folder", path=str(path), key="split")
    return files, dataset


def _judgments(path: Path, split: str) -> tuple[pd.DataFrame, str | None]:
    """One row per judgment of one file, indexed by its item id; and the file's annotation task."""
    data = read_json(path)
    if not isinstance(data, dict) or not data or not all(
            isinstance(r, dict) for r in data.values()):
        raise InputError("not the LeWiDi shape: expected a JSON object {item_key: record}",
                         path=str(path))
    recs = pd.DataFrame.from_dict(data, orient="index")
    for col in ("annotators", "annotations"):
        if col not in recs.columns or recs[col].isna().any():
            key = recs.index[recs[col].isna()][0] if col in recs.columns else None
            raise InputError("not the LeWiDi shape: record without this field", path=str(path),
                             column=col, key=key)
    info = recs["other_info"] if "other_info" in recs else pd.Series(None, index=recs.index)
    info = info.map(lambda o: o if isinstance(o, dict) else {})
    annotators = [_annotators(ann if isinstance(ann, dict) else ids)
                  for ann, ids in zip(recs["annotations"], recs["annotators"])]
    groups, by_number, no_value = zip(*(_groups(o, ids) for o, ids in zip(info, annotators)))
    per_record = pd.DataFrame({
        C.ANNOTATOR: annotators,
        C.LABEL: [_labels(a) for a in recs["annotations"]],
        C.POOL: list(groups),
    }, index=recs.index)
    n_ann, n_lab = per_record[C.ANNOTATOR].str.len(), per_record[C.LABEL].str.len()
    bad = (n_ann != n_lab) | (per_record[C.POOL].notna() & (per_record[C.POOL].str.len() != n_ann))
    if bad.any():
        key = bad.index[bad.to_numpy()][0]
        raise InputError(f"{int(bad.sum())} record(s) whose annotators, annotations (and "
                         "annotators group) lists differ in length", path=str(path), key=key)
    matched = [pair for pairs in by_number for pair in pairs]
    if matched:
        i, k = matched[0]
        warn(f"{path}: {len(matched)} judgment(s)' annotator groups in other_info were matched by "
             f"number, not exactly (e.g. the data's {i!r} is the key {k!r})")
    empty = [i for ids in no_value for i in ids]
    if empty:
        warn(f"{path}: {len(empty)} judgment(s)' annotator groups in other_info have no value "
             f"(null, empty or the text 'nan'; e.g. annotator "
             f"{empty[0]!r}); their pool is {MISSING_POOL!r}")
    no_groups = per_record[C.POOL].isna()
    per_record.loc[no_groups, C.POOL] = per_record.loc[no_groups, C.ANNOTATOR].map(
        lambda ids: [None] * len(ids))
    long = per_record.explode([C.ANNOTATOR, C.LABEL, C.POOL])
    long = long[long[C.ANNOTATOR].notna()]
    item = (split + "/" + recs.index.astype(str)).to_series(index=recs.index)
    long.insert(0, C.ITEM, item.reindex(long.index).to_numpy())
    category = info.map(lambda o: next((id_text(o[f]) for f in _CATEGORY_FIELDS
                                        if id_text(o.get(f))), None))
    if category.notna().any():
        long[C.CATEGORY] = category.reindex(long.index).to_numpy()
    long[C.TEXT] = _text(recs).reindex(long.index).to_numpy()
    long.index = pd.Index(long[C.ITEM].to_numpy(), name="record")
    tasks = recs["annotation task"].dropna().unique() if "annotation task" in recs else []
    return long, (str(tasks[0]).strip().lower() if len(tasks) == 1 else None)


def _annotators(value) -> list[str]:
    if isinstance(value, dict):
        return [str(k).strip() for k in value]
    return [a.strip() for a in str(value).split(",")]


def _labels(value) -> list[str | None]:
    if isinstance(value, dict):  # a null (or NaN) label is missing, not the text 'None'
        return [None if (t := id_text(v)) is None else t.strip() for v in value.values()]
    return [a.strip() for a in str(value).split(",")]


def _groups(info: dict, ids: list[str]) -> tuple[list | None, list[tuple[str, str]], list[str]]:
    """Each of a record's annotators' group from its ``other_info`` (None: it names no group),
    the (id, key) pairs matched by number rather than exactly (see the module docstring), and
    the annotators whose group it names with no value (pool :data:`MISSING_POOL`)."""
    field = next((k for k in info if _GROUP_FIELD.match(str(k).strip())), None)
    if field is None:
        plain = {str(k): v for k, v in info.items()
                 if v is None or isinstance(v, (str, int, float))}
        return _from_mapping(plain, ids, info, require_match=True)
    groups = info[field]
    if isinstance(groups, str):
        groups = groups.split(",")
    if isinstance(groups, Mapping):
        return _from_mapping({str(k): v for k, v in groups.items()}, ids, info)
    if isinstance(groups, (list, tuple)):
        values = [_group_value(g, info) for g in groups]
        return ([pool_name(v) for v in values], [],
                [i for i, v in zip(ids, values) if _no_value(v)])
    return None, [], []


def _from_mapping(groups: dict, ids: list[str], info: dict, *, require_match: bool = False):
    key_of = match_keys(ids, groups)
    if require_match and not key_of:
        return None, [], []
    values = {i: _group_value(groups[k], info) for i, k in key_of.items()}
    return ([pool_name(values[i]) if i in values else None for i in ids],
            [(i, k) for i, k in key_of.items() if i != k],
            [i for i, v in values.items() if _no_value(v)])


def _group_value(group, info: dict):
    """A group token's value; a token naming another ``other_info`` text field takes its
    value (HS-Brexit: ``group1`` -> ``"target group"``)."""
    if isinstance(group, str) and isinstance(info.get(group.strip()), str):
        group = info[group.strip()]
    return group


def _no_value(group) -> bool:
    """A group value that names no group (:func:`audit.ingest.pools.pool_name` gives
    :data:`MISSING_POOL` for it), not the text ``missing`` written as a group's name."""
    return pool_name(group) == MISSING_POOL and not (
        isinstance(group, str) and group.strip() == MISSING_POOL)


def _text(recs: pd.DataFrame) -> pd.Series:
    if "text" not in recs:
        return pd.Series("", index=recs.index)
    return excerpt(recs["text"].map(_one_text))


def _one_text(value) -> str:
    if isinstance(value, dict):
        return " | ".join(str(v) for v in value.values())
    text = str(value)
    if text.startswith("{") and '"user"' in text:
        try:
            turns = json.loads(text)
        except (json.JSONDecodeError, RecursionError):  # a text, not a conversation
            return text
        if isinstance(turns, dict) and "user" in turns:
            return str(turns["user"])
    return text


def _scale(labels: pd.Series, task, *, spec, kind, order) -> LabelScale:
    default_kind, values = TASK_SCALES.get(task, (_NOM, None))
    if spec is not None:
        kind = kind or spec.label_kind
        if spec.label_order is not None:
            return infer_scale(kind or default_kind, labels, order=spec.label_order,
                               names=spec.label_names)
    if order is not None:
        return infer_scale(kind or default_kind, labels, order=order)
    if values is not None:
        return LabelScale(kind or default_kind, values)
    return infer_scale(kind or default_kind, labels)
