"""Seeded fuzz of the table loader and the audit, on tables in the shapes people export.

Each test draws a small table of judgments (hypothesis, derandomised: the same examples on
every run), writes it to a file the way a spreadsheet or a script writes one (UTF-8 BOM, CRLF,
``;`` with decimal commas, every cell quoted, ...), runs ``annotation-audit run`` through
click's ``CliRunner`` and checks the exit-code contract and the conservation of judgments:

* the exit code is 0 or 2, never 3, and no traceback is printed;
* exit 2 is one ``error:`` line naming the file, and the place (column, line / row or key) in
  it or in the indented lines under it: a schema failure lists one line per failure, a label
  vocabulary the spec lines that would read it; those are the message's own lines. A judgment
  the message is about is named by the line its record starts on in the file written;
* exit 0: ``results.json`` ``dataset`` adds up (``rows_read`` = ``n_annotations`` + the counted
  drops), ``rows_read`` is the number of judgments written (a wide table: its annotator cells)
  and ``n_annotations`` the number of non-empty ones; pools, items and annotators are those
  written, distinct ids staying distinct (``007`` and ``7``);
* a table valid by construction is read (exit 0), and every judgment is read back unchanged
  (:func:`audit.load`: the same ids, as text, and the same label);
* ids are kept as written, so two ids that look alike (one text in its two Unicode forms, or
  with a space or an invisible mark around it) are two ids: never silently, a warning names
  them.

Shapes: long CSV / TSV / JSONL tables (nominal), ``;`` tables with decimal commas (interval),
ratings of systems (a model column, numbers written in many ways), A / B / tie preference
tables (a winner column inside and just outside the recognised vocabularies, written as the
winning model's name (audit.ingest.winner), or a team's own
words read through a spec's ``label.map``; A / B / tie count columns, which are not a shape the
loader reads), wide tables (one column per rater) with blanks and mixed types, and pools from
a rater sheet (``--pools``).

What it found, each fixed with a plain regression test of its minimal example:
tests/test_leading_blank_lines.py, tests/test_row_lines.py (a BOM on a blank first JSON Lines
line), tests/test_lookalike_ids.py, tests/test_read_decimal.py (``1,234`` read as a decimal
comma by the hint's advice), tests/test_blank_ids.py, tests/test_yaml_scalars.py (JSON's
surrogate pairs in a spec), tests/test_unnamed_columns.py, tests/test_label_map_unread.py,
tests/test_pools_metadata.py (ids with surrounding blanks in a rater sheet); one outside the
loader, in the leaderboard simulation, has its test below
(test_scores_whose_differences_overflow_a_float).
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import tempfile
import unicodedata
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import audit
from audit.cli import cli
from audit.contract import columns as C
from audit.contract.labels import label_text

#: Every test: derandomised (the same examples on every run, in CI too), no deadline, no
#: example database (nothing carried between runs). ``AUDIT_FUZZ_EXAMPLES=300`` runs more of
#: them, still derandomised, for a longer look on a developer's machine.
FUZZ = settings(max_examples=int(os.environ.get("AUDIT_FUZZ_EXAMPLES", 40)), deadline=None,
                derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much])

NFC_E = unicodedata.normalize("NFC", "Jos\u00e9")
NFD_E = unicodedata.normalize("NFD", "Jos\u00e9")

#: Ids as people's tables hold them: leading zeros, numbers in several spellings, spreadsheet
#: booleans, the texts of missing values, surrounding spaces, Unicode in two normal forms,
#: invisible marks, emoji, right-to-left text, separators, quotes and line breaks inside,
#: control characters, long ones.
ID_TEXTS = ["007", "7", "7.0", "1,5", "1.234,5", "TRUE", "FALSE", "NA", "null", "None", "nan",
            "N/A", "#N/A", "ann1", "ann1 ", " ann1", NFC_E, NFD_E, "\U0001F44D\U0001F3FD",
            "\U0001F468\u200D\U0001F469\u200D\U0001F467", "\u0645\u0631\u062D\u0628\u0627",
            "\u200f\u0645\u0631\u062D\u0628\u0627", "\u05E9\u05DC\u05D5\u05DD 2",
            "ann\u200b1", "a,b", "a;b", 'say "hi"', '"', "=1+2", "x" * 300, "\u00a0pad",
            "tab\tin", "line\nbreak", "nel\u0085in", "ls\u2028in", "esc\x1b[31m", "-", "0"]

#: Text without surrogates or control characters (those have cases of their own above), at
#: least one character that is not whitespace.
TEXT = st.text(st.characters(exclude_categories=("Cs", "Cc")), min_size=1, max_size=12).filter(
    lambda s: s.strip() != "")

IDS = st.one_of(st.sampled_from(ID_TEXTS), TEXT)
LABEL_TEXTS = ["A", "B", "yes", "no", "TRUE", "FALSE", "NA", "null", "None", "nan", "007", "7",
               "1", "1.0", "01", "1,5", "1.234,5", "3 ", NFC_E, NFD_E, "\U0001F600",
               "\u05D8\u05D5\u05D1", "x" * 5000, 'a "quoted" label', "-0", "=SUM(A1)",
               "line\nbreak"]
LABELS = st.one_of(st.sampled_from(LABEL_TEXTS), TEXT)
#: What a cleared spreadsheet cell holds: nothing, a space, a no-break space, a tab.
BLANKS = ["", " ", "\u00a0", "\t"]

#: How an exit-2 message names a place, beyond the file.
ERROR_PLACE = re.compile(r"column '|line \d|row \d|key '|record|\(columns: ")


def blank(text) -> bool:
    """What the loader reads as no value: missing, or text of whitespace only."""
    return text is None or (isinstance(text, str) and text.strip() == "")


def lookalike_key(text: str) -> str:
    """Two ids that differ only by Unicode normal form, invisible format characters or
    surrounding whitespace have the same key."""
    text = unicodedata.normalize("NFC", text)
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf").strip()


def lookalikes(texts) -> bool:
    """Whether two of ``texts`` look alike but differ (:func:`lookalike_key`)."""
    texts = {t for t in texts if isinstance(t, str)}
    return len({lookalike_key(t) for t in texts}) < len(texts)


# -- writing files ---------------------------------------------------------------------------

@dataclass
class Dialect:
    """How a delimited file is written (a spreadsheet's export settings)."""

    sep: str = ","
    bom: bool = False
    crlf: bool = False
    quote_all: bool = False


DIALECTS = st.builds(Dialect, sep=st.sampled_from([",", "\t", ";"]), bom=st.booleans(),
                     crlf=st.booleans(), quote_all=st.booleans())


def delimited(header: list[str], rows: list[list], dialect: Dialect, *,
              blank_before: int = 0, blank_after=()) -> tuple[bytes, list[int]]:
    """``rows`` under ``header`` as delimited text (None: an empty cell), ``blank_before``
    blank lines before the header and one after each record of ``blank_after`` (positions),
    and the line each record starts on."""
    newline = "\r\n" if dialect.crlf else "\n"
    out = io.StringIO()
    out.write(newline * blank_before)
    writer = csv.writer(out, delimiter=dialect.sep, lineterminator=newline,
                        quoting=csv.QUOTE_ALL if dialect.quote_all else csv.QUOTE_MINIMAL)
    writer.writerow(header)
    lines = []
    for i, row in enumerate(rows):
        lines.append(out.getvalue().count("\n") + 1)
        writer.writerow(["" if v is None else v for v in row])
        if i in blank_after:
            out.write(newline)
    data = out.getvalue().encode("utf-8")
    return (b"\xef\xbb\xbf" + data) if dialect.bom else data, lines


def suffix(dialect: Dialect) -> str:
    return ".tsv" if dialect.sep == "\t" else ".csv"


def write_spec(path: Path, read: dict | None = None, **keys) -> Path | None:
    """A YAML spec of ``keys`` (JSON is YAML) with a ``read:`` block; None when empty."""
    body = dict(keys)
    if read:
        body["read"] = read
    if not body:
        return None
    # escaped: YAML reads a raw U+0085 or U+2028 in a quoted scalar as a line break
    path.write_text(json.dumps(body, ensure_ascii=True), encoding="utf-8")
    return path


@dataclass
class Case:
    """A written table and what reading it must give."""

    path: Path
    spec: Path | None
    n_records: int  # judgments the source holds (a wide table: its annotator cells)
    rows: list[dict] = field(default_factory=list)  # the non-empty judgments, canonical names
    valid: bool = True  # every judgment readable: the load must succeed
    label_of: object = None  # written label -> the label read (None: compared as text)
    bad_lines: set = field(default_factory=set)  # lines of the records that must be refused
    #: (item, annotator) -> the label read, where it depends on the row (a winner written as
    #: the winning model's name), in place of ``label_of``
    read_as: dict = field(default_factory=dict)
    id_columns: tuple = (C.ITEM, C.ANNOTATOR, C.POOL)
    #: other files an exit-2 message may name (a ``--pools`` file whose keys clash)
    other_files: tuple = ()


def run(case: Case, out: Path, *, report: bool = False):
    args = ["run", str(case.path), "--bootstrap", "20", "--quiet", "--out", str(out)]
    if not report:
        args.append("--no-report")
    if case.spec is not None:
        args += ["--spec", str(case.spec)]
    return CliRunner().invoke(cli, args)


def check_contract(case: Case, result, out: Path) -> dict | None:
    """The exit-code contract and conservation (module docstring); results.json's ``dataset``
    on exit 0."""
    shown = f"exit {result.exit_code}\n{result.output}"
    assert result.exit_code in (0, 2), shown
    assert "Traceback" not in result.output, shown
    if result.exit_code == 2:
        lines = result.stderr.splitlines()
        errors = [i for i, line in enumerate(lines) if line.startswith("error:")]
        assert len(errors) == 1, shown
        first = lines[errors[0]]
        named_files = [case.path, *([case.spec] if case.spec else []), *case.other_files]
        assert any(f.name in first for f in named_files), shown
        message = "\n".join([first] + [line for line in lines[errors[0] + 1:]
                                       if line.startswith(" ")])
        assert not case.valid, f"a valid table was refused: {shown}"
        if case.bad_lines:  # about a judgment: named by its line, the one written
            named = {int(n) for n in re.findall(r"\bline (\d+)", message)}
            assert named and named <= case.bad_lines, (named, case.bad_lines, shown)
        else:  # about the file: the file, and where it applies what in it
            assert ERROR_PLACE.search(message) or "empty" in message, shown
        return None
    assert case.valid or not case.bad_lines, f"an invalid record was read: {shown}"
    dataset = json.loads((out / "results.json").read_text())["dataset"]
    dropped = sum(d["n"] for d in dataset["rows_dropped"])
    assert dataset["rows_read"] == dataset["n_annotations"] + dropped, dataset
    assert dataset["rows_read"] == case.n_records, (dataset, case.n_records)
    assert dataset["n_annotations"] == len(case.rows), (dataset, len(case.rows))
    assert dataset["n_items"] == len({r[C.ITEM] for r in case.rows}), dataset
    assert dataset["n_annotators"] == len({r[C.ANNOTATOR] for r in case.rows}), dataset
    pools = dataset["pools"]
    assert sum(p["n_annotations"] for p in pools.values()) == dataset["n_annotations"], pools
    if case.rows and C.POOL in case.rows[0]:
        assert set(pools) == {r[C.POOL] for r in case.rows}, pools
    for col in (*case.id_columns, *([C.LABEL] if case.label_of is None else [])):
        if case.rows and col in case.rows[0] and lookalikes(r[col] for r in case.rows):
            named = "model_a / model_b" if col in (C.MODEL_A, C.MODEL_B) else col  # one set
            said = [line for line in result.stderr.splitlines()
                    if line.startswith("warning:") and f"column {named!r}" in line
                    and "look alike" in line]
            assert said, f"look-alike {col} ids audited apart without a word: {shown}"
    return dataset


def read_back(case: Case) -> None:
    """Every judgment as :func:`audit.load` reads it is the one written: ids as text, exactly,
    and ``case.label_of(written label)`` as its label (compared as text when None), judgment
    by judgment ((item, annotator) is unique)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = audit.load(case.path, spec=case.spec)
    frame = table.frame
    assert len(frame) == len(case.rows)
    columns = [c for c in (C.POOL, C.MODEL_A, C.MODEL_B, C.MODEL)
               if case.rows and c in case.rows[0]]
    key = [C.ITEM, C.ANNOTATOR]
    label_of = case.label_of or label_text
    got = {tuple(rec[:2]): (*rec[2:-1], rec[-1] if case.label_of else label_text(rec[-1]))
           for rec in frame[key + columns + [C.LABEL]].astype(object).itertuples(index=False)}
    wanted = {(r[C.ITEM], r[C.ANNOTATOR]): (
        *(r[c] for c in columns),
        case.read_as[r[C.ITEM], r[C.ANNOTATOR]] if (r[C.ITEM], r[C.ANNOTATOR]) in case.read_as
        else label_of(r[C.LABEL])) for r in case.rows}
    assert got == wanted


def audited(case_strategy, data, *, report: bool = False) -> tuple[Case, dict | None]:
    """Draw a case from ``case_strategy(folder)``, run it, check the contract; on exit 0 read
    the judgments back (:func:`read_back`)."""
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        case = data.draw(case_strategy(folder))
        result = run(case, folder / "out", report=report)
        dataset = check_contract(case, result, folder / "out")
        if dataset is not None:
            read_back(case)
        return case, dataset


# -- long tables -----------------------------------------------------------------------------

@st.composite
def judgments(draw, *, labels=LABELS, pairwise=False, models=IDS, rating=False):
    """A list of canonical judgments: distinct (item, annotator) pairs, one pool per
    annotator; with ``pairwise`` two models per item, with ``rating`` one model per item."""
    items = draw(st.lists(IDS, min_size=1, max_size=5, unique=True))
    annotators = draw(st.lists(IDS, min_size=1, max_size=4, unique=True))
    pool_names = draw(st.lists(IDS, min_size=1, max_size=3, unique=True))
    pool_of = {a: draw(st.sampled_from(pool_names)) for a in annotators}
    pairs = draw(st.lists(st.tuples(st.sampled_from(items), st.sampled_from(annotators)),
                          min_size=1, max_size=14, unique=True))
    duel = {i: draw(st.lists(models, min_size=2, max_size=2, unique=True)) for i in items} \
        if pairwise else {}
    system = {i: draw(models) for i in items} if rating else {}
    rows = []
    for item, ann in pairs:
        row = {C.ITEM: item, C.ANNOTATOR: ann, C.POOL: pool_of[ann], C.LABEL: draw(labels)}
        if pairwise:
            row[C.MODEL_A], row[C.MODEL_B] = duel[item]
        if rating:
            row[C.MODEL] = system[item]
        rows.append(row)
    return rows


def spoil(draw, rows: list[dict], columns) -> tuple[list[dict], int | None]:
    """Now and then one cell of one judgment made blank (a cleared spreadsheet cell): the
    judgment must be refused. Returns the rows and the spoilt one's position."""
    what = draw(st.sampled_from([None] * 5 + ["id", "label"]))
    if what is None:
        return rows, None
    at = draw(st.integers(0, len(rows) - 1))
    col = draw(st.sampled_from([c for c in columns if c != C.LABEL])) if what == "id" else C.LABEL
    rows = list(rows)
    rows[at] = {**rows[at], col: draw(st.sampled_from(BLANKS))}
    return rows, at


@st.composite
def long_delimited(draw, folder: Path):
    """A long nominal table as CSV / TSV / ``;``-separated text, with spreadsheet quirks (a
    BOM, CRLF, every cell quoted, the columns in any order, empty columns after the data,
    pandas' unnamed index column, blank lines before the header and between records, a
    ``sep=;`` line read past with ``read.skiprows``); now and
    then a blank id or label (exit 2, naming its line) or completely empty records (skipped,
    counted)."""
    rows = draw(judgments())
    cols = [C.ITEM, C.ANNOTATOR, C.POOL, C.LABEL]
    rows, spoilt = spoil(draw, rows, cols)
    dialect = draw(DIALECTS)
    header = draw(st.permutations(cols))
    records = [[r[c] for c in header] for r in rows]
    n_empty = draw(st.sampled_from([0] * 4 + [1, 3]))
    records += [[None] * len(header)] * n_empty
    if not n_empty and draw(st.integers(0, 4)) == 0:  # pandas' to_csv: an unnamed index
        header = ["", *header]
        records = [[str(i), *rec] for i, rec in enumerate(records)]
    trailing = draw(st.sampled_from([0] * 3 + [1, 2]))  # a spreadsheet's empty columns
    header = header + [""] * trailing
    records = [rec + [None] * trailing for rec in records]
    path = folder / f"t{suffix(dialect)}"
    blank_before = draw(st.sampled_from([0] * 5 + [1, 2]))
    data, lines = delimited(header, records, dialect, blank_before=blank_before,
                            blank_after=draw(st.sets(st.integers(0, len(records)), max_size=2)))
    read = {"sep": ";"} if dialect.sep == ";" else None
    if read and not blank_before and draw(st.booleans()):  # the separator hint Excel reads
        bom = data.startswith(b"\xef\xbb\xbf")
        data = (b"\xef\xbb\xbf" if bom else b"") + b"sep=;" + \
            (b"\r\n" if dialect.crlf else b"\n") + data[3 if bom else 0:]
        lines = [n + 1 for n in lines]
        read["skiprows"] = 1
    path.write_bytes(data)
    spec = write_spec(folder / "s.yaml", read=read)
    return Case(path, spec, n_records=len(rows) + n_empty,
                rows=[r for i, r in enumerate(rows) if i != spoilt], valid=spoilt is None,
                bad_lines={lines[spoilt]} if spoilt is not None else set())


@FUZZ
@given(st.data())
def test_long_delimited_tables(data):
    audited(long_delimited, data)


@st.composite
def long_jsonl(draw, folder: Path):
    """A long nominal table as JSON Lines: ids as strings (sometimes a JSON number, which is
    its digits), labels as strings, numbers or booleans; CRLF line ends, a BOM, blank lines
    and a blank id or label now and then."""
    rows = draw(judgments(labels=st.one_of(LABELS, st.integers(-3, 3), st.booleans())))
    rows, spoilt = spoil(draw, rows, [C.ITEM, C.ANNOTATOR, C.POOL, C.LABEL])
    if draw(st.booleans()):  # ids as JSON numbers where they are the digits of one
        rows = [{k: (int(v) if k != C.LABEL and isinstance(v, str) and v.isascii()
                     and v.isdigit() and str(int(v)) == v else v) for k, v in r.items()}
                for r in rows]
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    text, lines = "", []
    for r in rows:
        if draw(st.integers(0, 5)) == 0:
            text += newline  # a blank line
        lines.append(text.count("\n") + 1)
        text += json.dumps(r, ensure_ascii=draw(st.booleans())) + newline
    path = folder / "t.jsonl"
    path.write_bytes((b"\xef\xbb\xbf" if draw(st.booleans()) else b"") + text.encode("utf-8"))
    kept = [{k: (str(v) if k != C.LABEL else v) for k, v in r.items()}
            for i, r in enumerate(rows) if i != spoilt]
    return Case(path, None, n_records=len(rows), rows=kept, valid=spoilt is None,
                bad_lines={lines[spoilt]} if spoilt is not None else set())


@FUZZ
@given(st.data())
def test_long_jsonl_tables(data):
    audited(long_jsonl, data)


# -- decimal commas: a German spreadsheet's `;` table of scores -----------------------------

@st.composite
def comma_number(draw):
    """A score as a European spreadsheet writes it: ``1,5``, ``-0,25``, ``,5``, ``3``, spaces
    around it, quoted or not (the dialect decides). Returns (text, the number it writes)."""
    value = draw(st.decimals(min_value=-100, max_value=100, places=draw(st.integers(0, 3)),
                             allow_nan=False, allow_infinity=False))
    text = format(value, "f").replace(".", ",")
    if text.startswith("0,") and draw(st.booleans()):
        text = text[1:]  # ",5"
    if draw(st.booleans()):
        text = draw(st.sampled_from([" ", "\u00a0", ""])) + text + draw(st.sampled_from([" ", ""]))
    number = float(value)
    return text, (int(number) if number.is_integer() else number)


#: Labels a decimal-comma file may hold that are no number on it: a thousands separator, a
#: decimal point, a space as thousands separator, text.
NOT_COMMA_NUMBERS = ["1.234,5", "1.234", "1.5", "1 234,5", "n/a", "-", "1,2,3", "1e", "5 %"]


@st.composite
def decimal_comma_table(draw, folder: Path):
    """A ``;``-separated table of interval scores with decimal commas (``read: {sep: ";",
    decimal: ","}``), ids that hold commas untouched; now and then a label that is no number
    (exit 2 naming its line)."""
    rows = draw(judgments(labels=comma_number()))
    numbers = {}
    for r in rows:
        text, numbers[text] = r[C.LABEL]
        r[C.LABEL] = text
    spoilt = None
    if draw(st.integers(0, 3)) == 0:
        spoilt = draw(st.integers(0, len(rows) - 1))
        rows[spoilt] = {**rows[spoilt], C.LABEL: draw(st.sampled_from(NOT_COMMA_NUMBERS + BLANKS))}
    dialect = Dialect(sep=";", bom=draw(st.booleans()), crlf=draw(st.booleans()),
                      quote_all=draw(st.booleans()))
    cols = [C.ITEM, C.ANNOTATOR, C.POOL, C.LABEL]
    path = folder / "scores.csv"
    data, lines = delimited(cols, [[r[c] for c in cols] for r in rows], dialect)
    path.write_bytes(data)
    spec = write_spec(folder / "scores.yaml", read={"sep": ";", "decimal": ","},
                      label={"kind": "interval"})
    return Case(path, spec, n_records=len(rows), rows=rows, valid=spoilt is None,
                label_of=numbers.__getitem__,
                bad_lines={lines[spoilt]} if spoilt is not None else set())


@FUZZ
@given(st.data())
def test_decimal_comma_tables(data):
    audited(decimal_comma_table, data)


# -- ratings of systems: a model column, numbers as spreadsheets write them ------------------

#: Numbers as cells hold them, with the number each writes.
#: Magnitudes stop at 1e300; scores whose differences overflow a float (1e308 beside -1e308)
#: have their own test (test_scores_whose_differences_overflow_a_float, below).
RATINGS = {"4": 4, "4.0": 4, " 4": 4, "+4": 4, "04": 4, "4e0": 4, "-0": 0, "0.0": 0, "2.5": 2.5,
           "2.50": 2.5, ".5": 0.5, "1E1": 10, "3": 3, "-1": -1, "\u00a05 ": 5,
           "1e300": int(1e300), "-1e300": int(-1e300), "1e-300": 1e-300,
           "123456789012345678901234567890": 123456789012345678901234567890}
#: Cells that are no number: thousands separators, percent, booleans, decimal comma, text.
NOT_RATINGS = ["1,234", "1 234", "50%", "TRUE", "FALSE", "2,5", "NaN", "inf", "four", "4-5",
               "\u0664", "\uff14", "0x4", "1_000"]


@st.composite
def rating_table(draw, folder: Path):
    """A long table of ratings (item, model, annotator, pool, label) with numbers in many
    spellings, read as ordinal (whole numbers) or interval (fractions) without a spec; now and
    then a cell that is no number (exit 2)."""
    rows = draw(judgments(labels=st.sampled_from(sorted(RATINGS)), rating=True,
                          models=st.sampled_from(["gpt-4", "llama-2", "007", "7", NFC_E])))
    bad = draw(st.sampled_from([None] * 3 + NOT_RATINGS))
    if bad is not None:
        at = draw(st.integers(0, len(rows) - 1))
        rows[at] = {**rows[at], C.LABEL: bad}
    dialect = draw(DIALECTS)
    cols = draw(st.permutations([C.ITEM, C.MODEL, C.ANNOTATOR, C.POOL, C.LABEL]))
    path = folder / f"ratings{suffix(dialect)}"
    data, _ = delimited(cols, [[r[c] for c in cols] for r in rows], dialect)
    path.write_bytes(data)
    spec = write_spec(folder / "ratings.yaml", read={"sep": ";"} if dialect.sep == ";" else None)
    return Case(path, spec, n_records=len(rows), rows=rows, valid=bad is None,
                label_of=RATINGS.__getitem__, id_columns=(C.ITEM, C.ANNOTATOR, C.POOL, C.MODEL))


@FUZZ
@given(st.data())
def test_rating_tables(data):
    audited(rating_table, data)


@pytest.mark.parametrize("rows", ["1,m,a,1e308\n2,n,a,-1e308\n",
                                  "1,m,a,1e308\n1,m,b,1e308\n2,n,a,-1e308\n2,n,b,-1e308\n"])
def test_scores_whose_differences_overflow_a_float(tmp_path, rows):
    """Two finite scores whose difference overflows a float give the simulation an infinite
    gap: it is skipped with the reason, the gap written as null (was exit 3, a results
    contract error at ``gaps[0]``; with two annotators exit 2 naming a key ``gaps`` the user
    never wrote)."""
    (tmp_path / "t.csv").write_text("item,model,annotator,label\n" + rows)
    result = CliRunner().invoke(cli, ["run", str(tmp_path / "t.csv"), "--bootstrap", "20",
                                      "--no-report", "--quiet", "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    model = json.loads((tmp_path / "o" / "results.json").read_text())["stability"][
        "simulation_model"]
    assert model["gaps"] == [None] and "too large for a float" in model["skipped"]


# -- A / B / tie preferences -----------------------------------------------------------------

#: The recognised vocabularies' sides as people spell them (README, audit.ingest.infer), each
#: with the preference value it must be read as (negative = model_a better).
SIDES = {
    "A / B": {"A": -1, "B": 1, "a": -1, " b ": 1, "B ": 1},
    "model_a / model_b": {"model_a": -1, "model_b": 1, "Model A": -1, "model-b": 1,
                          "MODEL_B": 1},
    "response_a / response_b": {"response_a": -1, "Response B": 1},
    "left / right": {"left": -1, "Right": 1, "RIGHT ": 1},
    "MultiPref": {"A-is-clearly-better": -2, "A-is-slightly-better": -1,
                  "B-is-slightly-better": 1, "b is clearly better": 2},
}
TIES = ["tie", "Tie", "TIE", "tie (bothbad)", "Tie (both bad)", "tie (inconsistent)", "draw",
        "equal", "same", "both bad", "Both", "neither", "Neither is better"]
INTEGERS = ["-2", "-1", "0", "1", "2", "+1", " -1"]
#: Just outside: what people write that no vocabulary recognises.
OUTSIDE = ["A>B", "A is better", "AB", "equally good", "C", "tiebreak", "A/B", "none", "?",
           "0.5", "1.5", "\uff21", "A\u200b"]
MODEL_NAMES = st.sampled_from(["gpt-4", "gpt-4-0613", "llama-2-70b", "claude-2", "vicuna-13b",
                               "Mistral 7B", NFC_E, "007", "7"])


def preference_value(text: str) -> int:
    """The value a recognised label must be read as (an oracle written from the README)."""
    for family in SIDES.values():
        if text in family:
            return family[text]
    if text in TIES:
        return 0
    return int(text.strip())


@st.composite
def preference_table(draw, folder: Path):
    """A long A/B table: item, annotator, pool, model_a, model_b and a winner column (``label``,
    or ``winner`` mapped by a spec) in one vocabulary, ties, integers; now and then a label
    just outside (a model's name, ``A>B``), a second vocabulary, or only positive integers."""
    family = draw(st.sampled_from(sorted(SIDES) + ["integers"]))
    words = list(SIDES.get(family, {})) + TIES + (INTEGERS if family == "integers" else [])
    mix = draw(st.sampled_from(["clean"] * 5 + ["outside", "model name", "two vocabularies",
                                                "unsigned"]))
    if mix == "outside":
        words = words + [draw(st.sampled_from(OUTSIDE))]
    elif mix == "two vocabularies":
        other = draw(st.sampled_from([f for f in SIDES if f != family]))
        words = words + list(SIDES[other])
    elif mix == "unsigned":
        words = ["0", "1", "2"]
    rows = draw(judgments(labels=st.sampled_from(words), pairwise=True, models=MODEL_NAMES))
    read_as = {}
    if mix == "model name":
        at = draw(st.integers(0, len(rows) - 1))
        side = draw(st.sampled_from([C.MODEL_A, C.MODEL_B]))
        name = rows[at][side]
        rows[at] = {**rows[at], C.LABEL: name}
        others = {r[C.LABEL] for i, r in enumerate(rows) if i != at}
        if not name.isdigit() and others <= set(TIES) | set(INTEGERS):
            # README: beside numbers and tie words only, a label that is its row's model's
            # name is read as the winner's name: model_a's -1, model_b's 1
            read_as[rows[at][C.ITEM], rows[at][C.ANNOTATOR]] = -1 if side == C.MODEL_A else 1
    labels = {r[C.LABEL] for r in rows}
    recognised = {w for family in SIDES.values() for w in family} | set(TIES) | set(INTEGERS)
    numbers = [int(t) for t in labels if t.strip().lstrip("+-").isdigit()]
    sides = {f for f, family_words in SIDES.items() if labels & set(family_words)}
    unsigned = any(n > 0 for n in numbers) and not any(n < 0 for n in numbers)
    valid = (labels <= recognised | {name for name in labels if read_as}
             and len(sides) <= 1 and not unsigned)
    winner = draw(st.sampled_from([C.LABEL, "winner"]))
    cols = [C.ITEM, C.ANNOTATOR, C.POOL, C.MODEL_A, C.MODEL_B, winner]
    dialect = draw(DIALECTS)
    path = folder / f"prefs{suffix(dialect)}"
    data, _ = delimited(cols, [[r[c if c != winner else C.LABEL] for c in cols] for r in rows],
                        dialect)
    path.write_bytes(data)
    spec = write_spec(folder / "prefs.yaml", read={"sep": ";"} if dialect.sep == ";" else None,
                      **({"columns": {C.LABEL: winner}} if winner != C.LABEL else {}))
    return Case(path, spec, n_records=len(rows), rows=rows, valid=valid,
                label_of=preference_value, read_as=read_as,
                id_columns=(C.ITEM, C.ANNOTATOR, C.POOL, C.MODEL_A, C.MODEL_B))


@FUZZ
@given(st.data())
def test_preference_tables(data):
    audited(preference_table, data)


#: Model names a winner column writes: none a number, a tie word or a vocabulary's side; with
#: blanks around, Unicode in both normal forms, an emoji.
WINNER_NAMES = ["gpt-4", "gpt-4-0613", " llama-2-70b ", "claude-2", "Mistral 7B", NFC_E, NFD_E,
                "\u6a21\u578b-7b", "\U0001F916"]


@st.composite
def winner_name_table(draw, folder: Path):
    """A long A/B table whose winner column holds the winning model's name or a tie word
    (``0`` now and then), read without a spec or declared by ``label.names_winner: true``; now
    and then one label is a model's name that is not one of its row's: exit 2 naming its line
    (README: fewer such rows than rows read, each a schema failure naming its line)."""
    rows = draw(judgments(labels=st.just("tie"), pairwise=True,
                          models=st.sampled_from(WINNER_NAMES)))
    read_as = {}
    for i, r in enumerate(rows):
        pick = draw(st.sampled_from([C.MODEL_A, C.MODEL_B, C.MODEL_A, C.MODEL_B, "tie", "0"]))
        label = (r[pick] if pick in (C.MODEL_A, C.MODEL_B) else
                 draw(st.sampled_from(TIES)) if pick == "tie" else "0")
        rows[i] = {**r, C.LABEL: label}
        read_as[r[C.ITEM], r[C.ANNOTATOR]] = {C.MODEL_A: -1, C.MODEL_B: 1}.get(pick, 0)
    declared = draw(st.booleans())
    stray = None
    if len(rows) > 1 and draw(st.integers(0, 3)) == 0:
        stray = draw(st.integers(0, len(rows) - 1))
        named = [k for k, r in enumerate(rows) if k != stray
                 and read_as[r[C.ITEM], r[C.ANNOTATOR]] != 0]
        others = [m for m in WINNER_NAMES
                  if m not in (rows[stray][C.MODEL_A], rows[stray][C.MODEL_B])]
        if named or declared:  # inferred, the reading needs a row that names its model
            rows[stray] = {**rows[stray], C.LABEL: draw(st.sampled_from(others))}
        else:
            stray = None
    winner = draw(st.sampled_from([C.LABEL, "winner"]))
    cols = [C.ITEM, C.ANNOTATOR, C.POOL, C.MODEL_A, C.MODEL_B, winner]
    dialect = draw(DIALECTS)
    path = folder / f"winners{suffix(dialect)}"
    data, lines = delimited(cols, [[r[c if c != winner else C.LABEL] for c in cols]
                                   for r in rows], dialect)
    path.write_bytes(data)
    keys = {"columns": {C.LABEL: winner}} if winner != C.LABEL else {}
    if declared:
        keys["label"] = {"kind": "preference", "names_winner": True}
    spec = write_spec(folder / "winners.yaml",
                      read={"sep": ";"} if dialect.sep == ";" else None, **keys)
    return Case(path, spec, n_records=len(rows), rows=rows, valid=stray is None,
                label_of=preference_value, read_as=read_as,
                bad_lines={lines[stray]} if stray is not None else set(),
                id_columns=(C.ITEM, C.ANNOTATOR, C.POOL, C.MODEL_A, C.MODEL_B))


@FUZZ
@given(st.data())
def test_winner_name_tables(data):
    audited(winner_name_table, data)


#: A team's own winner words, declared by a spec's ``label: {kind: preference, map: ...}``.
DECLARED = {"A wins": -1, "A wins big": -2, "B wins": 1, "B wins big": 2, "Tie": 0,
            "Both bad": 0}
#: Written beside them: the same words with spaces around (a key matches them), and words
#: the map does not hold (another case, a typo, a model's name): each a schema failure.
DECLARED_SPACED = {" A wins": -1, "B wins ": 1}
UNDECLARED = ["a wins", "B win", "tie", "gpt-4", "A  wins"]


@st.composite
def declared_preference_table(draw, folder: Path):
    """A long A/B table whose winner words are read through the spec's ``label.map``
    (README: a key matches a label written the same way but for surrounding whitespace); now
    and then a word the map does not hold (exit 2, naming its line)."""
    words = {**DECLARED, **DECLARED_SPACED}
    rows = draw(judgments(labels=st.sampled_from(sorted(words)), pairwise=True,
                          models=MODEL_NAMES))
    spoilt = None
    if draw(st.integers(0, 3)) == 0:
        spoilt = draw(st.integers(0, len(rows) - 1))
        rows[spoilt] = {**rows[spoilt], C.LABEL: draw(st.sampled_from(UNDECLARED))}
    cols = [C.ITEM, C.ANNOTATOR, C.POOL, C.MODEL_A, C.MODEL_B, C.LABEL]
    dialect = draw(DIALECTS)
    path = folder / f"prefs{suffix(dialect)}"
    data, lines = delimited(cols, [[r[c] for c in cols] for r in rows], dialect)
    path.write_bytes(data)
    spec = write_spec(folder / "prefs.yaml", read={"sep": ";"} if dialect.sep == ";" else None,
                      label={"kind": "preference", "map": DECLARED})
    return Case(path, spec, n_records=len(rows), rows=rows, valid=spoilt is None,
                label_of=words.__getitem__,
                bad_lines={lines[spoilt]} if spoilt is not None else set(),
                id_columns=(C.ITEM, C.ANNOTATOR, C.POOL, C.MODEL_A, C.MODEL_B))


@FUZZ
@given(st.data())
def test_declared_preference_tables(data):
    audited(declared_preference_table, data)


@st.composite
def preference_counts(draw, folder: Path):
    """A/B/tie *counts* per comparison (``a_wins, b_wins, ties`` columns, as leaderboards
    publish them): no annotator, no judgment per row; not a shape the loader reads, so the
    load must be refused naming a missing column (or, without a spec, the columns it saw)."""
    n = draw(st.integers(1, 5))
    cols = [C.ITEM, C.MODEL_A, C.MODEL_B, "a_wins", "b_wins", "ties"]
    records = [[f"q{i}", "gpt-4", "claude-2", *(str(draw(st.integers(0, 9))) for _ in range(3))]
               for i in range(n)]
    dialect = draw(DIALECTS)
    path = folder / f"counts{suffix(dialect)}"
    path.write_bytes(delimited(cols, records, dialect)[0])
    spec = write_spec(folder / "counts.yaml", read={"sep": ";"} if dialect.sep == ";" else None)
    return Case(path, spec, n_records=n, valid=False)


@settings(FUZZ, max_examples=10)
@given(st.data())
def test_preference_count_tables_are_refused(data):
    case, dataset = audited(preference_counts, data)
    assert dataset is None  # exit 2: there is no judgment to audit


# -- wide tables: one column per rater -------------------------------------------------------

#: Cells of a rater column: numbers in several spellings, text, the texts of missing values,
#: blanks (no judgment: dropped and counted).
WIDE_CELLS = st.one_of(st.sampled_from(["3", "3.0", " 3", "4", "x", "NA", "nan", "TRUE", "007",
                                        "7", NFC_E, NFD_E, None, *BLANKS]), TEXT)
JSON_CELLS = st.one_of(WIDE_CELLS, st.integers(-3, 5), st.sampled_from([3.0, 2.5, True, False]))


@st.composite
def wide_table(draw, folder: Path):
    """A wide table (``layout: wide``): an item column and one column per rater, as CSV / TSV /
    ``;`` text or JSON Lines, with blank cells (no judgment) and mixed types; raters named as
    people name them (``007`` beside ``7``, ``é`` in its two forms); now and then a blank
    item (exit 2, naming its line)."""
    raters = draw(st.lists(IDS.filter(lambda s: s.strip() != C.ITEM and "\n" not in s),
                           min_size=1, max_size=4, unique=True))
    items = draw(st.lists(IDS, min_size=1, max_size=5, unique=True))
    jsonl = draw(st.booleans())
    cells = [{r: draw(JSON_CELLS if jsonl else WIDE_CELLS) for r in raters} for _ in items]
    spoilt = None
    if draw(st.integers(0, 5)) == 0:
        spoilt = draw(st.integers(0, len(items) - 1))
        items[spoilt] = draw(st.sampled_from(BLANKS))
    header = [C.ITEM, *raters]
    if draw(st.booleans()):
        header = [*raters, C.ITEM]  # the BOM, if any, lands on a rater's name
    records = [[item if c == C.ITEM else row[c] for c in header] for item, row in zip(items, cells)]
    if jsonl:
        path = folder / "wide.jsonl"
        path.write_text("".join(json.dumps(dict(zip(header, rec)), ensure_ascii=False) + "\n"
                                for rec in records), encoding="utf-8")
        lines = list(range(1, len(items) + 1))
        spec_read = None
    else:
        dialect = draw(DIALECTS)
        path = folder / f"wide{suffix(dialect)}"
        data, lines = delimited(header, records, dialect)
        path.write_bytes(data)
        spec_read = {"sep": ";"} if dialect.sep == ";" else None
    spec = write_spec(folder / "wide.yaml", read=spec_read, layout="wide",
                      annotator_columns=raters)
    rows = [{C.ITEM: item, C.ANNOTATOR: r, C.LABEL: row[r]}
            for r in raters for item, row in zip(items, cells) if not blank(row[r])]
    bad = ({lines[spoilt]} if spoilt is not None
           and any(not blank(v) for v in cells[spoilt].values()) else set())
    return Case(path, spec, n_records=len(items) * len(raters), rows=rows,
                valid=bool(rows) and not bad, bad_lines=bad, id_columns=(C.ITEM, C.ANNOTATOR))


@FUZZ
@given(st.data())
def test_wide_tables(data):
    audited(wide_table, data)


# -- the whole run, reports included ---------------------------------------------------------

@settings(FUZZ, max_examples=8)
@given(st.data())
def test_long_tables_with_reports(data):
    """The HTML report, card, items table and croissant.json are written for such ids too."""
    audited(long_delimited, data, report=True)


# -- pools from a file -------------------------------------------------------------------------

#: Texts a missing value is written as (compared without case or surrounding blanks): a pool
#: so named in a ``--pools`` file is no pool, the pool ``missing``, with a warning (README,
#: "Pools wherever the data keeps them"; CSC's metadata writes ``"Gender": "nan"``).
MISSING_POOL_TEXTS = {"nan", "<na>"}


def pool_read(text: str) -> str:
    """The pool a ``--pools`` file's value is read as: without surrounding blanks, and
    ``missing`` for the text of a missing value."""
    text = text.strip()
    return "missing" if text.casefold() in MISSING_POOL_TEXTS else text


@st.composite
def pools_file_table(draw, folder: Path):
    """A long table without a pool column and ``--pools`` naming each annotator's pool in a
    CSV or JSON file written from the same ids (as a team exports its rater sheet); a pool
    name from a file is stripped of surrounding blanks, and the text of a missing value
    (``nan``) is the pool ``missing``, as the README says."""
    rows = draw(judgments())
    cols = [C.ITEM, C.ANNOTATOR, C.LABEL]
    dialect = draw(DIALECTS.filter(lambda d: d.sep != ";"))
    path = folder / f"t{suffix(dialect)}"
    path.write_bytes(delimited(cols, [[r[c] for c in cols] for r in rows], dialect)[0])
    pool_of = {r[C.ANNOTATOR]: r[C.POOL] for r in rows}
    rows = [{**r, C.POOL: pool_read(r[C.POOL])} for r in rows]
    if draw(st.booleans()):
        pools = folder / "pools.json"
        pools.write_text(json.dumps(pool_of, ensure_ascii=draw(st.booleans())), encoding="utf-8")
    else:
        pools = folder / "pools.csv"
        pools.write_bytes(delimited([C.ANNOTATOR, C.POOL], sorted(pool_of.items()),
                                    Dialect(bom=draw(st.booleans()),
                                            crlf=draw(st.booleans())))[0])
    # every format's keys are stripped too (a CSV's and a JSON object's alike): two ids that
    # differ only by surrounding blanks and have different pools are one key given two pools
    # there (exit 2, naming the pools file and the key)
    stripped = {}
    for ann, pool in pool_of.items():
        stripped.setdefault(ann.strip(), set()).add(pool_read(pool))
    valid = all(len(p) == 1 for p in stripped.values())
    return Case(path, None, n_records=len(rows), rows=rows, valid=valid,
                other_files=(pools,)), pools


@FUZZ
@given(st.data())
def test_pools_from_a_file(data):
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        case, pools = data.draw(pools_file_table(folder))
        result = CliRunner().invoke(cli, ["run", str(case.path), "--pools", str(pools),
                                          "--bootstrap", "20", "--no-report", "--quiet",
                                          "--out", str(folder / "out")])
        dataset = check_contract(case, result, folder / "out")
        if dataset is not None and "missing" in dataset["pools"]:
            said = [line for line in result.stderr.splitlines() if line.startswith("warning:")
                    and str(pools.name) in line and "their pool is 'missing'" in line]
            assert said, f"annotators put in pool 'missing' without a word: {result.output}"
