"""Outputs never go over an input (issue 13, item 1).

Every command resolves its outputs before it reads data: an output that is an input (by path,
through a symbolic link, or as a hard link), an output folder that holds an input or lies inside
an input folder, a folder holding files annotation-audit did not write, and a ``card --card``
that is not a Markdown card are exit 2, naming both paths. Every test hashes every file under
its folder before and after: nothing the command did not own may change.
"""

from __future__ import annotations

import hashlib
import os
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner

from audit.cli import cli
from audit.errors import InputError
from audit.outputs import (Inputs, find_inputs, guard_file, guard_folder, read_card,
                           verify_outputs)

TABLE = "item,annotator,pool,label\n1,a,crowd,x\n1,b,crowd,y\n1,c,expert,x\n2,a,crowd,x\n" \
        "2,b,crowd,x\n2,c,expert,y\n3,a,crowd,y\n3,b,crowd,y\n3,c,expert,y\n"
JSONL = "".join(f'{{"item": "{i}", "annotator": "{a}", "label": "{"xy"[(i + j) % 2]}"}}\n'
                for i in range(6) for j, a in enumerate("abc"))
SPEC = "layout: long\nlabel: {kind: nominal}\n"
SUITE = "suite: s\nexpectations:\n  - expect: unique_judgments\n"
CARD = "---\nlicense: mit\n---\n# My data\n\nHand-written intro.\n"
LEWIDI = '{"1": {"annotators": "Ann1,Ann2", "annotations": "0,1", "text": "t"}}'


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def tree(folder: Path) -> dict[str, str]:
    """SHA-256 of every file under ``folder`` (symbolic links as their target text)."""
    out = {}
    for root, _, names in os.walk(folder):
        for name in names:
            path = Path(root) / name
            rel = path.relative_to(folder).as_posix()
            out[rel] = (f"link:{os.readlink(path)}" if path.is_symlink()
                        else hashlib.sha256(path.read_bytes()).hexdigest())
    return out


@pytest.fixture
def d(tmp_path):
    (tmp_path / "t.csv").write_text(TABLE)
    (tmp_path / "s.yaml").write_text(SUITE)
    return tmp_path


@contextmanager
def kept(folder: Path, *outputs: str):
    """Fail if any file under ``folder`` changes, appears or goes away, except ``outputs``
    (paths relative to ``folder``, a folder standing for everything in it)."""
    before = tree(folder)
    yield
    after = tree(folder)
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    assert {k for k in changed
            if not any(k == o or k.startswith(o + "/") for o in outputs)} == set(), changed


def refused(folder: Path, args, *names) -> str:
    """Run the CLI; it must exit 2 naming every one of ``names``, with nothing under
    ``folder`` changed (no staging folder left either)."""
    with kept(folder):
        result = invoke(*args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    for name in names:
        assert str(name) in result.output, (name, result.output)
    return result.output


# -- the three cases the issue reports ---------------------------------------------------------
def test_run_out_holding_the_input_named_results_json(d):
    out = d / "o"
    out.mkdir()
    (out / "results.json").write_text(JSONL)
    msg = refused(d, ["run", out / "results.json", "--format", "table", "--out", out,
                      "--bootstrap", 5, "--quiet"], out, out / "results.json")
    assert "holds the source" in msg


def test_export_into_the_folder_of_its_own_spec(d):
    data = d / "ds"
    data.mkdir()
    (data / "t.csv").write_text(TABLE)
    (data / "spec.yaml").write_text(SPEC)
    refused(d, ["export", d / "t.csv", "--spec", data / "spec.yaml", data], data,
            data / "spec.yaml")


def test_card_over_the_csv(d):
    msg = refused(d, ["card", d / "t.csv", "--card", d / "t.csv", "--bootstrap", 5],
                  d / "t.csv")
    assert "is the source" in msg


# -- links: the same file under another name ---------------------------------------------------------
def test_out_file_that_is_a_symlink_to_the_input(d):
    out = d / "o"
    out.mkdir()
    (out / "results.json").symlink_to(d / "t.csv")
    refused(d, ["run", d / "t.csv", "--out", out, "--bootstrap", 5, "--quiet"],
            out / "results.json", d / "t.csv")


def test_out_file_that_is_a_hard_link_to_the_input(d):
    out = d / "o"
    out.mkdir()
    os.link(d / "t.csv", out / "results.json")
    refused(d, ["run", d / "t.csv", "--out", out, "--bootstrap", 5, "--quiet"],
            out / "results.json", d / "t.csv")


def test_out_folder_that_is_a_symlink_to_the_source_folder(d):
    (d / "alias").symlink_to(d, target_is_directory=True)
    refused(d, ["run", d / "t.csv", "--out", d / "alias", "--bootstrap", 5, "--quiet"],
            d / "alias", "t.csv")


def test_junit_hard_link_to_the_suite_is_refused_and_not_written_on_error(d):
    os.link(d / "s.yaml", d / "j.xml")
    refused(d, ["check", d / "t.csv", "--suite", d / "s.yaml", "--junit", d / "j.xml",
                "--bootstrap", 5], d / "j.xml", d / "s.yaml")


def test_json_symlink_to_the_spec(d):
    (d / "spec.yaml").write_text(SPEC)
    (d / "v.json").symlink_to(d / "spec.yaml")
    refused(d, ["check", d / "t.csv", "--spec", d / "spec.yaml", "--suite", d / "s.yaml",
                "--json", d / "v.json", "--bootstrap", 5], d / "v.json", d / "spec.yaml")


def test_json_over_the_baseline(d):
    (d / "old.csv").write_text(TABLE)
    refused(d, ["check", d / "t.csv", "--suite", d / "s.yaml", "--baseline", d / "old.csv",
                "--json", d / "old.csv"], d / "old.csv", "baseline")


def test_json_over_the_suite(d):
    refused(d, ["check", d / "t.csv", "--suite", d / "s.yaml", "--json", d / "s.yaml"],
            d / "s.yaml", "suite")


def test_out_over_the_pools_file_named_in_the_spec(d):
    (d / "p").mkdir()
    (d / "p" / "pools.csv").write_text("annotator,pool\na,crowd\nb,crowd\nc,expert\n")
    (d / "spec.yaml").write_text(SPEC + "pools: {file: p/pools.csv}\n")
    refused(d, ["run", d / "t.csv", "--spec", d / "spec.yaml", "--out", d / "p",
                "--bootstrap", 5, "--quiet"], d / "p", "pools.csv")



def test_out_over_a_pools_file_outside_the_spec_folder_with_allow_outside(d):
    """--allow-outside lets the loader read a pools file beside, not inside, the spec's folder;
    that file is still an input, never an output."""
    (d / "specs").mkdir()
    (d / "p").mkdir()
    (d / "p" / "pools.csv").write_text("annotator,pool\na,crowd\nb,crowd\nc,expert\n")
    (d / "specs" / "spec.yaml").write_text(SPEC + "pools: {file: ../p/pools.csv}\n")
    refused(d, ["check", d / "t.csv", "--spec", d / "specs" / "spec.yaml", "--allow-outside",
                "--suite", d / "s.yaml", "--json", d / "p" / "pools.csv"],
            d / "p" / "pools.csv", "pools")

def test_json_over_the_pools_file(d):
    (d / "pools.csv").write_text("annotator,pool\na,crowd\nb,crowd\nc,expert\n")
    refused(d, ["check", d / "t.csv", "--pools", d / "pools.csv", "--suite", d / "s.yaml",
                "--json", d / "pools.csv"], d / "pools.csv", "pools file")


def test_card_over_a_lewidi_metadata_file(d):
    (d / "X_train.json").write_text(LEWIDI)
    (d / "X_annotators_meta.json").write_text('{"Ann1": {"g": "a"}, "Ann2": {"g": "b"}}')
    refused(d, ["card", d / "X_train.json", "--card", d / "X_annotators_meta.json"],
            d / "X_annotators_meta.json", "metadata file")


# -- folders ----------------------------------------------------------------------------------------
def test_out_that_is_the_source_folder(d):
    data = d / "ds"
    data.mkdir()
    (data / "a.csv").write_text(TABLE)
    refused(d, ["run", data / "a.csv", "--format", "table", "--out", data, "--bootstrap", 5,
                "--quiet"], data, data / "a.csv")


def test_out_inside_a_source_folder(d):
    data = d / "lewidi"
    data.mkdir()
    (data / "X_train.json").write_text(LEWIDI)
    msg = refused(d, ["run", data, "--out", data / "audit", "--bootstrap", 5, "--quiet"],
                  data / "audit", data)
    assert "inside the source folder" in msg


def test_out_holding_a_file_we_did_not_write(d):
    out = d / "o"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    refused(d, ["run", d / "t.csv", "--out", out, "--bootstrap", 5, "--quiet"], out,
            "notes.txt")


def test_out_holding_a_foreign_manifest(d):
    out = d / "o"
    out.mkdir()
    (out / "manifest.json").write_text('{"name": "my web app"}')
    refused(d, ["run", d / "t.csv", "--out", out, "--bootstrap", 5, "--quiet"],
            out / "manifest.json", "not an annotation-audit manifest")


def test_out_that_is_the_current_directory(d, monkeypatch):
    out = d / "o"
    out.mkdir()
    monkeypatch.chdir(out)
    refused(d, ["run", d / "t.csv", "--out", ".", "--bootstrap", 5, "--quiet"],
            "current directory")


def test_json_inside_the_out_folder_and_junit_equal_to_json(d):
    refused(d, ["check", d / "t.csv", "--suite", d / "s.yaml", "--out", d / "o", "--json",
                d / "o" / "v.json"], d / "o" / "v.json", "replaced as a whole")
    refused(d, ["check", d / "t.csv", "--suite", d / "s.yaml", "--junit", d / "r.xml",
                "--json", d / "r.xml"], "same file")


def test_export_refuses_an_existing_spec_yaml_that_is_not_an_input(d):
    out = d / "x"
    out.mkdir()
    (out / "spec.yaml").write_text("mine\n")
    refused(d, ["export", d / "t.csv", out], out / "spec.yaml", "already exists")


def test_export_keeps_other_files_and_adds_its_set(d):
    out = d / "x"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with kept(d, "x/judgments", "x/spec.yaml", "x/manifest.json"):
        assert invoke("export", d / "t.csv", out).exit_code == 0
    manifest = verify_outputs(out)
    assert manifest["command"] == "export" and "spec.yaml" in manifest["files"]


# -- the card: a Markdown card, or nothing ----------------------------------------------------------
@pytest.mark.parametrize("name,content", [
    ("card.txt", None),                        # a new path that is not .md
    ("data.tsv", b"a\tb\n1\t2\n"),             # an existing non-Markdown file
    ("bin.md", b"# t\n\x00\x01\x02"),          # .md, but binary
    ("latin.md", "caf\xe9".encode("latin-1")),  # .md, not UTF-8
    ("esc.md", b"# t\n\x1b[31mred\n"),         # .md with a terminal escape
])
def test_card_refuses_what_is_not_a_markdown_card(d, name, content):
    path = d / name
    if content is not None:
        path.write_bytes(content)
    refused(d, ["card", d / "t.csv", "--card", path, "--bootstrap", 5], path)
    assert path.exists() == (content is not None)


def test_card_updates_readme_with_markers_in_place(d):
    readme = d / "README.md"
    readme.write_text(CARD)
    with kept(d, "README.md"):
        result = invoke("card", d / "t.csv", "--card", readme, "--bootstrap", 5)
    assert result.exit_code == 0, result.output
    text = readme.read_text()
    assert "Hand-written intro." in text and "license: mit" in text
    assert "<!-- annotation-audit:start -->" in text
    with kept(d):
        again = invoke("card", d / "t.csv", "--card", readme, "--bootstrap", 5)
    assert again.exit_code == 0 and readme.read_text() == text


def test_card_inside_a_source_folder_is_the_datasets_own_card(d):
    """A Hub dataset folder's README.md is its card: updating it is what --card is for, while
    every data file of the folder stays protected."""
    data = d / "lewidi"
    data.mkdir()
    (data / "X_train.json").write_text(LEWIDI)
    (data / "README.md").write_text(CARD)
    with kept(d, "lewidi/README.md"):
        result = invoke("card", data, "--card", data / "README.md", "--bootstrap", 5)
    assert result.exit_code == 0, result.output
    assert "annotation-audit:start" in (data / "README.md").read_text()
    refused(d, ["card", data, "--card", data / "X_train.json"], data / "X_train.json")


def test_card_through_a_symlink_keeps_the_link_and_the_mode(d):
    (d / "real.md").write_text(CARD)
    os.chmod(d / "real.md", 0o640)
    (d / "link.md").symlink_to(d / "real.md")
    with kept(d, "real.md"):
        result = invoke("card", d / "t.csv", "--card", d / "link.md", "--bootstrap", 5)
    assert result.exit_code == 0, result.output
    assert (d / "link.md").is_symlink()
    assert "annotation-audit:start" in (d / "real.md").read_text()
    assert oct(os.stat(d / "real.md").st_mode & 0o777) == oct(0o640)


# -- the library guards too -------------------------------------------------------------------------
def test_pipeline_run_refuses_before_loading(d, monkeypatch):
    import audit.ingest
    from audit.pipeline import run

    def no_load(*args, **kwargs):
        raise AssertionError("loaded before the outputs were resolved")

    monkeypatch.setattr(audit.ingest, "load", no_load)
    with kept(d), pytest.raises(InputError, match="holds the source"):
        run(d / "t.csv", out=d)


def test_export_table_refuses_a_folder_holding_its_source(d):
    from audit.export import export_table
    from audit.ingest import load

    table = load(d / "t.csv")
    with kept(d), pytest.raises(InputError, match="holds the source"):
        export_table(table, d)


def test_guard_names_both_paths(tmp_path):
    src = tmp_path / "data.csv"
    src.write_text(TABLE)
    inputs = find_inputs(src)
    with pytest.raises(InputError) as err:
        guard_file(tmp_path / "data.csv", inputs, option="--json")
    assert str(src) in str(err.value) and "the source" in str(err.value)
    assert guard_file(tmp_path / "new.json", inputs, option="--json") == \
        (tmp_path / "new.json").resolve()
    assert guard_folder(tmp_path / "new", Inputs()) == (tmp_path / "new").resolve()


def test_read_card_accepts_markdown_text(tmp_path):
    path = tmp_path / "c.md"
    path.write_text("# Title\n\n| a | b |\n|---|---|\n\tcode\r\n\x0cpage\n", encoding="utf-8")
    assert read_card(path).startswith("# Title")


@pytest.mark.parametrize("args", [
    ["run", "t.csv", "--out", "notes.txt/report", "--bootstrap", 5],
    ["run", "t.csv", "--out", "notes.txt/a/b", "--bootstrap", 5],
    ["export", "t.csv", "notes.txt/e"],
    ["card", "t.csv", "--card", "notes.txt/c.md", "--bootstrap", 5],
    ["check", "t.csv", "--suite", "s.yaml", "--junit", "notes.txt/j.xml", "--bootstrap", 5],
    ["simulate", "--perturbation-sd", 1, "--closest-gap", 1, "--sims", 10, "--json",
     "notes.txt/y/s.json"],
])
def test_an_output_under_a_file_is_refused_before_the_run(d, monkeypatch, args):
    """Under a file, an output cannot be written: it failed after the audit, as 'notes.txt:
    File exists' or 'notes.txt/a: Not a directory'; it is refused first, naming the file."""
    monkeypatch.chdir(d)
    (d / "notes.txt").write_text("mine\n")
    import audit.pipeline

    def never(*a, **k):
        raise AssertionError("the audit ran")

    monkeypatch.setattr(audit.pipeline, "audit_table", never)
    with kept(d):
        result = invoke(*args)
    assert result.exit_code == 2, result.output
    line = result.output.strip().splitlines()[-1]
    assert line.endswith(f"{d / 'notes.txt'} is a file, not a folder: give a path in a folder")
