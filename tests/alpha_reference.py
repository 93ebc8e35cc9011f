"""The ``krippendorff`` package's alpha, computed without its dense units x values x values array.

``krippendorff.alpha`` forms every unit's coincidences over the whole value domain at once: an
(N, V, V) array, 1.2 GB for the 3,770 WMT23 segments over 199 scores and seconds of CPU per call.
:func:`package_alpha` runs the package's own steps (value counts, coincidences, expected
coincidences, distances) with the units taken a chunk at a time, each chunk over the values
that occur in it, and its coincidences added into the V x V matrix. A unit's coincidences are
zero outside the values it holds, so the sum is the package's matrix and alpha is the package's
value; :func:`test_continuous.test_chunked_package_alpha_is_the_package` checks it against
``krippendorff.alpha`` itself at every level.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from krippendorff import krippendorff as kp

CHUNK = 64


def package_alpha(wide: pd.DataFrame | np.ndarray, level: str = "interval") -> float:
    """``krippendorff.alpha(reliability_data=wide.T, level_of_measurement=level)``.

    Parameters
    ----------
    wide : DataFrame or ndarray
        One row per unit, one column per coder, NaN where the coder gave no value.
    level : {"interval", "ordinal", "nominal", "ratio"}
        The package's level of measurement.
    """
    data = np.asarray(wide, dtype=float).T
    domain = np.unique(data[~np.isnan(data)])
    counts = kp._reliability_data_to_value_counts(data, domain)
    counts = counts[counts.sum(axis=1) >= 2]  # a unit with one value holds no pair
    o = np.zeros((len(domain), len(domain)))
    for start in range(0, len(counts), CHUNK):
        block = counts[start:start + CHUNK]
        present = np.flatnonzero(block.sum(axis=0))
        o[np.ix_(present, present)] += kp._coincidences(block[:, present])
    n_v = o.sum(axis=0)
    e = kp._random_coincidences(n_v)
    d = kp._distances(domain, kp._distance_metric(level), n_v)
    return float(1 - (o * d).sum() / (e * d).sum())
