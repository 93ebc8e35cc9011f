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


#: Byte-order marks of the wide Unicode encodings (UTF-32 first: its little-endian mark begins
#: with UTF-16's), as a spreadsheet's "Unicode text" export or PowerShell's ``>`` writes them.
_WIDE_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32 (little-endian)"),
              (codecs.BOM_UTF32_BE, "UTF-32 (big-endian)"),
              (codecs.BOM_UTF16_LE, "UTF-16 (little-endian)"),
              (codecs.BOM_UTF16_BE, "UTF-16 (big-endian)"))


def wide_text_error(path: Path) -> InputError | None:
    r"""The InputError for a text file in UTF-16 or UTF-32 rather than UTF-8, else None.

    Told by a byte-order mark, or by NUL bytes in the first line (ASCII text in UTF-16 is every
    other byte NUL; a UTF-8 header never holds one). Such a file is not UTF-8 even where its
    bytes happen to decode as UTF-8 (NUL is valid UTF-8), so without this check it reads as
    garbled column names (``i\x00t\x00e\x00m``) and fails far from its cause."""
    with open(path, "rb") as fh:
        head = fh.readline(CHUNK_BYTES)
    for bom, name in _WIDE_BOMS:
        if head.startswith(bom):
            return InputError(f"{name} text (it starts with that byte-order mark), not UTF-8; "
                              "save the file as UTF-8", path=str(path))
    nul = head.find(b"\x00")
    if nul >= 0:
        return InputError(f"not UTF-8 text: NUL bytes in the first line (byte offset {nul}), "
                          "as UTF-16 or UTF-32 text without a byte-order mark has; save the "
                          "file as UTF-8", path=str(path))
    return None


def utf8_error(path: Path) -> InputError:
    """The InputError naming the first byte of ``path`` that is not UTF-8 (offset and line), or
    saying that the file is UTF-16 / UTF-32 (:func:`wide_text_error`)."""
    wide = wide_text_error(path)
    if wide is not None:
        return wide
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
