"""Spark's failures as the package's errors: a record Spark cannot parse is an
:class:`~audit.errors.InputError`, anything else an :class:`~audit.errors.EngineError`, each
with the first line of Spark's message (the rest is a JVM stack trace)."""

from __future__ import annotations

from contextlib import contextmanager

from ...errors import EngineError, InputError


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
        text, first = str(err), first_message_line(err)
        if "MALFORMED_RECORD" in text or "Malformed" in text:
            raise InputError(f"Spark cannot parse a record: {first[:300]}", path=source) from None
        hint = ""
        if "maxResultSize" in text or "OutOfMemory" in text or "Java heap space" in text:
            hint = ("; the driver needs room for what it collects (the codes, about 40 bytes "
                    "per judgment, for a table that is collected; patterns and tables for one "
                    "audited on the cluster): raise --spark-conf "
                    "spark.driver.maxResultSize=4g and spark.driver.memory")
        raise EngineError(f"Spark failed on {source}: {first[:300]}{hint}") from None


def first_message_line(err) -> str:
    """The first line of ``err``'s message (Spark appends a JVM stack trace), or its type's name
    when the message is empty."""
    msg = str(err).strip()
    return msg.splitlines()[0] if msg else type(err).__name__
