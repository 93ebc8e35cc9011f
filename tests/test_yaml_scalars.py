"""Plain values of specs and suites are read by YAML 1.2's core schema, not PyYAML's YAML 1.1
rules: a binary label ``yes`` / ``no``, a pool named ``on``, a pool ``1:30``, an id ``010`` and a
threshold ``1e-3`` are what their authors wrote (each was refused or changed before); a whole
number with a leading zero is text, as ids are written."""

from __future__ import annotations

import math

import pytest
from click.testing import CliRunner

from audit.cli import cli
from audit.ingest.yamlsafe import compose, construct

NO_ACTIONS = {"GITHUB_WORKSPACE": None, "GITHUB_STEP_SUMMARY": None}


def invoke(*args):
    return CliRunner(env=NO_ACTIONS).invoke(cli, [str(a) for a in args], catch_exceptions=False)


def value(text: str):
    node = compose(text)
    return None if node is None else construct(node)


# The examples of YAML 1.2.2, section 10.3.2 (core schema), and YAML 1.1 forms it reads as text.
@pytest.mark.parametrize("text, expected", [
    ("null", None), ("Null", None), ("~", None), ("", None),
    ("true", True), ("True", True), ("FALSE", False),
    ("0", 0), ("-19", -19), ("+12", 12), ("0o14", 12), ("0xC", 12),
    ("010", "010"), ("007", "007"), ("-007", "-007"),  # leading zeros: ids (module docstring)
    ("1.", 1.0), ("-.5", -0.5), ("+12e03", 12000.0), ("1e-3", 0.001), ("-2E+05", -200000.0),
    ("yes", "yes"), ("No", "No"), ("on", "on"), ("OFF", "OFF"), ("y", "y"),
    ("1:30", "1:30"), ("1_000", "1_000"), ("0b101", "0b101"), ("0o8", "0o8"),
    ("2021-01-01", "2021-01-01"), ("=", "="),
])
def test_core_schema_scalars(text, expected):
    got = value(text)
    assert got == expected and type(got) is type(expected)


def test_core_schema_infinity_and_nan():
    assert value("-.inf") == -math.inf and value(".Inf") == math.inf
    assert math.isnan(value(".NaN"))


TABLE = ("item,annotator,pool,label\n1,a,on,yes\n1,b,on,no\n2,a,on,yes\n2,b,on,yes\n"
         "3,a,1:30,no\n3,b,1:30,no\n")


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(TABLE)
    return path


def test_suite_words_pools_and_exponents(tmp_path, data):
    suite = tmp_path / "s.yaml"
    suite.write_text("suite: s\nexpectations:\n"
                     "  - expect: labels_in_set\n    values: [yes, no]\n"
                     "  - expect: judgments_per_pool\n    pool: on\n    min: 4\n    max: 4\n"
                     "  - expect: judgments_per_pool\n    pool: 1:30\n    min: 2\n    max: 2\n"
                     "  - expect: max_within_pool_disagreement\n    pool: on\n    max: 5e-1\n")
    result = invoke("check", data, "--suite", suite, "--bootstrap", 20)
    assert result.exit_code == 0, result.output
    assert "4 expectations: 4 passed, 0 failed" in result.output
    assert "judgments_per_pool: 1:30" in result.output


def test_spec_order_of_words_and_of_ids_with_leading_zeros(tmp_path, data):
    spec = tmp_path / "spec.yaml"
    spec.write_text("label: {kind: ordinal, order: [no, yes]}\n")
    result = invoke("validate", data, "--spec", spec)
    assert result.exit_code == 0, result.output
    scores = tmp_path / "scores.csv"
    scores.write_text("item,annotator,label\n1,a,009\n1,b,010\n2,a,010\n2,b,011\n")
    spec.write_text("label: {kind: ordinal, order: [009, 010, 011]}\n")
    result = invoke("validate", scores, "--spec", spec)
    assert result.exit_code == 0, result.output  # 010 was octal 8: 'not in {8, 9, 9}'


def test_ids_with_leading_zeros_in_a_pools_map_and_a_suite(tmp_path):
    data = tmp_path / "z.csv"
    data.write_text("item,annotator,label\n1,007,x\n1,008,007\n2,007,x\n2,008,x\n")
    spec = tmp_path / "spec.yaml"
    spec.write_text("pools: {map: {007: crowd, 008: expert}}\n")
    suite = tmp_path / "s.yaml"
    suite.write_text("suite: s\nexpectations:\n  - expect: labels_in_set\n    values: [x, 007]\n"
                     "  - expect: annotators_per_pool\n    pool: crowd\n    min: 1\n")
    result = invoke("check", data, "--spec", spec, "--suite", suite)
    assert result.exit_code == 0, result.output  # 007 was octal 7, 008 the text '008'
    assert "unknown" not in result.output and "2 expectations: 2 passed" in result.output


# -- what annotation-audit writes, it reads back ---------------------------------------------------
@pytest.mark.parametrize("text", ["08", "09", "007", "1e3", "+12e03", "0o7", "0x1F", "no", "on",
                                  "True", "null", "~", "1:30", "1_000", ".5", "-.inf",
                                  "2021-01-01"])
def test_dump_quotes_what_either_yaml_would_read_as_another_value(text):
    import yaml

    from audit.ingest.yamlsafe import dump

    written = dump({"order": [text, 8, 1.5, True]})
    assert value(written) == {"order": [text, 8, 1.5, True]}
    assert yaml.safe_load(written) == {"order": [text, 8, 1.5, True]}  # a YAML 1.1 reader too
    if text[:1].isdigit():  # a YAML 1.2 reader reads 08 as 8: written quoted
        assert f"'{text}'" in written


@pytest.mark.parametrize("text", ["a\x85b", "l\u2028p", "p\u2029q", "x\u202ey", "z\u200bw",
                                  "e\x1bb", "bom\ufeff", "t\U000e0041"])
def test_dump_writes_control_and_invisible_characters_as_escapes(text):
    """PyYAML wrote NEL raw in a plain or quoted scalar and read it back as a space (the
    export's spec then declared a label the data does not hold), and wrote bidi controls and
    invisible characters raw: such a text is written double-quoted with YAML escapes."""
    import re

    import yaml

    from audit.ingest.yamlsafe import dump

    written = dump({"order": [text, "plain é"]})
    assert value(written) == yaml.safe_load(written) == {"order": [text, "plain é"]}
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028-\u202e\u200b\ufeff"
                         "\U000e0000-\U000e007f]", written), written
    assert "- plain é" in written


def test_export_spec_reads_back_a_label_holding_nel(tmp_path):
    src = tmp_path / "ex.jsonl"
    labels = ["a\x85b", "c", "x\u202ey"]
    src.write_text("".join(f'{{"item": {i}, "annotator": "{a}", "label": "{labels[(i + k) % 3]}"}}\n'
                           .replace("\x85", "\\u0085").replace("\u202e", "\\u202e")
                           for i in range(6) for k, a in enumerate("ab")), encoding="utf-8")
    result = invoke("export", src, tmp_path / "out", "--quiet")
    assert result.exit_code == 0, result.output
    result = invoke("validate", tmp_path / "out" / "judgments", "--spec",
                    tmp_path / "out" / "spec.yaml")
    assert result.exit_code == 0, result.output  # 'a\x85b' was declared as 'a b'
    assert "12 judgments" in result.output


def test_export_spec_reads_back_text_labels_that_look_like_numbers(tmp_path):
    src = tmp_path / "ex.csv"
    src.write_text("item,annotator,pool,label\n1,a,p,08\n1,b,p,09\n2,a,p,1e3\n2,b,p,0o7\n"
                   "3,a,p,08\n3,b,p,no\n")
    result = invoke("export", src, tmp_path / "out", "--quiet")
    assert result.exit_code == 0, result.output
    result = invoke("validate", tmp_path / "out" / "judgments", "--spec",
                    tmp_path / "out" / "spec.yaml")
    assert result.exit_code == 0, result.output  # '08' was written bare: the number 8
    assert "6 judgments" in result.output


# A spec written by json.dump (valid YAML 1.2) escapes a character past U+FFFF as a UTF-16
# surrogate pair: PyYAML read the pair as two lone surrogates, so a rater named with an emoji
# was "not in the table" (found by tests/test_fuzz_tables.py).
@pytest.mark.parametrize("text, expected", [
    ('"\\ud83d\\ude00"', "\U0001F600"),
    ('["\\ud840\\udc0b x", "\\u00e9"]', ["\U0002000B x", "\u00e9"]),
    ('{"\\ud83d\\udc4d": 1}', {"\U0001F44D": 1}),
    ('"\\U0001F600"', "\U0001F600"),
])
def test_json_surrogate_pairs_read_as_one_character(text, expected):
    assert value(text) == expected


@pytest.mark.parametrize("text", ['a: "x\\ud83d"', 'a: "\\ude00"', 'a: ["\\ude00\\ud83d"]'])
def test_a_lone_surrogate_is_refused_with_its_line(tmp_path, text):
    (tmp_path / "t.csv").write_text("item,annotator,label\n1,a,x\n")
    (tmp_path / "s.yaml").write_text(f"name: t\n{text}\n")
    result = invoke("validate", tmp_path / "t.csv", "--spec", tmp_path / "s.yaml")
    assert result.exit_code == 2, result.output
    assert "line 2: the text holds \\ud" in result.stderr
    assert "half of a UTF-16 surrogate pair" in result.stderr


def test_a_json_spec_names_an_emoji_rater(tmp_path):
    import json

    (tmp_path / "w.csv").write_text("item,\U0001F600,r2\nq1,x,y\nq2,y,y\n", encoding="utf-8")
    (tmp_path / "w.yaml").write_text(json.dumps({"layout": "wide",
                                                 "annotator_columns": ["\U0001F600", "r2"]}))
    result = invoke("validate", tmp_path / "w.csv", "--spec", tmp_path / "w.yaml")
    assert result.exit_code == 0, result.output
