"""What a source is, before anything is read: a local path, a hub name, a known file format.

A source given as text is a local path when the path exists, else a hub name when it reads like
``owner/name`` and does not end with one of the file extensions the readers understand
(:data:`DATA_EXTENSIONS`). Nothing here opens a file; the heavy readers live in
:mod:`audit.ingest.readers`.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import InputError
from ..escape import visible

CSV_EXTENSIONS = (".csv", ".tsv", ".tab", ".txt")
JSONL_EXTENSIONS = (".jsonl", ".ndjson")
PARQUET_EXTENSIONS = (".parquet", ".pq")
#: Arrow IPC files: Feather (V2; ``DataFrame.to_feather``), the IPC file and stream formats.
ARROW_EXTENSIONS = (".feather", ".arrow", ".arrows", ".ipc")
#: File extensions the readers understand (a path with one of these is never a hub name).
DATA_EXTENSIONS = (CSV_EXTENSIONS + JSONL_EXTENSIONS + (".json",) + PARQUET_EXTENSIONS
                   + ARROW_EXTENSIONS)
#: Excel workbooks, read as a table by :mod:`audit.ingest.readers.workbooks` (not as a split of
#: a hub download: ``datasets`` does not read them).
WORKBOOK_EXTENSIONS = (".xlsx", ".xlsm")
_HUB_NAME = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def is_hub_name(source) -> bool:
    """True when ``source`` is not a local path and reads like a hub name ``owner/name``."""
    text = str(source)
    if isinstance(source, Path) or Path(text).exists():
        return False
    return bool(_HUB_NAME.match(text)) and not text.lower().endswith(DATA_EXTENSIONS
                                                                     + WORKBOOK_EXTENSIONS)


def existing_path(source, *, what: str = "file", once: bool = False) -> Path:
    """``source`` as a Path that exists; an InputError naming the path when it does not.

    It must be a regular file or a folder: a pipe (``<(zcat data.csv.gz)``), a FIFO, a socket
    or a device is refused, unless ``once`` (a file read once, as a spec is). Data files are
    read more than once (the format detected, the columns, then the table; a pools file sized,
    then read), and a pipe read a second time is empty, which was told as "the file is empty"
    or a parse error; a FIFO nobody writes to waited for ever. Only ``stat`` is called: nothing
    is opened."""
    import stat

    path = Path(source).expanduser()
    if not path.exists():
        if path.is_symlink():  # a DVC or git-annex file not fetched
            raise InputError(f"{what} not found: {entry_kind(path)}", path=str(source))
        raise InputError(f"{what} not found", path=str(source))
    if not once:
        mode = path.stat().st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            raise InputError(f"is {entry_kind(path)}, not a regular file: data is read more "
                             "than once; write it to a file and give that", path=str(source))
    return path


def entry_kind(path: Path) -> str:
    """What a folder entry that is neither a regular file nor a folder is, in words."""
    import os
    import stat

    if path.is_symlink() and not path.exists():
        return f"a broken symbolic link (to {visible(os.readlink(path))})"
    mode = path.stat().st_mode
    return ("a pipe or FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a regular file")


def default_name(source, fallback: str) -> str:
    """The dataset name reports use when the caller gives none: a hub name's ``name`` part,
    else the file or folder name without a data extension, else ``fallback``."""
    text = str(source)
    if is_hub_name(text):
        return text.split("/", 1)[1]
    stem = Path(text).name
    for ext in DATA_EXTENSIONS + WORKBOOK_EXTENSIONS:
        if stem.lower().endswith(ext):
            return stem[: -len(ext)]
    return stem or fallback
