"""Any Hugging Face ``datasets`` dataset into the canonical table, mapped like a table.

The source is a hub name (when the hub is reachable), a ``save_to_disk`` folder, or a hub-download
folder of data files. Its splits are converted to pandas and stacked (the same item id in two
splits is the same item); ``split=`` (or the spec's ``split``) keeps one. Columns are mapped by a
dataset spec exactly as :mod:`audit.ingest.adapters.table` maps a file, or must already carry the canonical
names. Schema failures name the source row as ``<split>/<row>``.
"""

from __future__ import annotations

import pandas as pd

from ...contract.table import AnnotationTable
from ..pools import check_min_pool_annotators
from ..readers import open_dataset
from ..sources import default_name
from ..spec import DatasetSpec, read_spec
from .table import from_frame


def load_hf(source, *, spec=None, split: str | None = None, pools=None,
            pool_column: str | None = None, min_pool_annotators: int | None = None,
            name: str | None = None) -> AnnotationTable:
    """Load a ``datasets`` source and map its columns with ``spec`` (or the canonical names).

    ``pools``, ``pool_column`` and ``min_pool_annotators`` work as for a table
    (:func:`audit.ingest.adapters.table.from_frame`, :mod:`audit.ingest.pools`).
    """
    check_min_pool_annotators(min_pool_annotators)
    spec = read_spec(spec) if spec is not None else DatasetSpec()
    splits = open_dataset(source, split=split or spec.split)
    frames = []
    for split_name, frame in splits.items():
        frame = frame.copy()
        frame.index = pd.Index(split_name + "/" + frame.index.astype(str), name="row")
        frames.append(frame)
    frame = pd.concat(frames)
    table = from_frame(frame, spec=spec, source=str(source), pools=pools, pool_column=pool_column,
                       min_pool_annotators=min_pool_annotators,
                       name=name or spec.name or default_name(source, "dataset"))
    table.info.update({"format": "hf", "splits": list(splits)})
    return table
