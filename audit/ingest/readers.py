"""Safe readers shared by the adapters: every failure becomes an InputError that names the place.

* JSON: invalid or truncated text names the file, line and column; trailing commas before ``}`` or
  ``]`` (LeWiDi 2025's annotator-metadata files) are tolerated. Nesting deeper than Python's
  JSON decoder follows (:func:`json_depth_limit`, about 1,000 levels: the interpreter's
  recursion limit) is an InputError naming the file and the limit, not a ``RecursionError``.
* JSON Lines: read line by line; a line longer than :data:`MAX_JSONL_LINE_BYTES` (64 MiB) is an
  InputError naming the file, the line and the limit, found before the line is decoded.
* Bytes that are not UTF-8 name the file, the byte offset and its line.
* CSV / TSV are read with every column as text (ids such as ``007`` stay ``007``); only empty
  cells are missing, so ``NA`` stays a label. pyarrow reads them when no pandas-only option is
  given; a parse error is re-read with pandas to name the line.
* JSONL / JSON arrays of records / Parquet keep their own types.
* Folders written by ``datasets`` ``save_to_disk`` open with :func:`datasets.load_from_disk`; a
  hub-download folder (``data/<split>-00000-of-00001.parquet``) is read split by split, so splits
  whose schemas differ (MT-Bench's ``judge``) still load; a hub name goes through
  :func:`datasets.load_dataset`.

Input files are only ever opened for reading.
"""

from __future__ import annotations

import codecs
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InputError, join_names
from .common import existing_path, is_hub_name
from .memory import InMemory

CSV_EXTENSIONS = (".csv", ".tsv", ".tab", ".txt")
JSONL_EXTENSIONS = (".jsonl", ".ndjson")
PARQUET_EXTENSIONS = (".parquet", ".pq")
DATA_EXTENSIONS = CSV_EXTENSIONS + JSONL_EXTENSIONS + (".json",) + PARQUET_EXTENSIONS
SAVE_TO_DISK_MARKERS = ("dataset_dict.json", "state.json", "dataset_info.json")

_CHUNK = 1 << 20
#: Longest line of a JSON Lines file (bytes, without its newline). One record of annotation data
#: is a few kilobytes; a MultiPref row with four long responses is under 100 KB.
MAX_JSONL_LINE_BYTES = 64 * 1024 * 1024
# A JSON string literal, or a comma whose next non-blank character closes an object or array.
_STRING_OR_TRAILING_COMMA = re.compile(r'"(?:[^"\\]|\\.)*"|,(?=\s*[}\]])', re.DOTALL)
_SPLIT_FILE = re.compile(r"^(?P<split>.+?)-\d{5}-of-\d{5}")


# -- bytes and text ---------------------------------------------------------------------------------
def utf8_error(path: Path) -> InputError:
    """The InputError naming the first byte of ``path`` that is not UTF-8 (offset and line)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    consumed = lines = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
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
            while chunk := fh.read(_CHUNK):
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


# -- JSON ------------------------------------------------------------------------------------------
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


def loads(text: str, *, path, where: str = ""):
    """:func:`json.loads`, with nesting too deep for the decoder an InputError (:func:`too_deep`);
    a :class:`json.JSONDecodeError` is left to the caller."""
    try:
        return json.loads(text)
    except RecursionError:
        raise too_deep(path, where) from None


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
            try:
                line = body.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError:
                raise utf8_error(path) from None
            if not line.strip():
                continue
            try:
                rec = loads(line, path=path, where=f" at line {lineno}")
            except json.JSONDecodeError as err:
                raise InputError(f"invalid JSON at line {lineno}, column {err.colno}: {err.msg}",
                                 path=str(path)) from None
            if not isinstance(rec, dict):
                raise InputError(f"line {lineno} is not a JSON object (one record per line "
                                 "expected)", path=str(path))
            records.append(rec)
    return pd.DataFrame.from_records(records)


def records_frame(data, *, path) -> pd.DataFrame:
    """A JSON array of objects as a frame."""
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise InputError("expected a JSON array of objects (one record per row)", path=str(path))
    return pd.DataFrame.from_records(data)


# -- tables ----------------------------------------------------------------------------------------
def read_table(path, *, sep: str | None = None, na_values=None, **pandas_options) -> pd.DataFrame:
    """Read a CSV / TSV / JSONL / JSON (array of records) / Parquet file into a frame.

    CSV and TSV columns are all text; only empty cells are missing unless ``na_values`` adds
    more. ``sep`` defaults to a tab for ``.tsv`` / ``.tab`` and a comma otherwise. Other
    keyword options go to :func:`pandas.read_csv`.
    """
    path = existing_path(path)
    if path.is_dir():
        if is_parquet_dataset(path):
            return read_parquet_dataset(path)
        raise InputError("is a folder, expected a table file (CSV, TSV, JSONL, JSON, Parquet) "
                         "or a partitioned Parquet dataset", path=str(path))
    ext = path.suffix.lower()
    if ext in PARQUET_EXTENSIONS:
        return read_parquet(path)
    if ext in JSONL_EXTENSIONS:
        return read_jsonl(path)
    if ext == ".json":
        return records_frame(read_json(path), path=path)
    if sep is None:
        sep = "\t" if ext in (".tsv", ".tab") else ","
    return read_csv(path, sep=sep, na_values=na_values, **pandas_options)


def read_csv(path: Path, *, sep: str = ",", na_values=None, **pandas_options) -> pd.DataFrame:
    """A delimited text file, every column as text (see :func:`read_table`)."""
    nulls = [""] + [str(v) for v in (na_values or [])]
    if not pandas_options and len(sep) == 1:
        try:
            return _read_csv_arrow(path, sep=sep, nulls=nulls)
        except InputError:
            raise
        except Exception:  # noqa: BLE001 - re-read with pandas for a message naming the line
            pass
    try:
        frame = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, na_values=nulls,
                            encoding="utf-8", engine="python" if len(sep) > 1 else "c",
                            **pandas_options)
    except UnicodeDecodeError:
        raise utf8_error(path) from None
    except pd.errors.EmptyDataError:
        raise InputError("the file is empty (no header row)", path=str(path)) from None
    except (pd.errors.ParserError, ValueError, TypeError) as err:
        if not is_utf8(path):  # binary or mis-encoded bytes: the more useful message
            raise utf8_error(path) from None
        raise InputError(f"cannot read as delimited text: {err}", path=str(path)) from None
    return frame


def _read_csv_arrow(path: Path, *, sep: str, nulls: list[str]) -> pd.DataFrame:
    import pyarrow as pa
    import pyarrow.csv as pcsv

    parse = pcsv.ParseOptions(delimiter=sep, newlines_in_values=True)
    try:
        with pcsv.open_csv(path, parse_options=parse) as reader:
            names = reader.schema.names
    except pa.ArrowInvalid as err:
        if "Empty CSV file" in str(err):
            raise InputError("the file is empty (no header row)", path=str(path)) from None
        if "UTF8" in str(err) or "utf-8" in str(err).lower():
            raise utf8_error(path) from None
        raise
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise InputError(f"repeated column name(s) {join_names(repeated)}", path=str(path))
    convert = pcsv.ConvertOptions(column_types={n: pa.string() for n in names}, null_values=nulls,
                                  strings_can_be_null=True, quoted_strings_can_be_null=True)
    try:
        table = pcsv.read_csv(path, parse_options=parse, convert_options=convert)
    except pa.ArrowInvalid as err:
        if "UTF8" in str(err):
            raise utf8_error(path) from None
        raise
    return table.to_pandas()


def read_parquet(path: Path) -> pd.DataFrame:
    try:
        return pd.read_parquet(path)
    except Exception as err:  # noqa: BLE001 - pyarrow raises several unrelated types
        raise InputError(f"cannot read as Parquet: {err}", path=str(path)) from None


def is_parquet_dataset(path: Path) -> bool:
    """A folder written as one Parquet dataset (by Spark, pyarrow or ``annotation-audit
    export``): Parquet files only, with Hive partition folders (``pool=crowd/``), ``part-*``
    files or a ``_SUCCESS`` marker. A hub download (``data/train-00000-of-00001.parquet``) is
    not one: its files are splits."""
    if not path.is_dir() or is_save_to_disk(path):
        return False
    files = [p for p in path.rglob("*") if p.is_file()
             and not any(part.startswith((".", "_")) for part in p.relative_to(path).parts)]
    if not files or any(p.suffix.lower() not in PARQUET_EXTENSIONS for p in files):
        return False
    hive = any("=" in part for p in files for part in p.relative_to(path).parts[:-1])
    return hive or (path / "_SUCCESS").exists() or all(p.name.startswith("part-") for p in files)


def read_parquet_dataset(path: Path) -> pd.DataFrame:
    """A partitioned Parquet folder as one frame; Hive partition values stay text (``pool=01``
    is the string ``"01"``, as Spark reads it with type inference off)."""
    import pyarrow.dataset as ds

    try:
        data = ds.dataset(path, format="parquet",
                          partitioning=ds.HivePartitioning.discover(infer_dictionary=True))
        return data.to_table().to_pandas()
    except Exception as err:  # noqa: BLE001 - pyarrow raises several unrelated types
        raise InputError(f"cannot read as a Parquet dataset: {err}", path=str(path)) from None


def table_columns(path: Path) -> list[str]:
    """The column names of a table file, read cheaply (header, schema or first record)."""
    if is_parquet_dataset(path):
        import pyarrow.dataset as ds

        return list(ds.dataset(path, format="parquet", partitioning="hive").schema.names)
    ext = path.suffix.lower()
    if ext in PARQUET_EXTENSIONS:
        import pyarrow.parquet as pq

        try:
            return list(pq.read_schema(path).names)
        except Exception as err:  # noqa: BLE001
            raise InputError(f"cannot read as Parquet: {err}", path=str(path)) from None
    if ext in JSONL_EXTENSIONS:
        first = first_line(path)
        try:
            rec = json.loads(first) if first else {}
        except (json.JSONDecodeError, RecursionError):
            return []
        return list(rec) if isinstance(rec, dict) else []
    if ext == ".json":
        first = first_json_record(path)
        return list(first[1]) if first and first[0] == "array" and isinstance(first[1], dict) else []
    head = first_line(path)
    sep = "\t" if ext in (".tsv", ".tab") or ("\t" in head and "," not in head) else ","
    return [c.strip().strip('"') for c in head.split(sep)] if head else []


def first_line(path: Path) -> str:
    with open(path, "rb") as fh:
        raw = fh.readline(_CHUNK)
    return raw.decode("utf-8-sig", errors="replace").strip()


def first_json_record(path: Path) -> tuple[str, object] | None:
    """A cheap look at a JSON file: ``("array", first element)`` or ``("object", first value)``.

    Reads the first megabyte only; None when the first record does not fit in it or the text is
    not JSON.
    """
    with open(path, "rb") as fh:
        head = fh.read(_CHUNK).decode("utf-8-sig", errors="replace")
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


# -- datasets folders and hub names -----------------------------------------------------------------
def is_save_to_disk(path: Path) -> bool:
    return path.is_dir() and any((path / m).exists() for m in SAVE_TO_DISK_MARKERS)


def data_files(path: Path) -> dict[str, list[Path]]:
    """The data files of a hub-download folder, grouped by split name.

    Files under ``data/`` when that folder exists, else every data file below ``path``. The split
    is the file-name prefix before ``-00000-of-00001``, else the parent folder of a numbered
    shard (``default/human/0000.parquet``), else the file stem.
    """
    root = path / "data" if (path / "data").is_dir() else path
    files = sorted(p for p in root.rglob("*")
                   if p.is_file() and p.suffix.lower() in DATA_EXTENSIONS
                   and not any(part.startswith(".") for part in p.relative_to(path).parts)
                   and p.name not in SAVE_TO_DISK_MARKERS and p.name.lower() != "readme.md")
    out: dict[str, list[Path]] = {}
    for f in files:
        m = _SPLIT_FILE.match(f.name)
        if m:
            split = m.group("split")
        elif f.stem.isdigit() and f.parent != root:
            split = f.parent.name
        else:
            split = f.stem
        out.setdefault(split, []).append(f)
    return out


def dataset_columns(path: Path) -> list[str]:
    """Column names of a ``save_to_disk`` or hub-download folder, without reading the data."""
    if is_save_to_disk(path):
        ds = _load_from_disk(path)
        cols = ds.column_names
        return list(next(iter(cols.values()))) if isinstance(cols, dict) else list(cols)
    groups = data_files(path)
    if not groups:
        return []
    return table_columns(next(iter(groups.values()))[0])


def open_dataset(source, *, split: str | None = None, default_split: str = "train",
                 hub_split: str | None = None) -> dict[str, pd.DataFrame]:
    """Open a ``datasets`` source as ``{split: frame}``.

    ``source`` is a ``save_to_disk`` folder, a hub-download folder, a single data file, a hub
    name (loaded with :func:`datasets.load_dataset`; offline this raises an InputError saying the
    hub is unreachable), or data in memory (:class:`.memory.InMemory`). ``split`` keeps one
    split; an absent split is an InputError listing the splits present. ``hub_split`` is
    passed to ``load_dataset`` for hub names when ``split`` is None.
    """
    if isinstance(source, InMemory):  # a DataFrame / Dataset given in memory
        splits = source.splits(default_split=default_split)
    elif is_hub_name(source):
        splits = _load_hub(str(source), split=split or hub_split)
    else:
        path = existing_path(source, what="dataset")
        if is_save_to_disk(path):
            ds = _load_from_disk(path)
            if hasattr(ds, "keys"):
                splits = {name: ds[name] for name in ds.keys()}
            else:
                splits = {str(getattr(ds, "split", None) or default_split): ds}
            splits = {k: v.to_pandas() for k, v in splits.items()}
        elif path.is_dir():
            groups = data_files(path)
            if not groups:
                raise InputError("no data files (Parquet, JSONL, JSON, CSV) in this folder",
                                 path=str(path))
            if split is not None and split not in groups:
                _no_split(split, groups, path)
            splits = {name: pd.concat([read_table(f) for f in files], ignore_index=True)
                      for name, files in groups.items() if split is None or name == split}
        else:
            m = _SPLIT_FILE.match(path.name)
            splits = {m.group("split") if m else default_split: read_table(path)}
    if split is not None:
        if split not in splits:
            _no_split(split, splits, source)
        splits = {split: splits[split]}
    return splits


def _no_split(split, present, source):
    raise InputError(f"no split {split!r}; splits present: {join_names(present)}",
                     path=str(source), key="split")


def _load_from_disk(path: Path):
    import datasets

    try:
        return datasets.load_from_disk(str(path))
    except Exception as err:  # noqa: BLE001 - datasets raises FileNotFoundError, ValueError, ...
        raise InputError(f"cannot open the datasets folder: {err}", path=str(path)) from None


def _load_hub(name: str, *, split: str | None) -> dict[str, pd.DataFrame]:
    import datasets

    try:
        ds = datasets.load_dataset(name, split=split)
    except Exception as err:  # noqa: BLE001 - offline: ConnectionError, OSError, LocalEntryNotFound
        raise InputError(
            f"cannot load {name!r} from the Hugging Face hub (unreachable or unknown: "
            f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}); download it "
            "where the hub is reachable (datasets save_to_disk, or the repo's data/ folder) "
            "and pass the local path", path=name) from None
    if hasattr(ds, "keys"):
        return {k: ds[k].to_pandas() for k in ds.keys()}
    return {split or "train": ds.to_pandas()}


def as_list(value) -> list:
    """A list from a list, tuple or numpy array (datasets gives arrays); [] for missing."""
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    return []
