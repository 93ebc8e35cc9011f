"""JSON and JSON Lines files, with every failure an InputError that names the place.

* JSON: invalid or truncated text names the file, line and column; trailing commas before ``}``
  or ``]`` (LeWiDi 2025's annotator-metadata files) are tolerated. Nesting deeper than Python's
  JSON decoder follows (:func:`json_depth_limit`, about 1,000 levels: the interpreter's
  recursion limit) is an InputError naming the file and the limit, not a ``RecursionError``.
* JSON Lines: read line by line; a line longer than :data:`MAX_JSONL_LINE_BYTES` (64 MiB) is an
  InputError naming the file, the line and the limit, found before the line is decoded.
* JSON arrays of records and JSON Lines keep their own types (nested values included).
* A key repeated within one object (``{"label": "A", "label": "B"}``) is an InputError naming
  the key (and the line): JSON parsers keep one of the two values without a word (RFC 8259,
  section 4: names "SHOULD be unique", behaviour otherwise unpredictable), so a judgment's
  second label would be lost. Found cheaply (:func:`loads`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from ...errors import InputError, join_names
from ..sources import existing_path
from .text import CHUNK_BYTES, read_text, utf8_error

#: Longest line of a JSON Lines file (bytes, without its newline). One record of annotation data
#: is a few kilobytes; a MultiPref row with four long responses is under 100 KB.
MAX_JSONL_LINE_BYTES = 64 * 1024 * 1024
# A JSON string literal, or a comma whose next non-blank character closes an object or array.
_STRING_OR_TRAILING_COMMA = re.compile(r'"(?:[^"\\]|\\.)*"|,(?=\s*[}\]])', re.DOTALL)


def json_depth_limit() -> int:
    """The nesting depth beyond which :func:`json.loads` raises ``RecursionError``: about the
    interpreter's recursion limit (:func:`sys.getrecursionlimit`, 1,000 by default), less the
    frames already in use."""
    import sys

    return sys.getrecursionlimit()


def too_deep(path, where: str = "") -> InputError:
    """The InputError for JSON nested deeper than :func:`json_depth_limit`."""
    return InputError(f"JSON nested too deeply{where}: Python's JSON decoder follows at most "
                      f"about {json_depth_limit():,} levels of nested arrays and objects (the "
                      "interpreter's recursion limit); annotation data nests a few levels",
                      path=str(path))


#: The end of a key: a closing quote, blanks, a colon. Every key of a JSON text ends in one, so
#: their number bounds the number of keys (strings holding ``":`` add more, never fewer).
_KEY_END = re.compile(r'"\s*:')


class _RepeatedKey(ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _unique_pairs(pairs: list) -> dict:
    record = dict(pairs)
    if len(record) != len(pairs):
        seen = set()
        raise _RepeatedKey(next(k for k, _ in pairs if k in seen or seen.add(k)))
    return record


_CHECKING = json.JSONDecoder(object_pairs_hook=_unique_pairs)


def loads(text: str, *, path, where: str = ""):
    """:func:`json.loads`, with nesting too deep for the decoder an InputError (:func:`too_deep`)
    and a key repeated within an object an InputError naming it; a
    :class:`json.JSONDecodeError` is left to the caller.

    A flat record whose keys number as many as the colons in its text, or as the key ends
    (:data:`_KEY_END`), the common JSON Lines line, cannot repeat one (each key is followed by
    a colon) and is returned at once; anything else is
    decoded a second time with a decoder that checks every object's keys (about twice the
    decoding time, paid by nested records and whole JSON files only)."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise too_deep(path, where) from None
    if not isinstance(data, (dict, list)) or (isinstance(data, dict) and (
            len(data) == text.count(":") or len(data) == len(_KEY_END.findall(text)))):
        return data
    try:
        _CHECKING.decode(text)
    except _RepeatedKey as err:
        raise InputError(f"key {err.key!r} is repeated within one JSON object{where}; a JSON "
                         "reader keeps only one of its values, so give each key once",
                         path=str(path)) from None
    except RecursionError:
        raise too_deep(path, where) from None
    return data


def parse_json(text: str, *, path) -> object:
    """Parse JSON text; tolerate trailing commas; errors name the file, line and column."""
    try:
        return loads(text, path=path)
    except json.JSONDecodeError as err:
        first = err
    if text[:first.pos].rstrip().endswith(","):      # a trailing comma: LeWiDi 2025 metadata
        try:
            return loads(_strip_trailing_commas(text), path=path)
        except json.JSONDecodeError:
            pass
    stripped = text.rstrip()
    truncated = first.pos >= len(stripped) or not stripped.endswith(("]", "}"))
    hint = " (the file looks truncated: it does not end with ']' or '}')" if truncated else ""
    raise InputError(f"invalid JSON at line {first.lineno}, column {first.colno}: "
                     f"{first.msg}{hint}", path=str(path)) from None


def _strip_trailing_commas(text: str) -> str:
    return _STRING_OR_TRAILING_COMMA.sub(lambda m: "" if m.group(0) == "," else m.group(0), text)


def read_json(path) -> object:
    """A JSON file as Python objects; see :func:`parse_json` for the errors."""
    return parse_json(read_text(path), path=path)


def read_jsonl(path) -> pd.DataFrame:
    """A JSON Lines file as a frame, one row per line (blank lines skipped); nested values kept.

    Lines end at ``\\n`` only (the JSON Lines rule): U+2028, U+0085 and the other breaks that
    :meth:`str.splitlines` splits on are legal inside a JSON string written unescaped. The file
    is read one line at a time; a line over :data:`MAX_JSONL_LINE_BYTES` is refused before it
    is decoded."""
    return pd.DataFrame.from_records(jsonl_records(path))


def jsonl_records(path) -> list[dict]:
    """The records of a JSON Lines file as :func:`read_jsonl` reads them, each as its JSON
    object (a key a record lacks is absent, not NaN; integers stay integers)."""
    path = existing_path(path)
    if path.is_dir():
        raise InputError("is a folder, expected a file", path=str(path))
    records = []
    with open(path, "rb") as fh:
        lineno = 0
        while raw := fh.readline(MAX_JSONL_LINE_BYTES + 1):
            lineno += 1
            body = raw[:-1] if raw.endswith(b"\n") else raw
            if len(body) > MAX_JSONL_LINE_BYTES:
                raise InputError(f"line {lineno} is longer than {MAX_JSONL_LINE_BYTES:,} bytes "
                                 f"({MAX_JSONL_LINE_BYTES // 2 ** 20} MiB), the most one JSON "
                                 "Lines record may hold", path=str(path))
            rec = _line_record(body, lineno, path)
            if rec is not None:
                records.append(rec)
    return records


def _line_record(body: bytes, lineno: int, path) -> dict | None:
    """Line ``lineno`` of a JSON Lines file (its bytes without the ``\\n``) as its record, None
    for a blank line; an InputError naming the line for one that is not one JSON object."""
    try:
        line = body.decode("utf-8-sig" if lineno == 1 else "utf-8")
    except UnicodeDecodeError:
        raise utf8_error(path) from None
    if not line.strip():
        return None
    try:
        rec = loads(line, path=path, where=f" at line {lineno}")
    except json.JSONDecodeError as err:
        raise InputError(f"invalid JSON at line {lineno}, column {err.colno}: {err.msg}",
                         path=str(path)) from None
    if not isinstance(rec, dict):
        raise InputError(f"line {lineno} is not a JSON object (one record per line "
                         "expected)", path=str(path))
    return rec


_OPEN, _CLOSE, _CR, _LF = (ord(c) for c in "{}\r\n")


def refuse_lines_not_records(path, *, every: bool = False) -> None:
    """Raise :func:`read_jsonl`'s InputError for the first line of the JSON Lines file ``path``
    that is not one JSON object, in its words; or return.

    For a reader that does not look at each line as :func:`read_jsonl` does (Spark's, which
    reads a line ``null`` as no record, a line holding an array as its elements, and only the
    first of two objects on one line, all without a word). Only the lines that may not be one
    object are decoded (found with numpy: not starting with ``{``, not ending with ``}``, or
    holding ``}{`` / ``} {``), about 1.5 s for 150 MB; ``every`` decodes every line, to find
    an invalid one that looks like an object (``{"a": tru}``). When a line is refused, the
    lines before it are decoded too, so the line named is the first :func:`read_jsonl` names.
    """
    import numpy as np

    lineno = 0  # lines before the block
    with open(path, "rb") as fh:
        rest = b""
        while True:
            chunk = fh.read(CHUNK_BYTES)
            block, rest = rest + chunk, b""
            if chunk:  # whole lines only; the last line's start waits for the next block
                cut = block.rfind(b"\n") + 1
                if not cut:
                    rest = block
                    continue
                block, rest = block[:cut], block[cut:]
            elif not block:
                return
            data = np.frombuffer(block, dtype=np.uint8)
            ends = np.flatnonzero(data == _LF)
            n_lines = len(ends) + (not block.endswith(b"\n"))
            starts = np.concatenate(([0], ends + 1))[:n_lines]
            stops = np.concatenate((ends, [len(data)]))[:n_lines]
            if every:
                suspects = range(n_lines)
            else:
                filled = starts < stops
                first = np.where(filled, data[np.minimum(starts, len(data) - 1)], _OPEN)
                last_at = stops - 1 - (filled & (data[np.maximum(stops - 1, 0)] == _CR))
                last = np.where(last_at >= starts, data[np.maximum(last_at, 0)], _CLOSE)
                odd = (first != _OPEN) | (last != _CLOSE)
                closes = np.flatnonzero(data[:-2] == _CLOSE)
                joined = closes[(data[closes + 1] == _OPEN)
                                | ((data[closes + 1] == ord(" ")) & (data[closes + 2] == _OPEN))]
                odd[np.searchsorted(starts, joined, side="right") - 1] = True
                suspects = np.flatnonzero(odd)
            for k in suspects:
                try:
                    _line_record(block[starts[k]:stops[k]], lineno + int(k) + 1, path)
                except InputError:
                    if every:
                        raise
                    refuse_lines_not_records(path, every=True)  # the first such line
                    raise
            lineno += n_lines
            if not chunk:
                return


def is_json_lines(path) -> bool:
    """Whether ``path`` holds JSON Lines: a ``.jsonl`` / ``.ndjson`` file, or a ``.json`` file
    whose first line that is not blank is a whole JSON object with another line that is not
    blank after it (what ``datasets``' ``Dataset.to_json`` and pandas' ``to_json(lines=True)``
    write to a ``.json`` file, and Spark's JSON reader reads). No JSON text is that (after a
    whole value only blanks may follow), so a JSON file is never taken for one. Looks at the
    first :data:`audit.ingest.readers.text.CHUNK_BYTES` only."""
    from ..sources import JSONL_EXTENSIONS

    path = Path(path)
    ext = path.suffix.lower()
    if ext in JSONL_EXTENSIONS:
        return True
    if ext != ".json" or not path.is_file():
        return False
    with open(path, "rb") as fh:
        head = fh.read(CHUNK_BYTES).decode("utf-8-sig", errors="replace")
    lines = iter(head.split("\n"))
    first = next((line for line in lines if line.strip()), None)
    if first is None or not first.lstrip().startswith("{"):
        return False
    try:
        record = json.loads(first)
    except (ValueError, RecursionError):
        return False
    return isinstance(record, dict) and any(line.strip() for line in lines)


def records_frame(data, *, path) -> pd.DataFrame:
    """A JSON array of objects as a frame."""
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise InputError("expected a JSON array of objects (one record per row)"
                         f"{json_shape_hint(data)}", path=str(path))
    return pd.DataFrame.from_records(data)


#: What a table file's JSON is, said in every hint of :func:`json_shape_hint`.
_TABLE_JSON = ("a table is a JSON array of records (pandas: to_json(orient='records')) or JSON "
               "Lines, one record a line (to_json(orient='records', lines=True))")


def json_shape_hint(data) -> str:
    """``"; ..."``: what a JSON text that is no array of records holds, in the shapes tools
    write a table as (pandas' ``to_json`` orients ``columns``, its default, ``index`` and
    ``split``; records under one key of an object, as APIs return them), and how to write it
    as a table; ``""`` for an array of records."""
    def keys(mapping) -> str:
        return join_names(list(mapping), limit=5)

    if isinstance(data, list):
        if all(isinstance(r, dict) for r in data):
            return ""
        bad = next(k for k, r in enumerate(data) if not isinstance(r, dict))
        return (f"; element {bad} (0-based) of the array is {_json_kind(data[bad])}, not a "
                "record")
    if not isinstance(data, dict):
        return f"; it holds {_json_kind(data)}; {_TABLE_JSON}"
    if not data:
        return f"; it holds an empty object; {_TABLE_JSON}"
    values = list(data.values())
    if {"columns", "data"} <= set(data) and isinstance(data["columns"], list):
        return (f"; it holds an object with keys {keys(data)}, pandas' to_json(orient='split'):"
                f" {_TABLE_JSON}")
    lists = [k for k, v in data.items() if isinstance(v, list) and v
             and all(isinstance(r, dict) for r in v)]
    if len(lists) == 1:
        return (f"; it holds an object with keys {keys(data)}, and the key {lists[0]!r} holds "
                f"an array of {len(data[lists[0]]):,} records: give that array as the file "
                f"(jq '.[\"{lists[0]}\"]' FILE > records.json)")
    if all(isinstance(v, dict) for v in values):
        inner = set().union(*(v.keys() for v in values))
        from ...contract import columns as C

        wanted = {C.ITEM, C.ANNOTATOR, C.LABEL}
        if wanted & set(data) and not wanted & inner:
            return (f"; it holds one object per column (keys {keys(data)}), each mapping row "
                    f"labels to values, pandas' to_json() default (orient='columns'): "
                    f"{_TABLE_JSON}")
        return (f"; it holds an object of {len(data):,} records keyed by {keys(data)} (pandas'"
                f" to_json(orient='index')), not an array of them: {_TABLE_JSON}")
    return f"; it holds an object with keys {keys(data)}, not an array of records; {_TABLE_JSON}"


def _json_kind(value) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
            type(None): "null"}.get(type(value), "a number")


def first_json_record(path: Path) -> tuple[str, object] | None:
    """A cheap look at a JSON file: ``("array", first element)`` or ``("object", first value)``.

    Reads the first :data:`audit.ingest.readers.text.CHUNK_BYTES` only; None when the first
    record does not fit in them or the text is not JSON.
    """
    with open(path, "rb") as fh:
        head = fh.read(CHUNK_BYTES).decode("utf-8-sig", errors="replace")
    dec = json.JSONDecoder()
    i = _skip_ws(head, 0)
    try:
        if head[i] == "[":
            rec, _ = dec.raw_decode(head, _skip_ws(head, i + 1))
            return "array", rec
        if head[i] == "{":
            key, j = dec.raw_decode(head, _skip_ws(head, i + 1))
            j = _skip_ws(head, j)
            if isinstance(key, str) and head[j] == ":":
                value, _ = dec.raw_decode(head, _skip_ws(head, j + 1))
                return "object", value
    except (json.JSONDecodeError, IndexError, RecursionError):
        pass
    return None


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i
