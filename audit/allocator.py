"""How the command-line process allocates memory: set once by :func:`audit.cli.main`, before
numpy is imported, and never by the library (a program that imports :mod:`audit` keeps its own
allocator settings).

An audit's working arrays are large and short-lived: a block of resample weights, a product of
them with the patterns, the gCMH's sparse factors, each allocated and freed many times. Two
defaults make the kernel pay for every one of them again:

- glibc maps every allocation above its mmap threshold (dynamic, at most 32 MiB) with ``mmap``
  and unmaps it on ``free``, so the next array of that size is faulted in and zeroed page by
  page again. :func:`tune` raises the threshold and the heap's trim threshold to 256 MiB
  (:data:`MMAP_THRESHOLD`, :data:`TRIM_THRESHOLD`), so freed blocks up to that size stay in
  the heap and are reused. Larger arrays are still mapped and returned on ``free``: held in
  the heap they fragment it, and at 10M judgments (arrays of hundreds of MiB) the peak grew
  from 2.7 to 3.0 GiB with 2 GiB thresholds, against 2.7 GiB with 256 MiB;
- numpy advises the kernel to back every array of 4 MiB or more with transparent huge pages
  (``madvise(MADV_HUGEPAGE)``); where the kernel compacts memory on such a fault (``defrag`` set
  to ``madvise``, Debian's default), each first touch of 2 MiB costs a compaction and a 2 MiB
  zeroing. :func:`tune` sets ``NUMPY_MADVISE_HUGEPAGE=0``, numpy's documented switch.

Measured on the 1M-judgment benchmark (``run --no-report``, back to back; ``benchmarks/RESULTS.md``):
131k page faults and 1.5-2.3 s of system time with the defaults, 73k faults and 0.3-0.7 s with
both set; the wall time from 6.1-6.9 s to 4.7-5.2 s, and at 10M judgments from 37 s to 29 s at
the same 2.7 GiB peak. The outputs are the same bytes: nothing numerical changes
(``tests/test_allocator.py``).

A variable the user set (``NUMPY_MADVISE_HUGEPAGE``, or any of glibc's ``MALLOC_*`` settings
and ``GLIBC_TUNABLES``) is left as it is: :func:`tune` only fills in what nobody chose. On a
system without glibc nothing is done.
"""

from __future__ import annotations

import os
import sys

#: Allocations above this many bytes are mapped (and unmapped on free) by glibc: 256 MiB.
MMAP_THRESHOLD = 1 << 28
#: Free memory at the top of the heap above this many bytes is returned to the kernel: 256 MiB.
TRIM_THRESHOLD = 1 << 28

#: glibc's ``mallopt`` parameters (``malloc.h``).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3

#: Environment variables by which a user sets glibc's allocator themselves.
_USER_MALLOC = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_",
                "MALLOC_MMAP_MAX_", "GLIBC_TUNABLES")


#: What :func:`tune` set in this process (``meta.profile.allocator``).
SETTINGS: dict = {}


def tune() -> dict:
    """Set the command's allocator (module docstring); what was set, for ``--profile``.

    Call before numpy is imported: numpy reads ``NUMPY_MADVISE_HUGEPAGE`` when it is first
    imported (afterwards only the variable is set and numpy's own default stays)."""
    done = {}
    if "NUMPY_MADVISE_HUGEPAGE" not in os.environ and "numpy" not in sys.modules:
        os.environ["NUMPY_MADVISE_HUGEPAGE"] = "0"
        done["numpy_madvise_hugepage"] = 0
    if sys.platform.startswith("linux") and not any(v in os.environ for v in _USER_MALLOC):
        try:
            import ctypes

            libc = ctypes.CDLL("libc.so.6")
            if (libc.mallopt(_M_MMAP_THRESHOLD, ctypes.c_int(MMAP_THRESHOLD))
                    and libc.mallopt(_M_TRIM_THRESHOLD, ctypes.c_int(TRIM_THRESHOLD))):
                done.update(malloc_mmap_threshold=MMAP_THRESHOLD,
                            malloc_trim_threshold=TRIM_THRESHOLD)
        except (OSError, AttributeError):
            pass
    SETTINGS.update(done)
    return done
