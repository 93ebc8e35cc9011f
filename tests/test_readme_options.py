"""README and ``--help`` name the same options for every command, both ways.

The README's "Options by command" table is the contract: each row's backticked ``--options`` must
be exactly the command's options (``--help`` and ``-h`` aside), and every ``--option`` written
anywhere else in the README must exist on some command or belong to another tool named there.
"""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from audit.cli import cli

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
SECTION = "### Options by command"

#: Flags of other programs the README shows (pip, pytest, spark-submit, git, make...).
OTHER_TOOLS = {"--master", "--driver-memory", "--deploy-mode", "--conf", "--packages",
               "--upgrade", "--no-deps", "--files", "--from-ref", "--to-ref", "--all-files",
               "--hook-stage", "--durations", "--name", "--py-files",
               "--run"}  # examples/wmt23_zhen_mqm.py's


def command_options(cmd: click.Command) -> set[str]:
    return {o for p in cmd.params if isinstance(p, click.Option) and not p.hidden
            for o in p.opts + p.secondary_opts if o.startswith("--")} - {"--help"}


def readme_table() -> dict[str, set[str]]:
    assert SECTION in README, f"README has no {SECTION!r} section"
    body = README.split(SECTION, 1)[1].split("\n#", 1)[0]
    rows = {}
    for line in body.splitlines():
        m = re.match(r"\|\s*`(\w+)`\s*\|(.*)\|\s*$", line)
        if m:
            rows[m.group(1)] = set(re.findall(r"`(--[a-z0-9][a-z0-9-]*)", m.group(2)))
    return rows


def test_every_command_has_a_row():
    assert set(readme_table()) == set(cli.commands)


@pytest.mark.parametrize("name", sorted(cli.commands))
def test_readme_row_equals_help(name):
    cmd = cli.commands[name]
    documented = readme_table()[name]
    actual = command_options(cmd)
    help_text = cmd.get_help(click.Context(cmd, info_name=name))
    assert documented - actual == set(), f"README names options `{name}` does not take"
    assert actual - documented == set(), f"`{name}` takes options the README does not name"
    for opt in actual:
        assert opt in help_text


def test_options_in_prose_exist():
    every = set().union(*(command_options(c) for c in cli.commands.values()))
    prose = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", README))
    assert prose - every - OTHER_TOOLS - {"--help"} == set()
