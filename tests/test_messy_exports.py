"""Files in the shapes annotation teams export them, found wanting by a sweep (helper-75).

A corpus of 80+ exports (Qualtrics, SurveyMonkey, Google Forms, MTurk batch results, Excel's
"CSV UTF-8" and "Unicode Text", cp1252 and Mac Roman, decimal commas, percentages and stars as
ratings, ids Excel rewrote, title and totals rows, repeated or padded header names, NUL
padding, compressed files, JSON Lines and JSON in every shape pandas and ``datasets`` write)
was run through ``validate`` / ``run`` / ``card`` / ``check`` / ``export`` on both engines, each
table compared with what its file says. Most were already read, or refused in one line saying
what to do; each test here is one that was not, with its minimal file:

* a rating table's words beside numbers (``N/A``, ``-``, ``4 stars``): the suggested
  ``label.order`` sorted the labels as text (``10`` before ``2``, ``100%`` before ``20%``) and
  put ``N/A`` on the scale without a word.
* JSON Lines in a ``.json`` file (``datasets``' ``Dataset.to_json("x.json")`` writes JSON Lines,
  as does pandas' ``to_json(lines=True)``): "cannot detect the format" with nothing on why
  (with ``--format table``, "invalid JSON at line 2: Extra data"), where ``--engine spark``
  read it.
* ``--engine spark`` and a JSON Lines line that is not one JSON object: a line holding an array
  (``[{...}]``) was read as its elements, a judgment the pandas engine refuses; two objects on
  one line (``cat`` of files without a last line break) as the first alone, the second lost
  without a word; a line ``null`` as no record (exit 0 where the pandas engine is exit 2); a
  truncated or invalid line, a number or a string as records of nulls, refused as "not null"
  failures naming no line; a JSON object over many lines (``to_json(indent=2)``) as records
  of its lines. Spark now refuses each in the pandas engine's words, naming the line.
* ``--engine spark`` and column names alike but for case (``label`` and ``Label``), which
  Spark's reader does not tell apart by default: a CSV's were renamed ``label5``, ``Label6``
  and the message named columns no file holds ("missing required column(s) 'label'; columns
  present: ..., 'label5', 'Label6'"), as it did for a name repeated exactly, which the pandas
  engine refuses as repeated; a Parquet or JSON file was "Spark cannot read it:
  [COLUMN_ALREADY_EXISTS]". Now a repeated name is refused in the pandas engine's words, and
  names alike but for case are named, with the setting that reads them.
* A NUL character read by pandas' C parser (a file pyarrow cannot read, such as a wide table
  with a short row, or one read with ``read.skiprows`` / ``read.comment``): it dropped them,
  so ``q1\\x00`` was read ``q1`` (two ids made one, without a word, where pyarrow's reading
  refuses the NUL naming its column and line), and a line of NULs (a file padded with them,
  a write cut short) was a completely empty record, skipped.
* A ``.json`` file holding a JSON object rather than an array of records (pandas'
  ``to_json()`` default, ``orient='columns'``; ``orient='index'`` and ``'split'``; records
  under a key, as an API returns them): "cannot detect the format" with nothing on why, or
  "expected a JSON array of objects". The message now says what the file holds and how to
  write it as a table.
* A title, an export's date or comment lines above the header (what report generators and
  spreadsheets put there): "cannot detect the format (columns: 'Annotation export')". The
  message now names the line holding the header and the ``read:`` line that reads past the
  lines above it (``skiprows``; ``comment`` for ``#`` lines, which ``--engine spark`` reads).
* Amazon Mechanical Turk batch results mapped by a spec (``WorkerId``, ``Input.*``,
  ``Answer.*``): assignments the requester rejected (``AssignmentStatus`` ``Rejected``,
  work refused as spam or careless) were audited as judgments without a word. Now a warning
  counts them and names the first (a warning, not a drop: whether they belong in the audit
  is the auditor's call), on both engines.
* A table file named without an extension or with another one (``export``, ``ratings.dat``):
  "cannot detect the format" with nothing on why; now the name is the reason given, with
  ``--format table``, which reads it as CSV.
* ``--engine spark`` with ``read.skiprows`` (the spec a title above the header needs): "is not
  supported with --engine spark" said nothing of what to do; now it names the three ways.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import audit
from audit.cli import cli
from audit.errors import AuditError, SchemaError


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def one_error(result, *words):
    """Exit 2, one ``error:`` message holding each of ``words``, no traceback."""
    out = result.output
    assert result.exit_code == 2, out
    assert "Traceback" not in out and "internal error" not in out, out
    assert sum(line.startswith("error:") for line in out.splitlines()) == 1, out
    for word in words:
        assert word in out, f"{word!r} not in {out!r}"
    return out


# -- ratings: the order a message suggests --------------------------------------------------

def _ratings(tmp_path: Path, labels) -> Path:
    path = tmp_path / "ratings.csv"
    rows = [f"s{k},m{k % 2},r{k % 3},{label}" for k, label in enumerate(labels)]
    path.write_text("item,model,annotator,label\n" + "\n".join(rows) + "\n")
    return path


def test_a_rating_scales_suggested_order_is_numeric_and_names_the_words(tmp_path):
    """Ratings 0..10 with one ``N/A``: the suggested order was ``"0", "1", "10", "2", ...,
    "N/A"`` (text order: a spec copied from it reads 10 as worse than 2, and N/A as the best
    rating). Now the numbers come in their order, and the words are named, with the
    ``na_values`` line for a missing rating."""
    out = one_error(invoke("validate", _ratings(tmp_path, [*range(11), "N/A"])),
                    "ratings.csv", "column 'label'", "'N/A' is not a number",
                    'read: {na_values: ["N/A"]}')
    assert 'order: ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "N/A"]' in out, out


def test_ratings_written_as_words_are_suggested_in_the_order_of_their_numbers(tmp_path):
    """``20%`` .. ``100%``: the text order put ``100%`` first."""
    out = one_error(invoke("validate", _ratings(tmp_path, ["20%", "40%", "60%", "80%", "100%"])),
                    "ratings.csv", "column 'label'")
    assert 'order: ["20%", "40%", "60%", "80%", "100%"]' in out, out
    assert "not a number" not in out, out


# -- JSON Lines in a .json file --------------------------------------------------------------

RECORDS = [{"item": f"q{k // 2}", "annotator": f"a{k % 2}", "label": "AB"[k % 3 == 0]}
           for k in range(8)]


def _judgments(table) -> list[tuple]:
    frame = table.frame
    return sorted(zip(frame["item"].astype(str), frame["annotator"].astype(str),
                      frame["label"].astype(str)))


def test_json_lines_in_a_json_file_are_read_as_json_lines(tmp_path):
    """What ``Dataset.to_json("x.json")`` writes (a byte-order mark and a blank last line too):
    read as the same records in a ``.jsonl`` file are, on its own and with --format table."""
    lines = "\n".join(json.dumps(r) for r in RECORDS) + "\n\n"
    (tmp_path / "x.json").write_text("\ufeff" + lines, encoding="utf-8")
    (tmp_path / "x.jsonl").write_text(lines, encoding="utf-8")
    assert _judgments(audit.load(tmp_path / "x.json")) == _judgments(
        audit.load(tmp_path / "x.jsonl"))
    assert len(audit.load(tmp_path / "x.json", format="table").frame) == len(RECORDS)
    for command in ("validate", "run"):
        args = ["--out", tmp_path / command, "--bootstrap", "50"] if command == "run" else []
        assert invoke(command, tmp_path / "x.json", *args).exit_code == 0


def test_a_json_lines_json_files_record_is_named_by_its_line(tmp_path):
    records = [*RECORDS[:3], {"item": "q9", "annotator": "a0"}]
    (tmp_path / "x.json").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    with pytest.raises(SchemaError, match=r"column 'label': not null .*\(line 4\)"):
        audit.load(tmp_path / "x.json")


@pytest.mark.parametrize("text", [
    json.dumps(RECORDS, indent=2),                       # a JSON array, pretty-printed
    json.dumps(RECORDS),                                 # on one line
    "[\n" + ",\n".join(json.dumps(r) for r in RECORDS) + "\n]\n",   # a record a line
])
def test_a_json_array_is_still_a_json_array(tmp_path, text):
    (tmp_path / "x.json").write_text(text)
    assert len(audit.load(tmp_path / "x.json").frame) == len(RECORDS)


def test_a_prodigy_export_in_a_json_file_is_read_as_its_json_lines(tmp_path):
    """Detected as Prodigy by its first record, then read as a JSON array: "invalid JSON at
    line 2: Extra data"."""
    records = [{"text": "t", "_input_hash": k, "_task_hash": k, "_annotator_id": f"d-{who}",
                "answer": "accept" if (k + len(who)) % 2 else "reject"}
               for k in range(4) for who in ("al", "bob")]
    lines = "\n".join(json.dumps(r) for r in records) + "\n"
    (tmp_path / "db-out.json").write_text(lines)
    (tmp_path / "db-out.jsonl").write_text(lines)
    assert _judgments(audit.load(tmp_path / "db-out.json")) == _judgments(
        audit.load(tmp_path / "db-out.jsonl"))


# -- --engine spark: JSON Lines lines that are not one JSON object ---------------------------

def _error(path, engine: str) -> str:
    with pytest.raises(AuditError) as err:
        audit.load(path, engine=engine, format="table")
    return str(err.value)


GOOD = "\n".join(json.dumps(r) for r in RECORDS[:6]) + "\n"
Q9 = {"item": "q9", "annotator": "a0", "label": "A"}


@pytest.mark.spark
@pytest.mark.parametrize("name, text, words", [
    ("array.jsonl", GOOD + json.dumps([Q9]) + "\n", "line 7 is not a JSON object"),
    ("two.jsonl", GOOD[:-1] + json.dumps(Q9) + "\n", "invalid JSON at line 6"),
    ("spaced.jsonl", GOOD + json.dumps(Q9) + " " + json.dumps(Q9) + "\n",
     "invalid JSON at line 7"),
    ("null.jsonl", GOOD + "null\n", "line 7 is not a JSON object"),
    ("number.jsonl", GOOD + "5\n", "line 7 is not a JSON object"),
    ("truncated.jsonl", GOOD + '{"item": "q9", "annot\n', "invalid JSON at line 7"),
    ("invalid.jsonl", GOOD + '{"item": "q9", "annotator": tru}\n', "invalid JSON at line 7"),
    ("crlf.jsonl", GOOD.replace("\n", "\r\n") + "null\r\n", "line 7 is not a JSON object"),
    ("lines.json", "\ufeff" + GOOD + "[1]\n", "line 7 is not a JSON object"),
    ("pretty.json", json.dumps({"item": {"0": "q1"}, "annotator": {"0": "a"}}, indent=2),
     "expected a JSON array of objects"),
    ("mixed.json", json.dumps([*RECORDS, 5]), "expected a JSON array of objects"),
])
def test_spark_refuses_a_line_that_is_not_one_record_as_pandas_does(spark, tmp_path, name,
                                                                     text, words):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    assert words in _error(path, "pandas")
    assert _error(path, "spark") == _error(path, "pandas")


@pytest.mark.spark
def test_spark_still_reads_json_lines_and_arrays_as_pandas_does(spark, tmp_path):
    """Blank lines, CRLF, a byte-order mark, blanks around a record and '}{' inside a text are
    no reason to refuse a line."""
    records = [*RECORDS, {"item": "q8", "annotator": "a0", "label": "x}{y} {z"}]
    lines = [json.dumps(r) for r in records]
    text = "\ufeff" + lines[0] + "\r\n\n  " + "\n".join(lines[1:]) + "  \n\n"
    for name, body in (("x.jsonl", text), ("x.json", text), ("a.json", json.dumps(records))):
        (tmp_path / name).write_text(body, encoding="utf-8")
        assert _judgments(audit.load(tmp_path / name, engine="spark")) == _judgments(
            audit.load(tmp_path / name)), name


# -- --engine spark: column names alike but for case ---------------------------------------

def _with_columns(tmp_path, name: str, columns: list[str]) -> Path:
    import pandas as pd

    rows = [[r["item"], r["annotator"], r["label"], "x"] for r in RECORDS]
    path = tmp_path / name
    if name.endswith(".csv"):
        path.write_text(",".join(columns) + "\n" + "".join(",".join(r) + "\n" for r in rows))
    elif name.endswith(".jsonl"):
        path.write_text("".join(json.dumps(dict(zip(columns, r))) + "\n" for r in rows))
    else:
        pd.DataFrame(rows, columns=columns).to_parquet(path)
    return path


@pytest.mark.spark
def test_spark_names_a_repeated_csv_column_as_pandas_does(spark, tmp_path):
    path = _with_columns(tmp_path, "t.csv", ["item", "annotator", "label", "label"])
    assert "repeated column name(s) 'label'" in _error(path, "pandas")
    assert _error(path, "spark") == _error(path, "pandas")


@pytest.mark.spark
@pytest.mark.parametrize("name", ["t.csv", "t.jsonl", "t.parquet"])
def test_spark_names_columns_alike_but_for_case_and_the_setting_that_reads_them(
        spark, tmp_path, name):
    path = _with_columns(tmp_path, name, ["item", "annotator", "label", "Label"])
    message = _error(path, "spark")
    assert "'Label', 'label' are the same but for case" in message, message
    assert "--spark-conf spark.sql.caseSensitive=true" in message, message
    assert "label5" not in message and "COLUMN_ALREADY_EXISTS" not in message, message
    spark.conf.set("spark.sql.caseSensitive", "true")
    try:
        assert _judgments(audit.load(path, engine="spark")) == _judgments(audit.load(path))
    finally:
        spark.conf.unset("spark.sql.caseSensitive")


# -- NUL characters read by pandas' C parser ----------------------------------------------

@pytest.mark.parametrize("text, spec, line", [
    # a wide table's short row sends the file to pandas
    ("item,r1,r2\nq1,1,2\nq1\x00,2\nq2,1,1\n",
     "layout: wide\nannotator_columns: [r1, r2]\nlabel: {kind: ordinal, order: [1, 2]}\n", 3),
    ("Export of 2024-05-01\nitem,annotator,label\nq1,a1,x\nq1\x00,a2,y\nq2,a1,x\n",
     "read: {skiprows: 1}\n", 4),
    ("# labeltool v2\nitem,annotator,label\nq1,a1,x\nq1\x00,a2,y\nq2,a1,x\n",
     "read: {comment: '#'}\n", 4),
    ("item,annotator,label\nq1,a1,x\nq1,a2,y\n" + "\x00" * 64, None, 4),  # NUL padding
])
def test_a_nul_read_by_pandas_c_parser_is_refused_by_its_column_and_line(tmp_path, text,
                                                                         spec, line):
    (tmp_path / "t.csv").write_bytes(text.encode())
    args = ["--spec", tmp_path / "t.yaml"] if spec else []
    if spec:
        (tmp_path / "t.yaml").write_text(spec)
    one_error(invoke("validate", tmp_path / "t.csv", *args), "t.csv", "column 'item'",
              f"line {line}: contains a NUL character")


# -- a JSON object where a table's records were meant ---------------------------------------

@pytest.mark.parametrize("orient, words", [
    ("columns", ["one object per column (keys 'item', 'annotator', 'label')",
                 "to_json() default (orient='columns')"]),
    ("index", ["an object of 8 records keyed by '0', '1'", "orient='index'"]),
    ("split", ["keys 'columns', 'index', 'data'", "orient='split'"]),
    ("wrapped", ["the key 'data' holds an array of 8 records: give that array as the file"]),
])
def test_a_json_object_says_what_it_holds_and_how_to_write_a_table(tmp_path, orient, words):
    import pandas as pd

    frame = pd.DataFrame(RECORDS)
    text = (json.dumps({"version": 2, "data": RECORDS}) if orient == "wrapped"
            else frame.to_json(orient=orient))
    (tmp_path / "x.json").write_text(text)
    for fmt in ("auto", "table"):
        out = one_error(invoke("validate", tmp_path / "x.json", "--format", fmt), "x.json",
                        *words)
        assert "to_json(orient='records')" in out or "give that array" in out, out


def test_an_array_holding_something_else_names_its_element(tmp_path):
    (tmp_path / "x.json").write_text(json.dumps([*RECORDS[:2], 5]))
    one_error(invoke("validate", tmp_path / "x.json"), "x.json",
              "element 2 (0-based) of the array is a number, not a record")


# -- a title above the header -----------------------------------------------------------------

TABLE = "item,annotator,label\nq1,a1,x\nq1,a2,y\nq2,a1,x\nq2,a2,x\n"


@pytest.mark.parametrize("name, text, hint", [
    ("title.csv", "Annotation export\nGenerated 2024-05-01\n\n" + TABLE,
     "read: {skiprows: 3}"),
    ("comments.csv", "# labeltool v2\n# 2024-05-01\n" + TABLE, 'read: {comment: "#"}'),
    ("excel.csv", ("Report;;\r\n;;\r\n" + TABLE.replace(",", ";")).replace("\n", "\r\n")
     .replace("\r\r", "\r"), 'read: {skiprows: 2, sep: ";"}'),
    ("comments.tsv", "% exported\n" + TABLE.replace(",", "\t"), 'read: {comment: "%"}'),
])
def test_a_title_above_the_header_is_named_with_the_read_line_that_passes_it(tmp_path, name,
                                                                              text, hint):
    (tmp_path / name).write_text(text)
    out = one_error(invoke("validate", tmp_path / name), name, "holds the header ('item', "
                    "'annotator', 'label')", hint)
    (tmp_path / "spec.yaml").write_text(hint + "\n")
    assert invoke("validate", tmp_path / name, "--spec", tmp_path / "spec.yaml").exit_code == 0
    assert "cannot detect" in out  # the format is still not guessed


# -- MTurk batch results: rejected assignments ---------------------------------------------

MTURK = ("HITId,AssignmentId,WorkerId,AssignmentStatus,Input.item,Answer.choice\n"
         "H1,A1,W1,Approved,q1,x\nH1,A2,W2,Rejected,q1,y\nH2,A3,W1,Approved,q2,x\n"
         "H2,A4,W2,Submitted,q2,x\nH2,A5,W3, Rejected ,q2,y\n")
MTURK_SPEC = "columns: {item: Input.item, annotator: WorkerId, label: Answer.choice}\n"


def _mturk(tmp_path) -> tuple[Path, Path]:
    (tmp_path / "batch.csv").write_text(MTURK)
    (tmp_path / "batch.yaml").write_text(MTURK_SPEC)
    return tmp_path / "batch.csv", tmp_path / "batch.yaml"


def _rejected_warnings(path, spec, engine: str) -> tuple[int, list[str]]:
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = audit.load(path, spec=spec, engine=engine)
    return len(table.frame), [str(w.message) for w in caught if "Rejected" in str(w.message)]


def test_rejected_mturk_assignments_are_named_in_a_warning(tmp_path):
    path, spec = _mturk(tmp_path)
    n, said = _rejected_warnings(path, spec, "pandas")
    assert n == 5  # audited as written: the warning says so, nothing is dropped
    assert said == [f"{path}: 2 record(s) are assignments Amazon Mechanical Turk marks Rejected "
                    "(column 'AssignmentStatus', first: line 3), audited as judgments like "
                    "the others: delete them from the file to leave them out"], said
    result = invoke("validate", path, "--spec", spec)
    assert result.exit_code == 0 and "marks Rejected" in result.output, result.output


def test_a_batch_without_rejected_assignments_has_no_warning(tmp_path):
    path, spec = _mturk(tmp_path)
    path.write_text(MTURK.replace("Rejected", "Approved"))
    assert _rejected_warnings(path, spec, "pandas") == (5, [])


@pytest.mark.spark
def test_spark_names_rejected_mturk_assignments_too(spark, tmp_path):
    path, spec = _mturk(tmp_path)
    n, said = _rejected_warnings(path, spec, "spark")
    assert n == 5 and len(said) == 1 and "2 record(s) are assignments" in said[0], said


# -- a name that says no format -------------------------------------------------------------

@pytest.mark.parametrize("name, said", [("export", "its name has no extension"),
                                        ("ratings.dat", "its name ends in .dat")])
def test_a_table_named_without_its_extension_is_told_to_be_renamed(tmp_path, name, said):
    (tmp_path / name).write_text(TABLE)
    one_error(invoke("validate", tmp_path / name), name, said, "--format table")
    assert invoke("validate", tmp_path / name, "--format", "table").exit_code == 0


@pytest.mark.spark
def test_spark_says_what_to_do_with_a_title_it_cannot_skip(spark, tmp_path):
    (tmp_path / "t.csv").write_text("Annotation export\n" + TABLE)
    (tmp_path / "t.yaml").write_text("read: {skiprows: 1}\n")
    with pytest.raises(AuditError) as err:
        audit.load(tmp_path / "t.csv", spec=tmp_path / "t.yaml", engine="spark")
    for words in ("read.skiprows is not supported with --engine spark", "delete the lines",
                  "read: {comment: '#'}", "drop --engine spark"):
        assert words in str(err.value), str(err.value)
    (tmp_path / "t.csv").write_text("# Annotation export\n" + TABLE)   # the way it names
    (tmp_path / "t.yaml").write_text("read: {comment: '#'}\n")
    assert _judgments(audit.load(tmp_path / "t.csv", spec=tmp_path / "t.yaml",
                                 engine="spark")) == _judgments(audit.load(tmp_path / "t.csv",
                                                                           spec=tmp_path / "t.yaml"))
