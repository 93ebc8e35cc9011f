"""The committed ``reports/pandalm/`` is what ``make demo`` writes, byte for byte.

README links those files as the demo's output; a change to what the audit writes (a chart's
tooltips, a sentence of the card) that does not regenerate them leaves a reader of the repository
looking at an older report than a fresh clone's ``make demo`` gives, and leaves ``make demo``
dirtying the working tree. The test runs the Makefile's own demo command into a copy of the
committed folder (an existing card is updated in place, so its header keeps its key order, as
``make demo`` meets it) and compares every file.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

from click.testing import CliRunner

from audit.cli import cli

REPO = Path(__file__).resolve().parents[1]
REPORTS = REPO / "reports" / "pandalm"


def demo_arguments() -> list[str]:
    """The arguments of ``annotation-audit`` in the Makefile's ``demo`` recipe."""
    text = (REPO / "Makefile").read_text(encoding="utf-8").replace("\\\n", " ")
    recipe = re.search(r"^demo:.*\n\t(.*)$", text, re.M).group(1)
    words = shlex.split(recipe)
    assert words[0] == "$(BIN)/annotation-audit", recipe
    return words[1:]


def test_make_demo_writes_the_committed_reports(tmp_path, monkeypatch):
    args = demo_arguments()
    at = args.index("--out")
    assert Path(args[at + 1]) == REPORTS.relative_to(REPO)
    out = tmp_path / "pandalm"
    shutil.copytree(REPORTS, out)
    args[at + 1] = str(out)
    monkeypatch.chdir(REPO)  # the recipe's source is relative, and results.json records it
    result = CliRunner().invoke(cli, [*args, "--quiet"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    committed = sorted(p.name for p in REPORTS.iterdir())
    assert sorted(p.name for p in out.iterdir()) == committed
    stale = [name for name in committed
             if (out / name).read_bytes() != (REPORTS / name).read_bytes()]
    assert not stale, f"reports/pandalm is not what make demo writes: {stale}; run make demo"
