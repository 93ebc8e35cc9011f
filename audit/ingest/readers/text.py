"""Bytes into text: UTF-8 decoding whose failure names the file, the byte offset and the line.

Files are read in chunks of :data:`CHUNK_BYTES`, so a bad byte far into a large file is found
without holding the file twice in memory. Input files are only ever opened for reading.
"""

from __future__ import annotations

import codecs
from pathlib import Path

from ...errors import InputError
from ..sources import existing_path

#: Bytes read at a time when a file is scanned (for a bad byte, a first line, a first record).
CHUNK_BYTES = 1 << 20


def utf8_error(path: Path) -> InputError:
    """The InputError naming the first byte of ``path`` that is not UTF-8 (offset and line)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    consumed = lines = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK_BYTES):
            pending = len(decoder.getstate()[0])   # bytes of a character split across chunks
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as err:
                offset = consumed - pending + err.start
                line = lines + chunk[:max(0, err.start - pending)].count(b"\n") + 1
                return InputError(f"not UTF-8 text: invalid byte at byte offset {offset} "
                                  f"(line {line}); save the file as UTF-8", path=str(path))
            consumed += len(chunk)
            lines += chunk.count(b"\n")
    return InputError(f"not UTF-8 text: the file ends inside a multi-byte character "
                      f"(byte offset {consumed - len(decoder.getstate()[0])})", path=str(path))


def is_utf8(path: Path) -> bool:
    """Whether the whole file decodes as UTF-8 (read in chunks)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(CHUNK_BYTES):
                decoder.decode(chunk)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def read_text(path) -> str:
    """The whole file as text; non-UTF-8 bytes -> InputError naming the byte offset."""
    path = existing_path(path)
    if path.is_dir():
        raise InputError("is a folder, expected a file", path=str(path))
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise utf8_error(path) from None


def first_line(path: Path) -> str:
    """The file's first line (at most :data:`CHUNK_BYTES`), stripped; bad bytes replaced, since
    it is only a cheap look at a header."""
    with open(path, "rb") as fh:
        raw = fh.readline(CHUNK_BYTES)
    return raw.decode("utf-8-sig", errors="replace").strip()
