"""Messages name the 1-based line a record of a CSV / TSV / JSON Lines file starts on.

The expected line is known independently: each file is written here line by line, so the line
of every record is counted as it is written (header, skipped lines, comments, blank lines,
quoted values holding line breaks), not computed by the code under test.
"""

from __future__ import annotations

import csv
import io
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.errors import InputError, SchemaError
from audit.ingest import LoadWarning, load
from audit.ingest.readers import lines as L

ORDER = "label: {kind: ordinal, order: [1, 2, 3]}\n"


def write_spec(tmp_path, text):
    spec = tmp_path / "s.yaml"
    spec.write_text(text, encoding="utf-8")
    return spec


def schema_error(src, spec=None) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(SchemaError) as err:
            load(src, spec=spec)
    return str(err.value)


def test_skipped_comment_blank_and_multiline_records_are_counted(tmp_path):
    text = ("sep=,\r\n"                        # 1  skipped (read.skiprows)
            "item,annotator,label,text\r\n"    # 2  header
            "# exported 2026-12-05\r\n"        # 3  comment
            "q1,a,1,\"one\r\ntwo\r\nthree\"\r\n"  # 4-6 a value over three lines
            "\r\n"                             # 7  blank
            "q1,b,7,x\r\n"                     # 8  the stray label
            "q2,a,2,y\r\n")                    # 9
    src = tmp_path / "t.csv"
    src.write_bytes(text.encode())
    for read in ("{skiprows: 1, comment: '#'}", "{skiprows: 1, comment: '#', quote: double}"):
        message = schema_error(src, write_spec(tmp_path, ORDER + f"read: {read}\n"))
        assert "value '7' (line 8)" in message, message


def test_jsonl_lines_count_blank_lines(tmp_path):
    src = tmp_path / "t.jsonl"
    src.write_text('{"item": "q1", "annotator": "a", "label": 1}\n\n  \n'
                   '{"item": "q1", "annotator": "b", "label": 9}\n', encoding="utf-8")
    assert "value 9 (line 4)" in schema_error(src, write_spec(tmp_path, ORDER))


def test_jsonl_with_a_byte_order_mark_on_a_blank_first_line(tmp_path):
    # the reader drops the BOM and passes over the blank line; the line scan counted the BOM
    # as a record, naming line 1 for the record on line 2 (found by tests/test_fuzz_tables.py)
    src = tmp_path / "t.jsonl"
    src.write_bytes(b'\xef\xbb\xbf\n{"item": 1, "annotator": "a", "label": null}\n'
                    b'{"item": 2, "annotator": "a", "label": "x"}\n')
    assert "(line 2)" in schema_error(src)


def test_a_regex_separator_names_the_data_row_not_a_guessed_line(tmp_path):
    src = tmp_path / "t.txt"
    src.write_text("item;;annotator;;label\nq1;;a;;1\nq1;;b;;7\n", encoding="utf-8")
    message = schema_error(src, write_spec(tmp_path, ORDER + "read: {sep: ';;'}\n"))
    assert "value '7' (data row 2 (1-based))" in message and "line" not in message


def test_unquoted_tsv_lines(tmp_path):
    src = tmp_path / "t.tsv"
    src.write_text('item\tannotator\tlabel\ttext\nq1\ta\t1\t"open\nq1\tb\t7\tclose"\n',
                   encoding="utf-8")
    spec = write_spec(tmp_path, ORDER + "read: {quote: none}\n")
    assert "value '7' (line 3)" in schema_error(src, spec)


def test_warnings_and_single_row_errors_name_the_line(tmp_path):
    src = tmp_path / "t.csv"
    src.write_text("item,annotator,label\n# note\nq1,a,1\n,,\nq2,a,1\n", encoding="utf-8")
    spec = write_spec(tmp_path, "read: {comment: '#'}\n")
    with pytest.warns(LoadWarning, match=r"1 completely empty record\(s\).*first: line 4"):
        load(src, spec=spec)
    src.write_text("item;annotator;label\nq1;a;1,5\n\nq2;a;1.234,5\n", encoding="utf-8")
    spec = write_spec(tmp_path, "label: {kind: interval}\nread: {sep: ';', decimal: ','}\n")
    with pytest.raises(InputError, match=r"column 'label', line 4: read.decimal"):
        load(src, spec=spec)


def test_a_clean_file_never_scans_for_lines(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("lines looked up for a clean file")

    monkeypatch.setattr(L.RecordLines, "names", refuse)
    src = tmp_path / "t.csv"
    src.write_text("item,annotator,label\nq1,a,1\nq1,b,2\n", encoding="utf-8")
    assert len(load(src).frame) == 2


TEXT = st.text(alphabet=st.sampled_from(list('ab ,"\n')), max_size=8)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(TEXT, st.booleans()), min_size=1, max_size=8), st.data())
def test_the_line_of_any_record_of_a_written_csv(tmp_path, records, data):
    """Records with values holding commas, quotes and line breaks (csv.writer quotes them), blank
    lines between some: the stray label's record is named by the line it was written on."""
    bad = data.draw(st.integers(0, len(records) - 1))
    out, line, expected = io.StringIO(), 2, None
    out.write("item,annotator,label,text\n")
    writer = csv.writer(out, lineterminator="\n")
    for i, (text, blank_after) in enumerate(records):
        if i == bad:
            expected = line
        chunk = io.StringIO()
        csv.writer(chunk, lineterminator="\n").writerow([f"q{i}", "a", 7 if i == bad else 1, text])
        out.write(chunk.getvalue())
        line += chunk.getvalue().count("\n")
        if blank_after:
            out.write("\n")
            line += 1
    del writer
    src = tmp_path / "w.csv"
    src.write_text(out.getvalue(), encoding="utf-8")
    message = schema_error(src, write_spec(tmp_path, ORDER))
    assert f"value '7' (line {expected})" in message, (out.getvalue(), message)
