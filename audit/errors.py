"""The package's exception and warning hierarchy.

Every error raised on user input derives from :class:`AuditError`; the CLI turns any of them into
one message and exit code 2 in a single place. Messages name the file, the column, the key and,
where it applies, the row or record.
"""

from __future__ import annotations

from collections.abc import Iterable


#: What an empty path is called wherever one is refused (the CLI's path arguments and options,
#: :func:`audit.load`'s ``source``, ``spec`` and ``pools``): to the system ``""`` is the current
#: folder, so ``run "$DATA"`` with the variable unset would read whatever is there.
EMPTY_PATH = "an empty path (an unset shell variable?)"
#: Why ``-`` is refused as an input path: it is no file, and standard input cannot be read
#: again, while a source is read more than once (its format detected, its columns, then the
#: table: :func:`audit.ingest.sources.existing_path`).
STDIN_PATH = ("'-' is not standard input here: give a file's path (./- for a file named '-'); "
              "a source is read more than once (its format detected, its columns, then the "
              "table), so save piped data to a file first")
#: Why ``-`` is refused as an output path.
STDOUT_PATH = ("'-' is not standard output here: give a file or folder path (./- for one "
               "named '-')")


class AuditError(Exception):
    """Base class for every error the toolkit raises on bad input or bad configuration."""

    exit_code = 2


def shown_path(path) -> str:
    """``path`` as a message names it: a line break or other control character in a file name
    shown as its escape (``a\\nb.csv``), so the message stays one line."""
    from .escape import visible

    return visible(str(path))


class InputError(AuditError):
    """A source file, column, row or option that cannot be used.

    Parameters
    ----------
    message
        What is wrong, in words a user can act on.
    path, column, row, key
        Where it is wrong; each is prefixed to the message when given.
    """

    def __init__(self, message: str, *, path=None, column=None, row=None, key=None):
        self.path, self.column, self.row, self.key = path, column, row, key
        where = []
        if path is not None:
            where.append(shown_path(path))
        if key is not None:
            where.append(f"key {key!r}")
        if column is not None:
            where.append(f"column {column!r}")
        if row is not None:
            where.append(row if isinstance(row, Where) else f"row {row}")
        self.message = message
        super().__init__(f"{', '.join(where)}: {message}" if where else message)


class Where(str):
    """A judgment's location given as text rather than a source row number or record id: the
    file, item and annotator (how the Spark engine names offending judgments), or the line of
    a text file (``line 7``). Shown as it is, as an InputError's ``row`` too."""


class SchemaError(AuditError):
    """The canonical table broke its schema; ``failures`` is a tidy frame of every failure.

    The frame has the columns ``column, check, failure_case, index`` (pandera's failure-case
    layout), where ``index`` is the source row or record that produced the offending judgment
    (with ``--engine spark``, a text naming the file and the judgment's item and annotator).
    ``hint``, when given, is a last line saying how the failures might be fixed. ``rows`` maps
    an ``index`` to the words that name it in the message (``line 7`` for a record of a CSV /
    TSV / JSON Lines file, :mod:`audit.ingest.readers.lines`); any other index is named
    ``source row N``.
    """

    def __init__(self, failures, *, source: str | None = None, limit: int = 20,
                 hint: str = "", rows=None):
        self.failures = failures
        self.source = source
        self.limit, self.hint, self.rows = limit, hint, rows or {}
        lines = [f"{source or 'table'}: {len(failures)} schema failure(s):"]
        for rec in failures.head(limit).itertuples(index=False):
            where = (rec.index if isinstance(rec.index, Where) else self.rows.get(rec.index)
                     or f"source row {rec.index}")
            lines.append(
                f"  column {rec.column!r}: {rec.check} failed for value {rec.failure_case!r}"
                f" ({where})"
            )
        if len(failures) > limit:
            lines.append(f"  ... and {len(failures) - limit} more")
        if hint:
            lines.append(f"  {hint}")
        super().__init__("\n".join(lines))


class EngineError(AuditError):
    """A compute engine that cannot start: ``pyspark`` not installed, no Java runtime, a Spark
    master that cannot be reached."""


class SuiteError(AuditError):
    """An expectation suite that cannot be run (unknown expectation, bad threshold)."""


class SuiteFileError(SuiteError):
    """A suite that cannot be run, and where: ``path`` the suite file, ``line`` the 1-based line
    (either may be None). The message starts with them, ``path, line N: what is wrong``."""

    def __init__(self, message: str, *, path=None, line: int | None = None):
        self.path, self.line, self.message = path, line, message
        where = ", ".join(p for p in (shown_path(path) if path else None,
                                      f"line {line}" if line else None) if p)
        super().__init__(f"{where}: {message}" if where else message)


class InternalError(AuditError):
    """A broken invariant inside the toolkit (e.g. judgments lost between reading and encoding):
    a bug in annotation-audit, not bad input; the CLI exits 3 and asks for a bug report."""

    exit_code = 3


class AuditWarning(UserWarning):
    """Base class for the toolkit's warnings."""


class BudgetFallbackWarning(AuditWarning):
    """A statistic computed another way because its usual way would take the audit over the
    memory budget (Cohen's kappa's interval linearised, :func:`audit.budget.check_table`); the
    results say how it was computed."""


class DegenerateDataWarning(AuditWarning):
    """Data that is legal but makes a statistic undefined; the statistic is NaN."""


class SingleAnnotatorPoolNaN(DegenerateDataWarning):
    """NaNs that follow from the design, not from the data: statistics *within* a pool that one
    annotator holds (agreement, within-pool disagreement, within-item SD, the annotator-effect
    test) need two annotators, so they are NaN for every such pool (each PandaLM annotator is a
    pool of its own).

    The rule, applied where the measurement warnings are gathered
    (:class:`audit.measure._ScopedWarnings`): a :class:`DegenerateDataWarning` is of this kind
    when its statistic is computed within a pool whose judgments come from exactly one
    annotator — the scope ``reliability of pool P`` or a statistic named ``pool P: ...``. Every
    other degenerate case (a pool of two or more annotators that share no item, one label only,
    a whole dataset with one annotator, a ranking or baseline that is undefined) stays a plain
    :class:`DegenerateDataWarning`. Either way the NaN and its reason are in the results.

    The CLI gathers these into one ``info:`` line naming the pools (the details under
    ``--verbose``); a library caller sees them as any other :class:`DegenerateDataWarning`.

    Parameters
    ----------
    message
        The statistics and why they are NaN, as for any degenerate-data warning.
    pools
        The single-annotator pools the message is about.
    """

    def __init__(self, message: str, *, pools: Iterable[str] = ()):
        super().__init__(message)
        self.pools = tuple(pools)


#: How every "not defined on a continuous scale" reason begins (audit.measure.moments).
CONTINUOUS_REASON = "not defined for a continuous scale"


class ContinuousScaleNaN(SingleAnnotatorPoolNaN):
    """NaNs that follow from the scale: statistics of label categories (Fleiss' kappa, Gwet's
    AC1, percent agreement, Cohen's kappa, majority labels) are not defined on a continuous
    scale, where the toolkit uses the interval alpha, the ICC and mean scores instead.

    The rule (:class:`audit.measure._ScopedWarnings`): a :class:`DegenerateDataWarning` whose
    reason is :func:`audit.measure.moments.not_defined`'s text (it starts with
    :data:`CONTINUOUS_REASON`). The CLI shows these as one
    ``info:`` line (:mod:`audit.notices`), details under ``--verbose``; ``pools`` is empty.
    """


def join_names(names: Iterable[object], limit: int = 8) -> str:
    """Render a short, quoted list of names for a message."""
    names = [repr(str(n)) for n in names]
    if len(names) > limit:
        return ", ".join(names[:limit]) + f", ... ({len(names)} in all)"
    return ", ".join(names)
