"""Spark's failures as the package's errors: a record Spark cannot parse is an
:class:`~audit.errors.InputError`, anything else an :class:`~audit.errors.EngineError`, each
with Spark's reason in one line (:func:`spark_reason`; the rest is a JVM stack trace)."""

from __future__ import annotations

import re
from contextlib import contextmanager

from ...errors import EngineError, InputError

#: How much of Spark's reason a message quotes (it may quote a whole record of the dataset).
REASON_LIMIT = 300
#: Spark's error-class suffix (``SQLSTATE: KD000``): nothing a user acts on.
_SQLSTATE = re.compile(r"\s*SQLSTATE: \w+\s*$")
#: Causes followed at most (a JVM exception's chain is a few deep; a cycle is not followed).
_CHAIN = 32


@contextmanager
def spark_failures(source: str):
    """Turn a Spark job's failure into one message: :class:`InputError` for a record Spark
    cannot parse, :class:`EngineError` otherwise (with what to set when the driver ran out of
    room for the collected codes)."""
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    try:
        yield
    except (PySparkException, Py4JError) as err:
        text, reason = str(err), spark_reason(err)
        if "MALFORMED_RECORD" in text or "Malformed" in text:
            raise InputError(f"Spark cannot parse a record: {reason}", path=source) from None
        hint = ""
        if "maxResultSize" in text or "OutOfMemory" in text or "Java heap space" in text:
            hint = ("; the driver needs room for what it collects (the codes, about 40 bytes "
                    "per judgment, for a table that is collected; patterns and tables for one "
                    "audited on the cluster): raise --spark-conf "
                    "spark.driver.maxResultSize=4g and spark.driver.memory")
        raise EngineError(f"Spark failed on {source}: {reason}{hint}") from None


def spark_reason(err) -> str:
    """Why a Spark job failed, in one line of at most :data:`REASON_LIMIT` characters.

    A job that fails on the executors reaches Python as a ``Py4JJavaError`` whose message
    begins ``An error occurred while calling o123.collectToPython``; what went wrong is the
    innermost Java exception in its chain of causes (for a malformed CSV record:
    ``[MALFORMED_CSV_RECORD] Malformed CSV record: b,x,2,3``, under the file-read and
    parse-mode wrappers). So the reason is the message of the innermost exception that has
    one, its first line (a record spanning lines is cut there), without Spark's ``SQLSTATE``
    suffix, shortened with ``…``; else :func:`first_message_line`. Dataset text in it is shown
    as Spark wrote it: the channels escape it (the terminal shows control characters).
    """
    reason = None
    java = getattr(err, "java_exception", None) or getattr(err, "_origin", None)
    try:
        seen = 0
        while java is not None and seen < _CHAIN:
            message = java.getMessage()
            if message and message.strip():
                reason = message
            cause = java.getCause()
            java = None if cause is None or cause.equals(java) else cause
            seen += 1
    except Exception:  # noqa: BLE001 - the gateway may be gone: fall back to Python's text
        pass
    line = (reason.strip().splitlines()[0] if reason else first_message_line(err)).strip()
    line = _SQLSTATE.sub("", line)
    return line if len(line) <= REASON_LIMIT else line[:REASON_LIMIT - 1] + "…"


def first_message_line(err) -> str:
    """The first line of ``err``'s message (Spark appends a JVM stack trace), or its type's name
    when the message is empty."""
    msg = str(err).strip()
    return msg.splitlines()[0] if msg else type(err).__name__
