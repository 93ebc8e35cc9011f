"""The terminal's tables show every pool and model name whole, on 80 columns too.

A CI log has no terminal, so rich lays the summary's tables out on 80 columns; a name longer
than its column was cut with an ellipsis, and names of one family lost what tells them apart:
three pools ``crowdworkers-recruited-2024-batch-1`` .. ``-3`` were three columns headed
``crowdworkers…``, and ``meta-llama/Meta-Llama-3.1-70B-Instruct`` beside its ``-Turbo`` and
``-FP8`` variants three leaderboard rows reading ``meta-llama/Me…``. Every column now folds a
long name onto the next lines of its cell (``overflow="fold"``), so nothing is lost; the cells
stay inside the table's borders, so no folded line can start with ``::`` (a workflow command).
"""

from __future__ import annotations

import json
import random

from actions_runner import commands
from click.testing import CliRunner
from test_chart_names import family_table

from audit.cli import cli

FAMILY = ("meta-llama/Meta-Llama-3.1-70B-Instruct", "meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo",
          "meta-llama/Meta-Llama-3.1-70B-Instruct-FP8", "gpt-4::error::x")
POOLS = ("crowdworkers-recruited-2024-batch-1", "crowdworkers-recruited-2024-batch-2",
         "crowdworkers-recruited-2024-batch-3")


def columns(output: str, title: str) -> tuple[list[str], list[str]]:
    """The header and body text of each column of the table titled ``title``, each column's
    fragments joined without separators (a folded name reads whole)."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    head, body = [], []
    for line in lines[start + 1:]:
        if line.startswith("┃"):
            cells = line.strip("┃").split("┃")
            head = [h + c.strip() for h, c in zip(head, cells)] if head else \
                [c.strip() for c in cells]
        elif line.startswith("│"):
            cells = line.strip("│").split("│")
            body = [b + c.strip() for b, c in zip(body, cells)] if body else \
                [c.strip() for c in cells]
        elif line.startswith("└"):
            break
    return head, body


def test_names_are_whole_in_an_80_column_log(tmp_path):
    data = family_table(tmp_path / "prefs.jsonl", FAMILY, POOLS)
    result = CliRunner(env={"COLUMNS": "80"}).invoke(
        cli, ["run", str(data), "--out", str(tmp_path / "out"), "--bootstrap", "20"],
        catch_exceptions=False)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert max(len(line) for line in out.splitlines() if line[:1] in "┃│┏┗└┡") <= 80
    head, _ = columns(out, "reliability (95% CI)")
    assert head[2:] == list(POOLS), head
    head, body = columns(out, "leaderboards: score [95% CI] (rank)")
    assert head[1:4] == list(POOLS), head
    for model in FAMILY:
        assert model in body[0], (model, body[0])
    _, body = columns(out, "pools")
    assert all(pool in body[0] for pool in POOLS)
    assert "…" not in "".join(line for line in out.splitlines() if line[:1] in "┃│")
    assert [line for line, _ in commands(out)] == []  # a folded '::' is inside a cell


def test_a_very_long_name_is_cut_in_its_cell():
    """Folding a 100,000-character name would print thousands of lines: a cell shows at most
    MAX_CELL characters and says the whole length."""
    import io

    from rich.console import Console

    from audit.report.summary import MAX_CELL, Table

    t = Table("pool", "n")
    t.add_row("p" * 100_000, "3")
    buf = io.StringIO()
    Console(file=buf, width=80, soft_wrap=True, emoji=False).print(t)
    lines = buf.getvalue().splitlines()
    assert len(lines) < 2 * MAX_CELL / 60 + 10, len(lines)
    assert "…(100,000characters)" in "".join(lines).replace("│", "").replace(" ", "")


def test_a_table_without_borders_never_folds_a_word_onto_a_new_line():
    """advise's item table has no borders: a word folded at '::' would begin a line with it, a
    workflow command the runner obeys ('    ::error::forged' once its spaces are stripped), so
    such a table cuts a long word instead."""
    import io

    from actions_runner import parse_v2
    from rich.console import Console

    from audit.report.summary import Table

    for n in range(20, 90):  # the word's '::' at every place around the column's width
        t = Table("#", "item", "why", "reduction", box=None)
        t.add_row("1", "x" * n + "::error::forged", "uncertain", "0.128")
        buf = io.StringIO()
        Console(file=buf, width=80, soft_wrap=True, emoji=False).print(t)
        for line in buf.getvalue().splitlines():
            assert parse_v2(line) is None, (n, line)


def test_a_pool_name_in_a_table_title_is_text(tmp_path):
    """advise names the one pool its items go to in the table's title; rich reads a str title as
    console markup, so a pool named 'crowd[/x]' was exit 3 (MarkupError) and '[link=...]' a
    hyperlink."""
    pool = "crowd[/x] [red]R[/red] [link=http://evil.example]L[/link]"
    rng = random.Random(1)
    rows = [{"item": f"i{i}", "annotator": f"a{j}", "pool": pool, "label": rng.choice("xyz")}
            for i in range(30) for j in range(3)]
    data = tmp_path / "pool.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = CliRunner(env={"COLUMNS": "120"}).invoke(
        cli, ["advise", str(data), "--budget", "5"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert f"items to send back to {pool} (target: labels)" in result.stdout
    assert "\x1b" not in result.stdout
