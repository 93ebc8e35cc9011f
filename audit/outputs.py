"""Where a command's outputs go, and how they get there: never over an input, always as one set.

Three promises, kept here for every command that writes (``run``, ``check``, ``card``,
``export``):

**Never over an input.** A command finds every local file it will read (:func:`find_inputs`:
the source file or every file of a source folder, the spec and the pools file it names, the
``--pools`` file, a LeWiDi dataset's ``*_annotators_meta.json``, the suite, the baseline) and
resolves every output (:func:`guard_folder`, :func:`guard_file`) *before* it reads any data. An
output that is an input — by path, through a symbolic link, or as a hard link to the same file
(``(st_dev, st_ino)``) — is an :class:`audit.errors.InputError` (exit 2) naming both paths; so is
an output folder that holds an input or lies inside an input folder, a folder that is the
current directory or a mount point (outputs replace the folder as a whole), and a ``--junit`` /
``--json`` file inside an input folder or inside the ``--out`` folder.

**One set, all or nothing** (write, then rename, as SQLite and git do). An output folder (``run
--out``, ``check --out``, ``card --out``) is written into a staging folder beside it,
``.OUT.tmp-<pid>-<random>`` on the same file system, with a manifest (:data:`MANIFEST`: the run
id and the SHA-256 of every file), every file and folder flushed to disk, and is then swapped in
with one atomic ``renameat2(RENAME_EXCHANGE)`` (Linux; elsewhere two renames, with a moment in
which OUT is absent but never mixed). The old set is then deleted. A reader, a later run, a
``kill -9`` at any instant or a concurrent run into the same folder (the swap holds an exclusive
``flock`` on the parent folder) sees either the old complete set or the new complete set.
Staging folders left by a killed process are deleted by the next write beside them.

The output folder belongs to annotation-audit: after a command it holds exactly that command's
files and the manifest (``run --no-report`` into a folder that had a report leaves no stale
report behind). A folder holding anything annotation-audit did not write (a name that is neither
in its manifest nor one of :data:`RUN_FILES`) is refused, exit 2 naming the file, rather than
moved aside; ``dataset_card.md`` is the exception that proves the rule: its hand-written text
outside the markers is carried into the new set (:func:`audit.report.write_reports`).
``export`` adds ``judgments/``, ``spec.yaml`` and the manifest to OUT, keeps whatever else is
there, and refuses (exit 2, "already exists") when any of the three is already there; the
manifest is moved in last. Single files (``check --junit`` / ``--json``, ``card --card``) are
written to a temporary file beside them and renamed over the target (:func:`write_text`); a
symbolic link is written through to its target and kept.

**Checked when read back.** :func:`verify_outputs` re-hashes a folder against its manifest and
checks ``results.json``'s ``meta.run_id``: a torn set (no manifest), a file of another run or a
file edited afterwards is an :class:`OutputsError` (exit 2) naming the file that does not match.
It runs wherever the toolkit reads its own outputs back: :func:`audit.results.read`, and every
input of ``run`` / ``check`` / ``card`` / ``export`` that lies in an annotation-audit output folder
(an exported ``OUT/judgments`` with ``OUT/spec.yaml``, a ``--baseline`` that is one;
:func:`verify_inputs`).

The run id (:func:`run_id`) is a digest of what the command computed: the SHA-256 of
``results.json`` as written without the id (for ``export``, of the exported files' digests),
16 hex digits. It is deterministic: the same inputs, options and seed give the same id and the
same bytes, and two runs that differ anywhere have different ids.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import secrets
import shutil
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .errors import InputError

#: The manifest every output folder holds.
MANIFEST = "manifest.json"
RESULTS = "results.json"
#: The files ``run`` writes (``results.json`` alone with ``--no-report``).
RUN_FILES = (RESULTS, "report.html", "dataset_card.md", "croissant_rai.json")
CARD_FILE = "dataset_card.md"
#: What ``export`` adds to its OUT (see :mod:`audit.export`).
EXPORT_NAMES = ("judgments", "spec.yaml")
#: Names annotation-audit writes: found in a folder but not in its manifest, they are left from
#: another run.
OUR_NAMES = RUN_FILES + EXPORT_NAMES + (MANIFEST,)
#: What a Markdown card may be called.
CARD_SUFFIXES = (".md", ".markdown")
#: The largest card and manifest read (a card is a few kB; a manifest lists an export's files).
MAX_CARD_BYTES = 16 * 2**20
MAX_MANIFEST_BYTES = 64 * 2**20
RUN_ID_DIGITS = 16
TOOL = "annotation-audit"

_STAGE = ".tmp-"
_STAGE_NAME = re.compile(r"\.(?P<name>.+)\.tmp-(?P<pid>\d+)-[0-9a-f]{8}")
_LEWIDI_META = "*_annotators_meta.json"
_TEXT_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
_RENAME_NOREPLACE, _RENAME_EXCHANGE = 1, 2
_AT_FDCWD = -100


class OutputsError(InputError):
    """An output folder whose files do not match its manifest: torn (no manifest), mixed (a file
    of another run) or edited after the run. ``path`` is the file that does not match."""


# -- inputs ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Inputs:
    """Every local file and folder a command reads, found before it starts.

    Attributes
    ----------
    given
        ``(role, path as given)`` for every input named on the command line or in a spec.
    files
        Real path (symbolic links resolved) -> description, for every input file, the files
        inside input folders included.
    folders
        Real path -> description, for every input folder.
    ids
        ``(st_dev, st_ino)`` -> real path of every input file: a hard link is the same file.
    """

    given: tuple[tuple[str, Path], ...] = ()
    files: dict[Path, str] = field(default_factory=dict)
    folders: dict[Path, str] = field(default_factory=dict)
    ids: dict[tuple[int, int], Path] = field(default_factory=dict)

    def which(self, path: Path, *, card: bool = False) -> str | None:
        """The description of the input ``path`` is (by real path or hard link), or None.

        With ``card``, a Markdown file inside a source folder is not counted: the dataset card
        beside the data (a Hub repository's ``README.md``) is what ``card --card`` updates.
        """
        real = _real(path)
        found = self.files.get(real)
        if found is None:
            ident = _ident(real)
            if ident is not None and ident in self.ids:
                found = self.files[self.ids[ident]]
        if found is None:
            return None
        if card and real.suffix.lower() in CARD_SUFFIXES and found.startswith("a file of "):
            return None
        return found


def _real(path) -> Path:
    return Path(os.path.realpath(os.fspath(path)))


def _ident(path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None


def _local(value) -> Path | None:
    """``value`` as a local path that exists, or None (a hub name, a URL, a DataFrame, a dict)."""
    if isinstance(value, Path):
        path = value
    elif isinstance(value, str):
        if "://" in value:
            return None
        path = Path(value)
    elif isinstance(value, os.PathLike):
        path = Path(os.fspath(value))
    else:
        return None
    return path if os.path.lexists(path) else None


def find_inputs(source=None, *, spec=None, pools=None, suite=None, baseline=None,
                format: str = "auto", extra: Iterable[tuple[str, object]] = ()) -> Inputs:
    """Every local file a command will read (see the module docstring).

    Parameters
    ----------
    source, baseline
        A dataset: a file, a folder (every file in it, recursively), or anything else
        :func:`audit.load.load` takes (not local: nothing to protect).
    spec
        A spec path, dict or :class:`audit.load.spec.DatasetSpec`; the pools file it names is
        an input too (read relative to the spec's folder).
    pools
        An annotator -> pool file, or a mapping.
    suite
        An expectation suite path or :class:`audit.judge.suite.Suite`.
    format
        With ``"auto"`` or ``"lewidi"``, a LeWiDi dataset's ``*_annotators_meta.json`` beside
        the source is an input.
    extra
        More ``(role, path)`` pairs.
    """
    given: list[tuple[str, Path]] = []
    files: dict[Path, str] = {}
    folders: dict[Path, str] = {}

    def add(role: str, value, *, companions: bool = False) -> None:
        path = _local(value)
        if path is None:
            return
        given.append((role, path))
        real = _real(path)
        if real.is_dir():
            folders.setdefault(real, f"the {role} folder {path}")
            for root, dirs, names in os.walk(real):
                dirs.sort()
                for name in sorted(names):
                    inner = Path(root) / name
                    files.setdefault(_real(inner), f"a file of the {role} folder {path}: {inner}")
        else:
            files.setdefault(real, f"the {role} {path}")
            if companions:
                for meta in sorted(real.parent.glob(_LEWIDI_META)):
                    files.setdefault(_real(meta), f"the {role}'s metadata file {meta}")

    lewidi = format in ("auto", "lewidi")
    add("source", source, companions=lewidi)
    add("baseline", baseline, companions=lewidi)
    spec_path = getattr(spec, "path", spec)
    add("spec", spec_path)
    pools_file = _spec_pools_file(spec)
    if pools_file is not None:
        add("spec's pools file", pools_file)
    add("pools file", pools)
    add("suite", getattr(suite, "path", suite))
    for role, value in extra:
        add(role, value)
    ids = {}
    for real in files:
        ident = _ident(real)
        if ident is not None:
            ids.setdefault(ident, real)
    return Inputs(tuple(given), files, folders, ids)


def _spec_pools_file(spec) -> Path | None:
    """The pools file a spec names, resolved as the loader resolves it; None when it names none
    or cannot be read (the loader then reports why, in its own words)."""
    if spec is None:
        return None
    from .errors import AuditError

    try:
        from .load.spec import read_spec

        parsed = read_spec(spec)
    except (AuditError, OSError):
        return None
    name = getattr(parsed, "pools_file", None)
    if not isinstance(name, str):
        return None
    path = Path(name)
    base = getattr(parsed, "base", None)
    return path if path.is_absolute() or base is None else base / path


# -- resolving outputs -----------------------------------------------------------------------------
def guard_folder(out, inputs: Inputs, *, replace: bool = True,
                 names: Iterable[str] = ()) -> Path:
    """Resolve an output folder and refuse it when writing there could touch an input.

    Parameters
    ----------
    out
        The folder as given.
    inputs
        What the command reads (:func:`find_inputs`).
    replace
        The folder is replaced as a whole (``run``, ``check``, ``card --out``): everything in it
        must be annotation-audit's. ``False`` (``export``): ``names`` are added to it.
    names
        With ``replace=False``, the entries the command adds; any of them already there is
        refused.

    Returns
    -------
    Path
        The folder's real path (a symbolic link to a folder is followed and kept).

    Raises
    ------
    InputError
        Naming the output and the input it would touch, or the file that is not ours.
    """
    shown = Path(out)
    real = _real(out)
    if real.exists() and not real.is_dir():
        raise InputError("is a file; give a folder for the outputs", path=shown)
    if real.parent == real or os.path.ismount(real):
        raise InputError("is a file system root or mount point; outputs replace their folder as "
                         "a whole: give a folder inside it", path=shown)
    cwd = _real(os.getcwd())
    if replace and (cwd == real or real in cwd.parents):
        raise InputError("is (or holds) the current directory; outputs replace their folder as "
                         "a whole: give another folder", path=shown)
    for file, what in inputs.files.items():
        if file == real or real in file.parents:
            raise InputError(f"holds {what}; outputs never go where an input is: give another "
                             "folder", path=shown)
    for folder, what in inputs.folders.items():
        if folder == real or folder in real.parents:
            raise InputError(f"is inside {what}; outputs never go into an input folder: give "
                             "another folder", path=shown)
        if real in folder.parents:
            raise InputError(f"holds {what}; outputs never go where an input is: give another "
                             "folder", path=shown)
    if not real.is_dir():
        return real
    for root, dirs, entries in os.walk(real):
        for name in sorted(entries + dirs):
            inner = Path(root) / name
            what = inputs.which(inner)
            if what is not None:
                raise InputError(f"is {what} (a link to it); outputs never overwrite an input: "
                                 "give another folder", path=shown / inner.relative_to(real))
    if replace:
        _only_ours(real, shown)
    else:
        for name in names:
            if os.path.lexists(real / name):
                raise InputError("already exists; remove it or choose another OUT",
                                 path=shown / name)
    return real


def _only_ours(real: Path, shown: Path) -> None:
    """Refuse a folder holding anything annotation-audit did not write (see module docstring)."""
    listed: set[str] = set()
    if os.path.lexists(real / MANIFEST):
        manifest = _read_manifest(real / MANIFEST, shown=shown / MANIFEST, foreign=True)
        listed = {name.split("/", 1)[0] for name in manifest["files"]}
    allowed = listed | set(RUN_FILES) | {MANIFEST}
    for entry in sorted(os.listdir(real)):
        if entry not in allowed:
            raise InputError(f"holds {entry!r}, which annotation-audit did not write; the outputs "
                             "replace the whole folder, so give an empty or new folder (or move "
                             f"{entry!r} out)", path=shown)


def guard_file(path, inputs: Inputs, *, option: str, card: bool = False,
               out_folders: Iterable[Path] = ()) -> Path:
    """Resolve a single output file (``--junit``, ``--json``, ``--card``) and refuse it when it
    is an input, lies inside an input folder or an output folder, or (``card``) is not a
    Markdown card (:func:`read_card`).

    Returns
    -------
    Path
        The real path written (a symbolic link is written through to its target and kept).
    """
    shown = Path(path)
    real = _real(path)
    if real.is_dir():
        raise InputError(f"{option}: is a folder; give a file", path=shown)
    what = inputs.which(real, card=card)
    if what is not None:
        raise InputError(f"{option}: is {what}; outputs never overwrite an input", path=shown)
    for folder, desc in inputs.folders.items():
        if folder in real.parents and not (card and real.suffix.lower() in CARD_SUFFIXES):
            raise InputError(f"{option}: is inside {desc}; outputs never go into an input "
                             "folder", path=shown)
    for given in out_folders:
        folder = _real(given)
        if folder == real or folder in real.parents:
            raise InputError(f"{option}: is inside the output folder {given}, which is "
                             "replaced as a whole; give a path outside it", path=shown)
    if card:
        if real.suffix.lower() not in CARD_SUFFIXES:
            raise InputError(f"{option}: is not a Markdown card (a card is named *.md or "
                             "*.markdown); nothing was written", path=shown)
        if os.path.lexists(real):
            read_card(real, shown=shown)
    return real


def read_card(path, *, shown=None) -> str:
    """The text of an existing Markdown card, or :class:`InputError` when it is not one.

    A card is a regular file of at most :data:`MAX_CARD_BYTES`, UTF-8 text (a byte-order mark
    allowed) without NUL or other control characters than tab, newline, carriage return and
    form feed: what a Markdown file is, and what a CSV, Parquet or binary file is not.
    """
    shown = path if shown is None else shown
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise InputError("is not a regular file; a card is a Markdown text file", path=shown)
    if st.st_size > MAX_CARD_BYTES:
        raise InputError(f"is {st.st_size:,} bytes; a Markdown card is at most "
                         f"{MAX_CARD_BYTES:,}", path=shown)
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise InputError(f"is not UTF-8 text (byte {err.start}); a card is a Markdown text "
                         "file, nothing was written", path=shown) from None
    bad = _TEXT_CONTROLS.search(text)
    if bad:
        raise InputError(f"holds the control character {bad.group()!r} at character "
                         f"{bad.start()}; a card is a Markdown text file, nothing was written",
                         path=shown)
    return text


# -- writing ---------------------------------------------------------------------------------------
def write_text(path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically: a temporary file beside it, flushed to
    disk, renamed over it. The file keeps its permissions; a symbolic link is written through
    to its target. Returns ``path``."""
    return write_bytes(path, text.encode("utf-8"))


def write_bytes(path, data: bytes) -> Path:
    """:func:`write_text` for bytes."""
    final = _real(path)
    final.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(os.stat(final).st_mode)
    except FileNotFoundError:
        mode = None
    tmp = final.parent / f".{final.name}{_STAGE}{os.getpid()}-{secrets.token_hex(4)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, final)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(final.parent)
    return Path(path)


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
    stage = Stage(target.parent / f".{target.name}{_STAGE}{os.getpid()}-{secrets.token_hex(4)}",
                  target, command, replace)
    os.mkdir(stage.path)
    try:
        yield stage
        _commit(stage, recheck)
    finally:
        if os.path.lexists(stage.path):
            shutil.rmtree(stage.path, ignore_errors=True)


def _commit(stage: Stage, recheck) -> None:
    files = write_manifest(stage.path, command=stage.command, run_id=stage.run_id)
    _fsync_tree(stage.path)
    parent, target = stage.target.parent, stage.target
    with _locked(parent):
        _remove_stale(parent, target.name)
        if recheck is not None:
            recheck()
        if stage.replace:
            if os.path.lexists(target):
                with contextlib.suppress(OSError):
                    os.chmod(stage.path, stat.S_IMODE(os.stat(target).st_mode))
                _exchange(stage.path, target)  # stage.path now holds the old set
            else:
                _rename_noreplace(stage.path, target)
        else:
            tops = sorted({name.split("/", 1)[0] for name in files} - {MANIFEST})
            for name in tops + [MANIFEST]:
                if os.path.lexists(target / name):
                    raise InputError("already exists; remove it or choose another OUT",
                                     path=target / name)
            if not os.path.lexists(target):
                _rename_noreplace(stage.path, target)
            else:
                for name in tops + [MANIFEST]:  # the manifest last: a reader sees all or none
                    _rename_noreplace(stage.path / name, target / name)
        _fsync_dir(parent)


def write_manifest(folder, *, command: str, run_id: str | None = None) -> dict:
    """Hash every file in ``folder`` and write :data:`MANIFEST` there; return the file table.

    ``run_id`` None (``export``) is the digest of the file table (:func:`files_run_id`).
    """
    folder = Path(folder)
    files = {}
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        for name in sorted(names):
            path = Path(root) / name
            rel = path.relative_to(folder).as_posix()
            if rel == MANIFEST:
                continue
            files[rel] = {"sha256": _sha256(path), "bytes": path.stat().st_size}
    from . import __version__

    files = dict(sorted(files.items()))
    manifest = {"tool": TOOL, "version": __version__, "command": command,
                "run_id": run_id if run_id is not None else files_run_id(files),
                "files": files}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n",
                                   encoding="utf-8")
    return files


def run_id(results: dict) -> str:
    """The run id of a result dict: the first :data:`RUN_ID_DIGITS` hex digits of the SHA-256
    of its ``results.json`` text without ``meta.run_id`` (see the module docstring)."""
    from .results import dumps

    meta = {k: v for k, v in (results.get("meta") or {}).items() if k != "run_id"}
    text = dumps({**results, "meta": meta})
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:RUN_ID_DIGITS]


def files_run_id(files: dict) -> str:
    """The run id of a set of files without a result dict (``export``): a digest of their
    names and SHA-256s."""
    text = "".join(f"{name}\0{entry['sha256']}\n" for name, entry in sorted(files.items()))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:RUN_ID_DIGITS]


def write_run(results: dict, out, *, inputs: Inputs | None = None, report: bool = True,
              command: str = "run", **card_options) -> Path:
    """Write one run's set into ``out`` atomically: ``results.json`` (with ``meta.run_id``),
    with ``report`` the files of :func:`audit.report.write_reports`, and the manifest.

    ``results["meta"]["run_id"]`` is set in place. ``out`` is guarded (:func:`guard_folder`)
    against ``inputs`` before anything is written and again under the swap's lock.
    """
    from .results import dumps

    inputs = inputs if inputs is not None else Inputs()
    shown = Path(out)
    target = guard_folder(shown, inputs)
    results.setdefault("meta", {})["run_id"] = run_id(results)
    with staged(target, command=command,
                recheck=lambda: guard_folder(shown, inputs)) as stage:
        stage.run_id = results["meta"]["run_id"]
        write_text(stage.path / RESULTS, dumps(results))
        if report:
            from .report import write_reports

            write_reports(results, stage.path, card_from=target / CARD_FILE, card_shown=shown
                          / CARD_FILE, **card_options)
    return shown


def write_card_set(results: dict, out, *, inputs: Inputs | None = None,
                   **card_options) -> Path:
    """``card --out``: ``out/dataset_card.md`` (updated from the card there) and the manifest,
    as one set replacing ``out``; returns the card's path."""
    from .report import write_card_file

    inputs = inputs if inputs is not None else Inputs()
    shown = Path(out)
    target = guard_folder(shown, inputs)
    results.setdefault("meta", {})["run_id"] = run_id(results)
    with staged(target, command="card", recheck=lambda: guard_folder(shown, inputs)) as stage:
        stage.run_id = results["meta"]["run_id"]
        write_card_file(results, stage.path / CARD_FILE, card_from=target / CARD_FILE,
                        card_shown=shown / CARD_FILE, **card_options)
    return shown / CARD_FILE


# -- verifying -------------------------------------------------------------------------------------
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
        manifest = _parse_manifest(manifest_bytes, mpath)
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
        real = _real(path)
        folder = real if real.is_dir() else real.parent
        for candidate in [folder, *folder.parents][:levels]:
            mpath = candidate / MANIFEST
            if candidate in done or not mpath.is_file():
                continue
            try:
                manifest = _read_manifest(mpath, foreign=True)
            except InputError:
                continue  # not ours: a folder may hold any manifest.json
            rel = "" if real == candidate else real.relative_to(candidate).as_posix()
            if rel == "" or any(n == rel or n.startswith(rel + "/") for n in manifest["files"]):
                verify_outputs(candidate)
                done.add(candidate)


def _read_manifest(path: Path, *, shown=None, foreign: bool = False) -> dict:
    """Read and check a manifest; ``foreign``: one not written by annotation-audit is a plain
    :class:`InputError` (a folder that is not ours), else an :class:`OutputsError`."""
    shown = path if shown is None else shown
    error = InputError if foreign else OutputsError
    try:
        if os.path.islink(path) or not path.is_file():
            raise ValueError("not a regular file")
        if path.stat().st_size > MAX_MANIFEST_BYTES:
            raise ValueError(f"larger than {MAX_MANIFEST_BYTES:,} bytes")
        data = path.read_bytes()
    except (OSError, ValueError) as err:
        raise error(f"is not an annotation-audit manifest ({err})", path=shown) from None
    return _parse_manifest(data, shown, error=error)


def _parse_manifest(data: bytes, shown, *, error=None) -> dict:
    error = OutputsError if error is None else error
    try:
        manifest = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError) as err:
        raise error(f"is not an annotation-audit manifest ({err})", path=shown) from None
    if not (isinstance(manifest, dict) and manifest.get("tool") == TOOL
            and isinstance(manifest.get("run_id"), str)
            and isinstance(manifest.get("files"), dict)):
        raise error("is not an annotation-audit manifest (no tool, run_id and files)",
                    path=shown)
    for name, entry in manifest["files"].items():
        parts = name.split("/")
        if (name.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\\" in name
                or "\0" in name or not isinstance(entry, dict)
                or not isinstance(entry.get("sha256"), str)):
            raise error(f"lists {name!r}, which is not a file inside its folder", path=shown)
    return manifest


# -- file system primitives ------------------------------------------------------------------------
def _sha256(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _fsync_dir(folder) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some file systems cannot sync a folder
        pass
    finally:
        os.close(fd)


def _fsync_tree(folder: Path) -> None:
    for root, dirs, names in os.walk(folder):
        for name in names:
            fd = os.open(Path(root) / name, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        _fsync_dir(root)


@contextlib.contextmanager
def _locked(folder: Path):
    """An exclusive ``flock`` on ``folder`` (POSIX; elsewhere no lock)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_stale(parent: Path, name: str) -> None:
    """Delete staging folders and files beside ``name`` left by processes that no longer run."""
    for entry in os.listdir(parent):
        m = _STAGE_NAME.fullmatch(entry)
        if m and m.group("name") == name and not _alive(int(m.group("pid"))):
            path = parent / entry
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(path)


def _renameat2(src: Path, dst: Path, flags: int) -> bool:
    """``renameat2(2)``; False when this system or file system does not have it."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        call = libc.renameat2
    except (OSError, AttributeError):
        return False
    call.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                     ctypes.c_uint]
    if call(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), flags) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(src), None, str(dst))


def _exchange(new: Path, target: Path) -> None:
    """Swap two folders atomically; after it ``new`` holds the old content."""
    if _renameat2(new, target, _RENAME_EXCHANGE):
        return
    old = new.parent / f".{target.name}{_STAGE}{os.getpid()}-{secrets.token_hex(4)}"
    os.rename(target, old)
    os.rename(new, target)
    os.rename(old, new)


def _rename_noreplace(src: Path, dst: Path) -> None:
    if _renameat2(src, dst, _RENAME_NOREPLACE):
        return
    if os.path.lexists(dst):
        raise FileExistsError(errno.EEXIST, "already exists", str(dst))
    os.rename(src, dst)
