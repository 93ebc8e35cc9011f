"""Bad input at the library level: one AuditError naming the place; input files never modified."""

from __future__ import annotations

import hashlib
import warnings
from pathlib import Path

import pytest

from audit.errors import AuditError, InputError, SchemaError
from audit.ingest import FORMATS, detect_format, load
from audit.ingest.readers import read_json, read_table
from conftest import SHARED_DATA

FIXTURES = Path(__file__).resolve().parent / "fixtures"
DEMO = Path(__file__).resolve().parents[1] / "data" / "pandalm" / "testset-v1.json"


def write(tmp_path, name, content):
    p = tmp_path / name
    if isinstance(content, bytes):
        p.write_bytes(content)
    else:
        p.write_text(content, encoding="utf-8")
    return p


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match=r"nope\.csv: file not found") as err:
        load(tmp_path / "nope.csv")
    assert err.value.path.endswith("nope.csv")


def test_missing_file_for_every_format(tmp_path):
    for fmt in ("pandalm", "lewidi", "table", "multipref", "mt-bench", "hf"):
        with pytest.raises(InputError, match="not found"):
            load(tmp_path / "nope.json", format=fmt)


def test_undetectable_format_lists_the_formats(tmp_path):
    src = write(tmp_path, "notes.txt", "hello world\n")
    with pytest.raises(InputError) as err:
        load(src)
    msg = str(err.value)
    assert "cannot detect the format of" in msg and "notes.txt" in msg and "--format" in msg
    assert all(f in msg for f in FORMATS)
    src = write(tmp_path, "data.json", '{"a": 1}')
    with pytest.raises(InputError, match="cannot detect"):
        detect_format(src)


def test_a_folder_named_like_a_csv_file_is_called_a_folder(tmp_path):
    empty = tmp_path / "ratings.csv"
    empty.mkdir()
    with pytest.raises(InputError) as err:
        load(empty)
    msg = str(err.value)
    assert "ratings.csv: is a folder, not a file" in msg and "holds no data file" in msg
    assert "hub download" in msg and all(f in msg for f in FORMATS)
    holding = tmp_path / "export.csv"
    holding.mkdir()
    write(holding, "part-0.csv", "segment,rater,score\n1,a,2\n")
    with pytest.raises(InputError) as err:
        detect_format(holding)
    msg = str(err.value)
    assert "is a folder, not a file" in msg and "'part-0.csv' are read as splits" in msg
    assert "'segment', 'rater', 'score'" in msg


def test_misnamed_column(tmp_path):
    src = write(tmp_path, "t.csv", "item,annotater,label\n1,a,x\n1,b,y\n")
    with pytest.raises(InputError) as err:
        load(src, format="table")
    msg = str(err.value)
    assert "t.csv" in msg and "'annotator'" in msg and "'annotater'" in msg
    assert err.value.column == "annotator"
    with pytest.raises(InputError, match=r"columns: 'item', 'annotater', 'label'"):
        load(src)


def test_empty_table(tmp_path):
    with pytest.raises(InputError, match="empty"):
        load(write(tmp_path, "t.csv", "item,annotator,label\n"))
    with pytest.raises(InputError, match="empty"):
        load(write(tmp_path, "e.csv", ""), format="table")


def test_duplicate_item_annotator(tmp_path):
    src = write(tmp_path, "t.csv", "item,annotator,label\n1,a,x\n1,b,y\n1,a,y\n")
    with pytest.raises(SchemaError, match=r"\(item, annotator\)") as err:
        load(src)
    fails = err.value.failures
    assert fails["index"].tolist() == [0, 2]
    assert fails["failure_case"].tolist() == [("1", "a"), ("1", "a")]


def test_labels_outside_the_declared_set(tmp_path):
    spec = write(tmp_path, "spec.yaml", "layout: long\nlabel: {kind: ordinal, order: [1, 2, 3]}\n")
    src = write(tmp_path, "t.csv", "item,annotator,label\n1,a,1\n1,b,7\n2,a,2\n2,b,3\n")
    with pytest.raises(SchemaError, match=r"(?s)label.*declared set.*'7'.*\(line 3\)"):
        load(src, spec=spec)


def test_nan_labels(tmp_path):
    src = write(tmp_path, "t.csv", "item,annotator,label\n1,a,x\n1,b,\n2,a,x\n2,b,y\n")
    with pytest.raises(SchemaError, match=r"(?s)'label'.*not null.*\(line 3\)") as err:
        load(src)
    assert err.value.failures["index"].tolist() == [1]


def test_non_utf8_bytes(tmp_path):
    src = write(tmp_path, "t.csv", b"item,annotator,label\n1,a,\xff\xfe\n1,b,x\n")
    with pytest.raises(InputError, match=r"t\.csv: not UTF-8.*byte offset 25 \(line 2\)"):
        load(src)
    content = b'[{"cmp_key": "a_b",\n  "annotator1": 1, "x": "\xe9t\xe9"}]'
    js = write(tmp_path, "t.json", content)
    with pytest.raises(InputError, match=rf"t\.json: not UTF-8.*byte offset {content.index(0xe9)} "
                                         r"\(line 2\)"):
        load(js, format="pandalm")


def test_non_utf8_far_into_a_large_file(tmp_path):
    body = "".join(f"{i},a{i % 3},x\n" for i in range(200_000)).encode()
    src = write(tmp_path, "big.csv", b"item,annotator,label\n" + body + b"9,a,\xc3\n")
    with pytest.raises(InputError) as err:
        read_table(src)
    assert f"byte offset {21 + len(body) + 4}" in str(err.value)
    assert f"line {200_002}" in str(err.value)


def test_non_utf8_offset_across_a_read_boundary(tmp_path):
    from audit.ingest.readers.text import CHUNK_BYTES

    # a two-byte character split across the 1 MiB read boundary, then an invalid byte
    head = b"item,annotator,label\n" + b"1,a,x\n" * ((CHUNK_BYTES - 22) // 6)
    head += b"#" * (CHUNK_BYTES - 1 - len(head))
    data = head + "\u00e9".encode() + b"\n2,b,\x80\n"
    src = write(tmp_path, "edge.csv", data)
    offset = data.index(b"\x80")
    line = data[:offset].count(b"\n") + 1
    with pytest.raises(InputError, match=rf"byte offset {offset} \(line {line}\)"):
        read_table(src)


def test_truncated_json(tmp_path):
    src = write(tmp_path, "cut.json", DEMO.read_text(encoding="utf-8")[:5000])
    with pytest.raises(InputError, match=r"cut\.json: invalid JSON at line \d+, column \d+.*truncated"):
        load(src, format="pandalm")
    with pytest.raises(InputError, match=r"cut\.json: invalid JSON at line \d+"):
        load(src)


def test_invalid_json_names_line_and_column(tmp_path):
    src = write(tmp_path, "bad.json", '[\n  {"a": 1},\n  {"a" 2}\n]\n')
    with pytest.raises(InputError, match=r"line 3, column 8: Expecting ':' delimiter"):
        read_json(src)


def test_trailing_commas_are_tolerated_and_strings_untouched(tmp_path):
    src = write(tmp_path, "meta.json", '{\n "A": {"x": "a,}", "y": "[1,]",},\n "B": [1, 2,],\n}')
    assert read_json(src) == {"A": {"x": "a,}", "y": "[1,]"}, "B": [1, 2]}


def test_spec_with_an_unknown_key(tmp_path):
    spec = write(tmp_path, "spec.yaml", "layout: long\nlabels: {kind: nominal}\n")
    src = write(tmp_path, "t.csv", "item,annotator,label\n1,a,x\n1,b,y\n")
    with pytest.raises(InputError, match=r"spec\.yaml, key 'labels': line 2: unknown key 'labels'"):
        load(src, spec=spec)


def test_unknown_format_and_options_that_do_not_apply(tmp_path):
    with pytest.raises(InputError, match="unknown format 'xml'"):
        load(DEMO, format="xml")
    with pytest.raises(InputError, match="--split does not apply to the pandalm format"):
        load(DEMO, split="test")
    with pytest.raises(InputError, match="--aspect does not apply"):
        load(DEMO, aspect="helpful_pref")
    with pytest.raises(InputError, match="--spec does not apply to the mt-bench format"):
        load(FIXTURES / "mtbench", format="mt-bench", spec=FIXTURES / "table" / "ratings_wide.yaml")


def test_wrong_shape_for_the_format(tmp_path):
    with pytest.raises(InputError, match="not the LeWiDi shape"):
        load(DEMO, format="lewidi")
    with pytest.raises(InputError, match=r"not the MultiPref shape.*'normal_worker_annotations'"):
        load(FIXTURES / "table" / "long.csv", format="multipref")
    with pytest.raises(InputError, match="not the MT-Bench shape"):
        load(FIXTURES / "multipref" / "multipref_sample.jsonl", format="mt-bench")
    with pytest.raises(InputError, match="not the PandaLM shape"):
        load(FIXTURES / "multipref" / "multipref_sample.jsonl", format="pandalm")


def test_detect_format_of_every_source_kind():
    assert detect_format(DEMO) == "pandalm"
    assert detect_format(FIXTURES / "multipref" / "multipref_sample.jsonl") == "multipref"
    assert detect_format(FIXTURES / "mtbench") == "mt-bench"
    assert detect_format(FIXTURES / "mtbench" / "data" / "human-00000-of-00001.parquet") == "mt-bench"
    assert detect_format(FIXTURES / "table" / "long.csv") == "table"
    assert detect_format("allenai/multipref") == "multipref"
    assert detect_format("lmsys/mt_bench_human_judgments") == "mt-bench"
    hs = SHARED_DATA / "lewidi2023" / "HS-Brexit"
    if hs.exists():
        assert detect_format(hs) == "lewidi"
        assert detect_format(hs / "HS-Brexit_dev.json") == "lewidi"


def _digest(paths):
    out = {}
    for p in paths:
        st = p.stat()
        out[p] = (hashlib.sha256(p.read_bytes()).hexdigest(), st.st_mtime_ns, st.st_mode)
    return out


def test_inputs_are_never_modified():
    sources = [
        (DEMO, {}),
        (FIXTURES / "multipref" / "multipref_sample.jsonl", {}),
        (FIXTURES / "mtbench", {}),
        (FIXTURES / "table" / "ratings_wide.csv", {"spec": FIXTURES / "table" / "ratings_wide.yaml"}),
        (FIXTURES / "table" / "long.csv", {"pools": FIXTURES / "table" / "pools.csv",
                                           "pool_column": "group"}),
    ]
    para = SHARED_DATA / "lewidi2025" / "Paraphrase"
    if para.exists():
        sources.append((para, {"pools": para / "Paraphrase_annotators_meta.json",
                               "pool_column": "Nationality"}))
    files = sorted({p for src, kw in sources
                    for p in ([src] if src.is_file() else src.rglob("*")) if p.is_file()}
                   | {FIXTURES / "table" / n for n in ("ratings_wide.yaml", "pools.csv")})
    before = _digest(files)
    listing = {src: sorted(p.name for p in src.rglob("*")) for src, _ in sources if src.is_dir()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # repeated judgments, unknown pools
        for src, kw in sources:
            load(src, **kw)
    assert _digest(files) == before
    assert {src: sorted(p.name for p in src.rglob("*")) for src in listing} == listing


def test_every_error_is_an_audit_error(tmp_path):
    bad = [write(tmp_path, "a.json", "[1, 2"), write(tmp_path, "b.csv", b"x\n\xff"),
           write(tmp_path, "c.parquet", b"not parquet"), write(tmp_path, "d.jsonl", "{}\n[1]\n")]
    for p in bad:
        with pytest.raises(AuditError):
            load(p, format="table")


def test_importing_the_adapters_stays_light():
    import subprocess
    import sys

    code = ("import sys, audit.ingest\n"
            "print([m for m in ('datasets', 'yaml') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_audit_load_is_a_plain_function_whatever_is_imported():
    import types

    import audit

    first = audit.load(DEMO)
    import audit.ingest  # noqa: F401 - the loader package has its own name: nothing rebinds load
    import audit.ingest.spec  # noqa: F401

    assert isinstance(audit.load, types.FunctionType)
    assert audit.load(DEMO).summary() == first.summary()


@pytest.mark.parametrize("sep, said, written", [(";", "';'", ";"), ("\t", "a tab", "\\t"),
                                                ("|", "'|'", "|")])
def test_a_header_read_as_one_column_names_the_separator_it_holds(tmp_path, sep, said,
                                                                   written):
    """A European spreadsheet's ``;`` CSV (or a tab / pipe in a ``.csv``) read with ``,``: the
    header is one column. Without a spec and with one, the exit-2 message says which separator
    the header holds and the ``read: {sep: ...}`` that reads it; with that spec it loads."""
    import yaml

    header = sep.join(["item", "annotator", "model_a", "model_b", "label"])
    p = write(tmp_path, "prefs.csv", f"{header}\n007{sep}ä1{sep}m1{sep}m2{sep}A\n"
                                     f"008{sep}ä2{sep}m1{sep}m2{sep}B\n")
    hint = f'holds {said} between names: if the file is separated by it, read it with a ' \
           f'--spec file holding read: {{sep: "{written}"}}'
    with pytest.raises(InputError) as err:
        load(p)
    assert hint in str(err.value)
    mapped = write(tmp_path, "mapped.yaml", "columns: {item: id}\n")
    with pytest.raises(InputError) as err:
        load(p, spec=mapped)
    assert hint in str(err.value)
    spec = write(tmp_path, "spec.yaml", f'read: {{sep: "{written}"}}\n')
    assert yaml.safe_load(spec.read_text())["read"]["sep"] == sep  # the hint's YAML is right
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = load(p, spec=spec)
    assert sorted(table.frame["item"].astype(str)) == ["007", "008"]


def test_a_header_with_enough_columns_gets_no_separator_hint(tmp_path):
    """A header of three or more columns was split: a ``;`` inside a name is not a hint."""
    p = write(tmp_path, "prefs.csv", "item,annotator;x,note\n1,a,b\n")
    with pytest.raises(InputError) as err:
        load(p)
    assert "between names" not in str(err.value)


@pytest.mark.spark
@pytest.mark.parametrize("sep, said, written", [(";", "';'", ";"), ("\t", "a tab", "\\t")])
def test_the_spark_engine_names_the_separator_the_header_holds(spark, tmp_path, sep, said,
                                                               written):
    """--engine spark said only 'missing required column(s) ...; columns present:
    'item;annotator;label'' for a ``;`` CSV read with ``,``, without the hint the pandas
    engine gives (README: with or without a spec)."""
    header = sep.join(["item", "annotator", "label"])
    p = write(tmp_path, "t.csv", f"{header}\n1{sep}a{sep}x\n1{sep}b{sep}y\n")
    hint = f'holds {said} between names: if the file is separated by it, read it with a ' \
           f'--spec file holding read: {{sep: "{written}"}}'
    mapped = write(tmp_path, "mapped.yaml", "columns: {item: id}\n")
    for spec in (None, mapped):
        with pytest.raises(InputError) as err:
            load(p, spec=spec, engine="spark")
        assert hint in str(err.value), str(err.value)
