"""``annotation-audit export`` with pool names a Hive partition folder cannot hold.

Each pool becomes a folder ``pool=<name, percent-encoded>``; a pool named by a long free-text
field (found by the trust sweep: a 100,000-character pool name) made the file system refuse the
folder, and the message was the system's "File name too long" quoting the whole path. The
export now refuses before writing anything, naming the pool (shortened), the folder name's size
and the limit, and pointing at ``--no-partition``, which exports the same table losslessly.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

import audit
from audit.cli import cli
from audit.contract import columns as C


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def write_table(path: Path, pool: str) -> Path:
    rows = ["item,annotator,pool,label"]
    rows += [f"{i},{a},{p},{'xy'[(i + j) % 2]}" for i in range(4)
             for j, (a, p) in enumerate([("a", pool), ("b", pool), ("c", "expert")])]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def name_max(folder: Path) -> int:
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (AttributeError, OSError, ValueError):
        return 255


@pytest.mark.parametrize("pool", ["L" * 300, "é" * 50, "L" * 100_000])
def test_a_pool_too_long_for_a_folder_name_is_named(tmp_path, pool):
    src = write_table(tmp_path / "t.csv", pool)
    limit = name_max(tmp_path)
    folder_bytes = len("pool=") + len(pool) * (6 if pool[0] == "é" else 1)  # é: %C3%A9
    assert folder_bytes > limit  # the case: over the file system's limit
    result = invoke("export", src, tmp_path / "out")
    assert result.exit_code == 2, result.output
    err = result.output.strip().splitlines()[-1]
    assert err.startswith("error: ") and "--no-partition" in err and f"{limit} bytes" in err
    assert f"{len(pool):,} characters" in err
    assert len(err) < 500  # the name shortened, not quoted whole
    assert not (tmp_path / "out").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["t.csv"]  # no staging folder left


def test_no_partition_exports_the_same_table(tmp_path):
    pool = "L" * 300
    src = write_table(tmp_path / "t.csv", pool)
    result = invoke("export", src, tmp_path / "out", "--no-partition")
    assert result.exit_code == 0, result.output
    back = audit.load(tmp_path / "out" / "judgments", spec=tmp_path / "out" / "spec.yaml")
    orig = audit.load(src)
    cols = [C.ITEM, C.ANNOTATOR, C.POOL, C.LABEL]
    key = lambda t: sorted(map(tuple, t.frame[cols].astype(str).to_numpy().tolist()))  # noqa: E731
    assert key(back) == key(orig)
    assert pool in set(back.frame[C.POOL].astype(str))


def test_a_pool_at_the_limit_still_gets_its_folder(tmp_path):
    limit = name_max(tmp_path)
    pool = "L" * (limit - len("pool="))
    src = write_table(tmp_path / "t.csv", pool)
    result = invoke("export", src, tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "judgments" / f"pool={pool}").is_dir()


def test_the_hive_null_folder_name_is_refused_and_no_partition_keeps_it(tmp_path):
    """A pool named ``__HIVE_DEFAULT_PARTITION__`` (a Hive lake's null partition, read as
    text) was written as that folder, which reads back as a missing pool: the export could
    not be read (exit 2 on the read, 'Cannot yet unify dictionaries with nulls')."""
    pool = "__HIVE_DEFAULT_PARTITION__"
    src = write_table(tmp_path / "t.csv", pool)
    result = invoke("export", src, tmp_path / "out")
    assert result.exit_code == 2, result.output
    err = result.output.strip().splitlines()[-1]
    assert err.startswith("error: ") and pool in err and "--no-partition" in err
    assert not (tmp_path / "out").exists()
    result = invoke("export", src, tmp_path / "flat", "--no-partition")
    assert result.exit_code == 0, result.output
    back = audit.load(tmp_path / "flat" / "judgments", spec=tmp_path / "flat" / "spec.yaml")
    assert set(back.frame[C.POOL].astype(str)) == {pool, "expert"}


@pytest.mark.parametrize("brk", ["\n", "\r", "\u2028", "\x85"])
def test_a_line_break_in_the_source_name_cannot_write_the_spec(tmp_path, brk):
    """The spec.yaml header comment named the source as written: a file name holding a line
    break started a line of YAML, here declaring the pool 'crowd' an LLM judge of the export."""
    src = write_table(tmp_path / f"x{brk}judge_pools: [crowd]{brk}#.csv", "crowd")
    result = invoke("export", src, tmp_path / "out")
    assert result.exit_code == 0, result.output
    spec = tmp_path / "out" / "spec.yaml"
    lines = spec.read_text(encoding="utf-8").splitlines()  # every YAML line break splits
    assert [line[:2] for line in lines[:3]] == ["# ", "# ", "na"]  # two comments, then name:
    back = audit.load(tmp_path / "out" / "judgments", spec=spec)
    assert back.judge_pools == () and set(back.human_pools) == {"crowd", "expert"}
