"""The command's allocator settings (:mod:`audit.allocator`): set only by the command, only
where nobody chose, they do what they say (freed blocks are reused without new page faults),
and they change no byte of the outputs."""

from __future__ import annotations

import filecmp
import json
import os
import subprocess
import sys

import pytest

from conftest import REPO

PANDALM = REPO / "data" / "pandalm" / "testset-v1.json"
LINUX_GLIBC = sys.platform.startswith("linux") and os.confstr("CS_GNU_LIBC_VERSION") is not None


def _python(code: str, **env) -> str:
    base = {k: v for k, v in os.environ.items()
            if not k.startswith("MALLOC_") and k not in ("NUMPY_MADVISE_HUGEPAGE",
                                                         "GLIBC_TUNABLES")}
    proc = subprocess.run([sys.executable, "-c", code], env={**base, **env}, cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()[-1]


TUNED = """
import json, os
from audit.allocator import tune
done = tune()
import numpy
print(json.dumps({"done": done, "env": os.environ.get("NUMPY_MADVISE_HUGEPAGE")}))
"""


@pytest.mark.skipif(not LINUX_GLIBC, reason="glibc's mallopt")
def test_tune_sets_what_nobody_chose():
    got = json.loads(_python(TUNED))
    assert got["env"] == "0"
    assert got["done"] == {"numpy_madvise_hugepage": 0, "malloc_mmap_threshold": 1 << 28,
                           "malloc_trim_threshold": 1 << 28}


def test_tune_leaves_what_the_user_set():
    got = json.loads(_python(TUNED, NUMPY_MADVISE_HUGEPAGE="1", MALLOC_TRIM_THRESHOLD_="0"))
    assert got == {"done": {}, "env": "1"}
    got = json.loads(_python(TUNED, GLIBC_TUNABLES="glibc.malloc.trim_threshold=0"))
    assert "malloc_mmap_threshold" not in got["done"]


def test_tune_after_numpy_leaves_numpys_switch():
    got = json.loads(_python("import numpy\n" + TUNED))
    assert "numpy_madvise_hugepage" not in got["done"] and got["env"] is None


FAULTS = """
import resource, sys
from audit.allocator import tune
if sys.argv[-1] == "tuned":
    tune()
import numpy as np
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
x = np.ones(8_000_000); del x  # 64 MB, written, freed
before = faults()
for _ in range(5):
    x = np.ones(8_000_000); del x
print(faults() - before)
"""


@pytest.mark.skipif(not LINUX_GLIBC, reason="glibc's mallopt and Linux's page-fault counts")
def test_a_freed_block_is_reused_without_faulting_its_pages_again():
    """Five 64 MB arrays written and freed (4 KiB pages in both runs): with glibc's defaults
    each one is mapped afresh and its 15,625 pages faulted in again; tuned, the first one's
    memory is reused."""
    def run(mode):
        return int(_python(FAULTS.replace("sys.argv[-1]", repr(mode)),
                           NUMPY_MADVISE_HUGEPAGE="0"))

    default, tuned = run("default"), run("tuned")
    assert tuned < 1_000 and default > 5 * 15_000, (default, tuned)


def test_the_outputs_are_the_same_bytes_with_and_without_the_tuning(tmp_path):
    """The settings change where memory comes from, never a number: every output file of a
    run is byte-identical with the command's settings and with the user's own (here glibc's
    and numpy's defaults, set explicitly so :func:`tune` leaves them)."""
    outs = []
    for name, env in (("tuned", {}), ("defaults", {"NUMPY_MADVISE_HUGEPAGE": "1",
                                                   "MALLOC_TOP_PAD_": "131072"})):
        out = tmp_path / name
        base = {k: v for k, v in os.environ.items()
                if not k.startswith("MALLOC_") and k not in ("NUMPY_MADVISE_HUGEPAGE",
                                                             "GLIBC_TUNABLES")}
        proc = subprocess.run([sys.executable, "-m", "audit.cli", "run", str(PANDALM), "--out",
                               str(out), "--bootstrap", "200", "--seed", "3", "--quiet"],
                              env={**base, **env}, cwd=REPO, capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr
        outs.append(out)
    names = sorted(p.name for p in outs[0].iterdir())
    assert names == sorted(p.name for p in outs[1].iterdir()) and "results.json" in names
    match, mismatch, errors = filecmp.cmpfiles(outs[0], outs[1], names, shallow=False)
    assert not mismatch and not errors, mismatch


def test_the_profile_says_what_was_set(tmp_path):
    out = tmp_path / "out"
    base = {k: v for k, v in os.environ.items()
            if not k.startswith("MALLOC_") and k not in ("NUMPY_MADVISE_HUGEPAGE",
                                                         "GLIBC_TUNABLES")}
    proc = subprocess.run([sys.executable, "-m", "audit.cli", "run", str(PANDALM), "--out",
                           str(out), "--bootstrap", "20", "--quiet", "--no-report",
                           "--profile"], env=base, cwd=REPO, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    allocator = json.loads((out / "results.json").read_text())["meta"]["profile"]["allocator"]
    assert allocator["numpy_madvise_hugepage"] == 0
    if LINUX_GLIBC:
        assert allocator["malloc_trim_threshold"] == 1 << 28
    # the library alone (audit.run) sets nothing
    code = ("import audit, json\n"
            f"r = audit.run({str(PANDALM)!r}, n_bootstrap=20, profile=True)\n"
            "print(json.dumps(r['meta']['profile']['allocator']))")
    assert json.loads(_python(code)) == {}
