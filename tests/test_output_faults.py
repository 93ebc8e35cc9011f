"""Faults while writing outputs (issue 13, item 7): ``kill -9`` at any point of ``run`` and two
runs into one folder leave either the old complete set or the new complete set, never a mix.

"Complete set" is checked twice: :func:`audit.outputs.verify_outputs` passes, and every file is
byte-identical to a reference folder written by an uninterrupted run with the same arguments.
The input is hashed before and after. Three ways to fault:

* ``kill -9`` of a real ``annotation-audit run`` process after a seeded random delay, biased to
  the end of the run where the files are written;
* every file-system step of moving a written set into place (the manifest, each ``fsync``,
  the swap, the removal of the old set), and a seeded sample of the steps writing the files
  into the staging folder, in turn: a forked child is killed with SIGKILL just before it;
* two ``annotation-audit run`` processes started together into one new folder (the first in
  renames its set into place, the second swaps).

The references are written in-process by :func:`audit.outputs.write_run`, which the CLI calls:
the first trial's uninterrupted CLI run checks that both give the same bytes.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from audit.outputs import verify_outputs
from audit.results import json_form

TABLE = "item,annotator,pool,label\n" + "".join(
    f"{i},{a},{'expert' if a == 'c' else 'crowd'},{'xyz'[(i * 7 + j * 3) % 3]}\n"
    for i in range(12) for j, a in enumerate("abc"))
SEEDS = {"old": 1, "new": 2}
TRIALS = 3
STAGING_SAMPLE = 4
#: Operations of :mod:`os` counted as steps of the write (``os.walk``, ``os.stat`` and the like
#: only read).
STEPS = ("open", "fsync", "replace", "rename", "mkdir", "chmod", "unlink", "rmdir", "close")


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def cli_run(src: Path, out: Path, seed: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "audit.cli", "run", str(src), "--out",
                             str(out), "--bootstrap", "5", "--seed", str(seed), "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """The input, the audits of both seeds, and the complete old and new sets they make."""
    from audit.advice import advise_frame
    from audit.items import item_table, write_items
    from audit.ingest import load
    from audit.outputs import find_inputs, write_run
    from audit.pipeline import run
    from audit.report.advice_table import write_advice

    root = tmp_path_factory.mktemp("faults")
    src = root / "t.csv"
    src.write_text(TABLE)
    digest = sha(src)
    results, refs = {}, {}
    inputs = find_inputs(str(src))  # croissant.json lists the source, as run --out's does
    for name, seed in SEEDS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results[name] = json_form(run(str(src), n_bootstrap=5, seed=seed))  # as run --out writes it
            table = load(str(src))
            frame = item_table(table)
            advice = advise_frame(table, results[name]["advise"], frame=frame)
        # items.parquet, advice.csv and advice.parquet, as run --out writes them
        extra = functools.partial(lambda items, advised, folder: (
            write_items(items, folder), write_advice(advised, folder)), frame, advice)
        write_run(copy.deepcopy(results[name]), root / name, extra=extra, inputs=inputs)
        refs[name] = files(root / name)
    assert refs["old"] != refs["new"]
    yield {"root": root, "src": src, "refs": refs, "results": results, "extra": extra,
           "inputs": inputs}
    assert sha(src) == digest


def which_set(out: Path, refs: dict) -> str:
    """``old`` or ``new``: the complete set ``out`` holds; fails on anything else."""
    verify_outputs(out)
    got = files(out)
    names = [name for name, ref in refs.items() if got == ref]
    assert names, f"{out} holds neither complete set: {sorted(got)}"
    return names[0]


def reset(out: Path, ref: Path) -> None:
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(ref, out)


def assert_no_staging(parent: Path) -> None:
    assert [p.name for p in parent.iterdir() if ".tmp-" in p.name] == []


# -- kill -9 of the command, at a random moment ------------------------------------------------------
def test_kill_9_at_random_moments(world):
    from audit.outputs import write_run

    root, refs = world["root"], world["refs"]
    rng = random.Random(13)
    out = root / "killed"
    reset(out, root / "old")
    start = time.monotonic()
    proc = cli_run(world["src"], out, SEEDS["new"])
    assert proc.wait() == 0, proc.stderr.read().decode()
    seconds = time.monotonic() - start
    assert which_set(out, refs) == "new"  # the CLI writes the reference's bytes
    for _ in range(TRIALS):
        reset(out, root / "old")
        proc = cli_run(world["src"], out, SEEDS["new"])
        time.sleep(rng.uniform(0.5, 1.1) * seconds)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        which_set(out, refs)
    write_run(copy.deepcopy(world["results"]["new"]), out, extra=world["extra"],
              inputs=world["inputs"])  # cleans up
    assert which_set(out, refs) == "new"
    assert_no_staging(root)


# -- kill -9 before every step of writing a set ------------------------------------------------------
class KillAt:
    """Stands for the :mod:`os` module: counts the write steps and SIGKILLs the process just
    before step ``at`` (0: only count)."""

    def __init__(self, at: int = 0):
        self.at, self.count = at, 0

    def step(self) -> None:
        self.count += 1
        if self.count == self.at:
            os.kill(os.getpid(), signal.SIGKILL)

    def __getattr__(self, name):
        real = getattr(os, name)
        if name not in STEPS:
            return real

        def counted(*args, **kwargs):
            self.step()
            return real(*args, **kwargs)

        return counted


def install(monkeypatch, killer: KillAt) -> None:
    from audit.outputs import fs, layout, sets

    for module in (fs, layout, sets):
        monkeypatch.setattr(module, "os", killer)
    real_swap = fs._renameat2

    def swap(*args):
        killer.step()
        return real_swap(*args)

    monkeypatch.setattr(fs, "_renameat2", swap)


def test_kill_9_before_every_step_of_the_move(world, monkeypatch):
    from audit.outputs import sets, write_run

    root, refs = world["root"], world["refs"]
    results = world["results"]["new"]
    out = root / "swept"
    reset(out, root / "old")
    counter, staged_steps = KillAt(), []
    real_manifest = sets.write_manifest

    def manifest(*args, **kwargs):  # where writing the files ends and moving them begins
        staged_steps.append(counter.count)
        return real_manifest(*args, **kwargs)

    with monkeypatch.context() as patch:
        install(patch, counter)
        patch.setattr(sets, "write_manifest", manifest)
        write_run(copy.deepcopy(results), out, extra=world["extra"],
                  inputs=world["inputs"])
    assert which_set(out, refs) == "new"
    first_move = staged_steps[0] + 1
    assert 0 < first_move - 1 and counter.count - first_move > 5
    points = sorted(random.Random(7).sample(range(1, first_move), STAGING_SAMPLE)) \
        + list(range(first_move, counter.count + 1))
    outcomes = []
    for at in points:
        reset(out, root / "old")
        pid = os.fork()
        if pid == 0:  # the child writes and is killed; it never returns into pytest
            try:
                install(monkeypatch, KillAt(at))
                write_run(copy.deepcopy(results), out, extra=world["extra"],
                          inputs=world["inputs"])
            finally:
                os._exit(0)
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, (at, status)
        outcomes.append(which_set(out, refs))
    assert outcomes[0] == "old" and outcomes[-1] == "new"  # the swap is one step
    assert outcomes == sorted(outcomes, key=["old", "new"].index)
    write_run(copy.deepcopy(results), out, extra=world["extra"],
              inputs=world["inputs"])  # staging is cleaned up
    assert_no_staging(root)


# -- two runs into one folder ------------------------------------------------------------------------
def test_two_concurrent_runs_into_one_folder(world):
    root, refs = world["root"], world["refs"]
    out = root / "both"
    procs = [cli_run(world["src"], out, seed) for seed in SEEDS.values()]
    for proc in procs:
        assert proc.wait() == 0, proc.stderr.read().decode()
    assert which_set(out, refs) in ("old", "new")
    assert_no_staging(root)
