"""Annotator -> pool mappings: read from a file, applied to a column of annotator ids.

Accepted files:

* CSV / TSV with a column ``annotator`` and a column ``pool`` (or the column named by
  ``pool_column``);
* JSON object ``{annotator: pool}``;
* JSON metadata object ``{annotator: {field: value, ...}}`` (LeWiDi's ``*_annotators_meta.json``)
  with ``pool_column`` naming the field that becomes the pool, e.g. ``Nationality``.

Annotators the mapping does not name get the pool :data:`UNKNOWN_POOL` and one warning naming how
many they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from .. import columns as C
from ..errors import InputError, join_names
from ._common import existing_path, warn
from .readers import read_json, read_table

#: Pool given to annotators a pool mapping does not name.
UNKNOWN_POOL = "unknown"


def read_pools(source, *, pool_column: str | None = None) -> dict[str, str]:
    """Read an annotator -> pool mapping from a CSV / TSV / JSON file (see the module docstring).

    Raises
    ------
    InputError
        The file is missing or unreadable, lacks the annotator or pool column, or
        ``pool_column`` is not a field of the metadata (the message lists the fields).
    """
    path = existing_path(source, what="pools file")
    if path.suffix.lower() == ".json":
        data = read_json(path)
        if isinstance(data, list):
            return _from_frame(pd.DataFrame.from_records(data), path, pool_column)
        if not isinstance(data, dict):
            raise InputError("expected a JSON object mapping annotator -> pool or -> metadata",
                             path=str(path))
        return _from_json_object(data, path, pool_column)
    return _from_frame(read_table(path), path, pool_column)


def _from_json_object(data: dict, path: Path, pool_column: str | None) -> dict[str, str]:
    nested = [k for k, v in data.items() if isinstance(v, dict)]
    if not nested:
        if pool_column is not None:
            raise InputError(f"--pool-column {pool_column!r} given, but this file maps annotators "
                             "straight to pools (no metadata fields)", path=str(path))
        return {str(k): str(v) for k, v in data.items()}
    if len(nested) != len(data):
        bad = next(k for k, v in data.items() if not isinstance(v, dict))
        raise InputError("mixes metadata objects and plain values", path=str(path), key=bad)
    fields = sorted({f for v in data.values() for f in v})
    if pool_column is None:
        raise InputError(f"an annotator metadata file needs --pool-column; fields: "
                         f"{join_names(fields)}", path=str(path))
    if pool_column not in fields:
        raise InputError(f"no field {pool_column!r} in the annotator metadata; fields: "
                         f"{join_names(fields)}", path=str(path), key=pool_column)
    missing = [k for k, v in data.items() if v.get(pool_column) in (None, "")]
    if missing:
        raise InputError(f"{len(missing)} annotator(s) have no {pool_column!r} "
                         f"(e.g. {join_names(missing, limit=3)})", path=str(path), key=pool_column)
    return {str(k): str(v[pool_column]) for k, v in data.items()}


def _from_frame(frame: pd.DataFrame, path: Path, pool_column: str | None) -> dict[str, str]:
    pool_col = pool_column or C.POOL
    for col in (C.ANNOTATOR, pool_col):
        if col not in frame.columns:
            raise InputError(f"no column {col!r} in the pools file; columns: "
                             f"{join_names(frame.columns)}", path=str(path), column=col)
    sub = frame[[C.ANNOTATOR, pool_col]]
    if sub.isna().any().any():
        row = int(sub.isna().any(axis=1).to_numpy().argmax())
        raise InputError("empty annotator or pool", path=str(path), row=row)
    ann = sub[C.ANNOTATOR].astype(str)
    pool = sub[pool_col].astype(str)
    clash = pd.DataFrame({"a": ann, "p": pool}).drop_duplicates().duplicated("a", keep=False)
    if clash.any():
        who = ann[clash.to_numpy()].iloc[0]
        raise InputError(f"annotator {who!r} is given more than one pool", path=str(path),
                         column=C.ANNOTATOR)
    return dict(zip(ann, pool))


def resolve_pools(pools, *, pool_column: str | None = None, base: Path | None = None):
    """``pools`` as a mapping: None stays None, a Mapping is used as is, a path is read.

    A relative path is taken relative to ``base`` (a spec file's folder) when given.
    """
    if pools is None:
        return None
    if isinstance(pools, Mapping):
        return {str(k): str(v) for k, v in pools.items()}
    path = Path(pools)
    if base is not None and not path.is_absolute():
        path = base / path
    return read_pools(path, pool_column=pool_column)


def assign_pools(annotators: pd.Series, mapping: Mapping[str, str], *, source: str) -> pd.Series:
    """The pool of each annotator id; ids the mapping lacks get :data:`UNKNOWN_POOL` + a warning."""
    ids = annotators.astype(str)
    pools = ids.map(dict(mapping))
    missing = pools.isna()
    if missing.any():
        absent = pd.unique(ids[missing])
        warn(f"{source}: {len(absent)} annotator(s) ({int(missing.sum())} judgment(s)) are not in "
             f"the pools mapping (e.g. {join_names(absent, limit=3)}); their pool is "
             f"{UNKNOWN_POOL!r}")
        pools = pools.where(~missing, UNKNOWN_POOL)
    return pools
