"""Small helpers the adapters share: source paths, hub names, label recoding, repairs with a warning."""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from .. import columns as C
from ..errors import AuditWarning, InputError

#: File extensions the readers understand (a path with one of these is never a hub name).
TABLE_EXTENSIONS = (".csv", ".tsv", ".tab", ".txt", ".jsonl", ".ndjson", ".json", ".parquet", ".pq")
_HUB_NAME = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


class LoadWarning(AuditWarning):
    """The source was repaired while loading (duplicate judgments dropped, unknown pools).

    The repair is stated in the message with its count; nothing is repaired silently.
    """


def warn(message: str) -> None:
    warnings.warn(message, LoadWarning, stacklevel=3)


def is_hub_name(source) -> bool:
    """True when ``source`` is not a local path and reads like a hub name ``owner/name``."""
    text = str(source)
    if isinstance(source, Path) or Path(text).exists():
        return False
    return bool(_HUB_NAME.match(text)) and not text.lower().endswith(TABLE_EXTENSIONS)


def existing_path(source, *, what: str = "file") -> Path:
    """``source`` as a Path that exists; an InputError naming the path when it does not."""
    path = Path(source).expanduser()
    if not path.exists():
        raise InputError(f"{what} not found", path=str(source))
    return path


def recode(values: pd.Series, mapping: Mapping) -> pd.Series:
    """Map raw labels onto scale values, vectorised; keep what does not map visible.

    Values found in ``mapping`` (matched by their string form, so ``1`` and ``"1"`` agree) take
    the mapped value; missing values stay missing (the schema reports them as null); any other
    value becomes the string ``"unknown <raw>"`` so the schema's declared-set check reports it
    with its raw form instead of silently matching a scale value.
    """
    lookup = {str(k): v for k, v in mapping.items()}
    for k, v in mapping.items():
        if isinstance(k, (int, np.integer)) and not isinstance(k, bool):
            lookup[str(float(k))] = v
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    texts = [str(u).strip() for u in uniques]
    mapped = np.array([lookup.get(t, "unknown " + repr(u)) for t, u in zip(texts, uniques)] + [None],
                      dtype=object)
    return pd.Series(mapped[codes], index=values.index, dtype=object)


def drop_repeated_judgments(raw: pd.DataFrame, *, source: str, what: str) -> pd.DataFrame:
    """Keep the last of repeated (item, annotator) judgments, with a warning naming the count.

    Used only by adapters of published data known to repeat a judge on an item (MT-Bench,
    MD-Agreement); a user's own table with repeats is a schema error instead.
    """
    dup = raw.duplicated([C.ITEM, C.ANNOTATOR], keep="last")
    n = int(dup.sum())
    if n:
        first = raw.loc[dup, [C.ITEM, C.ANNOTATOR]].iloc[0]
        warn(f"{source}: {n} repeated judgment(s) of the same item by the same {what} "
             f"(e.g. item {first[C.ITEM]!s}, {what} {first[C.ANNOTATOR]!s}); kept the last of each")
        raw = raw.loc[~dup.to_numpy()]
    return raw


def excerpt(values: pd.Series) -> pd.Series:
    """The first :data:`audit.columns.EXCERPT_CHARS` characters of each text, whitespace collapsed."""
    text = values.astype(object).where(values.notna(), "").astype(str)
    return text.str.replace(r"\s+", " ", regex=True).str.strip().str.slice(0, C.EXCERPT_CHARS)


def default_name(source, fallback: str) -> str:
    text = str(source)
    if is_hub_name(text):
        return text.split("/", 1)[1]
    stem = Path(text).name
    for ext in TABLE_EXTENSIONS:
        if stem.lower().endswith(ext):
            return stem[: -len(ext)]
    return stem or fallback
