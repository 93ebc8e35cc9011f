"""The exit-code contract, command by command: 0 ok, 1 only from ``check`` for a failed
expectation, 2 bad input (one message), 3 an internal error (one line naming the exception and
the command to rerun with ``--debug``), 130 interrupted, 141 a closed stdout.

Internal errors are forced by replacing a library function each command calls with one that
raises, so the tests do not depend on a bug existing.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from junitparser import Error, JUnitXml

import audit
from audit.cli import cli
from audit.errors import InternalError

REPO = Path(__file__).resolve().parents[1]
TABLE = "item,annotator,pool,label\n1,a,crowd,x\n1,b,crowd,y\n1,c,expert,x\n2,a,crowd,x\n" \
        "2,b,crowd,x\n2,c,expert,y\n3,a,crowd,y\n3,b,crowd,y\n3,c,expert,y\n"
SUITE = "suite: s\nexpectations:\n  - expect: unique_judgments\n"
BUG = "error: internal error, a bug in annotation-audit"


@pytest.fixture
def files(tmp_path):
    (tmp_path / "t.csv").write_text(TABLE)
    (tmp_path / "s.yaml").write_text(SUITE)
    return tmp_path


def invoke(*args, env=None):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False, env=env)


# command -> (its arguments on the `files` folder, a function it calls, as "module:attribute")
COMMANDS = {
    "run": (lambda d: ["run", d / "t.csv", "--bootstrap", 5, "--quiet", "--out", d / "o"],
            "audit.pipeline:audit_table"),
    "validate": (lambda d: ["validate", d / "t.csv"], "audit.report.summary:print_dataset"),
    "export": (lambda d: ["export", d / "t.csv", d / "x"], "audit.export:export_table"),
    "card": (lambda d: ["card", d / "t.csv", "--out", d / "c", "--bootstrap", 5],
             "audit.report.card:render_card"),
    "check": (lambda d: ["check", d / "t.csv", "--suite", d / "s.yaml", "--bootstrap", 5],
              "audit.suites.check:fit_table"),
    "simulate": (lambda d: ["simulate", "--perturbation-sd", 1, "--score-range", 1, "--sims", 20],
                 "audit.rank:simulate"),
    "schema": (lambda d: ["schema", "--quiet"], "audit.contract.results:schema_text"),
    "plan": (lambda d: ["plan", d / "t.csv", "--bootstrap", 5, "--sims", 200, "--quiet"],
             "audit.planning:plan_block"),
    "advise": (lambda d: ["advise", d / "t.csv", "--bootstrap", 5, "--quiet"],
               "audit.advice:advise_block"),
}


def force(monkeypatch, target: str, exc: BaseException):
    """Make ``module:attribute`` raise ``exc`` when called."""
    import importlib

    module, attr = target.split(":")

    def boom(*args, **kwargs):
        raise exc

    monkeypatch.setattr(importlib.import_module(module), attr, boom)


def error_lines(result) -> list[str]:
    """stderr without the toolkit's warnings (degenerate data on a tiny table), notes and
    progress lines (``[  0.1s] STEP done``, printed when stderr is not a terminal)."""
    return [line for line in result.stderr.splitlines()
            if line.strip() and not line.startswith(("warning:", "info:"))
            and not re.match(r"\[ *\d+\.\ds\] .* done$", line)]


def test_every_command_is_covered():
    assert set(COMMANDS) == set(cli.commands)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_command_succeeds(files, name):
    args, _ = COMMANDS[name]
    result = invoke(*args(files))
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_internal_error_is_exit_3_and_one_line(files, monkeypatch, name):
    args, target = COMMANDS[name]
    force(monkeypatch, target, ValueError("invalid literal for int() with base 10: 'A'"))
    result = invoke(*args(files))
    assert result.exit_code == 3, result.output
    assert "Traceback" not in result.output
    lines = error_lines(result)
    assert len(lines) == 1, result.stderr
    line = lines[0]
    assert line.startswith(BUG), line
    assert "(ValueError: invalid literal for int() with base 10: 'A')" in line
    assert f"rerun with --debug for the traceback: annotation-audit --debug {name} " in line
    assert result.stdout.count("error") == 0 or name == "check"



ODD_NAME = "it's\t\u00e9\nx.csv"  # a quote, a tab, a line break, a letter outside ASCII


def test_internal_error_naming_an_odd_file_is_still_one_line_that_reruns(files, monkeypatch):
    """The rerun command quotes a file name holding a line break as bash's $'...' (its bytes),
    so the line stays one line and bash reads the name back exactly."""
    import shutil

    odd = files / ODD_NAME
    shutil.copy(files / "t.csv", odd)
    force(monkeypatch, "audit.report.summary:print_dataset", RuntimeError("boom"))
    result = invoke("validate", odd)
    assert result.exit_code == 3
    (line,) = error_lines(result)
    command = line.split("rerun with --debug for the traceback: ", 1)[1]
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash to read the command back")
    words = subprocess.run([bash, "-c", 'printf "%s\\0" ' + command], capture_output=True,
                           check=True).stdout.split(b"\0")[:-1]
    assert words == [b"annotation-audit", b"--debug", b"validate", os.fsencode(str(odd))]


def test_internal_error_of_a_huge_command_line_is_one_short_line(files, monkeypatch):
    force(monkeypatch, "audit.report.card:render_card", RuntimeError("boom"))
    tags = [arg for i in range(2000) for arg in ("--tag", f"t{i}")]
    result = invoke("card", files / "t.csv", "--out", files / "c", "--bootstrap", 5, *tags)
    assert result.exit_code == 3
    (line,) = error_lines(result)
    assert len(line) < 400 and "rerun the command with --debug after annotation-audit" in line


@pytest.mark.parametrize("args", [["validate", ODD_NAME], ["validate", "nope\n.csv"],
                                  ["check", "t.csv", "--suite", "no\nsuite.yaml"]])
def test_bad_input_naming_an_odd_file_is_one_line(files, monkeypatch, args):
    monkeypatch.chdir(files)
    (files / ODD_NAME).write_text("item,annotator\n1,a\n")  # no label: bad input
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    (line,) = error_lines(result)
    assert "\\n" in line, line


@pytest.mark.parametrize("name", sorted(COMMANDS))
@pytest.mark.parametrize("where", ["group", "command", "env"])
def test_debug_shows_the_traceback_and_keeps_exit_3(files, monkeypatch, name, where):
    args, target = COMMANDS[name]
    force(monkeypatch, target, KeyError("pool"))
    argv, env = args(files), None
    if where == "group":
        argv = ["--debug", *argv]
    elif where == "command":
        argv = [*argv, "--debug"]
    else:
        env = {"AUDIT_DEBUG": "1"}
    result = invoke(*argv, env=env)
    assert result.exit_code == 3, result.output
    assert "Traceback (most recent call last)" in result.stderr
    assert "KeyError: 'pool'" in result.stderr
    assert result.stderr.rstrip().splitlines()[-1].startswith(BUG)
    assert "traceback above" in result.stderr


@pytest.mark.parametrize("name", sorted(COMMANDS))
@pytest.mark.parametrize("value", ["abc", "2", "\x1b[31mred"])
def test_an_unreadable_audit_debug_is_ignored_with_one_warning(files, name, value):
    """AUDIT_DEBUG=abc made every command a usage error (exit 2, click's "not a valid
    boolean"): a variable asking for tracebacks must not stop the tool. It is off, said once."""
    args, _ = COMMANDS[name]
    result = invoke(*args(files), env={"AUDIT_DEBUG": value})
    assert result.exit_code == 0, result.output
    said = [line for line in result.stderr.splitlines() if "AUDIT_DEBUG" in line]
    assert said == [f"warning: AUDIT_DEBUG={value!r} is not a yes / no value (1, true, yes, on; "
                    "0, false, no, off); ignored: no tracebacks"]
    assert "\x1b" not in result.stderr  # the value's control characters are shown, not sent


@pytest.mark.parametrize("value, shown", [("abc", False), ("On", True), ("YES", True),
                                          ("t", True), ("0", False), ("off", False),
                                          ("", False)])
def test_audit_debug_values(files, monkeypatch, value, shown):
    force(monkeypatch, "audit.report.summary:print_dataset", KeyError("pool"))
    result = invoke("validate", files / "t.csv", env={"AUDIT_DEBUG": value})
    assert result.exit_code == 3
    assert ("Traceback (most recent call last)" in result.stderr) is shown


@pytest.mark.parametrize("exc", [TypeError("x"), RecursionError("maximum recursion depth"),
                                 ZeroDivisionError("division by zero"), AssertionError()])
def test_any_other_exception_is_exit_3(files, monkeypatch, exc):
    force(monkeypatch, "audit.report.summary:print_dataset", exc)
    result = invoke("validate", files / "t.csv")
    assert result.exit_code == 3
    assert error_lines(result)[0].startswith(BUG)
    assert f"({type(exc).__name__}" in error_lines(result)[0]


def test_internal_error_class_is_exit_3(files, monkeypatch):
    force(monkeypatch, "audit.report.summary:print_dataset",
          InternalError("4 judgments read, 3 encoded"))
    result = invoke("validate", files / "t.csv")
    assert result.exit_code == 3
    assert error_lines(result) == [
        f"{BUG} {audit.__version__} (InternalError: 4 judgments read, 3 encoded); please report "
        f"it; rerun with --debug for the traceback: annotation-audit --debug validate "
        f"{files / 't.csv'}"]


def test_long_message_is_cut_to_one_short_line(files, monkeypatch):
    force(monkeypatch, "audit.report.summary:print_dataset", ValueError("x" * 5000 + "\nmore"))
    result = invoke("validate", files / "t.csv")
    (line,) = error_lines(result)
    assert "x" * 197 + "...)" in line and "x" * 198 not in line and "more" not in line


def test_memory_error_is_exit_3_out_of_memory(files, monkeypatch):
    force(monkeypatch, "audit.pipeline:audit_table", MemoryError())
    result = invoke(*COMMANDS["run"][0](files))
    assert result.exit_code == 3
    (line,) = error_lines(result)
    assert line.startswith("error: out of memory (MemoryError)") and "--engine spark" in line


def test_keyboard_interrupt_is_130_without_traceback(files, monkeypatch):
    force(monkeypatch, "audit.pipeline:audit_table", KeyboardInterrupt())
    result = invoke(*COMMANDS["run"][0](files))
    assert result.exit_code == 130
    assert "Traceback" not in result.output
    assert error_lines(result) == ["interrupted"]


def test_broken_pipe_is_quiet(files, monkeypatch):
    force(monkeypatch, "audit.report.summary:print_dataset", BrokenPipeError(32, "Broken pipe"))
    result = invoke("validate", files / "t.csv")
    assert result.exit_code == 141
    assert error_lines(result) == []


@pytest.mark.parametrize("args", [
    ["validate", REPO / "data" / "pandalm" / "testset-v1.json"],
    ["simulate", "--perturbation-sd", 1, "--score-range", 1, "--sims", 20],
    ["--version"],
    ["run", "--help"],
])
def test_closed_stdout_in_a_real_process(args):
    exe = Path(sys.executable).with_name("annotation-audit")
    read, write = os.pipe()
    os.close(read)  # the reader is gone before anything is written
    try:
        proc = subprocess.run([str(exe), *map(str, args)], stdout=write,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write)
    assert proc.returncode == 141, proc.stderr
    assert proc.stderr == ""



def _closed_stderr(args, cwd, code=None):
    """Run the console script (or, with ``code``, Python running ``code`` then the CLI) with
    standard error a pipe whose reader is gone before anything is written."""
    exe = Path(sys.executable).with_name("annotation-audit")
    cmd = ([sys.executable, "-c", code + "\nfrom audit.cli import main; main()"] if code
           else [str(exe)]) + [str(a) for a in args]
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=write, cwd=cwd,
                              timeout=120).returncode
    finally:
        os.close(write)


@pytest.mark.parametrize("args, code", [
    (["validate", "nope.csv"], 2),
    (["--debug", "validate", "nope.csv"], 2),
    (["check", "nope.csv", "--suite", "s.yaml"], 2),  # bad input, never check's verdict 1
    (["check", "t.csv", "--suite", "s.yaml", "--bootstrap", "abc"], 2),  # a usage error
    (["run", "t.csv", "--bootstrap", "abc"], 2),
    (["card", "t.csv"], 2),  # a usage error raised by the command
    (["--no-such-option"], 2),
    (["no-such-command"], 2),
])
def test_closed_stderr_keeps_the_exit_code(files, args, code):
    assert _closed_stderr(args, files) == code


def test_closed_stderr_keeps_exit_3_of_an_internal_error(files):
    patch = ("import audit.suites.check as m\n"
             "def boom(*a, **k): raise RuntimeError('boom')\n"
             "m.fit_table = boom\n"
             "import sys; sys.argv[0] = 'annotation-audit'")
    args = ["check", "t.csv", "--suite", "s.yaml", "--bootstrap", 5, "--quiet"]
    assert _closed_stderr(args, files, code=patch) == 3



@pytest.mark.parametrize("name", ["run", "validate", "schema", "simulate", "advise"])
def test_started_with_stdout_closed(files, name):
    """``annotation-audit run ... >&-``: standard output is None in Python, and the flush
    before exit was exit 3 (AttributeError) after the work was done."""
    args, _ = COMMANDS[name]
    exe = Path(sys.executable).with_name("annotation-audit")
    proc = subprocess.run([str(exe), *map(str, args(files))], stderr=subprocess.PIPE,
                          text=True, timeout=300, preexec_fn=lambda: os.close(1))
    assert proc.returncode == 0, proc.stderr
    assert "internal error" not in proc.stderr


def test_a_closed_stdout_is_not_the_next_file_opened(tmp_path):
    """With fd 1 closed, the first file opened (a results.json being written) took number 1,
    where a library or a child process writing to standard output would write into it."""
    code = ("import os; os.close(1)\n"
            "from audit.cli import _standard_fds; _standard_fds()\n"
            f"fd = os.open({str(tmp_path / 'x')!r}, os.O_WRONLY | os.O_CREAT)\n"
            "os.write(2, str(fd).encode())")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stderr) > 2


# -- 2: bad input, one message, from every command ---------------------------------------------------
@pytest.mark.parametrize("args", [
    ["run", "nope.csv"],
    ["validate", "nope.csv"],
    ["export", "nope.csv", "out"],
    ["card", "nope.csv", "--out", "c"],
    ["check", "nope.csv", "--suite", "s.yaml"],
    ["simulate", "--perturbation-sd", 1, "--sizes", "a,b", "--score-range", 1],
    ["card", "t.csv"],  # neither --out nor --card: click's usage error
    ["run", "t.csv", "--bootstrap", 0],
])
def test_bad_input_is_exit_2(files, monkeypatch, args):
    monkeypatch.chdir(files)
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert "internal error" not in result.output


def test_os_error_on_output_is_exit_2_naming_the_file(files):
    (files / "taken").write_text("a file where a folder should be")
    result = invoke("run", files / "t.csv", "--out", files / "taken" / "o", "--bootstrap", 5,
                    "--quiet")
    assert result.exit_code == 2, result.output
    (line,) = error_lines(result)
    assert line.startswith("error: ") and "taken" in line


# -- 1: only a failed expectation -------------------------------------------------------------------
def test_only_a_failed_expectation_is_exit_1(files):
    (files / "f.yaml").write_text("suite: f\nexpectations:\n  - expect: labels_in_set\n"
                                  "    values: [x]\n")
    assert invoke("check", files / "t.csv", "--suite", files / "f.yaml").exit_code == 1
    assert invoke("check", files / "t.csv", "--suite", files / "s.yaml").exit_code == 0


def test_a_crash_in_check_never_reads_as_a_failed_claim(files):
    """Preference labels A / B / tie and one stray C, no map: exit 2 (named) or 3 (a bug) with
    an error in the JUnit file, never 1 (the issue's report: a ValueError that exited 1)."""
    (files / "p.csv").write_text("item,annotator,model_a,model_b,label\n1,x,m1,m2,A\n"
                                 "1,y,m1,m2,B\n2,x,m1,m2,tie\n2,y,m1,m2,C\n")
    (files / "p.yaml").write_text("label: {kind: preference}\n")
    result = invoke("check", files / "p.csv", "--spec", files / "p.yaml", "--suite",
                    files / "s.yaml", "--junit", files / "j.xml")
    assert result.exit_code in (2, 3), result.output
    assert "Traceback" not in result.output
    junit_case(files / "j.xml")


# -- check --junit / --github record exits 2 and 3 as errors -----------------------------------------
def junit_case(path: Path):
    suites = list(JUnitXml.fromfile(str(path)))
    assert len(suites) == 1
    suite = suites[0]
    assert (suite.tests, suite.failures, suite.errors) == (1, 0, 1)
    (case,) = list(suite)
    (result,) = case.result
    assert isinstance(result, Error)
    return suite, case, result


def test_check_junit_on_missing_data(files):
    result = invoke("check", files / "nope.csv", "--suite", files / "s.yaml", "--junit",
                    files / "ci" / "j.xml", "--github")
    assert result.exit_code == 2
    suite, case, err = junit_case(files / "ci" / "j.xml")
    assert suite.name == "s" and case.name == "annotation-audit check: bad input"
    assert "nope.csv" in err.message and err.type == "InputError"
    assert "::error file=" in result.stdout and "title=bad input::" in result.stdout


def test_check_junit_on_missing_suite_before_anything_loads(files):
    result = invoke("check", files / "t.csv", "--suite", files / "none.yaml", "--junit",
                    files / "j.xml")
    assert result.exit_code == 2
    suite, case, err = junit_case(files / "j.xml")
    assert suite.name == "none"
    assert "suite file not found" in err.message


def test_check_junit_on_bad_suite_points_at_the_line(files):
    (files / "b.yaml").write_text("suite: b\nexpectations:\n  - expect: min_reliability\n"
                                  "    min: 2\n")
    result = invoke("check", files / "t.csv", "--suite", files / "b.yaml", "--junit",
                    files / "j.xml", "--github")
    assert result.exit_code == 2
    _, case, err = junit_case(files / "j.xml")
    assert case.name == "annotation-audit check: bad expectation suite"
    assert (case._elem.get("file"), case._elem.get("line")) == (str(files / "b.yaml"), "4")
    assert "'min' = 2 is out of range" in err.message
    assert f"::error file={files / 'b.yaml'},line=4,title=bad expectation suite::" in result.stdout


def test_check_junit_on_bad_data(files):
    (files / "dup.csv").write_text("item,annotator,label\n1,a,x\n1,b,y\n1,a,y\n")
    result = invoke("check", files / "dup.csv", "--suite", files / "s.yaml", "--junit",
                    files / "j.xml")
    assert result.exit_code == 2
    _, _, err = junit_case(files / "j.xml")
    assert err.type == "SchemaError" and "dup.csv" in err.message
    assert "(item, annotator)" in err.message and "(item, annotator)" in err.text


def test_check_junit_on_internal_error(files, monkeypatch):
    force(monkeypatch, "audit.suites.check:fit_table", ValueError("boom"))
    result = invoke("check", files / "t.csv", "--suite", files / "s.yaml", "--junit",
                    files / "j.xml", "--github")
    assert result.exit_code == 3
    suite, case, err = junit_case(files / "j.xml")
    assert suite.name == "s"
    assert case.name == "annotation-audit check: internal error (a bug in annotation-audit)"
    assert err.type == "ValueError"
    assert err.message.startswith("internal error, a bug in annotation-audit")
    assert "(ValueError: boom)" in err.message and "--debug" in err.message
    assert "::error title=internal error (a bug in annotation-audit)::internal error, a bug" \
        in result.stdout


def test_check_junit_after_a_run_is_still_the_suite_result(files):
    """An ordinary run (exit 0) writes the suite's own test cases, not an error case."""
    result = invoke("check", files / "t.csv", "--suite", files / "s.yaml", "--junit",
                    files / "j.xml")
    assert result.exit_code == 0
    suite = list(JUnitXml.fromfile(str(files / "j.xml")))[0]
    assert (suite.tests, suite.failures, suite.errors) == (1, 0, 0)
