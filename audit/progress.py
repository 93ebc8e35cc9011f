"""Progress of the pipeline's steps on standard error: a spinner on a terminal, lines in a log.

The pipeline (:func:`audit.pipeline.run`, :func:`audit.suites.check.check`) calls
``step(name)`` around each stage (loading and validating, measuring, ranking, the per-item
table, writing). :func:`steps` picks how that is shown:

* standard error is a terminal: rich's transient spinner with the elapsed time
  (:func:`audit.report.summary.progress_steps`), gone when the step ends;
* it is not (a CI log, a file, a pipe): one line per step when it ends, with the step's own
  elapsed time, e.g. ``[  3.1s] reliability and pool disagreement done``, so a log shows where
  the time went and, by the last line before an error's message, where a run stopped;
* ``enabled=False`` (``--quiet``): nothing.

Standard output is never written, so a command that writes data there (``check --json -``)
stays machine-readable.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator

#: A progress hook: ``step(name)`` is a context manager around one pipeline stage. Every
#: orchestrator (:func:`audit.pipeline.run`, :func:`audit.pipeline.audit_table`,
#: :func:`audit.suites.check.check`) takes one as ``step=``, :func:`no_step` by default.
Step = Callable[[str], contextlib.AbstractContextManager]


@contextlib.contextmanager
def no_step(name: str) -> Iterator[None]:
    """The silent :data:`Step`: runs the stage and shows nothing."""
    yield


def is_terminal(stream=None) -> bool:
    """Whether ``stream`` (default: the current standard error) is an interactive terminal."""
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # no isatty, or closed
        return False


def step_line(name: str, seconds: float) -> str:
    """The log line of one finished step: ``[  3.1s] NAME done``, the name made inert."""
    from .escape.terminal import text

    return f"[{seconds:6.1f}s] {text(name)} done"


@contextlib.contextmanager
def _log_steps() -> Iterator[Step]:
    import click

    @contextlib.contextmanager
    def step(name: str):
        t0 = time.perf_counter()
        yield  # a step that raises prints nothing: the error's one message says what went wrong
        click.echo(step_line(name, time.perf_counter() - t0), err=True)

    yield step


@contextlib.contextmanager
def steps(*, enabled: bool = True) -> Iterator[Step]:
    """Yield ``step(name)``, a context manager around one pipeline step (module docstring)."""
    if not enabled:
        yield no_step
    elif is_terminal():
        from .report.summary import progress_steps

        with progress_steps() as step:
            yield step
    else:
        with _log_steps() as step:
            yield step
