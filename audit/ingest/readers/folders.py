"""What a folder holds: a ``datasets`` ``save_to_disk`` folder, one partitioned Parquet dataset,
a hub download whose data files are grouped into splits, or the folder ``annotation-audit
export`` writes.

Only names and markers are looked at here; no data file is opened.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..sources import DATA_EXTENSIONS, PARQUET_EXTENSIONS

#: Files ``datasets``' ``save_to_disk`` writes at the top of its folder.
SAVE_TO_DISK_MARKERS = ("dataset_dict.json", "state.json", "dataset_info.json")
_SPLIT_FILE = re.compile(r"^(?P<split>.+?)-\d{5}-of-\d{5}")


def is_save_to_disk(path: Path) -> bool:
    """Whether ``path`` is a folder written by ``datasets``' ``save_to_disk`` (has a marker)."""
    return path.is_dir() and any((path / m).exists() for m in SAVE_TO_DISK_MARKERS)


#: What ``annotation-audit export OUT`` writes into OUT (:mod:`audit.export`).
EXPORT_PARTS = ("manifest.json", "spec.yaml", "judgments")


def export_source(source, spec):
    """``(source, spec)`` to read for a folder ``annotation-audit export`` wrote: its
    ``judgments/`` with its ``spec.yaml`` (unless ``spec`` is given), after checking every
    file against the folder's manifest (:func:`audit.outputs.verify.verify_outputs`: a file
    edited or left from another export is an InputError naming it). Anything else is
    returned as it is.

    Before, ``annotation-audit run OUT`` on the folder the export had just written failed
    with ``OUT/manifest.json: expected a JSON array of objects``, though the folder holds
    everything the audit needs; the export's own note named ``OUT/judgments --spec
    OUT/spec.yaml``, which still works.
    """
    import json
    import os

    if not isinstance(source, (str, os.PathLike)):
        return source, spec
    path = Path(source)
    if not (path.is_dir() and all((path / part).exists() for part in EXPORT_PARTS)):
        return source, spec
    try:
        command = json.loads((path / EXPORT_PARTS[0]).read_bytes()).get("command")
    except (OSError, ValueError, AttributeError, RecursionError):
        return source, spec  # not ours: read as any folder, which names what it holds
    if command != "export":
        return source, spec
    from ...outputs.verify import verify_outputs

    verify_outputs(path)
    return str(path / "judgments"), spec if spec is not None else str(path / "spec.yaml")


def is_parquet_dataset(path: Path) -> bool:
    """A folder written as one Parquet dataset (by Spark, pyarrow or ``annotation-audit
    export``): Parquet files only, with Hive partition folders (``pool=crowd/``), ``part-*``
    files or a ``_SUCCESS`` marker. A hub download (``data/train-00000-of-00001.parquet``) is
    not one: its files are splits."""
    if not path.is_dir() or is_save_to_disk(path):
        return False
    files = [p for p in path.rglob("*") if not p.is_dir()  # a broken link is read, and named
             and not any(part.startswith((".", "_")) for part in p.relative_to(path).parts)]
    if not files or any(p.suffix.lower() not in PARQUET_EXTENSIONS for p in files):
        return False
    hive = any("=" in part for p in files for part in p.relative_to(path).parts[:-1])
    return hive or (path / "_SUCCESS").exists() or all(p.name.startswith("part-") for p in files)


def refuse_unreadable_parts(path: Path, *, what: str = "Parquet dataset") -> None:
    """An InputError naming a part of a Parquet dataset folder that is not a regular file: a
    broken symbolic link (a DVC or git-annex file not fetched), a FIFO, a device. pyarrow's
    dataset discovery skips them without a word, so the audit read the other parts, exit 0."""
    from ...errors import InputError
    from ..sources import entry_kind

    odd = sorted(p for p in path.rglob("*") if not p.is_dir() and not p.is_file()
                 and not any(part.startswith((".", "_")) for part in p.relative_to(path).parts))
    if odd:
        more = f" (and {len(odd) - 1} more)" if len(odd) > 1 else ""
        raise InputError(f"is {entry_kind(odd[0])}, a part of the {what} {path} that cannot "
                         f"be read{more}: fetch it or remove it", path=str(odd[0]))


def shard_split(name: str) -> str | None:
    """The split a hub shard's file name names (``train`` for ``train-00000-of-00001.parquet``),
    or None when the name is not a shard's."""
    m = _SPLIT_FILE.match(name)
    return m.group("split") if m else None


def data_files(path: Path) -> dict[str, list[Path]]:
    """The data files of a hub-download folder, grouped by split name.

    Files under ``data/`` when that folder exists, else every data file below ``path``. The split
    is the file-name prefix before ``-00000-of-00001``, else the parent folder of a numbered
    shard (``default/human/0000.parquet``), else the file stem.
    """
    root = path / "data" if (path / "data").is_dir() else path
    files = sorted(p for p in root.rglob("*")
                   if not p.is_dir() and p.suffix.lower() in DATA_EXTENSIONS
                   and not any(part.startswith(".") for part in p.relative_to(path).parts)
                   and p.name not in SAVE_TO_DISK_MARKERS and p.name.lower() != "readme.md")
    out: dict[str, list[Path]] = {}
    for f in files:
        split = shard_split(f.name)
        if split is None:
            split = f.parent.name if f.stem.isdigit() and f.parent != root else f.stem
        out.setdefault(split, []).append(f)
    return out
