"""An audit run from ``python -c`` or a script ends with its own exit status, never pyspark's.

pyspark's ``pyspark.sql.connect`` calls ``sys.exit(0)`` on import when ``__main__`` has no
``__file__`` and grpc is missing (:mod:`audit.mainguard`); great_expectations and pandera import
it wherever pyspark is installed. Each case runs in a fresh interpreter the way a scheduler or a
notebook-less job would, and checks that the audit printed its result and wrote its output.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from conftest import REPO, spark_or_skip

PANDALM = REPO / "data" / "pandalm" / "testset-v1.json"
SUITE = REPO / "expectations" / "pandalm.yaml"
WMT = REPO / "data" / "wmt23_zhen_mqm"


def _pyspark_installed() -> bool:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return False
    return True


def _python(args, cwd):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600)


CHECK = textwrap.dedent(f"""
    import sys
    from audit.cli import main
    sys.argv = ["annotation-audit", "check", {str(PANDALM)!r}, "--suite", {str(SUITE)!r},
                "--bootstrap", "20", "--quiet", "--json", "check.json"]
    main()
""")


@pytest.mark.parametrize("how", ["-c", "script"])
def test_check_runs_great_expectations_from_python_c_and_a_script(how, tmp_path):
    if not _pyspark_installed():
        pytest.skip("pyspark is not installed: great_expectations does not import Spark Connect")
    if how == "-c":
        out = _python(["-c", CHECK], tmp_path)
    else:
        (tmp_path / "job.py").write_text(CHECK)
        out = _python([str(tmp_path / "job.py")], tmp_path)
    assert "Skipping doctests" not in out.stderr
    assert out.returncode in (0, 1), out.stderr[-2000:]
    # the suite ran and wrote its verdict: pyspark's exit would have left no file, status 0
    verdict = json.loads((tmp_path / "check.json").read_text())
    assert verdict


RUN = textwrap.dedent(f"""
    import json, sys, audit
    r = audit.run({str(WMT / 'wmt23_zhen_mqm.csv')!r}, spec={str(WMT / 'wmt23_zhen_mqm.yaml')!r},
                  engine="spark", spark_master="local[1]", n_bootstrap=20, report=False,
                  out=sys.argv[1] if len(sys.argv) > 1 else "out")
    print("ENGINE", r["meta"]["engine"], r["dataset"]["n_annotations"])
""")


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.parametrize("how", ["-c", "script"])
def test_spark_engine_api_from_python_c_and_a_script(how, tmp_path):
    spark_or_skip()
    if how == "-c":
        out = _python(["-c", RUN, str(tmp_path / "o")], tmp_path)
    else:
        (tmp_path / "job.py").write_text(RUN)
        out = _python([str(tmp_path / "job.py"), str(tmp_path / "o")], tmp_path)
    assert "Skipping doctests" not in out.stderr
    assert out.returncode == 0, out.stderr[-2000:]
    assert "ENGINE spark 2400" in out.stdout, (out.stdout, out.stderr[-2000:])
    written = json.loads((tmp_path / "o" / "results.json").read_text())
    assert written["dataset"]["n_annotations"] == 2400


def test_the_guard_leaves_main_as_it_was(monkeypatch):
    import types

    from audit import mainguard

    fake = types.ModuleType("__main__")
    fake.__spec__ = None
    monkeypatch.setitem(sys.modules, "__main__", fake)
    monkeypatch.delattr(sys, "ps1", raising=False)
    assert mainguard.needs_guard()
    with mainguard.guard():
        assert fake.__file__ == mainguard.PLACEHOLDER
        assert not mainguard.needs_guard()
    assert not hasattr(fake, "__file__")
    fake.__file__ = "job.py"  # a real file: nothing to do, nothing removed
    with mainguard.guard():
        assert fake.__file__ == "job.py"
    assert fake.__file__ == "job.py"


#: Modules whose import calls pyspark's ``sys.exit`` where ``__main__`` has no file (checked by
#: running ``python -c "import X"``: great_expectations and pandera.pyspark exit, pandera.pandas
#: and pyspark.sql do not).
EXITING_IMPORTS = ("great_expectations", "pandera.pyspark", "pyspark.sql.connect")


def _unguarded_imports(path):
    """``(line, module)`` of each import of :data:`EXITING_IMPORTS` outside a ``with guard()``."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []

    def exits(name):
        return any(name == m or name.startswith(m + ".") for m in EXITING_IMPORTS)

    def visit(node, guarded):
        if isinstance(node, ast.With) and any(
                isinstance(i.context_expr, ast.Call)
                and getattr(i.context_expr.func, "id", getattr(i.context_expr.func, "attr", ""))
                == "guard" for i in node.items):
            guarded = True
        if isinstance(node, ast.Import):
            found.extend((node.lineno, a.name) for a in node.names
                         if exits(a.name) and not guarded)
        elif isinstance(node, ast.ImportFrom) and node.module and exits(node.module) \
                and not guarded:
            found.append((node.lineno, node.module))
        for child in ast.iter_child_nodes(node):
            visit(child, guarded)

    visit(tree, False)
    return found


def test_every_exiting_import_is_guarded():
    """An xdist worker's ``__main__`` has no file: a bare ``import great_expectations`` in a test
    or in the package ends the worker with status 0 whenever that module happens to run first
    (CI lost eight tests this way). Every such import sits inside ``with guard():``."""
    offenders = [f"{p.relative_to(REPO)}:{line} imports {mod}"
                 for folder in ("audit", "tests", "benchmarks", "examples")
                 for p in sorted((REPO / folder).rglob("*.py"))
                 for line, mod in _unguarded_imports(p)]
    assert offenders == []


def test_the_import_scan_finds_a_bare_import(tmp_path):
    bare = tmp_path / "bare.py"
    bare.write_text("def f():\n    import great_expectations\n"
                    "    from pandera.pyspark import Column\n"
                    "    with guard():\n        import great_expectations as gx\n")
    assert _unguarded_imports(bare) == [(2, "great_expectations"), (3, "pandera.pyspark")]


@pytest.mark.skipif(not _pyspark_installed(), reason="pyspark not installed")
def test_a_bare_great_expectations_import_would_exit(tmp_path):
    """The premise of the scan above: without the guard the import really ends the process."""
    out = _python(["-c", "import great_expectations; print('survived')"], tmp_path)
    try:
        import grpc  # noqa: F401
    except ImportError:
        assert out.returncode == 0 and "survived" not in out.stdout
    else:  # with Spark Connect's grpc installed pyspark does not exit
        assert "survived" in out.stdout


def test_load_spark_from_python_c_validates_and_returns(tmp_path):
    """``load_spark`` called directly from ``python -c``: pandera registers its pyspark backends
    on the first validate and imports pyspark.sql.connect again there (a failed import is
    retried); unguarded, pyspark ended the process with status 0 and nothing printed."""
    spark_or_skip()
    (tmp_path / "t.csv").write_text("item,annotator,label\na,x,1\na,y,2\nb,x,1\nb,y,1\n")
    code = textwrap.dedent(f"""
        from audit.ingest.spark import get_session, load_spark
        spark = get_session("local[1]")
        print("loaded", load_spark({str(tmp_path / "t.csv")!r}, spark=spark).frame.shape[0])
        kept = load_spark({str(tmp_path / "t.csv")!r}, spark=spark, keep_on_cluster=True)
        print("kept", kept.coded.count())
    """)
    out = _python(["-c", code], tmp_path)
    assert "Skipping doctests" not in out.stderr
    assert out.returncode == 0, out.stderr[-2000:]
    assert "loaded 4" in out.stdout and "kept 4" in out.stdout
