"""File-system steps of writing outputs: atomic single files, flushing, the swap, the lock.

A set is swapped in with ``renameat2(RENAME_EXCHANGE)`` (Linux >= 3.15, glibc >= 2.28, on
ext4, xfs, btrfs, tmpfs and most local file systems): one system call, after which the name
holds the new folder and the old one is at the staging name. Where it is missing, two
``rename`` calls do the same with a moment in which the name is absent (never a mix).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import secrets
import shutil
import stat
from pathlib import Path

#: Staging folders and temporary files: ``.<name>.tmp-<pid>-<8 hex digits>`` beside the target.
STAGE = ".tmp-"
STAGE_NAME = re.compile(r"\.(?P<name>.+)\.tmp-(?P<pid>\d+)-[0-9a-f]{8}")
_RENAME_NOREPLACE, _RENAME_EXCHANGE = 1, 2
_AT_FDCWD = -100


def real_path(path) -> Path:
    """``path`` with every symbolic link resolved (what is really read or written)."""
    return Path(os.path.realpath(os.fspath(path)))


#: The longest file name most file systems take (ext4, xfs, btrfs, tmpfs, APFS: 255 bytes).
NAME_MAX = 255
#: What a staging name adds to its target's name: '.', '.tmp-', a pid (at most 2**22 on
#: Linux, 7 digits; 10 allowed), '-' and 8 hex digits.
_STAGE_EXTRA = 1 + len(STAGE) + 10 + 1 + 8


def stage_stem(name: str) -> str:
    """The part of ``name`` a staging name holds: ``name`` itself, or, when the staging name
    would pass :data:`NAME_MAX` (an output named with more than 230 bytes, a legal name that could
    not be written), its first bytes and a digest of the whole, so two long names stay apart."""
    raw = os.fsencode(name)
    if len(raw) + _STAGE_EXTRA <= NAME_MAX:
        return name
    digest = hashlib.sha256(raw).hexdigest()[:12]
    head = raw[:NAME_MAX - _STAGE_EXTRA - len(digest) - 1]
    return os.fsdecode(head) + "~" + digest  # a character cut in two stays its bytes


def stage_name(target: Path) -> Path:
    """A fresh staging path beside ``target`` (pid and random digits: never two alike)."""
    return (target.parent
            / f".{stage_stem(target.name)}{STAGE}{os.getpid()}-{secrets.token_hex(4)}")


def write_text(path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically: a temporary file beside it, flushed to
    disk, renamed over it. The file keeps its permissions; a symbolic link is written through
    to its target. Returns ``path``."""
    return write_bytes(path, text.encode("utf-8"))


def stream_kind(path) -> str | None:
    """``"stream"`` for an existing character device, FIFO or socket (``/dev/null``,
    ``/dev/stdout``, a named pipe): written as it is, never replaced; ``"block"`` for a block
    device (never written); None for anything else (a regular file, a folder, nothing)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        return "stream"
    return "block" if stat.S_ISBLK(mode) else None


def write_bytes(path, data: bytes) -> Path:
    """:func:`write_text` for bytes. A device or pipe (:func:`stream_kind`: ``--json
    /dev/stdout``, ``--junit /dev/null``) is written to as it is: replacing it by a temporary
    file renamed over it, as a file is, turned ``/dev/null`` into a regular file (as root) and
    a named pipe into a file, and ``/dev/stdout`` resolved to a name that does not exist."""
    kind = stream_kind(path)
    if kind == "block":
        raise OSError(errno.EINVAL, "is a block device; give a file", os.fspath(path))
    if kind == "stream":
        with open(path, "wb") as fh:
            fh.write(data)
        return Path(path)
    final = real_path(path)
    final.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(final.parent, final.name)
    try:
        mode = stat.S_IMODE(os.stat(final).st_mode)
    except FileNotFoundError:
        mode = None
    tmp = stage_name(final)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies
    except OSError as err:  # a folder we may not write in: named as the file asked for
        raise _naming(err, path) from err
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, final)
    except BaseException as err:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        # a write or flush (a full disk) names no file, the rest the temporary one
        if isinstance(err, OSError) and (err.filename is None
                                         or os.fsdecode(err.filename) == os.fspath(tmp)):
            raise _naming(err, path) from err
        raise
    fsync_dir(final.parent)
    return Path(path)


def _naming(err: OSError, path) -> OSError:
    """``err`` naming ``path``, the file the caller asked for (not its temporary file)."""
    reason = err.strerror or (os.strerror(err.errno) if err.errno else str(err))
    return OSError(err.errno, reason, os.fspath(path))


def sha256_file(path) -> str:
    """The SHA-256 of a file, hex."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


class Digests:
    """SHA-256 digests of files, computed ahead in ``pool`` (a
    :class:`concurrent.futures.Executor`): :meth:`start` submits a file, calling the object
    returns its digest (waiting for it; a file never started is hashed there and then), as
    :func:`sha256_file` would. hashlib leaves the interpreter's lock while it hashes, so a
    large source file is hashed beside the work that needs its digest later."""

    def __init__(self, pool):
        self._pool = pool
        self._pending = {}

    def start(self, paths) -> Digests:
        for path in paths:
            key = os.fspath(path)
            if key not in self._pending:
                self._pending[key] = self._pool.submit(sha256_file, path)
        return self

    def __call__(self, path) -> str:
        pending = self._pending.get(os.fspath(path))
        return pending.result() if pending is not None else sha256_file(path)


def fsync_dir(folder) -> None:
    """Flush a folder's entries (a rename in it) to disk, where the file system can."""
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


def fsync_tree(folder: Path) -> None:
    """Flush every file and folder under ``folder`` to disk (before it is swapped in)."""
    for root, dirs, names in os.walk(folder):
        for name in names:
            fd = os.open(Path(root) / name, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        fsync_dir(root)


@contextlib.contextmanager
def locked(folder: Path):
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


def remove_stale(parent: Path, name: str) -> None:
    """Delete staging folders and temporary files of ``name`` left by processes that no longer
    run (a ``kill -9`` mid-write). A process id reused since is taken as alive: the leftover
    stays until the next write after that process ends."""
    for entry in os.listdir(parent):
        m = STAGE_NAME.fullmatch(entry)
        if m and m.group("name") == stage_stem(name) and not _alive(int(m.group("pid"))):
            path = parent / entry
            if os.path.isdir(path) and not os.path.islink(path):
                remove_tree(path)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(path)


def remove_tree(path) -> None:
    """Remove a staging folder (ours): a set written into a folder made read-only takes its
    mode, so the old set moved out by the next swap is read-only too, and removing it as a user
    (root passes) failed without a word, leaving a ``.<name>.tmp-*`` folder per run. Folders in
    the tree are made writable and the removal tried again; what still resists is left."""
    if os.path.islink(path):  # what a swap moved out: a link named --out that led nowhere
        with contextlib.suppress(OSError):
            os.unlink(path)
        return
    shutil.rmtree(path, ignore_errors=True)
    if not os.path.lexists(path):
        return
    for root, dirs, _ in os.walk(path):
        for folder in [root, *(os.path.join(root, d) for d in dirs)]:
            if not os.path.islink(folder):
                with contextlib.suppress(OSError):
                    os.chmod(folder, stat.S_IMODE(os.lstat(folder).st_mode) | stat.S_IRWXU)
    shutil.rmtree(path, ignore_errors=True)


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


def exchange(new: Path, target: Path) -> None:
    """Swap two folders atomically; after it ``new`` holds the old content."""
    if _renameat2(new, target, _RENAME_EXCHANGE):
        return
    old = stage_name(target)
    os.rename(target, old)
    os.rename(new, target)
    os.rename(old, new)


def rename_noreplace(src: Path, dst: Path) -> None:
    """Rename ``src`` to ``dst``; :class:`FileExistsError` when ``dst`` exists."""
    if _renameat2(src, dst, _RENAME_NOREPLACE):
        return
    if os.path.lexists(dst):
        raise FileExistsError(errno.EEXIST, "already exists", str(dst))
    os.rename(src, dst)
