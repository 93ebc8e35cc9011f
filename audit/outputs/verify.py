"""Reading outputs back: every file checked against its folder's manifest.

See :mod:`audit.outputs`. Every file of a folder is read through one handle on the folder
(``dir_fd``), so a set swapped in while it is being checked is not mistaken for a mix.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from ..errors import InputError
from .fs import real_path
from .guard import Inputs
from .layout import (MANIFEST, MAX_MANIFEST_BYTES, OUR_NAMES, RESULTS, OutputsError,
                     parse_manifest, read_manifest)


def verify_outputs(folder, *, only: Iterable[str] | None = None) -> dict:
    """Check an output folder against its manifest; return the manifest.

    Every file the manifest lists (or only those in ``only``) must be a regular file with the
    listed SHA-256; ``results.json``'s ``meta.run_id`` must be the manifest's; a file with a
    name annotation-audit writes (:data:`OUR_NAMES`) but not listed is left from another run.
    Every file is read through one handle on the folder, so a set swapped in meanwhile is not
    mistaken for a mix.

    Raises
    ------
    OutputsError
        Naming the file that does not match (the folder is torn, mixed, or was edited).
    """
    return _verify(Path(folder), only=only)[0]


def read_verified(path) -> bytes:
    """The bytes of one file of an output folder, checked against the folder's manifest (and,
    for ``results.json``, its run id) in the same pass: what :func:`audit.results.read`
    parses."""
    path = Path(path)
    return _verify(path.parent, only=[path.name], keep=path.name)[1]


def _verify(folder: Path, *, only=None, keep: str | None = None) -> tuple[dict, bytes | None]:
    mpath = folder / MANIFEST
    try:
        dir_fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except FileNotFoundError:
        raise OutputsError("not found", path=folder) from None
    try:
        try:
            manifest_bytes = _read_at(dir_fd, MANIFEST, limit=MAX_MANIFEST_BYTES)
        except FileNotFoundError:
            raise OutputsError(f"no {MANIFEST}: not a complete annotation-audit output folder "
                               "(a write that was interrupted, or files written by hand); "
                               "rerun the command", path=folder) from None
        manifest = parse_manifest(manifest_bytes, mpath)
        files = manifest["files"]
        wanted = set(files) if only is None else set(only)
        kept = None
        for name in sorted(wanted):
            path = folder / name
            if name not in files:
                if _lexists_at(dir_fd, name):
                    raise OutputsError(f"is not listed in {mpath}: it is left from another run",
                                       path=path)
                continue
            try:
                digest, data = _hash_at(dir_fd, name, keep=name in (keep, RESULTS))
            except FileNotFoundError:
                raise OutputsError(f"is listed in {mpath} but missing: the folder is "
                                   "incomplete", path=path) from None
            except IsADirectoryError:
                raise OutputsError(f"is listed in {mpath} as a file but is a folder",
                                   path=path) from None
            if digest is None:
                raise OutputsError(f"is listed in {mpath} but is a link, not the file written",
                                   path=path)
            if digest != files[name]["sha256"]:
                raise OutputsError(f"does not match {mpath} (another SHA-256): the folder mixes "
                                   "files of two runs, or the file was edited after the run",
                                   path=path)
            if name == RESULTS:
                _check_run_id(data, manifest["run_id"], path=path, mpath=mpath)
            if name == keep:
                kept = data
        if only is None:
            for root, _, names in os.walk(folder):
                for name in sorted(names):
                    rel = (Path(root) / name).relative_to(folder).as_posix()
                    if rel not in files and rel != MANIFEST and rel.split("/", 1)[0] in OUR_NAMES:
                        raise OutputsError(f"is not listed in {mpath}: it is left from another "
                                           "run", path=folder / rel)
        return manifest, kept
    finally:
        os.close(dir_fd)


def _check_run_id(data: bytes, expected: str, *, path: Path, mpath: Path) -> None:
    try:
        got = json.loads(data.decode("utf-8"))["meta"]["run_id"]
    except (ValueError, KeyError, TypeError, RecursionError):
        got = None
    if got != expected:
        raise OutputsError(f"has meta.run_id {got!r}, {mpath} has run_id {expected!r}: the "
                           "folder mixes two runs", path=path)


def _read_at(dir_fd: int, name: str, *, limit: int) -> bytes:
    fd = os.open(name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0), dir_fd=dir_fd)
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise OutputsError(f"is larger than {limit:,} bytes", path=name)
    return data


def _lexists_at(dir_fd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _hash_at(dir_fd: int, name: str, *, keep: bool) -> tuple[str | None, bytes | None]:
    """SHA-256 of a regular file under ``dir_fd`` (and its bytes with ``keep``); None for a
    symbolic link (a set holds regular files only)."""
    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    if stat.S_ISLNK(st.st_mode):
        return None, None
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(name)
    fd = os.open(name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0), dir_fd=dir_fd)
    h, parts = hashlib.sha256(), []
    with os.fdopen(fd, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
            if keep:
                parts.append(chunk)
    return h.hexdigest(), b"".join(parts) if keep else None


def verify_inputs(inputs: Inputs, *, levels: int = 3) -> None:
    """Verify every annotation-audit output folder an input lies in (:func:`verify_outputs`).

    An input counts when a folder at most ``levels`` above it holds an annotation-audit
    :data:`MANIFEST` that lists it (or, for a folder input, files inside it).
    """
    done: set[Path] = set()
    for _, path in inputs.given:
        real = real_path(path)
        folder = real if real.is_dir() else real.parent
        for candidate in [folder, *folder.parents][:levels]:
            mpath = candidate / MANIFEST
            if candidate in done or not mpath.is_file():
                continue
            try:
                manifest = read_manifest(mpath, foreign=True)
            except InputError:
                continue  # not ours: a folder may hold any manifest.json
            rel = "" if real == candidate else real.relative_to(candidate).as_posix()
            if rel == "" or any(n == rel or n.startswith(rel + "/") for n in manifest["files"]):
                verify_outputs(candidate)
                done.add(candidate)
