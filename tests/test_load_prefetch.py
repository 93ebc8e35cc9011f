"""The loader's cheaper paths give what the plain ones give: pandera loaded in a thread while the
CSV is read (:func:`audit.contract.schema.prefetch`) validates as pandera loaded on the spot does
(failures, their rows, nothing hidden left behind, a failed thread's import raised again where
validation needs it), and the CSV reader's categoricals pass validation as they are, equal to
``pd.Categorical`` of their text.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from audit.contract import schema
from audit.contract.schema import string_categorical
from audit.ingest.readers.tables import read_csv

VALID = "item,annotator,label\n1,a,x\n1,b,y\n2,a,x\n"
BAD = "item,annotator,label\n1,a,x\n1,a,y\n2,,x\n"


def _run(code: str, *args) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                         text=True, check=True)
    return out.stdout.split()


def test_a_csv_load_fetches_pandera_in_a_thread_and_validates_with_it(tmp_path):
    """In a fresh process: the load of a CSV starts the thread, waits for it, validates with
    pandera (the same failures as ever), and leaves neither hypothesis nor pyspark.pandas
    hidden (nor imported) behind it."""
    src, bad = tmp_path / "t.csv", tmp_path / "bad.csv"
    src.write_text(VALID)
    bad.write_text(BAD)
    code = ("import sys, threading\nimport audit\nfrom audit.errors import SchemaError\n"
            "from audit.contract import schema\n"
            "started = []\nreal = threading.Thread.start\n"
            "def start(self):\n    started.append(self.name)\n    return real(self)\n"
            "threading.Thread.start = start\n"
            "table = audit.load(sys.argv[1])\n"
            "print('audit-pandera-import' in started, 'pandera.pandas' in sys.modules,"
            " schema._PREFETCH == [], len(table.frame))\n"
            "print(sys.modules.get('hypothesis', 'absent'), "
            "sys.modules.get('pyspark.pandas', 'absent'))\n"
            "try:\n    audit.load(sys.argv[2])\nexcept SchemaError as err:\n"
            "    print(len(err.failures), sorted(err.failures['index'].tolist()))")
    assert _run(code, src, bad) == ["True", "True", "True", "3", "absent", "absent", "3",
                                    "[0,", "1,", "2]"]


def test_a_failed_prefetch_is_imported_again_where_validation_needs_it(tmp_path):
    """The thread's import fails (pandera made unimportable while it runs): the validating
    thread imports pandera itself and the load succeeds once it can."""
    src = tmp_path / "t.csv"
    src.write_text(VALID)
    code = ("import sys\nimport audit\nfrom audit.contract import schema\n"
            "sys.modules['pandera'] = None\nschema.prefetch()\nschema._PREFETCH[0].join()\n"
            "print('pandera.pandas' in sys.modules)\ndel sys.modules['pandera']\n"
            "print(len(audit.load(sys.argv[1]).frame), 'pandera.pandas' in sys.modules)")
    assert _run(code, src) == ["False", "3", "True"]


def test_a_load_that_fails_before_validation_leaves_nothing_hidden(tmp_path):
    """A missing column raises before validation: the thread is waited for all the same, so
    hypothesis (hidden while pandera loads) can be imported right after."""
    src = tmp_path / "t.csv"
    src.write_text("item,annotator\n1,a\n")
    code = ("import sys\nimport audit\nfrom audit.contract import schema\n"
            "from audit.errors import InputError\n"
            "try:\n    audit.load(sys.argv[1])\nexcept InputError as err:\n"
            "    print(type(err).__name__)\n"
            "print(schema._PREFETCH == [], sys.modules.get('hypothesis', 'absent'))\n"
            "import hypothesis\nprint(hypothesis.__name__)")
    assert _run(code, src) == ["InputError", "True", "absent", "hypothesis"]


def test_prefetch_does_nothing_once_pandera_is_loaded():
    schema._pandera()
    schema.prefetch()
    assert schema._PREFETCH == []


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
