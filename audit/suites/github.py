"""GitHub Actions output for a validation result: ``::error file=...,line=...::...`` annotations,
and the Markdown of the job's summary page (``$GITHUB_STEP_SUMMARY``).

A pure function of great_expectations' validation-result JSON. Each failed expectation becomes
one error annotation pointing at its line in the suite file, so the pull request shows the broken
claim next to the line that states it.

Every string in a command (the message, the suite path, the expectation's title) may come from
the pull request under test, so each goes through :mod:`audit.escape.github` (GitHub's escaping
of ``%``, CR and LF in the message; also ``:`` and ``,`` in properties): whatever a model name,
item id or suite line holds, a command stays one line and exactly one command. Control characters
other than tab, LF and CR are shown as escapes (``\\x1b``) first, so none reaches a terminal or
the annotation raw; line breaks stay line breaks of the annotation. The summary's strings go
through :mod:`audit.escape.markdown`, each cut to :data:`SUMMARY_FIELD` characters, and the
summary never takes the step's summary file past GitHub's limit (:data:`SUMMARY_LIMIT`): past it
the runner uploads none of the step's summary, so one 100,000-character model name would have
cost the whole page. Suite paths are made relative to the repository root (:func:`repo_path`),
which GitHub needs to attach an annotation to a pull request's diff.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ..escape import CONTROL_BUT_BREAKS, visible
from ..escape import github as esc
from .outcomes import summary

#: The control characters shown as escapes in a command; tab, LF and CR are GitHub's to escape.
_SHOWN = CONTROL_BUT_BREAKS


def command(level: str, message, *, file=None, line=None, title=None) -> str:
    """One workflow command, e.g. ``::error file=s.yaml,line=3,title=t::message``."""
    shown = lambda v: None if v is None else visible(v, _SHOWN)  # noqa: E731
    return esc.command(level, shown(message), file=shown(file), line=line, title=shown(title))


#: Error annotations GitHub keeps of one step (10 error, 10 warning and 10 notice annotations a
#: step, 50 a job: actions/toolkit, docs/problem-matchers.md); the rest are dropped without a
#: word in the pull request's view.
ANNOTATIONS_PER_STEP = 10


def annotations(validation: Mapping, *, path: str | None = None,
                limit: int = ANNOTATIONS_PER_STEP) -> list[str]:
    """One ``::error`` line per failed expectation (``path`` overrides the suite path recorded in
    the result, e.g. to make it relative to the repository root), in the suite's order.

    GitHub keeps :data:`ANNOTATIONS_PER_STEP` error annotations of a step and drops the rest
    silently, so a pull request breaking twelve claims showed ten, as if the other two held.
    Past ``limit`` failures, the first ``limit - 1`` are annotated and the last annotation
    says how many more failed and where they all are (the job's summary, the log and a JUnit
    file list every result)."""
    block = summary(validation)
    path = path or block.get("path")
    failed = [r for r in block["results"] if not r["passed"]]
    shown = failed if len(failed) <= limit else failed[:limit - 1]
    out = []
    for r in shown:
        message = r["message"] + (f" — claim: {r['claim']}" if r.get("claim") else "")
        out.append(command("error", message, file=path, line=r.get("line"),
                           title=f"expectation failed: {r['expectation']}"))
    rest = failed[len(shown):]
    if rest:
        lines = ", ".join(str(r["line"]) for r in rest[:20] if r.get("line"))
        more = "" if len(rest) <= 20 else ", ..."
        out.append(command(
            "error", f"{len(rest)} more expectation(s) failed, not annotated here (GitHub shows "
            f"{limit} error annotations a step): {len(failed)} of {len(block['results'])} failed "
            f"in all; the job's summary and the log list each"
            + (f" (suite lines {lines}{more})" if lines else ""),
            file=path, line=rest[0].get("line"),
            title=f"{len(rest)} more expectation(s) failed"))
    return out


def repo_path(path, *, environ=None) -> str | None:
    """``path`` as GitHub attaches annotations: relative to the repository root, with ``/``.

    The root is ``$GITHUB_WORKSPACE`` when set (the checkout an Actions job runs in), else the
    git work tree holding ``path``; a path outside the root, or with no root found, is returned
    as given. GitHub shows an annotation on a pull request's diff only when its ``file`` is
    relative to the repository root, so an absolute ``--suite`` path would otherwise show on
    the run's summary page alone.
    """
    if path is None:
        return None
    environ = os.environ if environ is None else environ
    given = Path(path)
    try:
        real = given.resolve()
    except (OSError, RuntimeError):
        return str(path)
    workspace = environ.get("GITHUB_WORKSPACE")
    root = Path(workspace) if workspace else _git_root(real.parent)
    if root is None:
        return str(path)
    try:
        return real.relative_to(root.resolve()).as_posix()
    except (ValueError, OSError, RuntimeError):
        return str(path)


def _git_root(folder: Path) -> Path | None:
    """The top of the git work tree holding ``folder``, or None (no git, not a repository)."""
    import subprocess

    try:
        done = subprocess.run(["git", "-C", str(folder), "rev-parse", "--show-toplevel"],
                              capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    top = done.stdout.strip()
    return Path(top) if done.returncode == 0 and top else None


_MARK = {True: "✅ pass", False: "❌ **FAIL**"}
#: GitHub's limit on one step's job summary, in bytes: past it the runner uploads none of it
#: ("$GITHUB_STEP_SUMMARY upload aborted, supports content up to a size of 1024k").
SUMMARY_LIMIT = 1024 * 1024
#: Characters of one string (a name, a message, a claim) the summary shows; the annotations, the
#: JUnit file and results.json keep it whole.
SUMMARY_FIELD = 2_000
#: The line that ends a summary cut at :data:`SUMMARY_LIMIT`.
#: (after a blank line, which ends a table the cut may fall in).
_CUT_NOTE = ("\n_The rest of this summary is left out: a step's job summary holds at most 1 MiB "
             "(GitHub's limit). The step's log and a JUnit file (--junit) hold every result._\n")


def _summary_text(value, limit: int = SUMMARY_FIELD) -> str:
    """``value`` as inert Markdown (:func:`audit.escape.markdown.inline`), cut to ``limit``
    characters first, the cut said with the whole length."""
    from ..escape.markdown import inline

    text = str(value)
    if len(text) > limit:
        text = f"{text[:limit]}… ({len(text):,} characters)"
    return inline(text)


def step_summary(block: Mapping, *, baseline: Mapping | None = None, path: str | None = None,
                 report: str | None = None) -> str:
    """The Markdown a check adds to the job's summary page (``$GITHUB_STEP_SUMMARY``).

    A heading with the verdict, the pass/fail table of the ``expectations`` block (one row per
    expectation: result, title, observed value, threshold, suite line; skipped ones last), each
    failure's message and claim, and with ``baseline`` what the pull request changed. Every
    string from the suite or the data goes through :func:`audit.escape.markdown.inline` (one
    line, Markdown and HTML inert, ``|`` escaped), so no name can break the table or inject
    markup into the page, cut to :data:`SUMMARY_FIELD` characters.
    """
    from ..format import significant

    md = _summary_text
    path = path or block.get("path") or block.get("suite") or "suite"
    ok = bool(block.get("success"))
    skipped = block.get("skipped") or []
    counts = f"{block.get('n_passed', 0)} passed, {block.get('n_failed', 0)} failed" + \
        (f", {len(skipped)} skipped" if skipped else "")
    out = [f"### annotation-audit check: {md(block.get('suite') or path)} — "
           f"{'✅ every expectation holds' if ok else '❌ an expectation failed'}", "",
           f"{counts} ({md(path)})", "",
           "| Result | Expectation | Observed | Threshold | Suite line |",
           "| --- | --- | --- | --- | --- |"]
    for r in block.get("results") or []:
        mark = "⚠️ **ERROR**" if r.get("error") else _MARK[bool(r["passed"])]
        out.append(f"| {mark} | {md(r['expectation'])} | {md(significant(r.get('observed')))} | "
                   f"{md(r.get('threshold') or '')} | {_where(r, path, md)} |")
    for r in skipped:
        out.append(f"| ⏭️ skip | {md(r['expectation'])} | | | {_where(r, path, md)} |")
    failed = [r for r in block.get("results") or [] if not r["passed"]]
    if failed:
        out += ["", "**Failed**", ""]
        for r in failed:
            claim = f" — claim: {md(r['claim'])}" if r.get("claim") else ""
            out.append(f"- {md(r['expectation'])} ({_where(r, path, md)}): "
                       f"{md(r['message'])}{claim}")
    if skipped:
        out += ["", f"Skipped: {md(skipped[0]['reason'])}."]
    if baseline:
        out += ["", *_baseline_summary(baseline, md)]
    if report:
        out += ["", f"Report: {md(report)}"]
    return "\n".join(out) + "\n"


def _where(r: Mapping, path: str, md) -> str:
    return md(f"{path}:{r['line']}") if r.get("line") is not None else md(path)


def _baseline_summary(b: Mapping, md) -> list[str]:
    """What a pull request changed (the ``baseline`` block) as Markdown lines."""
    from ..format import percent

    ni, nj, rel = b["n_items"], b["n_judgments"], b["relabelled"]
    out = ["#### Changes against the baseline", "",
           f"{ni['old']:,} → {ni['new']:,} items ({b['items_added']['count']:,} added, "
           f"{b['items_removed']['count']:,} removed); {nj['old']:,} → {nj['new']:,} judgments; "
           f"**{rel['count']:,} relabelled** ({percent(b.get('changed_label_share'))} of the "
           f"{nj['shared']:,} in both)."]
    by_pool = rel.get("by_pool") or {}
    if rel["count"] and by_pool:
        out += ["", "| Pool | Relabelled | In both | Share |", "| --- | --- | --- | --- |"]
        out += [f"| {md(p)} | {v['n_relabelled']:,} | {v['n_shared']:,} | {percent(v['share'])} |"
                for p, v in by_pool.items()]
    moves = rel.get("transitions") or []
    if moves:
        out += ["", "Label changes: " + "; ".join(
            f"{md(m['old'])} → {md(m['new'])}: {m['count']:,}" for m in moves[:10])
            + ("; ..." if len(moves) > 10 else "")]
    return out


def error_summary(message: str, *, title: str, file=None, line: int | None = None) -> str:
    """The job-summary Markdown of a check that could not run (exit 2 or 3), naming the file
    and line when known."""
    md = _summary_text
    where = "" if file is None else md(file) + (f", line {line}: " if line is not None
                                                else ": ")
    return (f"### annotation-audit check: could not run ({md(title)})\n\n{where}"
            f"{md(message, 10 * SUMMARY_FIELD)}\n")


def append_step_summary(markdown: str, *, environ=None) -> str | None:
    """Append ``markdown`` to ``$GITHUB_STEP_SUMMARY`` when it is set; return the path.

    The file is opened for appending (what the step wrote before stays) and written in one call,
    so the summary lands whole; when it would take the file past :data:`SUMMARY_LIMIT`, only its
    first lines that fit are written, with a line saying so (:func:`fit_summary`). Without the
    variable (not in GitHub Actions) nothing is written.
    """
    environ = os.environ if environ is None else environ
    target = environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return None
    with open(target, "a", encoding="utf-8") as fh:
        held = fh.tell()
        text = fit_summary(("\n" if held else "") + markdown, SUMMARY_LIMIT - held)
        if text:
            fh.write(text)
    return target


def fit_summary(markdown: str, budget: int) -> str:
    """``markdown`` whole when it takes at most ``budget`` bytes (UTF-8); else its first whole
    lines that fit with :data:`_CUT_NOTE` after them, or nothing when not even the note fits."""
    if len(markdown.encode("utf-8")) <= budget:
        return markdown
    room = budget - len(_CUT_NOTE.encode("utf-8"))
    if room < 0:
        return ""
    lines = markdown.split("\n")
    if lines[-1] == "":
        lines.pop()
    kept, used = [], 0
    for line in (piece + "\n" for piece in lines):
        size = len(line.encode("utf-8"))
        if used + size > room:
            break
        kept.append(line)
        used += size
    return "".join(kept) + _CUT_NOTE
