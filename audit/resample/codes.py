"""Integer codes of the canonical table's categorical id columns (items, annotators, pools)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def item_codes(frame: pd.DataFrame, column: str) -> tuple[np.ndarray, int]:
    """Integer codes of a categorical id column and the number of categories."""
    cat = frame[column].cat
    return cat.codes.to_numpy().astype(np.int64), len(cat.categories)
