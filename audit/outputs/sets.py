"""Writing a set of output files as one: staged beside the target, swapped in with a manifest.

See :mod:`audit.outputs` for the protocol and its guarantees.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from . import fs
from .guard import Inputs, guard_folder
from .layout import CARD_FILE, MANIFEST, RESULTS, run_id, stamped, write_manifest


@dataclass
class Stage:
    """A set being written: write its files into :attr:`path`; set :attr:`run_id`."""

    path: Path
    target: Path
    command: str
    replace: bool
    run_id: str | None = None


@contextlib.contextmanager
def staged(target, *, command: str, replace: bool = True,
           recheck: Callable[[], object] | None = None) -> Iterator[Stage]:
    """Write a set of files into a staging folder beside ``target``, then move it into place.

    On leaving the block without an exception the manifest is written, everything is flushed
    to disk and the set is swapped in (``replace``) or added (``replace=False``, ``export``)
    while holding the parent folder's lock; ``recheck`` (the guard) runs again under the lock,
    so a file that appeared meanwhile is still refused. On an exception the staging folder is
    removed and ``target`` is untouched.

    Parameters
    ----------
    target
        The output folder's real path (:func:`guard_folder`).
    command
        Written into the manifest (``run``, ``check``, ``card``, ``export``).
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    stage = Stage(fs.stage_name(target), target, command, replace)
    try:
        os.mkdir(stage.path)
        yield stage
        _commit(stage, recheck)
    except OSError as err:
        named = _named_for_target(err, stage)
        if named is None:
            raise
        raise named from err
    finally:
        if os.path.lexists(stage.path):
            fs.remove_tree(stage.path)


def _named_for_target(err: OSError, stage: Stage) -> OSError | None:
    """``err``, refused by the system while the set was written (a full disk, a quota, a
    folder it may not write in), naming the output folder and the file of the set it was
    writing, not the staging folder or no file at all (pyarrow's and a failed write's errors
    name none); None when ``err`` names a file outside the staging folder (as it is)."""
    names = [Path(os.fsdecode(f)) for f in (err.filename, err.filename2) if f is not None]
    inside = []
    for name in names:
        with contextlib.suppress(ValueError):
            inside.append(name.relative_to(stage.path))
    if names and not inside:
        return None
    reason = err.strerror or (os.strerror(err.errno) if err.errno else str(err))
    writing = [str(p) for p in inside if str(p) != "."]
    if writing:
        reason = f"{reason} (writing {writing[0]})"
    return OSError(err.errno, f"{reason}; nothing in it was written or replaced",
                   os.fspath(stage.target))


def _commit(stage: Stage, recheck) -> None:
    files = write_manifest(stage.path, command=stage.command, run_id=stage.run_id)
    fs.fsync_tree(stage.path)
    parent, target = stage.target.parent, stage.target
    with fs.locked(parent):
        fs.remove_stale(parent, target.name)
        if recheck is not None:
            recheck()
        if stage.replace:
            if os.path.lexists(target):
                with contextlib.suppress(OSError):
                    os.chmod(stage.path, stat.S_IMODE(os.stat(target).st_mode))
                fs.exchange(stage.path, target)  # stage.path now holds the old set
            else:
                fs.rename_noreplace(stage.path, target)
        else:
            tops = sorted({name.split("/", 1)[0] for name in files} - {MANIFEST})
            for name in tops + [MANIFEST]:
                if os.path.lexists(target / name):
                    raise InputError("already exists; remove it or choose another OUT",
                                     path=target / name)
            if not os.path.lexists(target):
                fs.rename_noreplace(stage.path, target)
            else:
                for name in tops + [MANIFEST]:  # the manifest last: a reader sees all or none
                    fs.rename_noreplace(stage.path / name, target / name)
        fs.fsync_dir(parent)


def write_run(results: dict, out, *, inputs: Inputs | None = None, report: bool = True,
              command: str = "run", extra: Callable[[Path], object] | None = None,
              **card_options) -> Path:
    """Write one run's set into ``out`` atomically: ``results.json`` (with ``meta.run_id``),
    with ``report`` the files of :func:`audit.report.write_reports`, the files ``extra(folder)``
    writes into the staging folder (``items.parquet``, :func:`audit.items.write_items`), and the
    manifest.

    ``results["meta"]["run_id"]`` is set in place. ``out`` is guarded (:func:`guard_folder`)
    against ``inputs`` before anything is written and again under the swap's lock.
    """
    from concurrent.futures import ThreadPoolExecutor

    inputs = inputs if inputs is not None else Inputs()
    shown = Path(out)
    target = guard_folder(shown, inputs)
    ident, text = stamped(results)
    results.setdefault("meta", {})["run_id"] = ident
    with staged(target, command=command,
                recheck=lambda: guard_folder(shown, inputs)) as stage:
        stage.run_id = ident
        # extra's files (items.parquet: pyarrow, out of the interpreter's lock) are written in
        # a thread while results.json and the card are; the reports that read them
        # (croissant.json hashes items.parquet) wait for them, and so does the manifest. On an
        # error the block still waits for the thread before the staging folder goes.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="audit-outputs") as pool:
            pending = pool.submit(extra, stage.path) if extra is not None else None
            ready = pending.result if pending is not None else None
            if report:  # croissant.json's digests of the source files, next in the thread
                from ..report.croissant import hashed_sources

                digests = fs.Digests(pool).start(hashed_sources(inputs))
            fs.write_text(stage.path / RESULTS, text)
            if report:
                from ..report import write_reports

                write_reports(results, stage.path, card_from=target / CARD_FILE,
                              card_shown=shown / CARD_FILE, inputs=inputs, ready=ready,
                              sha256=digests, **card_options)
            if ready is not None:
                ready()  # its error, if any, is raised here
    return shown


def write_card_set(results: dict, out, *, inputs: Inputs | None = None,
                   **card_options) -> Path:
    """``card --out``: ``out/dataset_card.md`` (updated from the card there) and the manifest,
    as one set replacing ``out``; returns the card's path."""
    from ..report import write_card_file

    inputs = inputs if inputs is not None else Inputs()
    shown = Path(out)
    target = guard_folder(shown, inputs)
    results.setdefault("meta", {})["run_id"] = run_id(results)
    with staged(target, command="card", recheck=lambda: guard_folder(shown, inputs)) as stage:
        stage.run_id = results["meta"]["run_id"]
        write_card_file(results, stage.path / CARD_FILE, card_from=target / CARD_FILE,
                        card_shown=shown / CARD_FILE, **card_options)
    return shown / CARD_FILE
