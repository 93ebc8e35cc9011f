"""Property: a long table written as CSV, TSV, JSONL or Parquet loads to exactly the table written,
or fails with one :class:`audit.errors.SchemaError` (exit 2) naming every offending source row.

"Exactly", as a user who trusts the tool with their only copy expects:

* ids (``item``, ``annotator``, ``pool``) are text kept character for character: unicode (``ä``
  and ``a`` + combining diaeresis stay two ids), leading zeros (``007`` and ``7`` are two
  annotators), inner and surrounding whitespace, and words such as ``NA``, ``null``, ``None``;
* interval and ordinal labels are numbers: every textual form of one number is one label
  (``1`` = ``1.0`` = ``1.00`` = ``1e0`` = ``+1`` = `` 1``; ``-0.0`` = ``0``), a JSON or Parquet
  number equals its text, and the scale holds each number once;
* nominal labels (a nominal spec, or no spec at all) are text kept exactly (``007``, ``7``,
  ``7.0`` and `` 7`` are four labels);
* a missing id or label (empty cell, JSON ``null`` or absent key, Parquet null) is a schema
  failure naming its column and source row, never a dropped judgment; so is an interval label
  that is not a finite number, an ordinal label outside the declared order, and a second
  judgment of one (item, annotator). Source rows are 0-based data rows (records for JSONL and
  Parquet), the same in every format.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import audit
from audit.contract import columns as C
from audit.errors import AuditError, SchemaError

FORMATS = ("csv", "tsv", "jsonl", "parquet")
KINDS = ("interval", "ordinal", "ordinal-observed", "nominal")
UNIQUE = f"{C.ITEM}, {C.ANNOTATOR}"

_char = (st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\ufeff")
         | st.sampled_from(["\n", "\t", ",", '"', " ", "\u00a0", "\u3000", "\u2028", "0"]))
_tricky_ids = ["007", "7", "07", "7.0", "0", "-0", "NA", "N/A", "null", "None", "nan", "NaN",
               "TRUE", " a", "a ", " a ", "a  b", "\u00e4", "a\u0308", "\u65e5\u672c", "\U0001F600",
               "1e3", "1,5", "#x"]
ID = st.text(_char, min_size=1, max_size=6).filter(lambda s: not s.isspace()) \
    | st.sampled_from(_tricky_ids)

NUMBERS = (-2.0, -1.0, 0.0, 0.1, 0.25, 1.0, 2.0, 2.5, 10.0)
NOT_NUMBERS = ("abc", "1,5", "NaN", "nan", "inf", "-Infinity", "1.2.3", "--1", "1e", "0x1")
NOMINAL = ("007", "7", "07", "7.0", " 7", "7 ", "yes", "Yes", "NA", "null", "a b", "\u00e4",
           "a\u0308", "\u662f")


def text_forms(x: float) -> list[str]:
    """Ways people and programs write the number ``x``."""
    if x.is_integer():
        n = int(x)
        forms = [f"{n}", f"{n}.0", f"{n}.00", f"{n}e0", f"{n}E0", f"{x:.2e}", f"{x!r}",
                 f"+{n}" if n >= 0 else f"{n}.000"]
        if n == 0:
            forms += ["-0", "-0.0", "0e0", "-0.0e0", "0.000"]
    else:
        forms = [f"{x!r}", f"{x}0", f"{x:.4f}", f"{x:e}", f"{x:E}",
                 f"{x!r}".replace("0.", ".", 1) if abs(x) < 1 else f"{x!r}00"]
    return forms + [f" {forms[0]}", f"{forms[1]} ", f"  {forms[2]}  "]


@dataclass
class Example:
    """A drawn table: what is written, and what loading it must give."""

    kind: str
    order: tuple | None
    columns: tuple
    rows: list          # dicts column -> written text (None = missing), "label" as text
    native: list        # per row: the label as a JSON number, or None to write it as text
    absent: list        # per row: JSONL writes a missing value as an absent key, not null
    expected: list      # per row: the label's value (float or str), None where invalid/missing
    failures: set       # {(column, source row)}; empty for a valid table
    parquet_numbers: bool
    ascii_json: bool
    with_spec: bool = True

    def spec(self) -> str:
        kind = "ordinal" if self.kind.startswith("ordinal") else self.kind
        order = (f", order: [{', '.join(_yaml_number(v) for v in self.order)}]"
                 if self.order else "")
        return f"name: roundtrip\nlabel: {{kind: {kind}{order}}}\n"


def _yaml_number(x: float) -> str:
    return str(int(x)) if x.is_integer() else repr(x)


@st.composite
def examples(draw, kind: str | None = None) -> Example:
    kind = kind or draw(st.sampled_from(KINDS + ("interval",)))
    items = draw(st.lists(ID, min_size=1, max_size=4, unique=True))
    annotators = draw(st.lists(ID, min_size=2, max_size=4, unique=True))
    cells = draw(st.lists(st.tuples(st.sampled_from(items), st.sampled_from(annotators)),
                          min_size=2, max_size=10, unique=True))
    pools = None
    if draw(st.booleans()):
        names = draw(st.lists(ID, min_size=1, max_size=3, unique=True))
        pools = {a: draw(st.sampled_from(names)) for a in annotators}
    order = None
    if kind == "ordinal":
        order = tuple(sorted(draw(st.sets(st.sampled_from(NUMBERS), min_size=2, max_size=6))))
    vocabulary = order or (NOMINAL if kind == "nominal" else NUMBERS)

    rows, native, expected = [], [], []
    for item, annotator in cells:
        value = draw(st.sampled_from(vocabulary))
        row = {C.ITEM: item, C.ANNOTATOR: annotator}
        if pools is not None:
            row[C.POOL] = pools[annotator]
        if kind == "nominal":
            row[C.LABEL], number = value, None
        else:
            row[C.LABEL] = draw(st.sampled_from(text_forms(value)))
            number = draw(st.sampled_from([None, value, int(value) if value.is_integer()
                                           else value, -0.0 if value == 0 else value]))
        rows.append(row)
        native.append(number)
        expected.append(value)

    failures: set = set()
    n = len(rows)
    if draw(st.booleans()):
        for r in draw(st.sets(st.integers(0, n - 1), max_size=n - 1)):
            rows[r][C.LABEL], native[r], expected[r] = None, None, None
            failures.add((C.LABEL, r))
        for col in (C.ITEM, C.ANNOTATOR):
            if draw(st.booleans()):
                r = draw(st.integers(0, n - 1))
                if any(rows[r][c] is None for c in (C.ITEM, C.ANNOTATOR)):
                    continue
                rows[r][col] = None
                failures.add((col, r))
        bad = (NOT_NUMBERS if kind == "interval" else
               NOT_NUMBERS[:3] + ("7", "-3", "11") if kind == "ordinal" else ())
        valid = [r for r in range(n) if expected[r] is not None]
        if bad and len(valid) > 1 and draw(st.booleans()):
            r = draw(st.sampled_from(valid))
            rows[r][C.LABEL], native[r], expected[r] = draw(st.sampled_from(bad)), None, None
            failures.add((C.LABEL, r))
        whole = [r for r in range(n) if None not in (rows[r][C.ITEM], rows[r][C.ANNOTATOR])]
        if whole and draw(st.booleans()):
            r = draw(st.sampled_from(whole))
            value = draw(st.sampled_from(vocabulary))
            copy = dict(rows[r], **{C.LABEL: value if kind == "nominal"
                                    else draw(st.sampled_from(text_forms(value)))})
            rows.append(copy)
            native.append(None)
            expected.append(value)
            failures |= {(UNIQUE, r), (UNIQUE, n)}
    columns = (C.ITEM, C.ANNOTATOR) + ((C.POOL,) if pools is not None else ()) + (C.LABEL,)
    numeric_ok = kind != "nominal" and all(
        row[C.LABEL] is None or _finite(row[C.LABEL]) for row in rows)
    return Example(kind=kind, order=order, columns=columns, rows=rows, native=native,
                   absent=draw(st.lists(st.booleans(), min_size=len(rows),
                                        max_size=len(rows))),
                   expected=expected, failures=failures,
                   parquet_numbers=numeric_ok and draw(st.booleans()),
                   ascii_json=draw(st.booleans()),
                   with_spec=kind != "nominal" or draw(st.booleans()))


def _finite(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


# -- writers ----------------------------------------------------------------------------------
def write(ex: Example, fmt: str, folder) -> str:
    path = folder / f"table.{fmt}"
    if fmt in ("csv", "tsv"):
        with open(path, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh, delimiter="," if fmt == "csv" else "\t",
                                lineterminator="\n")
            writer.writerow(ex.columns)
            for row in ex.rows:
                writer.writerow(["" if row[c] is None else row[c] for c in ex.columns])
    elif fmt == "jsonl":
        with open(path, "w", encoding="utf-8") as fh:
            for row, number, absent in zip(ex.rows, ex.native, ex.absent):
                absent = absent and ex.with_spec  # no spec: the first record tells the format
                rec = {c: row[c] for c in ex.columns if not (absent and row[c] is None)}
                if number is not None:
                    rec[C.LABEL] = number
                fh.write(json.dumps(rec, ensure_ascii=ex.ascii_json) + "\n")
    else:
        arrays = {c: pa.array([row[c] for row in ex.rows], type=pa.string())
                  for c in ex.columns if c != C.LABEL}
        labels = [row[C.LABEL] for row in ex.rows]
        arrays[C.LABEL] = (pa.array([None if v is None else float(v) for v in labels],
                                    type=pa.float64())
                           if ex.parquet_numbers else pa.array(labels, type=pa.string()))
        pq.write_table(pa.table({c: arrays[c] for c in ex.columns}), path)
    return str(path)


# -- the property -----------------------------------------------------------------------------
def check(ex: Example, folder) -> None:
    spec = folder / "spec.yaml"
    spec.write_text(ex.spec(), encoding="utf-8")
    options = {"spec": str(spec)} if ex.with_spec else {}
    for fmt in FORMATS:
        path = write(ex, fmt, folder)
        if ex.failures:
            with pytest.raises(SchemaError) as caught:
                audit.load(path, **options)
            err = caught.value
            assert isinstance(err, AuditError) and err.exit_code == 2
            got = {(str(c), int(i)) for c, i in zip(err.failures["column"],
                                                    err.failures["index"])}
            assert got == ex.failures, fmt
            continue
        table = audit.load(path, **options)
        f = table.frame
        assert f.index.tolist() == list(range(len(ex.rows))), fmt
        for col in (C.ITEM, C.ANNOTATOR, C.POOL):
            written = ([row[col] for row in ex.rows] if col in ex.columns
                       else [C.DEFAULT_POOL] * len(ex.rows))
            assert f[col].astype(str).tolist() == written, (fmt, col)
        labels = f[C.LABEL].astype(object).tolist()
        values = [str(v) for v in table.scale.values]
        if ex.kind == "nominal":
            assert [str(v) for v in labels] == ex.expected, fmt
            assert sorted(values) == sorted(set(ex.expected)), fmt
            continue
        assert [float(v) for v in labels] == ex.expected, fmt
        numbers = [float(v) for v in table.scale.values]
        assert len(set(numbers)) == len(numbers), (fmt, values)
        if ex.order:
            assert numbers == list(ex.order), fmt
        else:
            assert sorted(numbers) == sorted(set(ex.expected)), fmt


_settings = settings(max_examples=60, deadline=None,
                     suppress_health_check=[HealthCheck.function_scoped_fixture,
                                            HealthCheck.too_slow])


@pytest.mark.filterwarnings("ignore::audit.errors.AuditWarning")
@_settings
@given(ex=examples())
def test_tables_load_as_written_or_fail_naming_rows(tmp_path_factory, ex):
    event(f"{ex.kind}, {'invalid' if ex.failures else 'valid'}")
    check(ex, tmp_path_factory.mktemp("rt"))


@pytest.mark.filterwarnings("ignore::audit.errors.AuditWarning")
@pytest.mark.parametrize("kind", ["interval", "nominal"])
def test_named_cases(tmp_path, kind):
    """The forms of the issue, spelled out: ``007``/``7`` ids; ``-0.0``, ``2.50``, ``1e0``, `` 1``
    labels (interval); the same strings as text labels (nominal)."""
    forms = ["1.0", "1", "-0.0", "0", "2.50", "2.5", "1e0", " 1"]
    values = [1.0, 1.0, 0.0, 0.0, 2.5, 2.5, 1.0, 1.0]
    rows = [{C.ITEM: item, C.ANNOTATOR: ann, C.LABEL: label}
            for (item, ann), label in zip([("a", "007"), ("a", "7"), ("b", "007"), ("b", "7"),
                                           ("c", "007"), ("c", "7"), ("d", "007"), ("d", "7")],
                                          forms)]
    ex = Example(kind=kind, order=None, columns=(C.ITEM, C.ANNOTATOR, C.LABEL), rows=rows,
                 native=[None] * 8, absent=[False] * 8,
                 expected=values if kind == "interval" else forms, failures=set(),
                 parquet_numbers=False, ascii_json=False)
    check(ex, tmp_path)


def test_a_missing_label_is_a_schema_failure_not_a_drop(tmp_path):
    rows = [{C.ITEM: "a", C.ANNOTATOR: "x", C.LABEL: "1"},
            {C.ITEM: "a", C.ANNOTATOR: "y", C.LABEL: None},
            {C.ITEM: "b", C.ANNOTATOR: "x", C.LABEL: "2.5"}]
    ex = Example(kind="interval", order=None, columns=(C.ITEM, C.ANNOTATOR, C.LABEL), rows=rows,
                 native=[None] * 3, absent=[True] * 3, expected=[1.0, None, 2.5],
                 failures={(C.LABEL, 1)}, parquet_numbers=True, ascii_json=True)
    check(ex, tmp_path)


def test_jsonl_lines_end_at_newline_only(tmp_path):
    """U+2028 and U+0085 are legal, unescaped, inside a JSON string (``ensure_ascii=False``)."""
    rows = [{C.ITEM: "a\u2028b", C.ANNOTATOR: "x\u0085", C.LABEL: "1"},
            {C.ITEM: "a\u2028b", C.ANNOTATOR: "y", C.LABEL: "2"}]
    ex = Example(kind="interval", order=None, columns=(C.ITEM, C.ANNOTATOR, C.LABEL), rows=rows,
                 native=[None] * 2, absent=[False] * 2, expected=[1.0, 2.0], failures=set(),
                 parquet_numbers=False, ascii_json=False)
    check(ex, tmp_path)
