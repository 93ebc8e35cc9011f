"""Getting a SparkSession, or one clear message saying why there is none.

``pyspark`` is the optional extra ``annotation-audit[spark]`` and is imported only here, when
``--engine spark`` is asked for. A master URL is used as Spark takes it: ``local[2]``,
``spark://host:7077``, ``yarn``, ``k8s://...``; an ``sc://host:15002`` URL connects through Spark
Connect (which needs ``pyspark[connect]``). Without a URL an already running session is reused
(``spark-submit``, a notebook), else a local one on every core is started.
"""

from __future__ import annotations

import os
import shutil

from ...errors import EngineError

#: Settings of every session this module starts (never changed on a session it reuses).
#: Partition values stay text ("01" is not the number 1) so ids read the same as with pandas.
SESSION_CONFIG = {
    "spark.sql.sources.partitionColumnTypeInference.enabled": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.showConsoleProgress": "false",
}
#: Extra settings for a local session: no web UI, Arrow transfers to the driver.
LOCAL_CONFIG = {
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "8",
}

INSTALL_HINT = "pip install 'annotation-audit[spark]'"


def require_pyspark():
    """Import pyspark, or raise :class:`EngineError` saying how to install it."""
    try:
        import pyspark  # noqa: F401
        from pyspark.sql import SparkSession
    except ImportError:
        raise EngineError(f"--engine spark needs pyspark, which is not installed: "
                          f"{INSTALL_HINT}") from None
    return SparkSession


def java_available() -> bool:
    """Whether a Java runtime is on ``JAVA_HOME`` or the ``PATH`` (a local session needs one)."""
    home = os.environ.get("JAVA_HOME")
    if home and os.path.exists(os.path.join(home, "bin", "java")):
        return True
    return shutil.which("java") is not None


def get_session(master: str | None = None, *, config: dict | None = None):
    """A SparkSession for ``master`` (see the module docstring).

    Raises
    ------
    EngineError
        pyspark is missing, no Java runtime is found for a non-Connect session, or the session
        fails to start; the message says which and what to do.
    """
    from ...mainguard import guard

    with guard():  # pyspark may import pyspark.sql.connect on the way (audit.mainguard)
        return _session(master, config)


def _session(master: str | None, config: dict | None):
    SparkSession = require_pyspark()
    settings = {**SESSION_CONFIG, **(config or {})}
    if master and master.startswith("sc://"):
        builder = SparkSession.builder.remote(master)
        settings = dict(config or {})
    else:
        active = SparkSession.getActiveSession()
        if active is not None and master is None:
            return active
        if not java_available():
            raise EngineError("--engine spark needs a Java runtime (17 or newer) and found none "
                              "on JAVA_HOME or the PATH: install one (Debian: apt-get install "
                              "default-jre-headless) or set JAVA_HOME")
        master = master or "local[*]"
        builder = SparkSession.builder.master(master).appName("annotation-audit")
        if master.startswith("local"):
            settings = {**LOCAL_CONFIG, **settings}
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        spark = builder.getOrCreate()
    except Exception as err:  # noqa: BLE001 - py4j / pyspark raise many unrelated types
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise EngineError(f"cannot start a Spark session on {master!r}: {first}") from None
    if not (master or "").startswith("sc://"):
        try:
            spark.sparkContext.setLogLevel("ERROR")
        except Exception:  # noqa: BLE001 - Connect sessions have no SparkContext
            pass
    return spark
