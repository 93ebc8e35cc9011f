"""Bytes into text: UTF-8 decoding whose failure names the file, the byte offset and the line.

Files are read in chunks of :data:`CHUNK_BYTES`, so a bad byte far into a large file is found
without holding the file twice in memory. Input files are only ever opened for reading.
"""

from __future__ import annotations

import codecs
import re
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


#: Magic bytes of the compressed formats a table is commonly shipped in, their name and the
#: command that unpacks them (bzip2's: ``BZh``, the block size digit and the first block's
#: magic, so that no text header starting ``BZh`` is taken for one).
_COMPRESSED = ((re.compile(re.escape(b"\x1f\x8b")), "a gzip-compressed", "gunzip FILE"),
               (re.compile(re.escape(b"PK\x03\x04")), "a zip", "unzip FILE"),
               (re.compile(b"BZh[1-9]1AY&SY"), "a bzip2-compressed", "bunzip2 FILE"),
               (re.compile(re.escape(b"\xfd7zXZ\x00")), "an xz-compressed", "unxz FILE"),
               (re.compile(re.escape(b"\x28\xb5\x2f\xfd")), "a zstd-compressed", "unzstd FILE"))


def text_encoding_error(path: Path) -> InputError | None:
    r"""The InputError for a text file that is compressed, or in UTF-16 or UTF-32 rather than
    UTF-8, else None.

    Compression is told by the format's magic bytes (gzip, zip, bzip2, xz, zstd: a
    ``.csv.gz`` is not read, and its bytes would otherwise be reported as bad UTF-8 or as
    NULs); the wide encodings by a byte-order mark, or by NUL bytes in the first line (ASCII
    text in UTF-16 is every other byte NUL; a UTF-8 header never holds one). Such a file is not
    UTF-8 even where its bytes happen to decode as UTF-8 (NUL is valid UTF-8), so without this
    check it reads as garbled column names (``i\x00t\x00e\x00m``) and fails far from its
    cause."""
    with open(path, "rb") as fh:
        head = fh.readline(CHUNK_BYTES)
    for magic, name, tool in _COMPRESSED:
        if magic.match(head):
            if path.name.lower().endswith((".tar.gz", ".tgz")):
                name, tool = "a gzip-compressed tar", "tar -xzf FILE"
            if (sheet := _zipped_spreadsheet(path) if name == "a zip" else None) is not None:
                how = ("rename it to end in .xlsx, how a workbook is read" if "Excel" in sheet
                       else "save it as an Excel workbook (.xlsx) or as CSV UTF-8")
                return InputError(f"{sheet} (a zip archive), not text: {how}", path=str(path))
            return InputError(f"{name} file, not text: decompress it first ({tool}) and "
                              "give the file it holds", path=str(path))
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


def utf8_error(path: Path, *, bare_cr: bool = False) -> InputError:
    """The InputError naming the first byte of ``path`` that is not UTF-8 (offset and line), or
    saying that the file is compressed or UTF-16 / UTF-32 (:func:`text_encoding_error`).
    Lines end at ``\\n``; with ``bare_cr`` (a delimited text file) at a lone ``\\r`` too, as
    its readers end them (:func:`line_breaks`)."""
    wide = text_encoding_error(path)
    if wide is not None:
        return wide
    breaks = line_breaks if bare_cr else (lambda data: data.count(b"\n"))
    decoder = codecs.getincrementaldecoder("utf-8")()
    consumed = lines = 0
    after_cr = False  # the last chunk ended with \r: a \n starting this one ends no line
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK_BYTES):
            pending = len(decoder.getstate()[0])   # bytes of a character split across chunks
            split = bare_cr and after_cr and chunk.startswith(b"\n")
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as err:
                offset = consumed - pending + err.start
                line = lines + breaks(chunk[:max(0, err.start - pending)]) - split + 1
                return InputError(f"not UTF-8 text: invalid byte at byte offset {offset} "
                                  f"(line {line}); {_save_as_utf8(path, offset)}",
                                  path=str(path))
            consumed += len(chunk)
            lines += breaks(chunk) - split
            after_cr = chunk.endswith(b"\r")
    return InputError(f"not UTF-8 text: the file ends inside a multi-byte character "
                      f"(byte offset {consumed - len(decoder.getstate()[0])})", path=str(path))


def line_breaks(data: bytes) -> int:
    """The line breaks in ``data`` as the readers of delimited text (pyarrow, pandas, the
    ``csv`` module) end lines: each ``\\n``, ``\\r\\n`` and lone ``\\r`` (the line end of an
    old Mac, and of some Excel exports)."""
    return data.count(b"\n") + data.count(b"\r") - data.count(b"\r\n")


def _save_as_utf8(path: Path, offset: int) -> str:
    """How to make the file UTF-8, naming the byte at ``offset`` as Windows-1252 reads it when
    it is a letter or sign there: Excel's "CSV (Comma delimited)" writes that encoding (``ë`` as
    the byte 0xEB), its "CSV UTF-8" does not. A hint, not a reading: the file is not decoded."""
    with open(path, "rb") as fh:
        fh.seek(offset)
        byte = fh.read(1)
    try:
        shown = byte.decode("cp1252")
    except UnicodeDecodeError:
        shown = ""
    if not shown or not shown.isprintable() or shown.isspace():
        return "save the file as UTF-8"
    return (f"the byte 0x{byte[0]:02X} is {shown!r} in Windows-1252, the encoding of Excel's "
            "'CSV (Comma delimited)': save it as 'CSV UTF-8' instead, or convert it "
            "(iconv -f cp1252 -t utf-8 FILE > NEW)")


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


def first_line(path: Path, *, bare_cr: bool = False) -> str:
    """The file's first line that is not blank (within its first :data:`CHUNK_BYTES`),
    stripped; bad bytes replaced, since it is only a cheap look at a header. Blank lines before
    it are passed over, as the readers pass over them (pyarrow and pandas before a CSV / TSV
    header, :func:`audit.ingest.readers.read_jsonl` anywhere): a file starting with an empty
    line is read, so its columns must be seen. Lines end at ``\\n``; with ``bare_cr`` (a
    delimited text file) at a lone ``\\r`` too, as its readers end them: a file whose lines
    end in ``\\r`` alone is not one line."""
    with open(path, "rb") as fh:
        left, start = CHUNK_BYTES, True
        while left > 0 and (raw := fh.readline(left)):
            left -= len(raw)
            text = raw.decode("utf-8-sig" if start else "utf-8", errors="replace")
            start = False
            for part in text.split("\r") if bare_cr else (text,):
                if part.strip():
                    return part.strip()
    return ""


def _zipped_spreadsheet(path: Path) -> str | None:
    """What a zip file is when it is a spreadsheet (:func:`.workbooks.zipped_spreadsheet`)."""
    import zipfile

    from .workbooks import zipped_spreadsheet

    try:
        with zipfile.ZipFile(path) as archive:
            return zipped_spreadsheet(archive.namelist())
    except (zipfile.BadZipFile, OSError):
        return None
