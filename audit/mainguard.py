"""Keep pyspark from ending the process when ``__main__`` has no file.

``pyspark.sql.connect`` calls ``pyspark.sql.connect.utils.check_dependencies()`` when it is
imported. When the ``__main__`` module has neither ``__spec__`` nor ``__file__`` (``python -c
"..."``, an xdist worker, schedulers that exec a job's code into ``__main__``) and Spark
Connect's ``grpc`` is not installed, that function believes doctests are running, prints
"Skipping doctests" and calls ``sys.exit(0)``: the audit stops with exit status 0 and nothing
written, which looks like success. great_expectations and pandera import ``pyspark.sql.connect``
(inside ``try/except ImportError``) wherever pyspark is installed, so this happens to
``check`` and to ``--engine spark``, not only to Spark Connect users.

:func:`guard` gives ``__main__`` a ``__file__`` for the duration of such an import, so the
check takes its normal path (``ImportError`` without grpc, which those libraries catch, or
nothing with it). The attribute is removed afterwards; ``__main__`` is left as it was.
Spark Connect itself (``sc://`` masters) needs ``pyspark[connect]`` and is imported only for
those masters (:mod:`audit.ingest.spark.session`).
"""

from __future__ import annotations

import contextlib
import sys

#: What ``__main__.__file__`` reads while the guard holds.
PLACEHOLDER = "<annotation-audit: __main__ without a file>"


def needs_guard() -> bool:
    """Whether ``__main__`` looks uninitialised to pyspark's check (see the module docstring)."""
    main = sys.modules.get("__main__")
    return (main is not None and getattr(main, "__spec__", None) is None
            and not hasattr(main, "__file__") and not hasattr(sys, "ps1"))


@contextlib.contextmanager
def guard():
    """Within this block, importing ``pyspark.sql.connect`` cannot call ``sys.exit``."""
    if not needs_guard():
        yield
        return
    main = sys.modules["__main__"]
    main.__file__ = PLACEHOLDER
    try:
        yield
    finally:
        if getattr(main, "__file__", None) == PLACEHOLDER:
            del main.__file__
