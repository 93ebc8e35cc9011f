"""``read: {quote: none}``: tab-separated files written without CSV quoting, whose texts hold
unbalanced double quotes (Google's raw WMT MQM TSVs, github.com/google/wmt-mqm-human-evaluation).

The fixture ``fixtures/wmt_mqm_raw/mqm_generalMT2023_zhen.sample.tsv`` is in the raw Google shape
(``system, doc, doc_id, seg_id, rater, source, target, category, severity``), one annotated error
per line, texts starting, ending or holding a lone ``"``. Every line must become one judgment,
checked against the ``csv`` module reading the same file with ``csv.QUOTE_NONE``; read with CSV
quoting (the default), texts starting with ``"`` swallow lines and the warning must say so and
name the option.
"""

from __future__ import annotations

import csv
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from audit.cli import cli
from audit.contract import columns as C
from audit.errors import InputError
from audit.ingest import LoadWarning, load
from audit.ingest.readers import read_table
from conftest import wmt_tsv

RAW = Path(__file__).resolve().parent / "fixtures" / "wmt_mqm_raw"
TSV, SPEC, QUOTED_SPEC = (RAW / n for n in ("mqm_generalMT2023_zhen.sample.tsv", "mqm.yaml",
                                             "mqm_quoted.yaml"))


def raw_lines(path):
    """Each data line as the ``csv`` module reads it without quoting: the independent reading."""
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    return [dict(zip(rows[0], r)) for r in rows[1:]]


def test_every_line_is_one_judgment_with_quote_none():
    lines = raw_lines(TSV)
    assert sum('"' in r["target"] for r in lines) >= 6  # the fixture does hold lone quotes
    with warnings.catch_warnings():
        warnings.simplefilter("error", LoadWarning)  # and nothing to warn about
        table = load(TSV, spec=SPEC)
    f = table.frame
    got = {(i, a): (m, v) for i, a, m, v in zip(f[C.ITEM].astype(str), f[C.ANNOTATOR].astype(str),
                                              f[C.MODEL].astype(str), f[C.LABEL].astype(str))}
    want = {(r["seg_id"], r["rater"]): (r["system"], r["severity"]) for r in lines}
    assert len(f) == len(lines) == 12
    assert got == want
    assert table.summary()["rows_read"] == len(lines)


@pytest.mark.parametrize("pandas_path", [False, True])
def test_both_readers_keep_every_text_as_written(pandas_path):
    extra = {"skiprows": 0} if pandas_path else {}  # a pandas-only option: the fallback reader
    frame = read_table(TSV, quote="none", **extra)
    assert frame.to_dict("records") == raw_lines(TSV)


def test_with_quoting_the_swallowed_lines_are_named_with_the_option():
    result = CliRunner().invoke(cli, ["validate", str(TSV), "--spec", str(QUOTED_SPEC)])
    assert result.exit_code == 0, result.output
    assert "10 judgments" in result.output  # two lines swallowed into the texts before them
    assert "value(s) hold a line break" in result.output
    assert "read: {quote: none}" in result.output


def test_a_ragged_result_of_quoting_names_the_option(tmp_path):
    src = tmp_path / "r.tsv"
    src.write_text('system\tseg_id\trater\ttarget\tseverity\nA\t1\tr1\t"Hi\tMinor\n'
                   'A\t2\tr1\tok\tMajor\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"read: \{quote: none\}"):
        read_table(src)
    assert len(read_table(src, quote="none")) == 2


def test_quote_double_is_the_default_behaviour(tmp_path):
    src = tmp_path / "q.csv"
    src.write_text('item,annotator,label,text\na,x,1,"two, lines\nhere"\n', encoding="utf-8")
    assert read_table(src, quote="double").equals(read_table(src))
    assert read_table(src)["text"].tolist() == ["two, lines\nhere"]


@pytest.mark.parametrize("value", ["single", "None", "'", "true"])
def test_other_quote_values_are_refused_naming_the_key(tmp_path, value):
    spec = tmp_path / "s.yaml"
    spec.write_text(f'read: {{quote: "{value}"}}\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["validate", str(TSV), "--spec", str(spec)])
    assert result.exit_code == 2 and "read.quote" in result.output, result.output


def test_the_shipped_wmt_tsv_reads_as_the_recipe_reads_it(tmp_path):
    """The 25,060-line WMT23 zh-en file: ``quote: none`` gives every line, each text as the
    ``csv`` module reads it; with quoting, texts that start with '"' lose their quotes."""
    path = wmt_tsv(tmp_path)
    lines = raw_lines(path)
    frame = read_table(path, quote="none", categorical=True)
    assert len(frame) == len(lines) == 25060
    for col in ("source", "target"):
        assert frame[col].astype(str).tolist() == [r[col] for r in lines]
    quoted = read_table(path)
    changed = sum(a != r["target"] for a, r in zip(quoted["target"].tolist(), lines))
    assert changed > 0
