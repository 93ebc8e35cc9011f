"""A corpus of hostile files, run as a new user's CI runs the CLI: each is bad input.

Every case builds its files in ``tmp_path`` and runs the command through click's ``CliRunner``.
A hostile file must give exit 2 with one message naming the file and, where there is one, the
key or line, never a traceback or an internal error (exit 3), and must leave every input
byte-for-byte as it was (sha256 before and after). Files that are merely unusual (CRLF line
ends, a byte-order mark, a NUL inside a label) must load exactly as written.

Classes: YAML specs and suites with Python or custom tags, alias bombs, recursive aliases,
lists as keys, 100,000-deep nesting, control characters, values that cannot be built, files
too large; spec paths leading outside the spec's folder (``..``, absolute, a symbolic link);
JSON nested 100,000 deep, a JSON Lines line over 64 MiB, list and struct labels in Parquet and
JSON; option values out of range; text that is not UTF-8, empty files, header-only files.
Labels exactly as written (issue 13, item 6) close the file.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from audit.cli import cli
from audit.ingest.readers import MAX_JSONL_LINE_BYTES
from audit.ingest.yamlsafe import MAX_BYTES, MAX_DEPTH, MAX_NODES

TABLE = ("item,annotator,label\n1,a,x\n1,b,y\n2,a,x\n2,b,x\n3,a,y\n3,b,y\n")
SUITE = "suite: s\nexpectations:\n  - expect: unique_judgments\n"


def fingerprint(folder: Path) -> dict[str, str]:
    """sha256 of every file under ``folder`` (links not followed)."""
    out = {}
    for root, _, names in os.walk(folder):
        for name in names:
            path = Path(root) / name
            if not path.is_symlink():
                out[str(path.relative_to(folder))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def invoke(args, inputs: Path):
    """Run the CLI on ``args``; assert that nothing under ``inputs`` changed."""
    before = fingerprint(inputs)
    result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    assert fingerprint(inputs) == before, "an input file changed"
    return result


def assert_bad_input(result, *words):
    out = result.output
    assert result.exit_code == 2, out
    assert "Traceback" not in out and "internal error" not in out, out
    for word in words:
        assert word in out, f"{word!r} not in {out!r}"


@pytest.fixture
def d(tmp_path) -> Path:
    """The inputs' folder: a valid table and suite; each case adds its hostile file."""
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "t.csv").write_text(TABLE)
    (folder / "s.yaml").write_text(SUITE)
    return folder


def validate_with_spec(d: Path, text) -> object:
    spec = d / "spec.yaml"
    spec.write_bytes(text.encode() if isinstance(text, str) else text)
    return invoke(["validate", d / "t.csv", "--spec", spec], d)


def check_with_suite(d: Path, text) -> object:
    suite = d / "hostile.yaml"
    suite.write_bytes(text.encode() if isinstance(text, str) else text)
    return invoke(["check", d / "t.csv", "--suite", suite, "--bootstrap", 5], d)


def alias_bomb(levels: int = 9, width: int = 9) -> str:
    """A "billion laughs" list: ``width ** levels`` values written out from a few hundred bytes."""
    parts = ["&l0 [" + ", ".join(["lol"] * width) + "]"]
    for k in range(1, levels):
        parts.append(f"&l{k} [" + ", ".join([f"*l{k - 1}"] * width) + "]")
    return "[" + ", ".join(parts) + "]"


# -- YAML specs ----------------------------------------------------------------------------------
@pytest.mark.parametrize("text, words", [
    ("name: !!python/name:os.system x\n", ["line 1", "'!!python/name:os.system'", "not allowed"]),
    ("name: !!python/object/apply:os.system [echo owned]\n",
     ["line 1", "!!python/object/apply:os.system"]),
    ("label: !!python/object:collections.OrderedDict {kind: nominal}\n", ["line 1", "!!python"]),
    ("name: x\nlabel:\n  kind: !custom nominal\n", ["line 3", "'!custom'"]),
    ("name: !!binary aGk=\n", ["line 1", "'!!binary'"]),
    ("judge_pools: !!set {a, b}\n", ["line 1", "'!!set'"]),
    ("? [a, b]\n: 1\n", ["line 1", "a list is used as a key"]),
    ("label:\n  map: {? {x: 1} : 2}\n", ["line 2", "a mapping is used as a key"]),
    (f"label: {{order: {alias_bomb()}}}\n", ["line 1", f"more than {MAX_NODES:,} values"]),
    ("label: {order: &a [1, *a]}\n", ["line 1", "recursive alias"]),
    ("name: " + "[" * 100_000 + "]" * 100_000 + "\n", ["line 1", f"more than {MAX_DEPTH} levels"]),
    ("name: a\x00b\n", ["line 1", "U+0000"]),
    ("name: \x1b]0;owned\x07\n", ["line 1", "U+001B"]),
    # 0b_ (a YAML 1.1 int that failed to construct) is text in the core schema; a number past
    # Python's 4,300-digit int limit still cannot be built
    ("label: {order: [" + "9" * 5000 + ", 1]}\n", ["line 1", "as !!int", "quote it"]),
    ("name: x\n---\nname: y\n", ["invalid YAML at line 2", "single document"]),
    ("label: {order: [1, 2\n", ["invalid YAML at line 2"]),
])
def test_hostile_spec_yaml(d, text, words):
    assert_bad_input(validate_with_spec(d, text), "spec.yaml", *words)


def test_spec_not_utf8_too_large_or_a_folder(d, tmp_path):
    assert_bad_input(validate_with_spec(d, b"name: caf\xe9\n"), "spec.yaml", "not UTF-8",
                     "byte offset 9")
    assert_bad_input(validate_with_spec(d, "name: x\n" + "#" * MAX_BYTES + "\n"), "spec.yaml",
                     f"{MAX_BYTES:,} bytes")
    (d / "folder.yaml").mkdir()
    assert_bad_input(invoke(["validate", d / "t.csv", "--spec", d / "folder.yaml"], d),
                     "folder.yaml")


def test_yaml_dates_and_operators_are_text(d):
    """Values PyYAML would build as dates, merge keys or the '=' value type are plain text, so
    none of them can fail to construct (an invalid date was a ValueError traceback)."""
    result = validate_with_spec(d, "name: 2021-13-45\nlabel: {map: {'=': x, '<<': y}}\n")
    assert result.exit_code == 0, result.output
    assert_bad_input(validate_with_spec(d, "<<: {name: x}\n"), "spec.yaml", "'<<' (a YAML 1.1 merge key) does not merge here")


# -- YAML suites ---------------------------------------------------------------------------------
@pytest.mark.parametrize("text, words", [
    ("suite: !!python/object/apply:os.system [echo owned]\nexpectations:\n"
     "  - expect: unique_judgments\n", ["line 1", "!!python/object/apply:os.system"]),
    ("suite: x\nexpectations:\n  - expect: !!python/name:builtins.print unique_judgments\n",
     ["line 3", "!!python/name:builtins.print"]),
    ("suite: x\nexpectations:\n  - expect: !tag unique_judgments\n", ["line 3", "'!tag'"]),
    ("suite: x\nexpectations:\n  - ? [expect]\n    : unique_judgments\n",
     ["line 3", "a list is used as a key"]),
    (f"suite: x\nexpectations:\n  - expect: labels_in_set\n    values: {alias_bomb()}\n",
     ["line 4", f"more than {MAX_NODES:,} values"]),
    ("suite: x\nexpectations: " + "[" * 100_000 + "]" * 100_000 + "\n",
     ["line 2", f"more than {MAX_DEPTH} levels"]),
    ("suite: x\x00\nexpectations:\n  - expect: unique_judgments\n", ["line 1", "U+0000"]),
    (b"suite: caf\xe9\nexpectations:\n  - expect: unique_judgments\n", ["line 1", "not UTF-8"]),
])
def test_hostile_suite_yaml(d, text, words):
    assert_bad_input(check_with_suite(d, text), "hostile.yaml", *words)


def test_suite_folder_and_oversize(d):
    (d / "dir.yaml").mkdir()
    assert_bad_input(invoke(["check", d / "t.csv", "--suite", d / "dir.yaml"], d), "dir.yaml")
    assert_bad_input(check_with_suite(d, SUITE + "#" * MAX_BYTES), "hostile.yaml",
                     f"{MAX_BYTES:,} bytes")


# -- paths a spec names --------------------------------------------------------------------------
SECRET = "annotator,pool\nTOP-SECRET-TOKEN,x\n"


@pytest.fixture
def outside(tmp_path, d) -> Path:
    """A spec in its own folder beside a file it must not read."""
    secret = tmp_path / "elsewhere" / "secret.csv"
    secret.parent.mkdir()
    secret.write_text(SECRET)
    (d / "inner").mkdir()
    (d / "inner" / "t.csv").write_text(TABLE)
    return secret


@pytest.mark.parametrize("name", ["../../elsewhere/secret.csv", "ABSOLUTE", "link.csv",
                                  "../inner/../../elsewhere/secret.csv"])
def test_spec_pools_file_outside_its_folder(d, outside, name):
    if name == "ABSOLUTE":
        name = str(outside)
    if name == "link.csv":
        (d / "inner" / "link.csv").symlink_to(outside)
    spec = d / "inner" / "spec.yaml"
    spec.write_text(f"pools: {{file: {json.dumps(name)}}}\n")
    result = invoke(["validate", d / "inner" / "t.csv", "--spec", spec], outside.parent.parent)
    assert_bad_input(result, "spec.yaml", "key 'pools.file'", "line 1", str(outside),
                     "outside the spec's folder", "--allow-outside")
    assert "TOP-SECRET-TOKEN" not in result.output  # not one line of it reaches the log
    result = invoke(["validate", d / "inner" / "t.csv", "--spec", spec, "--allow-outside"],
                    outside.parent.parent)
    assert result.exit_code == 0, result.output


def test_spec_pools_file_inside_its_folder_still_reads(d):
    (d / "pools.csv").write_text("annotator,pool\na,crowd\nb,expert\n")
    (d / "sub").mkdir()
    (d / "sub" / "p2.csv").write_text("annotator,pool\na,crowd\nb,expert\n")
    for name in ("pools.csv", "sub/p2.csv", "sub/../pools.csv"):
        result = validate_with_spec(d, f"pools: {{file: {name}}}\n")
        assert result.exit_code == 0, result.output
        assert "crowd" in result.output and "expert" in result.output


def test_allow_outside_in_the_api(d, outside):
    import audit
    from audit.errors import InputError

    spec = d / "inner" / "spec.yaml"
    spec.write_text("pools: {file: ../../elsewhere/secret.csv}\n")
    with pytest.raises(InputError, match="outside the spec's folder"):
        audit.load(d / "inner" / "t.csv", spec=spec)
    table = audit.load(d / "inner" / "t.csv", spec=spec, allow_outside=True)
    assert set(table.frame["pool"].astype(str)) == {"unknown"}  # a and b are not in it


# -- JSON, JSON Lines, Parquet -------------------------------------------------------------------
def test_json_nested_100000_deep(d):
    (d / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    for fmt in ("auto", "table"):
        assert_bad_input(invoke(["validate", d / "deep.json", "--format", fmt], d), "deep.json",
                         "nested too deeply", "1,000 levels")
    (d / "pools.json").write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert_bad_input(invoke(["validate", d / "t.csv", "--pools", d / "pools.json"], d),
                     "pools.json", "nested too deeply")


def test_jsonl_line_nested_100000_deep(d):
    (d / "deep.jsonl").write_text('{"item": "1", "annotator": "a", "label": "x"}\n'
                                  '{"item": "1", "annotator": "b", "label": '
                                  + "[" * 100_000 + "]" * 100_000 + "}\n")
    assert_bad_input(invoke(["validate", d / "deep.jsonl", "--format", "table"], d),
                     "deep.jsonl", "nested too deeply at line 2")


def test_jsonl_line_over_the_limit(d):
    path = d / "huge.jsonl"
    with open(path, "wb") as fh:
        fh.write(b'{"item": "1", "annotator": "a", "label": "x"}\n')
        fh.write(b'{"item": "1", "annotator": "b", "label": "' + b"y" * MAX_JSONL_LINE_BYTES
                 + b'"}\n')
    assert_bad_input(invoke(["validate", path, "--format", "table"], d), "huge.jsonl",
                     "line 2 is longer than", "64 MiB")


def test_jsonl_line_at_the_limit_is_read(d, monkeypatch):
    import audit.ingest.readers.json_files as R

    monkeypatch.setattr(R, "MAX_JSONL_LINE_BYTES", 60)
    lines = ['{"item": "1", "annotator": "a", "label": "x"}',
             '{"item": "1", "annotator": "b", "label": "' + "y" * 16 + '"}']
    assert len(lines[1].encode()) == 60
    (d / "edge.jsonl").write_text("\n".join(lines) + "\n")
    assert invoke(["validate", d / "edge.jsonl", "--format", "table"], d).exit_code == 0
    (d / "over.jsonl").write_text(lines[0] + "\n" + lines[1].replace("y", "yy", 1) + "\n")
    assert_bad_input(invoke(["validate", d / "over.jsonl", "--format", "table"], d),
                     "over.jsonl", "line 2 is longer than 60 bytes")


@pytest.mark.parametrize("labels, kind", [
    ([[1, 2], [3], [1], [2]], "list of type ndarray"),
    ([{"x": 1}, {"x": 2}, {"x": 1}, {"x": 3}], "mapping (a struct)"),
])
def test_parquet_nested_label(d, labels, kind):
    pd.DataFrame({"item": ["1", "1", "2", "2"], "annotator": ["a", "b", "a", "b"],
                  "label": labels}).to_parquet(d / "nested.parquet")
    assert_bad_input(invoke(["validate", d / "nested.parquet"], d), "nested.parquet",
                     "column 'label'", "single values", kind, "source row 0")
    (d / "ord.yaml").write_text("label: {kind: ordinal, order: [1, 2, 3]}\n")
    assert_bad_input(invoke(["validate", d / "nested.parquet", "--spec", d / "ord.yaml"], d),
                     "nested.parquet", "column 'label'", kind)


def test_json_list_label(d):
    rows = [{"item": "1", "annotator": "a", "label": [1]}, {"item": "1", "annotator": "b",
                                                            "label": [2]}]
    (d / "l.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (d / "l.json").write_text(json.dumps(rows))
    for name in ("l.jsonl", "l.json"):
        assert_bad_input(invoke(["validate", d / name], d), name, "column 'label'",
                         "list of type list")


def test_a_list_label_is_named_by_its_line_or_source_row(d):
    """JSON Lines names the line the record is on, as every other load error does; a JSON array
    (no lines) names its 0-based source row, as schema failures do."""
    rows = [{"item": "1", "annotator": "a", "label": "x"},
            {"item": "1", "annotator": "b", "label": "y"},
            {"item": "2", "annotator": "a", "label": ["x", "y"]}]
    (d / "l.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (d / "l.json").write_text(json.dumps(rows))
    assert_bad_input(invoke(["validate", d / "l.jsonl"], d), "l.jsonl", "column 'label', line 3:",
                     "list of type list")
    assert_bad_input(invoke(["validate", d / "l.json"], d), "l.json",
                     "column 'label', source row 2:", "list of type list")


# -- options -------------------------------------------------------------------------------------
@pytest.mark.parametrize("args, words", [
    (["run", "T", "--seed", "-1"], ["--seed", "-1"]),
    (["card", "T", "--out", "OUT", "--seed", "-1"], ["--seed"]),
    (["check", "T", "--suite", "S", "--seed", "-1"], ["--seed"]),
    (["simulate", "--perturbation-sd", "1", "--score-range", "1", "--seed", "-1"], ["--seed"]),
    (["run", "T", "--bootstrap", "100000000"], ["--bootstrap", "100000"]),
    (["check", "T", "--suite", "S", "--bootstrap", "1e8"], ["--bootstrap"]),
    (["card", "T", "--out", "OUT", "--bootstrap", "0"], ["--bootstrap"]),
    (["run", "T", "--seed", str(2 ** 64)], ["--seed"]),
    (["simulate", "--perturbation-sd", "1", "--score-range", "1", "--sims", "100000000"],
     ["--sims", "1000000"]),
    (["simulate", "--perturbation-sd", "nan", "--score-range", "1"], ["--perturbation-sd"]),
    (["simulate", "--perturbation-sd", "1", "--score-range", "inf"], ["--score-range"]),
    (["simulate", "--perturbation-sd", "1", "--gaps", "1,nan"], ["--gaps"]),
    (["simulate", "--perturbation-sd", "1", "--gaps", "1", "--sizes", "inf"], ["--sizes"]),
    (["simulate", "--perturbation-sd", "1", "--gaps", "1", "--sizes", "5,2.5"], ["--sizes"]),
    (["simulate", "--perturbation-sd", "1", "--gaps", "1", "--sizes", "1"], ["--sizes"]),
    (["run", "T", "--max-memory", "lots"], ["--max-memory", "'lots'"]),
    (["run", "T", "--max-memory", "0"], ["--max-memory"]),
    (["validate", "T", "--max-memory", "150%"], ["--max-memory"]),
    (["run", "T", "--min-per-pool", "0"], ["--min-per-pool"]),
    (["run", "T", "--min-pool-annotators", "0"], ["--min-pool-annotators"]),
])
def test_option_out_of_range_is_refused_at_parse_time(d, tmp_path, args, words):
    subst = {"T": d / "t.csv", "S": d / "s.yaml", "OUT": tmp_path / "out"}
    result = invoke([subst.get(a, a) for a in args], d)
    assert_bad_input(result, *words)
    assert not (tmp_path / "out").exists()


# -- text files ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name, data, words", [
    ("latin.csv", b"item,annotator,label\n1,a,caf\xe9\n", ["not UTF-8", "byte offset 28",
                                                           "line 2", "the byte 0xE9 is 'é' in "
                                                           "Windows-1252", "'CSV UTF-8'"]),
    # a byte Windows-1252 leaves undefined: no encoding named, only how to save it
    ("undefined.csv", b"item,annotator,label\n1,a,x\x81\n", ["not UTF-8", "line 2",
                                                              "save the file as UTF-8"]),
    ("latin.jsonl", b'{"item": "1", "annotator": "a", "label": "caf\xe9"}\n', ["not UTF-8"]),
    ("latin.json", b'[{"item": "1", "annotator": "a", "label": "caf\xe9"}]', ["not UTF-8"]),
    ("empty.csv", b"", ["empty.csv"]),
    ("empty.jsonl", b"", ["missing required column"]),
    ("empty.json", b"", ["invalid JSON at line 1"]),
    ("empty.parquet", b"", ["cannot read as Parquet"]),
    ("header.csv", b"item,annotator,label\n", ["the table is empty"]),
    ("header.tsv", b"item\tannotator\tlabel\r\n", ["the table is empty"]),
    ("nul.json", b'[{"item": "1", "annotator": "a", "label": "x\x00"}]',
     ["invalid JSON at line 1", "control character"]),
    ("binary.csv", bytes(range(256)) * 4, ["not UTF-8"]),
])
def test_unreadable_text(d, name, data, words):
    (d / name).write_bytes(data)
    assert_bad_input(invoke(["validate", d / name, "--format", "table"], d), name, *words)


@pytest.mark.parametrize("name, data, words", [
    ("pairs.csv", b"item,annotator,model_a,model_b,label\n", ["the table is empty"]),
    ("ratings.csv", b"item,annotator,model,label\n", ["the table is empty"]),
    ("pairs.tsv", b"item\tannotator\tmodel_a\tmodel_b\tlabel\r\n", ["the table is empty"]),
    ("blank_pairs.csv", b"item,annotator,model_a,model_b,label\n1,a,x,y,\n1,b,x,y,\n",
     ["2 schema failure(s)", "not null", "(line 3)"]),
    ("blank_ratings.csv", b"item,annotator,model,label\n1,a,x,\n1,b,x,\n",
     ["not null", "(line 2)"]),
])
def test_no_labels_at_all_says_what_is_missing(d, name, data, words):
    """A header-only table with model columns, or one whose every label cell is empty: the
    message is the table's own failure, not the label-kind inference's ("distinct labels: ."
    followed by a spec with an empty map)."""
    (d / name).write_bytes(data)
    result = invoke(["validate", d / name], d)
    assert_bad_input(result, name, *words)
    assert "distinct labels" not in result.output


def _compressed(kind: str) -> bytes:
    import bz2
    import gzip
    import io
    import lzma
    import zipfile

    data = b"item,annotator,label\n1,a,x\n1,b,y\n"
    if kind == "zip":
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("t.csv", data)
        return buf.getvalue()
    return {"gzip": gzip.compress, "bzip2": bz2.compress, "xz": lzma.compress}[kind](data)


@pytest.mark.parametrize("name, kind, words", [
    ("t.csv.gz", "gzip", ["a gzip-compressed file", "gunzip"]),
    ("t.tsv.tar.gz", "gzip", ["a gzip-compressed tar file", "tar -xzf"]),
    ("t.csv", "gzip", ["a gzip-compressed file"]),
    ("t.csv", "zip", ["a zip file", "unzip"]),
    ("t.tsv", "bzip2", ["a bzip2-compressed file"]),
    ("t.jsonl", "xz", ["an xz-compressed file"]),
])
@pytest.mark.parametrize("fmt", ["auto", "table"])
def test_compressed_tables_are_named(d, name, kind, words, fmt):
    """A compressed table (the sweep's ``.csv.gz``): exit 2 saying it is compressed, not "cannot
    detect the format" nor a bad byte / NUL at some offset."""
    (d / name).write_bytes(_compressed(kind))
    assert_bad_input(invoke(["validate", d / name, "--format", fmt], d), name,
                     "decompress it first", *words)


@pytest.mark.parametrize("name, data, words", [
    ("empty.csv", b"", ["the file is empty"]),
    ("blank.csv", b"\n\r\n\n", ["the file is empty"]),
    ("excel.csv", b"sep=,\nitem,annotator,label\n1,a,x\n", ["'sep=,'", "separator hint",
                                                            "read: {skiprows: 1, sep: ','}"]),
    ("excel2.csv", b"sep=;\r\nitem;annotator;label\r\n1;a;x\r\n", ["'sep=;'",
                                                                   "sep: ';'"]),
])
def test_auto_detection_says_why_a_file_has_no_columns(d, name, data, words):
    """Without --format, an empty file and a spreadsheet's ``sep=,`` first line were "cannot
    detect the format of ..." with nothing on why; now each names its cause."""
    (d / name).write_bytes(data)
    result = invoke(["validate", d / name], d)
    assert_bad_input(result, name, *words)
    assert "cannot detect" not in result.output


def test_the_sep_hint_line_is_read_past_with_the_spec_it_suggests(d):
    (d / "excel.csv").write_bytes(b"sep=;\nitem;annotator;label\n1;a;x\n1;b;y\n")
    (d / "excel.yaml").write_text("read: {skiprows: 1, sep: ';'}\n")
    result = invoke(["validate", d / "excel.csv", "--spec", d / "excel.yaml"], d)
    assert result.exit_code == 0, result.output


def test_a_header_starting_like_a_magic_number_is_still_text(d):
    (d / "bzh.csv").write_bytes(b"BZh,item,annotator,label\n9,1,a,x\n9,1,b,y\n")
    result = invoke(["validate", d / "bzh.csv"], d)
    assert result.exit_code == 0, result.output


#: A tab-separated file written without quoting whose text cell starts with '"': CSV quoting
#: joins its next line into that cell, and judgment (1, b, y) is not read.
UNQUOTED_TSV = b'item\tannotator\tlabel\ttext\n1\ta\tx\t"hello\n1\tb\ty\tworld"\n' \
    b"2\ta\tx\tok\n2\tb\tx\tok\n"


def test_a_tsv_whose_quote_swallows_lines_is_not_silent(d, tmp_path):
    """Found by the sweep on WMT's MQM TSV (read with QUOTE_NONE by its authors): three of four
    judgments were read, without a word. The reading stays CSV's (a quoted value may span
    lines), but a warning now says that values hold line breaks, which column and row, and
    what that means for an unquoted file."""
    (d / "q.tsv").write_bytes(UNQUOTED_TSV)
    result = invoke(["run", d / "q.tsv", "--bootstrap", 5, "--quiet", "--out", tmp_path / "o"], d)
    assert result.exit_code == 0, result.output
    dataset = json.loads((tmp_path / "o" / "results.json").read_text())["dataset"]
    assert dataset["rows_read"] == 3  # the reading is unchanged; the warning says why
    assert "1 value(s) hold a line break (first: column 'text', line 2)" in result.output
    assert "not written with quoting" in result.output


@pytest.mark.parametrize("name, data", [
    ("plain.tsv", b"item\tannotator\tlabel\ttext\n1\ta\tx\t\"quoted\" start\n1\tb\ty\tok\n"),
    ("multi.csv", b'item,annotator,label,text\n1,a,x,"two\nlines"\n1,b,y,ok\n'),
])
def test_no_line_break_warning_without_cause(d, name, data):
    """No warning for a TSV whose quotes close on their line, nor for a CSV, where quoted
    values spanning lines are the format's own rule."""
    (d / name).write_bytes(data)
    result = invoke(["validate", d / name], d)
    assert result.exit_code == 0, result.output
    assert "line break" not in result.output


@pytest.mark.parametrize("name, data, words", [
    ("dup.jsonl", b'{"item": "1", "annotator": "a", "label": "x", "label": "y"}\n'
                  b'{"item": "1", "annotator": "b", "label": "y"}\n',
     ["key 'label' is repeated", "at line 1"]),
    ("dup_spaced.jsonl", b'{"item": "1", "annotator": "b", "label": "y"}\n'
                         b'{"item" : "1", "annotator" : "a", "label" : "x", "label" : "y"}\n',
     ["key 'label' is repeated", "at line 2"]),
    ("dup_nested.jsonl", b'{"item": "1", "annotator": "a", "label": "x", "m": {"k": 1, "k": 2}}\n',
     ["key 'k' is repeated"]),
    ("dup.json", b'[{"item": "1", "annotator": "a", "annotator": "b", "label": "x"}]',
     ["key 'annotator' is repeated"]),
])
def test_a_key_repeated_in_a_json_object_is_refused(d, name, data, words):
    """JSON parsers keep the last of two equal keys without a word: one judgment's label (or
    annotator) was replaced silently. Now exit 2 naming the key and the line."""
    (d / name).write_bytes(data)
    assert_bad_input(invoke(["validate", d / name, "--format", "table"], d), name, *words)


def test_keys_that_only_look_repeated_are_read(d, tmp_path):
    """A value holding '":' or a nested object with its own keys is not a repeated key."""
    (d / "ok.jsonl").write_bytes(
        b'{"item": "1", "annotator": "a", "label": "x", "text": "say \\"hi\\": now"}\n'
        b'{"item": "1", "annotator": "b", "label": "y", "meta": {"item": 2, "label": 3}}\n')
    result = invoke(["validate", d / "ok.jsonl", "--format", "table"], d)
    assert result.exit_code == 0, result.output


def test_repeated_parquet_column_names_are_named(d):
    import pyarrow as pa
    import pyarrow.parquet as pq

    cols = [pa.array(["1", "1"]), pa.array(["a", "b"]), pa.array(["x", "y"]), pa.array(["y", "x"])]
    pq.write_table(pa.Table.from_arrays(cols, names=["item", "annotator", "label", "label"]),
                   d / "dup.parquet")
    result = invoke(["validate", d / "dup.parquet"], d)
    assert_bad_input(result, "dup.parquet", "repeated column name(s) 'label'")
    assert "FieldRef" not in result.output


WIDE_TEXT = "item,annotator,label\n1,a,x\n1,b,y\n"


@pytest.mark.parametrize("name, encoding, words", [
    ("u16.csv", "utf-16", ["UTF-16 (little-endian)", "byte-order mark"]),
    ("u16be.tsv", "utf-16", ["UTF-16 (little-endian)"]),
    ("u16.jsonl", "utf-16", ["UTF-16 (little-endian)"]),
    ("u32.csv", "utf-32", ["UTF-32 (little-endian)"]),
    ("u16le.csv", "utf-16-le", ["NUL bytes in the first line", "byte offset 1", "UTF-16"]),
    ("u16be.csv", "utf-16-be", ["NUL bytes in the first line", "byte offset 0"]),
])
@pytest.mark.parametrize("fmt", ["auto", "table"])
def test_utf16_and_utf32_text_is_named(d, name, encoding, words, fmt):
    """A spreadsheet's "Unicode text" export: the message says the file is UTF-16 / UTF-32,
    whether or not the format is given (auto-detection read its NUL-laced header as columns
    'i\\x00t\\x00e\\x00m...' and said it could not tell the format; --format table said the
    columns item, annotator, label were missing)."""
    text = WIDE_TEXT.replace(",", "\t") if name.endswith(".tsv") else WIDE_TEXT
    if name.endswith(".jsonl"):
        text = '{"item": "1", "annotator": "a", "label": "x"}\n'
    (d / name).write_bytes(text.encode(encoding))
    assert_bad_input(invoke(["validate", d / name, "--format", fmt], d), name, "not UTF-8",
                     "save the file as UTF-8", *words)


@pytest.mark.parametrize("data", [
    b"item,annotator,label\r\n1,a,x\r\n1,b,y\r\n2,a,x\r\n2,b,x\r\n",          # CRLF
    b"\xef\xbb\xbfitem,annotator,label\n1,a,x\n1,b,y\n2,a,x\n2,b,x\n",        # BOM
    b"\xef\xbb\xbfitem,annotator,label\r\n1,a,x\r\n1,b,y\r\n2,a,x\r\n2,b,x",  # both, no last EOL
])
def test_crlf_and_bom_load_exactly(d, tmp_path, data):
    (d / "w.csv").write_bytes(data)
    result = invoke(["run", d / "w.csv", "--bootstrap", 5, "--quiet", "--out", tmp_path / "o"], d)
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "o" / "results.json").read_text())["dataset"]
    assert summary["label_scale"]["values"] == ["x", "y"]
    assert summary["n_items"] == 2 and summary["n_annotations"] == 4


def test_control_characters_in_csv_labels_are_labels(d, tmp_path):
    """An ESC or BEL byte inside a CSV cell is part of the label as written (the outputs escape
    it); it neither crashes the reader nor reaches the terminal raw."""
    (d / "c.csv").write_bytes(b"item,annotator,label\n1,a,x\x07y\n1,b,y\n2,a,\x1b[31mx\n2,b,x\n")
    result = invoke(["run", d / "c.csv", "--bootstrap", 5, "--out", tmp_path / "o"], d)
    assert result.exit_code == 0, result.output
    assert "\x07" not in result.output and "\x1b" not in result.output
    values = json.loads((tmp_path / "o" / "results.json").read_text())["dataset"]["label_scale"]
    assert sorted(values["values"]) == sorted(["x", "x\x07y", "y", "\x1b[31mx"])


@pytest.mark.parametrize("column", ["item", "annotator", "label"])
def test_nul_in_a_cell_is_refused(d, column):
    """pandas hashes text as C strings, which end at NUL: ``x\\0y`` and ``x`` would become one
    label (or one annotator). A NUL in an id or a label is bad input naming the column and row."""
    rows = [["1", "a", "x"], ["1", "b", "y"], ["2", "a", "x"], ["2", "b", "x"]]
    col = ["item", "annotator", "label"].index(column)
    rows[2][col] = rows[2][col] + "\x00z"
    (d / "nul.csv").write_text("item,annotator,label\n" + "".join(",".join(r) + "\n"
                                                                  for r in rows))
    pd.DataFrame(rows, columns=["item", "annotator", "label"]).to_parquet(d / "nul.parquet")
    for name, where in (("nul.csv", "line 4"), ("nul.parquet", "row 2")):
        assert_bad_input(invoke(["validate", d / name], d), name, f"column {column!r}",
                         where, "NUL")



@pytest.mark.parametrize("column", ["item", "annotator", "label"])
def test_lone_surrogate_in_a_json_string_is_refused(d, column):
    """JSON may escape a lone surrogate (``"\\ud800"``); it is not Unicode, so no output (results,
    hashes, JUnit) could hold it: bad input naming the column and row, not an internal error."""
    records = [{"item": "1", "annotator": "a", "label": "x"},
               {"item": "1", "annotator": "b", "label": "y"},
               {"item": "2", "annotator": "a", "label": "x"}]
    text = "\n".join(json.dumps(r) for r in records).split("\n")
    text[2] = text[2].replace(f'"{column}": "', f'"{column}": "\\ud800', 1)
    (d / "sur.jsonl").write_text("\n".join(text) + "\n")
    assert_bad_input(invoke(["validate", d / "sur.jsonl"], d), "sur.jsonl", f"column {column!r}",
                     "line 3", "U+D800")

# -- labels exactly as written (issue 13, item 6) ------------------------------------------------
def labels_of(d, tmp_path, name: str, data: str, *args) -> list:
    (d / name).write_text(data)
    out = tmp_path / f"o-{name}"
    result = invoke(["run", d / name, "--bootstrap", 5, "--quiet", "--out", out, *args], d)
    assert result.exit_code == 0, result.output
    return json.loads((out / "results.json").read_text())["dataset"]["label_scale"]["values"]


def test_leading_zeros_are_distinct_nominal_labels(d, tmp_path):
    data = "item,annotator,label\n1,a,007\n1,b,7\n2,a,7\n2,b,007\n3,a,07\n3,b,7.0\n"
    assert labels_of(d, tmp_path, "z.csv", data) == ["007", "07", "7", "7.0"]


def test_mixed_int_and_text_json_labels_are_text(d, tmp_path):
    rows = [("1", "a", 1), ("1", "b", "a"), ("2", "a", "1"), ("2", "b", "a"), ("3", "a", 1.0),
            ("3", "b", "b")]
    data = "".join(json.dumps({"item": i, "annotator": a, "label": lab}) + "\n"
                   for i, a, lab in rows)
    assert labels_of(d, tmp_path, "m.jsonl", data) == ["1", "a", "b"]


def test_nan_and_na_text_labels_are_labels_unless_na_values_says(d, tmp_path):
    data = "item,annotator,label\n1,a,nan\n1,b,NA\n2,a,nan\n2,b,x\n3,a,NaN\n3,b,null\n"
    assert labels_of(d, tmp_path, "n.csv", data) == ["NA", "NaN", "nan", "null", "x"]
    (d / "na.yaml").write_text("read: {na_values: [NA, nan]}\n")
    result = invoke(["validate", d / "n.csv", "--spec", d / "na.yaml"], d)
    assert_bad_input(result, "n.csv", "column 'label'", "not null", "(line 2)",
                     "(line 3)", "(line 4)")
    assert "(line 6)" not in result.output and "(line 7)" not in result.output


def test_nan_text_label_with_a_declared_order(d, tmp_path):
    """A text label ``nan`` on a declared ordinal scale is encoded as its category, not as a
    missing value (pandas' categorical encoding treats float NaN, never the text, as missing)."""
    (d / "o.yaml").write_text("label: {kind: ordinal, order: [nan, low, high]}\n")
    data = "item,annotator,label\n1,a,nan\n1,b,low\n2,a,high\n2,b,nan\n"
    assert labels_of(d, tmp_path, "o.csv", data, "--spec", d / "o.yaml") == ["nan", "low",
                                                                            "high"]


def test_parquet_text_nan_is_a_label_and_null_is_missing(d):
    pd.DataFrame({"item": ["1", "1", "2", "2"], "annotator": ["a", "b", "a", "b"],
                  "label": ["nan", "NA", "nan", None]}).to_parquet(d / "p.parquet")
    result = invoke(["validate", d / "p.parquet"], d)
    assert_bad_input(result, "p.parquet", "column 'label'", "not null", "source row 3")
    assert "source row 0" not in result.output
