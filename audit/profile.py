"""Where an audit's time and memory went: per-stage timings and peak memory (``--profile``).

A :class:`Profile` records, for each stage of a run, its wall-clock and CPU seconds and the
resident memory of this process (the Python driver; a Spark JVM is another process and is not
counted): the peak during the stage and the size when it ended. Stages nest: the pipeline's
steps (loading, measuring, ranking, the per-item table) and, within them, the named sections the
analyses open with :func:`section` (reliability, pool disagreement, each leaderboard, ...).
:func:`section` costs one context-variable lookup when no profile is active, so the analyses
call it unconditionally.

Peak memory during a stage is sampled: a daemon thread reads the resident set size every
:data:`INTERVAL` seconds (``/proc/self/statm`` on Linux) and each open stage keeps its maximum;
an allocation shorter than the interval can be missed, so the process-wide peak
(``resource.getrusage``'s ``ru_maxrss``, exact) is reported beside it. Where ``/proc`` is absent
(macOS, Windows) the stage peaks are the process peak so far, which only ever grows, and the
method says so.

The profile is opt-in (``annotation-audit run --profile``, ``audit.run(profile=True)``) because
it is the one part of ``results.json`` that differs between two runs of the same data and seed
(and with it ``meta.run_id``): timings are measurements of the machine, not of the data. The
stage that writes ``results.json`` cannot time itself into that file; the command prints it on
standard error with the others.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import resource
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from . import allocator

#: Seconds between two samples of the resident set size.
INTERVAL = 0.01

_STATM = "/proc/self/statm"
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096

_CURRENT: contextvars.ContextVar[Profile | None] = contextvars.ContextVar(
    "annotation_audit_profile", default=None)
#: Stages open in this context: a stage's depth. A worker thread that runs its work in a copy of
#: the caller's context (``contextvars.copy_context().run``) nests its stages in the caller's
#: open stages, not in those another thread opened meanwhile.
_DEPTH: contextvars.ContextVar[int] = contextvars.ContextVar("annotation_audit_depth", default=0)


def rss_bytes() -> int | None:
    """This process's resident set size now, or None where ``/proc`` is absent."""
    try:
        with open(_STATM, "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


def max_rss_bytes() -> int:
    """This process's peak resident set size so far (exact, from the kernel)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak) if sys.platform == "darwin" else int(peak) * 1024  # macOS: bytes


@dataclass
class Stage:
    """One timed stage; ``depth`` 0 is a pipeline step, 1 a section within it, and so on."""

    name: str
    depth: int
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    peak_rss_bytes: int = 0
    end_rss_bytes: int = 0

    def to_dict(self) -> dict:
        return {"stage": self.name, "depth": self.depth, "seconds": round(self.seconds, 4),
                "cpu_seconds": round(self.cpu_seconds, 4),
                "peak_rss_bytes": int(self.peak_rss_bytes),
                "end_rss_bytes": int(self.end_rss_bytes)}


@dataclass
class Profile:
    """The stages of one run, in the order they started (see the module docstring)."""

    stages: list[Stage] = field(default_factory=list)
    _open: list[Stage] = field(default_factory=list)
    _sampled: bool = field(default_factory=lambda: rss_bytes() is not None)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _started: float = field(default_factory=time.perf_counter)
    beside: list[dict] = field(default_factory=list)

    @contextlib.contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the block as stage ``name``, nested in the stages open around it (in this
        context: a stage run on a worker thread beside another nests where its work was
        started). Its CPU seconds are the process's, every thread's."""
        rss = self._rss()
        depth = _DEPTH.get()
        entry = Stage(name, depth, peak_rss_bytes=rss)
        with self._lock:
            self.stages.append(entry)
            self._open.append(entry)
        token = _DEPTH.set(depth + 1)
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            _DEPTH.reset(token)
            entry.seconds = time.perf_counter() - t0
            entry.cpu_seconds = time.process_time() - c0
            rss = self._rss()
            with self._lock:
                self._open.remove(entry)
                entry.end_rss_bytes = rss
                entry.peak_rss_bytes = max(entry.peak_rss_bytes, rss)

    def _rss(self) -> int:
        now = rss_bytes()
        return max_rss_bytes() if now is None else now

    def sample(self) -> None:
        """Record the resident set size now in every open stage (the sampler's tick)."""
        rss = self._rss()
        with self._lock:
            for entry in self._open:
                if rss > entry.peak_rss_bytes:
                    entry.peak_rss_bytes = rss

    def method(self) -> str:
        """How the memory figures were measured, in words."""
        if self._sampled:
            return (f"wall and CPU seconds per stage; resident memory of this process sampled "
                    f"every {INTERVAL * 1000:g} ms (peak during the stage, size at its end); "
                    "process peak from getrusage")
        return ("wall and CPU seconds per stage; no /proc: a stage's peak is the process's "
                "peak so far (getrusage)")

    def to_dict(self) -> dict:
        """The ``meta.profile`` block: the stages so far, the total and the process peak."""
        return {"stages": [s.to_dict() for s in self.stages],
                "total_seconds": round(time.perf_counter() - self._started, 4),
                "peak_rss_bytes": max_rss_bytes(), "method": self.method(),
                "allocator": dict(allocator.SETTINGS),
                "excluded": "writing the outputs (this file among them): shown on standard "
                            "error by the command",
                "beside": list(self.beside)}


@contextlib.contextmanager
def profiling(profile: Profile | None) -> Iterator[Profile | None]:
    """Make ``profile`` the active one (for :func:`section`) and sample memory while it is;
    ``None`` does nothing."""
    if profile is None:
        yield None
        return
    token = _CURRENT.set(profile)
    stop = threading.Event()

    def sampler():
        while not stop.wait(INTERVAL):
            profile.sample()

    thread = threading.Thread(target=sampler, name="annotation-audit-profile", daemon=True)
    if profile._sampled:
        thread.start()
    try:
        yield profile
    finally:
        stop.set()
        if thread.is_alive():
            thread.join()
        _CURRENT.reset(token)


@contextlib.contextmanager
def section(name: str) -> Iterator[None]:
    """A stage of the active profile, or nothing when no profile is active."""
    profile = _CURRENT.get()
    if profile is None:
        yield
        return
    with profile.stage(name):
        yield


def record_beside(name: str, seconds: float) -> None:
    """Record a stage that ran on a worker thread, ``seconds`` of wall time beside the stages
    of the active profile (``meta.profile.beside``); nothing when no profile is active. Its CPU
    time is in the stages it ran beside (a process's CPU clock counts every thread), and its
    memory in their peaks."""
    profile = _CURRENT.get()
    if profile is None:
        return
    with profile._lock:
        profile.beside.append({"stage": name, "seconds": round(float(seconds), 4)})


def profiled_step(step, profile: Profile | None):
    """The progress hook ``step`` (:data:`audit.progress.Step`) that also times each step as a
    stage of ``profile``; ``step`` itself when ``profile`` is None."""
    if profile is None:
        return step

    @contextlib.contextmanager
    def both(name: str):
        with step(name), profile.stage(name):
            yield

    return both


def table_lines(stages: list[dict], beside: list[dict] = ()) -> list[str]:
    """The profile as text lines for standard error: one line per stage, indented by depth,
    then each stage that ran on a worker thread beside them (wall seconds only)."""
    from .budget import fmt_bytes as bytes_size

    width = max((2 * s["depth"] + len(s["stage"]) for s in stages), default=10)
    lines = [f"{'stage':<{width}}  {'wall s':>8}  {'cpu s':>8}  {'peak RSS':>9}  "
             f"{'RSS at end':>10}"]
    for s in stages:
        name = "  " * s["depth"] + s["stage"]
        lines.append(f"{name:<{width}}  {s['seconds']:8.2f}  {s['cpu_seconds']:8.2f}  "
                     f"{bytes_size(s['peak_rss_bytes']):>9}  "
                     f"{bytes_size(s['end_rss_bytes']):>10}")
    for s in beside:
        lines.append(f"beside the above, on a worker thread: {s['stage']}: "
                     f"{s['seconds']:.2f} s wall")
    return lines


@contextlib.contextmanager
def profiled(profile, step) -> Iterator[tuple[Profile | None, object]]:
    """What an orchestrator (:func:`audit.run`, :func:`audit.suites.check.check`) wraps its
    work in: ``profile=`` resolved (:func:`resolve`), made active while the block runs
    (:func:`profiling`), and the progress hook ``step`` that also times each step; yields
    ``(profile, step)``."""
    profile = resolve(profile)
    with profiling(profile):
        yield profile, profiled_step(step, profile)


def resolve(profile) -> Profile | None:
    """``profile=`` of :func:`audit.run` and :func:`audit.suites.check.check`: False/None for
    none, True for a new :class:`Profile`, or a :class:`Profile` the caller reads afterwards
    (the CLI does, to print the writing stage too)."""
    if isinstance(profile, Profile):
        return profile
    if profile is None or profile is False:
        return None
    if profile is True:
        return Profile()
    raise TypeError(f"profile must be a bool or an audit.profile.Profile, got {profile!r}")
