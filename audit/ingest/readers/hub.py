"""``datasets`` sources as ``{split: frame}``: ``save_to_disk`` folders, hub downloads, hub names
and data in memory.

Folders written by ``datasets`` ``save_to_disk`` open with :func:`datasets.load_from_disk`; a
hub-download folder (``data/<split>-00000-of-00001.parquet``) is read split by split, so splits
whose schemas differ (MT-Bench's ``judge``) still load; a hub name goes through
:func:`datasets.load_dataset`. ``datasets`` is imported only when one of these is opened.

A ``datasets`` split becomes a frame as a Parquet file does (:func:`dataset_frame`), but for
its ``ClassLabel`` columns, which hold each label's position in the feature's names (``0``
for ``"neg"``): they read as those names, as the dataset shows them and as a CSV export of it
writes them, and ``-1`` (``datasets``' "no label") as missing.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ...errors import InputError, join_names
from ..memory import InMemory
from ..sources import existing_path, is_hub_name
from .folders import data_files, is_save_to_disk, shard_split
from .tables import read_table, table_columns


#: ``frame.attrs`` key of :func:`dataset_frame`: each ``ClassLabel`` column's names, in the
#: feature's order (what an ordinal scale without ``label.order`` is pointed to).
CLASS_LABELS = "class_labels"


def dataset_columns(path: Path) -> list[str]:
    """Column names of a ``save_to_disk`` or hub-download folder, without reading the data."""
    if is_save_to_disk(path):
        ds = _load_from_disk(path)
        cols = ds.column_names
        return list(next(iter(cols.values()))) if isinstance(cols, dict) else list(cols)
    groups = data_files(path)
    if not groups:
        return []
    return table_columns(next(iter(groups.values()))[0])


def open_dataset(source, *, split: str | None = None, default_split: str = "train",
                 hub_split: str | None = None) -> dict[str, pd.DataFrame]:
    """Open a ``datasets`` source as ``{split: frame}``.

    ``source`` is a ``save_to_disk`` folder, a hub-download folder, a single data file, a hub
    name (loaded with :func:`datasets.load_dataset`; offline this raises an InputError saying the
    hub is unreachable), or data in memory (:class:`audit.ingest.memory.InMemory`). ``split``
    keeps one split; an absent split is an InputError listing the splits present. ``hub_split``
    is passed to ``load_dataset`` for hub names when ``split`` is None.
    """
    if isinstance(source, InMemory):  # a DataFrame / Dataset given in memory
        splits = source.splits(default_split=default_split)
    elif is_hub_name(source):
        splits = _load_hub(str(source), split=split or hub_split)
    else:
        path = existing_path(source, what="dataset")
        if is_save_to_disk(path):
            ds = _load_from_disk(path)
            if hasattr(ds, "keys"):
                splits = {name: ds[name] for name in ds.keys()}
            else:
                splits = {str(getattr(ds, "split", None) or default_split): ds}
            splits = {k: dataset_frame(v) for k, v in splits.items()}
        elif path.is_dir():
            groups = data_files(path)
            if not groups:
                raise InputError("no data files (Parquet, JSONL, JSON, CSV) in this folder",
                                 path=str(path))
            if split is not None and split not in groups:
                _no_split(split, groups, path)
            splits = {name: pd.concat([read_table(f) for f in files], ignore_index=True)
                      for name, files in groups.items() if split is None or name == split}
        else:
            splits = {shard_split(path.name) or default_split: read_table(path)}
    if split is not None:
        if split not in splits:
            _no_split(split, splits, source)
        splits = {split: splits[split]}
    return splits


def _no_split(split, present, source):
    raise InputError(f"no split {split!r}; splits present: {join_names(present)}",
                     path=str(source), key="split")


def _load_from_disk(path: Path):
    import datasets

    try:
        return datasets.load_from_disk(str(path))
    except Exception as err:  # noqa: BLE001 - datasets raises FileNotFoundError, ValueError, ...
        raise InputError(f"cannot open the datasets folder: {err}", path=str(path)) from None


def _load_hub(name: str, *, split: str | None) -> dict[str, pd.DataFrame]:
    import datasets

    try:
        ds = datasets.load_dataset(name, split=split)
    except Exception as err:  # noqa: BLE001 - offline: ConnectionError, OSError, LocalEntryNotFound
        raise InputError(
            f"cannot load {name!r} from the Hugging Face hub (unreachable or unknown: "
            f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}); download it "
            "where the hub is reachable (datasets save_to_disk, or the repo's data/ folder) "
            "and pass the local path", path=name) from None
    if hasattr(ds, "keys"):
        return {k: dataset_frame(ds[k]) for k in ds.keys()}
    return {split or "train": dataset_frame(ds)}


def dataset_frame(ds) -> pd.DataFrame:
    """A ``datasets.Dataset`` as a frame: its Arrow table read as a Parquet file's is
    (:func:`.tables.arrow_frame`: binary columns holding UTF-8 as text), each ``ClassLabel``
    column as its names (module docstring)."""
    import numpy as np

    from .tables import arrow_frame

    frame = arrow_frame(ds.with_format("arrow")[:])
    for name, feature in (getattr(ds, "features", None) or {}).items():
        names = getattr(feature, "names", None)
        if type(feature).__name__ != "ClassLabel" or not names or name not in frame.columns:
            continue
        codes = pd.to_numeric(frame[name], errors="coerce").to_numpy(dtype=float)
        known = np.isfinite(codes) & (codes >= 0) & (codes < len(names))
        out = frame[name].astype(object).to_numpy(copy=True)
        out[known] = np.asarray(names, dtype=object)[codes[known].astype(np.int64)]
        out[np.isnan(codes) | (codes == -1)] = None
        frame[name] = out
        frame.attrs.setdefault(CLASS_LABELS, {})[name] = [str(n) for n in names]
    return frame
