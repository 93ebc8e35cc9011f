"""Any Hugging Face ``datasets`` dataset into the canonical table, mapped like a table.

The source is a hub name (when the hub is reachable), a ``save_to_disk`` folder, or a hub-download
folder of data files. Its splits are converted to pandas and stacked (the same item id in two
splits is the same item); ``split=`` (or the spec's ``split``) keeps one. Columns are mapped by a
dataset spec exactly as :mod:`audit.ingest.adapters.table` maps a file, or must already carry the canonical
names. Schema failures name the source row as ``<split>/<row>``.
"""

from __future__ import annotations

import pandas as pd

from ...contract import columns as C
from ...contract.labels.observed import ORDINAL_WITHOUT_ORDER
from ...contract.table import AnnotationTable
from ...errors import InputError
from ..pools import check_min_pool_annotators
from ..readers import open_dataset
from ..readers.hub import CLASS_LABELS
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
    frames, class_labels = [], {}
    for split_name, frame in splits.items():
        class_labels.update(frame.attrs.get(CLASS_LABELS, {}))
        frame = frame.copy()
        frame.index = pd.Index(split_name + "/" + frame.index.astype(str), name="row")
        frames.append(frame)
    frame = pd.concat(frames)
    try:
        table = from_frame(frame, spec=spec, source=str(source), pools=pools,
                           pool_column=pool_column, min_pool_annotators=min_pool_annotators,
                           name=name or spec.name or default_name(source, "dataset"))
    except InputError as err:
        raise _with_class_label_order(err, spec, class_labels) from None
    table.info.update({"format": "hf", "splits": list(splits)})
    return table


def _with_class_label_order(err: InputError, spec: DatasetSpec, class_labels: dict):
    """``err`` with the ``ClassLabel``'s own order offered when it is the refusal of an ordinal
    scale without ``label.order`` and the label column is a ``ClassLabel``: the names are read
    as text (:func:`audit.ingest.readers.hub.dataset_frame`), so the message listed them
    alphabetically, while the dataset's feature declares an order (SST-5's ``very negative``
    ... ``very positive``). The order is offered, not taken: a ClassLabel's order need not be
    a scale's."""
    import json

    if ORDINAL_WITHOUT_ORDER not in err.message:
        return err
    columns = ([spec.columns.get(C.LABEL, C.LABEL)] if spec.layout != "wide"
               else list(spec.annotator_columns or ()))
    orders = {tuple(class_labels[c]) for c in columns if c in class_labels}
    if len(orders) != 1:
        return err
    order = json.dumps(list(next(iter(orders))), ensure_ascii=False)
    return InputError(f"{err.message}; the dataset's ClassLabel lists them in the order "
                      f"{order}: if that is the scale's, declare it with label: {{kind: "
                      f"ordinal, order: {order}}}", path=err.path, column=err.column,
                      row=err.row, key=err.key)
