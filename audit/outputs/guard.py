"""Resolving outputs before any work, against every input the command reads.

See :mod:`audit.outputs` for the rules; this module finds the inputs (:func:`find_inputs`) and
checks an output folder (:func:`guard_folder`) or file (:func:`guard_file`) against them.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError, shown_path
from .fs import real_path, stream_kind
from .layout import MANIFEST, RUN_FILES, read_manifest

#: What a Markdown card may be called.
CARD_SUFFIXES = (".md", ".markdown")
#: The largest card read (a card is a few kB; a README a few hundred).
MAX_CARD_BYTES = 16 * 2**20
_LEWIDI_META = "*_annotators_meta.json"
_TEXT_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")


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
        real = real_path(path)
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
        :func:`audit.ingest.load` takes (not local: nothing to protect).
    spec
        A spec path, dict or :class:`audit.ingest.spec.DatasetSpec`; the pools file it names is
        an input too (read relative to the spec's folder).
    pools
        An annotator -> pool file, or a mapping.
    suite
        An expectation suite path or :class:`audit.suites.suite.Suite`.
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
        real = real_path(path)
        if real.is_dir():
            folders.setdefault(real, f"the {role} folder {shown_path(path)}")
            for root, dirs, names in os.walk(real):
                dirs.sort()
                for name in sorted(names):
                    inner = Path(root) / name
                    files.setdefault(real_path(inner),
                                     f"a file of the {role} folder {shown_path(path)}: "
                                     f"{shown_path(inner)}")
        else:
            files.setdefault(real, f"the {role} {shown_path(path)}")
            if companions:
                for meta in sorted(real.parent.glob(_LEWIDI_META)):
                    files.setdefault(real_path(meta), f"the {role}'s metadata file {meta}")

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
    from ..errors import AuditError

    try:
        from ..ingest.spec import read_spec

        # every file the spec names is an input, wherever it lies: with --allow-outside the
        # loader reads one outside the spec's folder, which must be protected all the same
        parsed = read_spec(spec, allow_outside=True)
    except (AuditError, OSError):
        return None
    name = getattr(parsed, "pools_file", None)
    if not isinstance(name, str):
        return None
    path = Path(name)
    base = getattr(parsed, "base", None)
    return path if path.is_absolute() or base is None else base / path


def _refuse_file_as_folder(real: Path, shown: Path, *, option: str | None = None) -> None:
    """Before anything runs: the output's nearest existing parent must be a folder. Writing
    under a file ('--out notes.txt/report') failed after the audit, as 'notes.txt: File exists'
    or 'notes.txt/report: Not a directory', words that do not say what is wrong."""
    for parent in real.parents:
        if os.path.lexists(parent):
            if not parent.is_dir():
                raise InputError(f"{option + ': ' if option else ''}{shown_path(parent)} is a "
                                 "file, not a folder: give a path in a folder", path=shown)
            return


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
    real = real_path(out)
    if real.exists() and not real.is_dir():
        raise InputError("is a file; give a folder for the outputs", path=shown)
    _refuse_file_as_folder(real, shown)
    if real.parent == real or os.path.ismount(real):
        raise InputError("is a file system root or mount point; outputs replace their folder as "
                         "a whole: give a folder inside it", path=shown)
    cwd = real_path(os.getcwd())
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
        manifest = read_manifest(real / MANIFEST, shown=shown / MANIFEST, foreign=True)
        listed = {name.split("/", 1)[0] for name in manifest["files"]}
    allowed = listed | set(RUN_FILES) | {MANIFEST}
    for entry in sorted(os.listdir(real)):
        if entry not in allowed:
            raise InputError(f"holds {entry!r}, which annotation-audit did not write; the "
                             "outputs replace the whole folder, so give an empty or new folder "
                             f"(or move {entry!r} out)", path=shown)


def guard_file(path, inputs: Inputs, *, option: str, card: bool = False,
               out_folders: Iterable[Path] = ()) -> Path:
    """Resolve a single output file (``--junit``, ``--json``, ``--card``) and refuse it when it
    is an input, lies inside an input folder or an output folder, or (``card``) is not a
    Markdown card (:func:`read_card`).

    Returns
    -------
    Path
        The real path written (a symbolic link is written through to its target and kept);
        a device or pipe (``/dev/stdout``, ``/dev/null``) as given, written to as it is.
    """
    shown = Path(path)
    stream = stream_kind(path)
    if stream == "block":
        raise InputError(f"{option}: is a block device; give a file", path=shown)
    if stream is not None:  # /dev/null, /dev/stdout, a named pipe: written to, not replaced
        if card:
            raise InputError(f"{option}: is not a regular file; a card is updated in place: "
                             "give a Markdown file", path=shown)
        return shown
    real = real_path(path)
    if real.is_dir():
        raise InputError(f"{option}: is a folder; give a file", path=shown)
    _refuse_file_as_folder(real, shown, option=option)
    what = inputs.which(real, card=card)
    if what is not None:
        raise InputError(f"{option}: is {what}; outputs never overwrite an input", path=shown)
    for folder, desc in inputs.folders.items():
        if folder in real.parents and not (card and real.suffix.lower() in CARD_SUFFIXES):
            raise InputError(f"{option}: is inside {desc}; outputs never go into an input "
                             "folder", path=shown)
    for given in out_folders:
        folder = real_path(given)
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
