"""Data already in memory: a pandas ``DataFrame``, a ``datasets.Dataset`` or ``DatasetDict``.

:func:`audit.ingest.load` wraps such a source in :class:`InMemory` and dispatches on its type, so
the adapters see one more kind of source and nothing after them knows the difference:

* a **DataFrame** is read as a table file is (:func:`load_frame`: long, or mapped by a spec;
  ``read`` options, which are about parsing files, do not apply). Its index names the source rows
  in schema failures when it is unique, else the 0-based positions do. A frame shaped like
  MultiPref or MT-Bench rows goes to that adapter, detected by its columns as a file would be.
* a **Dataset** / **DatasetDict** goes through the ``datasets`` path (:mod:`audit.ingest.adapters.hf`, or
  the MultiPref / MT-Bench adapters, detected by columns as for a ``save_to_disk`` folder);
  ``split=`` keeps one split of a ``DatasetDict``.

The source is named ``<DataFrame>``, ``<Dataset>`` or ``<DatasetDict>`` in messages and results;
``name=`` names the dataset in reports. The caller's object is never modified. Formats whose
adapters read their published files (``pandalm``, ``lewidi``) need the file's path.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import pandas as pd

from ..errors import InputError, join_names

#: Formats an in-memory source can be read as.
FORMATS = ("table", "hf", "multipref", "mt-bench")


@dataclass(frozen=True, eq=False)
class InMemory:
    """An in-memory source: ``data`` is a DataFrame, Dataset or DatasetDict (``kind`` says which)."""

    data: object
    kind: str

    def __str__(self) -> str:
        return f"<{self.kind}>"

    @property
    def is_frame(self) -> bool:
        return self.kind == "DataFrame"

    @property
    def columns(self) -> list[str]:
        """The column names (of the first split of a DatasetDict)."""
        if self.is_frame:
            return [str(c) for c in self.data.columns]
        cols = self.data.column_names
        if isinstance(cols, dict):
            return list(next(iter(cols.values()), []))
        return list(cols)

    def splits(self, *, default_split: str = "train") -> dict[str, pd.DataFrame]:
        """``{split: frame}``: a DataFrame or unnamed Dataset is one split, ``default_split``."""
        if self.is_frame:
            return {default_split: frame(self)}
        from .readers.hub import dataset_frame

        if self.kind == "DatasetDict":
            return {str(k): dataset_frame(v) for k, v in self.data.items()}
        split = getattr(self.data, "split", None)
        return {str(split) if split is not None else default_split: dataset_frame(self.data)}


def wrap(source):
    """``source`` as :class:`InMemory` when it is a DataFrame, Dataset or DatasetDict; a path or
    hub name (``str`` / ``os.PathLike``) unchanged.

    Raises
    ------
    TypeError
        Anything else (a list, a Series, a streaming ``IterableDataset``), naming what is
        accepted.
    """
    import os

    if isinstance(source, (str, os.PathLike, InMemory)):
        return source
    if isinstance(source, pd.DataFrame):
        return InMemory(source, "DataFrame")
    datasets = sys.modules.get("datasets")  # a Dataset object means datasets is imported
    if datasets is not None:
        if isinstance(source, datasets.DatasetDict):
            return InMemory(source, "DatasetDict")
        if isinstance(source, datasets.Dataset):
            return InMemory(source, "Dataset")
        if isinstance(source, (datasets.IterableDataset, datasets.IterableDatasetDict)):
            raise TypeError("a streaming (iterable) dataset cannot be audited as it streams: "
                            "load it without streaming=True, or materialise the part to audit "
                            "(datasets.Dataset.from_generator, .take(n))")
    raise TypeError(f"source must be a path, a hub name, a pandas DataFrame, or a datasets "
                    f"Dataset / DatasetDict; got {type(source).__module__}."
                    f"{type(source).__qualname__}")


def frame(source: InMemory) -> pd.DataFrame:
    """The DataFrame as a table file would give it: text column names (each once), and an index
    that names each row once (its own when unique, else 0-based positions). A copy (of the
    column arrays; Python objects in them are shared), so nothing downstream can write into
    the caller's frame."""
    data = source.data
    names = [str(c) for c in data.columns]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise InputError(f"repeated column name(s) {join_names(repeated)}", path=str(source))
    out = data.copy()
    out.columns = names
    if not out.index.is_unique:
        out.index = pd.RangeIndex(len(out))
    return out


def load_frame(source: InMemory, *, spec=None, pools=None, pool_column: str | None = None,
               min_pool_annotators: int | None = None, name: str | None = None):
    """Load a DataFrame as the ``table`` format loads a file (:func:`audit.ingest.adapters.table.load_table`)."""
    from .pools import check_min_pool_annotators
    from .spec import DatasetSpec, read_spec
    from .adapters.table import from_frame

    check_min_pool_annotators(min_pool_annotators)
    spec = read_spec(spec) if spec is not None else DatasetSpec()
    return from_frame(frame(source), spec=spec, source=str(source), pools=pools,
                      pool_column=pool_column, min_pool_annotators=min_pool_annotators,
                      name=name)


def unsupported(source: InMemory, fmt: str) -> InputError:
    """The error for a format whose adapter reads published files only."""
    return InputError(f"the {fmt} format reads its published files; pass the file's path, or "
                      f"read this {source.kind} as a table (format='table' with a spec); formats "
                      f"for data in memory: {join_names(FORMATS)}", path=str(source), key="format")
