"""Outputs written as one set with a manifest, and checked when read back (issue 13, item 2).

The manifest's hashes are checked with :mod:`hashlib` directly and the run id recomputed from
the JSON text, independently of :mod:`audit.outputs`; a folder mixing two runs, a torn folder,
an edited file and a hostile manifest must each be named.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from audit import outputs
from audit.cli import cli
from audit.outputs import OutputsError, verify_outputs, write_run
from audit.results import json_form, read

TABLE = "item,annotator,pool,label\n1,a,crowd,x\n1,b,crowd,y\n1,c,expert,x\n2,a,crowd,x\n" \
        "2,b,crowd,x\n2,c,expert,y\n3,a,crowd,y\n3,b,crowd,y\n3,c,expert,y\n4,a,crowd,x\n" \
        "4,b,crowd,x\n4,c,expert,x\n"
SUITE = "suite: s\nexpectations:\n  - expect: unique_judgments\n"
RUN_SET = ["advice.csv", "advice.parquet", "croissant.json", "croissant_rai.json",
           "dataset_card.md", "items.parquet", "manifest.json", "report.html", "results.json"]


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def src(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(TABLE)
    yield path
    assert path.read_text() == TABLE


def audit_results(src, seed=0):
    from audit.pipeline import run

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run(src, n_bootstrap=5, seed=seed)


def run_cli(src, out, *extra, seed=0):
    result = invoke("run", src, "--out", out, "--bootstrap", 5, "--seed", seed, "--quiet",
                    *extra)
    assert result.exit_code == 0, result.output
    return result


def staging_left(folder: Path) -> list[str]:
    return [p.name for p in folder.parent.iterdir() if ".tmp-" in p.name]


# -- the manifest ---------------------------------------------------------------------------------
def test_manifest_lists_every_file_with_its_sha256(src, tmp_path):
    out = tmp_path / "o"
    run_cli(src, out)
    assert sorted(p.name for p in out.iterdir()) == RUN_SET
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["tool"] == "annotation-audit" and manifest["command"] == "run"
    assert set(manifest["files"]) == set(RUN_SET) - {"manifest.json"}
    for name, entry in manifest["files"].items():
        data = (out / name).read_bytes()
        assert entry == {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    assert verify_outputs(out) == manifest
    assert staging_left(out) == []


def test_run_id_is_the_digest_of_results_without_it(src, tmp_path):
    out = tmp_path / "o"
    run_cli(src, out)
    results = json.loads((out / "results.json").read_text())
    rid = results["meta"].pop("run_id")
    text = json.dumps(results, indent=2, ensure_ascii=False) + "\n"
    assert rid == hashlib.sha256(text.encode()).hexdigest()[:16]
    assert json.loads((out / "manifest.json").read_text())["run_id"] == rid
    assert f"<dd>{rid}</dd>" in (out / "report.html").read_text()  # the report names its run


def test_same_seed_same_bytes_other_seed_other_run(src, tmp_path):
    for name in ("a", "b"):
        run_cli(src, tmp_path / name)
    run_cli(src, tmp_path / "c", seed=1)
    for name in RUN_SET:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    ids = [verify_outputs(tmp_path / n)["run_id"] for n in "abc"]
    assert ids[0] == ids[1] != ids[2]


def test_check_out_and_card_out_write_sets(src, tmp_path):
    (tmp_path / "s.yaml").write_text(SUITE)
    result = invoke("check", src, "--suite", tmp_path / "s.yaml", "--out", tmp_path / "c",
                    "--bootstrap", 5)
    assert result.exit_code == 0, result.output
    manifest = verify_outputs(tmp_path / "c")
    assert manifest["command"] == "check"
    # what run --out writes but the advised items: check computes no advise block
    assert set(manifest["files"]) == set(RUN_SET) - {"manifest.json", "advice.csv",
                                                      "advice.parquet"}
    assert "expectations" in read(tmp_path / "c" / "results.json")
    assert invoke("card", src, "--out", tmp_path / "k", "--bootstrap", 5).exit_code == 0
    assert set(verify_outputs(tmp_path / "k")["files"]) == {"dataset_card.md"}


# -- one set replaces another ----------------------------------------------------------------------
def test_no_report_after_a_full_run_leaves_no_stale_report(src, tmp_path):
    out = tmp_path / "o"
    run_cli(src, out)
    run_cli(src, out, "--no-report", seed=2)
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "results.json"]
    assert read(out / "results.json")["meta"]["seed"] == 2


def test_a_legacy_folder_without_manifest_is_replaced(src, tmp_path):
    """What `make demo` meets in reports/pandalm/ (written before manifests)."""
    out = tmp_path / "o"
    out.mkdir()
    for name in ("results.json", "report.html", "dataset_card.md", "croissant_rai.json"):
        (out / name).write_text("old\n")
    run_cli(src, out)
    verify_outputs(out)
    assert (out / "results.json").read_text() != "old\n"


def test_hand_edits_of_the_card_are_carried_into_the_new_set(src, tmp_path):
    out = tmp_path / "o"
    run_cli(src, out)
    card = out / "dataset_card.md"
    card.write_text(card.read_text() + "\n## Notes by hand\n\nKeep me.\n")
    with pytest.raises(OutputsError, match="dataset_card.md"):
        verify_outputs(out)  # edited after the run: named
    run_cli(src, out, seed=3)
    assert "Keep me." in card.read_text()
    verify_outputs(out)


def test_out_symlink_is_kept_and_its_target_gets_the_set(src, tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real", target_is_directory=True)
    run_cli(src, tmp_path / "alias")
    run_cli(src, tmp_path / "alias", seed=1)
    assert (tmp_path / "alias").is_symlink()
    assert verify_outputs(tmp_path / "real")["run_id"] == \
        read(tmp_path / "alias" / "results.json")["meta"]["run_id"]


def test_a_failure_while_writing_leaves_the_old_set(src, tmp_path, monkeypatch):
    out = tmp_path / "o"
    run_cli(src, out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    import audit.report

    def broken(*args, **kwargs):
        raise RuntimeError("renderer broke half way")

    monkeypatch.setattr(audit.report, "write_reports", broken)
    result = invoke("run", src, "--out", out, "--bootstrap", 5, "--seed", 9, "--quiet")
    assert result.exit_code == 3
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert staging_left(out) == []



def _disk_full(where, monkeypatch):
    """Make the disk fill up at ``where``: a flush of a file this package writes (no file
    named, as a failed write's error), or pyarrow's write of items.parquet (its own words)."""
    import errno

    if where == "fsync":
        from audit.outputs import fs

        def fsync(fd):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        monkeypatch.setattr(fs.os, "fsync", fsync)
    else:
        import pyarrow.parquet as pq

        def write_table(self, *args, **kwargs):
            err = OSError("Error writing bytes to file. Detail: [errno 28] No space left on "
                          "device")
            err.errno = errno.ENOSPC
            raise err

        monkeypatch.setattr(pq.ParquetWriter, "write_table", write_table)


@pytest.mark.parametrize("where", ["fsync", "pyarrow"])
def test_a_full_disk_names_out_and_leaves_the_old_set(src, tmp_path, monkeypatch, where):
    out = tmp_path / "o"
    run_cli(src, out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    _disk_full(where, monkeypatch)
    result = invoke("run", src, "--out", out, "--bootstrap", 5, "--seed", 9, "--quiet")
    assert result.exit_code == 2, result.output
    (line,) = [ln for ln in result.output.splitlines() if not ln.startswith("warning:")]
    assert line.startswith(f"error: {out}: No space left on device"), line
    assert "nothing in it was written or replaced" in line and ".tmp-" not in line
    if where == "fsync":
        assert "(writing results.json)" in line
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert staging_left(out) == []


def test_a_full_disk_names_a_single_file(src, tmp_path, monkeypatch):
    _disk_full("fsync", monkeypatch)
    junit = tmp_path / "j.xml"
    junit.write_text("old")
    result = invoke("simulate", "--perturbation-sd", 1, "--closest-gap", 1, "--sims", 10,
                    "--json", junit)
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines()[-1] == f"error: {junit}: No space left on device"
    assert junit.read_text() == "old" and [p.name for p in tmp_path.iterdir()
                                            if ".tmp-" in p.name] == []



def test_a_folder_that_refuses_the_file_names_the_file_not_its_temporary(tmp_path, monkeypatch):
    """A folder we may not write in (root passes permission checks, so the refusal is made
    here): the message names the --json file asked for, not ``.s.json.tmp-<pid>-...``."""
    import errno

    from audit.outputs import fs

    real_open = os.open

    def refuse(path, flags, *args):
        if flags & os.O_CREAT:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(fs.os, "open", refuse)
    target = tmp_path / "s.json"
    result = invoke("simulate", "--perturbation-sd", 1, "--closest-gap", 1, "--sims", 10,
                    "--json", target)
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines()[-1] == f"error: {target}: Permission denied"



def _as_a_user() -> list[str] | None:
    """A command prefix that runs without the right to pass file permissions: nothing for a
    user, ``setpriv`` dropping CAP_DAC_OVERRIDE for root; None where neither can."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    drop = "-dac_override,-dac_read_search"
    prefix = [setpriv, "--bounding-set", drop, "--inh-caps", drop]
    probe = subprocess.run([*prefix, "true"], capture_output=True)
    return prefix if probe.returncode == 0 else None


def test_a_read_only_out_folder_leaves_no_old_set_behind(src, tmp_path):
    """A set keeps its folder's mode; the old set of a read-only folder, moved out by the
    swap, could not be emptied by a user and stayed as a hidden .o.tmp-* folder each run."""
    prefix = _as_a_user()
    if prefix is None:
        pytest.skip("root, and no setpriv to drop CAP_DAC_OVERRIDE")
    out = tmp_path / "o"
    run_cli(src, out, "--no-report")
    out.chmod(0o555)
    exe = Path(sys.executable).with_name("annotation-audit")
    try:
        for seed in (1, 2):
            proc = subprocess.run([*prefix, str(exe), "run", str(src), "--out", str(out),
                                   "--bootstrap", "5", "--seed", str(seed), "--no-report",
                                   "--quiet"], capture_output=True, text=True, timeout=300)
            assert proc.returncode == 0, proc.stderr
            assert read(out / "results.json")["meta"]["seed"] == seed
            assert [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name] == []
    finally:
        for folder in [out, *tmp_path.glob(".o.tmp-*")]:
            folder.chmod(0o755)



def test_a_long_legal_name_is_written(src, tmp_path):
    """An output named with 231 to 255 bytes is legal, but its staging name (25 bytes more)
    was not: 'File name too long'. The staging name now holds a cut name and a digest."""
    long = "x" * 245
    out, single = tmp_path / long, tmp_path / (long[:250] + ".json")
    for seed in (1, 2):  # written, then replaced
        run_cli(src, out, "--no-report", seed=seed)
        assert read(out / "results.json")["meta"]["seed"] == seed
    result = invoke("simulate", "--perturbation-sd", 1, "--closest-gap", 1, "--sims", 10,
                    "--json", single)
    assert result.exit_code == 0, result.output
    assert json.loads(single.read_text())["inputs"]["n_sims"] == 10
    assert [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name] == []


def test_long_names_stage_apart_and_their_leftovers_are_removed(src, tmp_path):
    from audit.outputs import fs

    a, b = "é" * 120 + "a", "é" * 120 + "b"  # 241 bytes each, alike in their first 230
    assert fs.stage_stem(a) != fs.stage_stem(b)
    for name in (a, b, "short"):
        staged = fs.stage_name(tmp_path / name)
        assert len(os.fsencode(staged.name)) <= fs.NAME_MAX
        assert fs.STAGE_NAME.fullmatch(staged.name)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    stale = tmp_path / f".{fs.stage_stem(a)}.tmp-{dead}-0123abcd"
    stale.mkdir()
    run_cli(src, tmp_path / a, "--no-report")
    assert not stale.exists()



def test_a_named_pipe_is_written_to_not_replaced(tmp_path):
    """--json FIFO: the file was written beside it and renamed over it, so the pipe became a
    regular file and its reader got nothing; it is now written to as a stream."""
    import stat
    import threading

    fifo = tmp_path / "sim.json"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    result = invoke("simulate", "--perturbation-sd", 1, "--closest-gap", 1, "--sims", 10,
                    "--json", fifo)
    assert result.exit_code == 0, result.output
    reader.join(timeout=30)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert json.loads(got[0])["inputs"]["n_sims"] == 10


def test_a_character_device_is_written_to_not_replaced(tmp_path):
    """--junit /dev/null as root replaced /dev/null by a regular file (the rename beside it
    is allowed to root). Tried on a node of /dev/null's device made in tmp_path."""
    import stat

    node = tmp_path / "null"
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, AttributeError, OSError):
        pytest.skip("cannot make a device node here (not root)")
    (tmp_path / "s.yaml").write_text(SUITE)
    (tmp_path / "t.csv").write_text(TABLE)
    result = invoke("check", tmp_path / "t.csv", "--suite", tmp_path / "s.yaml", "--junit",
                    node, "--json", tmp_path / "v.json", "--bootstrap", 5, "--quiet")
    assert result.exit_code == 0, result.output
    assert stat.S_ISCHR(os.lstat(node).st_mode)
    assert [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name] == []


def test_json_to_dev_stdout_in_a_real_process(tmp_path):
    exe = Path(sys.executable).with_name("annotation-audit")
    proc = subprocess.run([str(exe), "simulate", "--perturbation-sd", "1", "--closest-gap", "1",
                           "--sims", "10", "--json", "/dev/stdout", "--quiet"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert '"n_sims": 10' in proc.stdout


def test_card_on_a_device_is_refused(tmp_path):
    (tmp_path / "t.csv").write_text(TABLE)
    fifo = tmp_path / "card.md"
    os.mkfifo(fifo)
    result = invoke("card", tmp_path / "t.csv", "--card", fifo, "--bootstrap", 5)
    assert result.exit_code == 2
    assert "is not a regular file" in result.output



def test_out_a_link_to_itself_leaves_no_staging_behind(src, tmp_path):
    """A link that resolves nowhere (to itself) is swapped out as it is; the staging name then
    held the link, which rmtree refuses, and stayed as a hidden .o.tmp-* entry."""
    out = tmp_path / "o"
    os.symlink("o", out)
    run_cli(src, out, "--no-report")
    assert (out / "results.json").is_file()
    assert [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name] == []


def test_stale_staging_of_a_dead_process_is_removed(src, tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    stale = tmp_path / f".o.tmp-{dead}-0123abcd"
    stale.mkdir()
    (stale / "results.json").write_text("half")
    mine = tmp_path / f".o.tmp-{os.getpid()}-89abcdef"  # a live process: left alone
    mine.mkdir()
    run_cli(src, tmp_path / "o")
    assert not stale.exists() and mine.exists()


def test_without_renameat2_two_renames_do_the_swap(src, tmp_path, monkeypatch):
    from audit.outputs import fs

    monkeypatch.setattr(fs, "_renameat2", lambda *a: False)
    out = tmp_path / "o"
    run_cli(src, out)
    run_cli(src, out, seed=1)
    assert verify_outputs(out)["run_id"] == read(out / "results.json")["meta"]["run_id"]
    assert staging_left(out) == []


def test_single_files_are_replaced_atomically(tmp_path):
    target = tmp_path / "j.xml"
    target.write_text("old")
    os.chmod(target, 0o600)
    outputs.write_text(target, "new")
    assert target.read_text() == "new" and (target.stat().st_mode & 0o777) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["j.xml"]


# -- verifying: torn, mixed, edited, hostile -------------------------------------------------------
@pytest.fixture
def two_runs(src, tmp_path):
    run_cli(src, tmp_path / "a")
    run_cli(src, tmp_path / "b", seed=1)
    return tmp_path / "a", tmp_path / "b"


@pytest.mark.parametrize("name", ["report.html", "results.json", "dataset_card.md"])
def test_a_file_from_another_run_is_named(two_runs, name):
    a, b = two_runs
    shutil.copy(b / name, a / name)
    with pytest.raises(OutputsError, match=name) as err:
        verify_outputs(a)
    assert "mixes" in str(err.value)


def test_results_json_of_another_run_with_its_manifest_is_a_mix(two_runs):
    a, b = two_runs
    shutil.copy(b / "results.json", a / "results.json")
    shutil.copy(b / "manifest.json", a / "manifest.json")
    with pytest.raises(OutputsError, match="does not match .* mixes"):
        verify_outputs(a)  # the manifest now speaks for run b: a's other files do not match
    assert read(a / "results.json")["meta"]["run_id"] == verify_outputs(b)["run_id"]


def test_torn_folder_without_manifest(two_runs):
    a, _ = two_runs
    (a / "manifest.json").unlink()
    with pytest.raises(OutputsError, match="no manifest.json"):
        verify_outputs(a)
    with pytest.raises(OutputsError, match="no manifest.json"):
        read(a / "results.json")  # it has a run id: it was written as part of a set


def test_missing_and_unlisted_files(two_runs):
    a, b = two_runs
    (a / "report.html").unlink()
    with pytest.raises(OutputsError, match="report.html.*missing"):
        verify_outputs(a)
    assert read(a / "results.json")  # read checks only the file it reads
    c = b.parent / "c"
    run_cli(b.parent / "t.csv", c, "--no-report")
    shutil.copy(b / "report.html", c / "report.html")
    with pytest.raises(OutputsError, match="report.html.*not listed"):
        verify_outputs(c)


def test_a_run_id_that_disagrees_with_the_manifest(two_runs):
    a, _ = two_runs
    manifest = json.loads((a / "manifest.json").read_text())
    manifest["run_id"] = "0" * 16
    (a / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(OutputsError, match="run_id"):
        read(a / "results.json")


@pytest.mark.parametrize("name", ["../t.csv", "/etc/hostname", "a/../../t.csv", ""])
def test_a_hostile_manifest_cannot_point_outside(two_runs, name):
    a, _ = two_runs
    manifest = json.loads((a / "manifest.json").read_text())
    manifest["files"][name] = {"sha256": "0" * 64, "bytes": 1}
    (a / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(OutputsError, match="not a file inside its folder"):
        verify_outputs(a)


def test_a_symlink_in_a_set_is_not_the_file_written(two_runs):
    a, b = two_runs
    (a / "report.html").unlink()
    (a / "report.html").symlink_to(b / "report.html")
    with pytest.raises(OutputsError, match="link"):
        verify_outputs(a)


def test_deep_or_huge_manifest_is_bad_input(two_runs):
    a, _ = two_runs
    (a / "manifest.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(OutputsError, match="not an annotation-audit manifest"):
        verify_outputs(a)


# -- read back as an input: an export, a baseline -----------------------------------------------------
@pytest.fixture
def exported(src, tmp_path):
    out = tmp_path / "x"
    result = invoke("export", src, out)
    assert result.exit_code == 0, result.output
    return out


def test_an_export_is_verified_when_audited(exported, tmp_path):
    ok = invoke("run", exported / "judgments", "--spec", exported / "spec.yaml", "--out",
                tmp_path / "o", "--bootstrap", 5, "--quiet")
    assert ok.exit_code == 0, ok.output
    part = next(exported.glob("judgments/pool=crowd/*.parquet"))
    other = next(exported.glob("judgments/pool=expert/*.parquet"))
    shutil.copy(other, part)  # a file of the set replaced by another
    bad = invoke("run", exported / "judgments", "--spec", exported / "spec.yaml",
                 "--bootstrap", 5, "--quiet")
    assert bad.exit_code == 2 and str(part) in bad.output and "manifest.json" in bad.output


def test_a_torn_export_as_baseline_is_named(exported, src, tmp_path):
    (tmp_path / "s.yaml").write_text(SUITE)
    args = ["check", src, "--suite", tmp_path / "s.yaml", "--baseline", exported / "judgments",
            "--spec", exported / "spec.yaml", "--bootstrap", 5]
    (exported / "spec.yaml").write_text((exported / "spec.yaml").read_text() + "# edited\n")
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    assert str(exported / "spec.yaml") in result.output


def test_export_manifest_run_id_is_the_digest_of_its_files(exported):
    manifest = verify_outputs(exported)
    text = "".join(f"{n}\0{e['sha256']}\n" for n, e in sorted(manifest["files"].items()))
    assert manifest["run_id"] == hashlib.sha256(text.encode()).hexdigest()[:16]
    assert any(n.startswith("judgments/pool=") for n in manifest["files"])


# -- the library entry point -------------------------------------------------------------------------
def test_write_run_sets_the_run_id_in_place(src, tmp_path):
    results = audit_results(src)
    assert "run_id" not in results["meta"]  # not written, no run
    write_run(results, tmp_path / "o", report=False)
    assert results["meta"]["run_id"] == verify_outputs(tmp_path / "o")["run_id"]
    # the file holds the JSON form: NaN in the dict is null there
    assert read(tmp_path / "o" / "results.json") == json_form(results)
