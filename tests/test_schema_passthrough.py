"""The CSV reader's categoricals (every category used, sorted) pass validation as they are, the
same object, equal to ``pd.Categorical`` of their text; any other categorical is recoded as
before (unused categories dropped, the rest sorted).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from audit.contract.schema import string_categorical
from audit.ingest.readers.tables import read_csv


@pytest.mark.parametrize("text", [
    "item,annotator,label\n2,b,x\n10,a,y\n1,c,x\n",          # ids sorted as text, not numbers
    "item,annotator,label\n1,a,x\n,b,y\n3,,x\n1,a,\n",         # missing cells
    "item,annotator,label\nz,é,x\nZ,e,y\n\u00e9,E,x\n",       # code-point order
])
def test_reader_categoricals_pass_validation_as_they_are(tmp_path, text):
    """A column the reader made (every category used, sorted) is the categorical validation
    returns, the same object; it equals ``pd.Categorical`` of the column's text."""
    path = tmp_path / "t.csv"
    path.write_text(text, encoding="utf-8")
    frame = read_csv(path, categorical=True)
    for col in ("item", "annotator"):
        given = frame[col].array
        got = string_categorical(frame[col])
        assert got is given
        texts = frame[col].astype(object)
        expected = pd.Categorical(texts.where(texts.notna(), None))
        assert list(got.categories) == list(expected.categories)
        np.testing.assert_array_equal(got.codes, expected.codes)


def test_a_categorical_with_unused_or_unsorted_categories_is_recoded():
    """Not the reader's shape: unused categories dropped, the rest sorted, a new object."""
    for cat in (pd.Categorical(["b", "a", None], categories=["a", "b", "c"]),
                pd.Categorical(["b", "a", "b"], categories=["b", "a"]),
                pd.Categorical(["a", "b"], categories=["a", "b"], ordered=True)):
        got = string_categorical(pd.Series(cat))
        assert got is not cat
        expected = pd.Categorical(pd.Series(cat).astype(object).where(pd.Series(cat).notna(),
                                                                       None))
        assert list(got.categories) == list(expected.categories)
        np.testing.assert_array_equal(got.codes, expected.codes)
        assert not got.ordered
