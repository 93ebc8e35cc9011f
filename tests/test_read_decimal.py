"""``read: {decimal: ","}``: labels written with a decimal comma, as a German Excel writes a CSV.

The labels are checked against an independent reading (pandas' own ``decimal=","`` parser of the
same bytes); ids beside them (Unicode, leading zeros, an id that looks like ``1,5``) must stay
text exactly as written.
"""

from __future__ import annotations

import io
import math
import warnings

import pandas as pd
import pytest
from click.testing import CliRunner

from audit.cli import cli
from audit.contract import columns as C
from audit.errors import InputError
from audit.ingest import load

# "CSV UTF-8 (durch Trennzeichen getrennt)" from a German Excel: byte-order mark, ';' between
# cells, CRLF line ends, numbers with a decimal comma, ids as typed (the id column formatted
# as text, so 007 keeps its zeros)
ROWS = [("007", "Jürgen", "sys-α", "1,5"), ("007", "Zoë", "sys-α", "2"),
        ("1,5", "Jürgen", "sys-β", "-0,25"), ("1,5", "Zoë", "sys-β", "3,75"),
        ("010", "Jürgen", "sys-α", "4"), ("010", "Zoë", "sys-β", ",5"),
        ("中文", "Jürgen", "sys-β", "2,0"), ("中文", "Zoë", "sys-α", "1,25e1")]
GERMAN = ("\ufeffitem;annotator;model;label\r\n"
          + "".join(";".join(r) + "\r\n" for r in ROWS)).encode("utf-8")
SPEC = 'label: {kind: interval}\nread: {sep: ";", decimal: ","}\n'


def files(tmp_path, data=GERMAN, spec=SPEC):
    (tmp_path / "bewertungen.csv").write_bytes(data)
    (tmp_path / "spec.yaml").write_text(spec, encoding="utf-8")
    return tmp_path / "bewertungen.csv", tmp_path / "spec.yaml"


def quiet_load(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load(*args, **kwargs)


def test_decimal_comma_labels_read_as_pandas_reads_them(tmp_path):
    src, spec = files(tmp_path)
    table = quiet_load(src, spec=spec)
    independent = pd.read_csv(io.BytesIO(GERMAN), sep=";", decimal=",", encoding="utf-8-sig",
                              dtype={"item": str, "annotator": str, "model": str})
    f = table.frame
    got = {(i, a): float(v) for i, a, v in zip(f[C.ITEM].astype(str),
                                               f[C.ANNOTATOR].astype(str), f[C.LABEL])}
    want = {(i, a): float(v) for i, a, v in zip(independent["item"], independent["annotator"],
                                                independent["label"])}
    assert got.keys() == want.keys()
    for key, value in want.items():
        assert math.isclose(got[key], value, rel_tol=0, abs_tol=1e-12), key
    assert table.scale.kind.value == "interval"


def test_ids_stay_text_exactly_as_written(tmp_path):
    src, spec = files(tmp_path)
    f = quiet_load(src, spec=spec).frame
    assert set(f[C.ITEM].astype(str)) == {"007", "1,5", "010", "中文"}
    assert set(f[C.ANNOTATOR].astype(str)) == {"Jürgen", "Zoë"}
    assert set(f[C.MODEL].astype(str)) == {"sys-α", "sys-β"}


def test_wide_table_reads_every_annotator_column_and_no_id(tmp_path):
    wide = "tweet;r1;r2\r\n1,5;1,5;2\r\n007;;0,5\r\n".encode()
    spec = ('layout: wide\ncolumns: {item: tweet}\nannotator_columns: [r1, r2]\n'
            'label: {kind: interval}\nread: {sep: ";", decimal: ","}\n')
    src, spec = files(tmp_path, wide, spec)
    f = quiet_load(src, spec=spec).frame
    got = sorted(zip(f[C.ITEM].astype(str), f[C.ANNOTATOR].astype(str), f[C.LABEL].astype(float)))
    assert got == [("007", "r2", 0.5), ("1,5", "r1", 1.5), ("1,5", "r2", 2.0)]


def test_without_decimal_the_error_names_values_rows_and_the_option(tmp_path):
    src, spec = files(tmp_path, spec='label: {kind: interval}\nread: {sep: ";"}\n')
    result = CliRunner().invoke(cli, ["validate", str(src), "--spec", str(spec)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    for needle in ("value '1,5'", "value '-0,25'", "value ',5'", 'read: {decimal: ","}'):
        assert needle in result.output, result.output


def test_without_a_kind_the_rating_error_also_names_the_option(tmp_path):
    src, spec = files(tmp_path, spec='read: {sep: ";"}\n')
    result = CliRunner().invoke(cli, ["validate", str(src), "--spec", str(spec)])
    assert result.exit_code == 2 and 'read: {decimal: ","}' in result.output, result.output


def test_no_hint_when_most_failures_are_not_decimal_commas(tmp_path):
    data = "item;annotator;label\r\na;x;gut\r\nb;x;schlecht\r\nc;x;1,5\r\n".encode()
    src, spec = files(tmp_path, data, 'label: {kind: interval}\nread: {sep: ";"}\n')
    result = CliRunner().invoke(cli, ["validate", str(src), "--spec", str(spec)])
    assert result.exit_code == 2 and "value 'gut'" in result.output, result.output
    assert "decimal" not in result.output


@pytest.mark.parametrize("spec", ['label: {kind: interval}\n', None])
def test_a_comma_before_three_digits_is_named_as_a_thousands_separator_too(tmp_path, spec):
    # '1,234' in an English spreadsheet is 1234; the hint said read.decimal ',' reads it
    # "as numbers", which reads it as 1.234 (found by tests/test_fuzz_tables.py)
    data = 'item,model,annotator,label\n1,m,a,"1,234"\n1,m,b,"2,500"\n2,m,a,"3,000"\n2,m,b,17\n'
    src = tmp_path / "t.csv"
    src.write_text(data)
    args = ["validate", str(src)]
    if spec is not None:
        (tmp_path / "s.yaml").write_text(spec)
        args += ["--spec", str(tmp_path / "s.yaml")]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert "thousands separator (1,234 for 1234)" in result.stderr
    assert "'1,234', '2,500', '3,000'" in result.stderr
    assert "('1,234' as 1.234)" in result.stderr


def test_a_plain_decimal_comma_hint_is_unchanged():
    from audit.ingest.decimal_comma import hint

    assert hint(["1,5", "2,25", "x"]) == (
        "2 of these 3 label(s) look like numbers written with a decimal comma (1,5 for 1.5): "
        'a spec\'s read: {decimal: ","} reads them as numbers')
    assert "thousands" in hint(["1,5", "12,000"])


@pytest.mark.parametrize("label", ["1.234,5", "1.234", "1.5"])
def test_a_point_in_a_decimal_comma_number_is_refused(tmp_path, label):
    data = f"item;annotator;label\r\na;x;2,5\r\nb;x;{label}\r\n".encode()
    src, spec = files(tmp_path, data)
    with pytest.raises(InputError, match=r"read\.decimal") as err:
        quiet_load(src, spec=spec)
    assert repr(label) in str(err.value) and err.value.column == "label"


@pytest.mark.parametrize("mark", [";", ".,", "", "comma"])
def test_other_decimal_marks_are_refused_naming_the_key(tmp_path, mark):
    src, spec = files(tmp_path, spec=f'read: {{sep: ";", decimal: "{mark}"}}\n')
    result = CliRunner().invoke(cli, ["validate", str(src), "--spec", str(spec)])
    assert result.exit_code == 2 and "read.decimal" in result.output, result.output


def test_the_default_point_changes_nothing(tmp_path):
    data = "item,annotator,label\na,x,1.5\nb,x,2\n".encode()
    src, spec = files(tmp_path, data, 'label: {kind: interval}\nread: {decimal: "."}\n')
    f = quiet_load(src, spec=spec).frame
    assert sorted(f[C.LABEL].astype(float)) == [1.5, 2.0]
