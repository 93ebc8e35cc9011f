"""Command-line interface: parse flags, call one library function, render, set the exit code.

No statistics live here. The exit code is one contract, decided in one place,
:meth:`AuditGroup.invoke` (no command catches errors itself):

=====  ========================================================================================
code   meaning
=====  ========================================================================================
0      success
1      ``check`` only: an expectation failed (never anything else)
2      bad input: a file, column, row, key, option or suite that cannot be used — every
       :class:`audit.errors.AuditError`, click's usage errors, an OS error on a file; one message
       naming the place
3      an internal error, a bug in annotation-audit (any other exception, and
       :class:`audit.errors.InternalError`): one line naming the exception, with the command to
       rerun with ``--debug`` for the traceback; ``out of memory`` for a MemoryError
130    interrupted (Ctrl-C), without a traceback
141    standard output closed by its reader (``| head``): the rest is dropped without a word,
       as a process stopped by SIGPIPE (128 + 13)
=====  ========================================================================================

An error message that cannot be printed (standard error closed by its reader) is dropped; the
exit code stays the error's.

``--debug`` (before or after the command name, or ``AUDIT_DEBUG=1``) prints the full traceback of
an error; the exit code stays the same. ``AUDIT_DEBUG`` is read as click reads a boolean
(``1`` / ``true`` / ``yes`` / ``on`` and ``0`` / ``false`` / ``no`` / ``off``, any case; empty is
off); another value is ignored with one warning, never a usage error. A command can register a reporter for errors in
``ctx.meta[ON_ERROR]`` (``check`` writes its JUnit file and GitHub annotation through one), so even
a run that never got to its suite leaves a CI-readable record.

Heavy libraries (pandas, great_expectations, datasets) are imported inside the commands, so
``annotation-audit --help`` starts fast.
"""

from __future__ import annotations

import contextvars
import shlex
import sys
import warnings

import click

from . import __version__
from .advice import MORE_MAX, TARGETS
from .budget import MAX_BOARD_SIZE, MAX_RESAMPLES, MAX_SEED, MAX_SIMS
from .errors import EMPTY_PATH, STDIN_PATH, STDOUT_PATH, AuditError

FORMATS = ["auto", "multipref", "mt-bench", "pandalm", "lewidi", "label-studio", "prodigy",
           "table", "hf"]
PROG = "annotation-audit"
#: ``ctx.meta`` keys: the --debug flag, the command line as given, and a command's error reporter
#: (called as ``reporter(error, exit_code, message)`` before the message is printed).
DEBUG = "annotation_audit.debug"
#: ``ctx.meta`` keys of the verbosity (``--quiet``, ``--verbose``) and of the by-design NaN notes
#: gathered while a command runs (:mod:`audit.notices`).
QUIET = "annotation_audit.quiet"
VERBOSE = "annotation_audit.verbose"
NOTICES = "annotation_audit.notices"
ARGV = "annotation_audit.argv"
ON_ERROR = "annotation_audit.on_error"
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141
_DETAIL_CHARS = 200
#: An internal error's rerun command longer than this is described, not quoted.
_RERUN_CHARS = 2000
_DEBUG_HELP = "On an error, print the full traceback (the exit code stays)."


def _set_debug(ctx, param, value):
    if value:
        ctx.meta[DEBUG] = True


class _DebugFlag(click.types.BoolParamType):
    """``--debug``'s value, and ``AUDIT_DEBUG``'s: on for ``1``, ``true``, ``yes``, ``y``, ``on``,
    ``t``, off for ``0``, ``false``, ``no``, ``n``, ``off``, ``f`` and empty (any case, click's
    booleans). Any other value is off, with one ``warning:`` line naming it: a variable that
    asks for tracebacks must not stop every command (it was exit 2, a usage error)."""

    def convert(self, value, param, ctx):
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter:
            from .escape.terminal import text

            click.echo(f"warning: AUDIT_DEBUG={text(repr(value))} is not a yes / no value "
                       "(1, true, yes, on; 0, false, no, off); ignored: no tracebacks", err=True)
            return False


def _debug_option() -> click.Option:
    return click.Option(["--debug"], is_flag=True, expose_value=False, callback=_set_debug,
                        help=_DEBUG_HELP)


_QUIET_HELP = ("Print no progress, notes or summary: only warnings, errors and the data a "
               "command writes to standard output.")
_VERBOSE_HELP = ("Also print the details of the notes (which statistics are NaN by design in "
                 "single-annotator pools, and why).")


def _set_meta(key):
    def callback(ctx, param, value):
        if value:
            ctx.meta[key] = True
    return callback


class AuditCommand(click.Command):
    """A command that also takes ``--debug`` after its name (``annotation-audit run --debug``),
    and ``--quiet`` / ``--verbose`` (kept in ``ctx.meta``; :func:`quiet`)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.params.append(_debug_option())
        self.params.append(click.Option(["--quiet"], is_flag=True, expose_value=False,
                                        callback=_set_meta(QUIET), help=_QUIET_HELP))
        self.params.append(click.Option(["--verbose"], is_flag=True, expose_value=False,
                                        callback=_set_meta(VERBOSE), help=_VERBOSE_HELP))

    def invoke(self, ctx):
        if ctx.meta.get(QUIET) and ctx.meta.get(VERBOSE):
            raise click.UsageError("--quiet and --verbose exclude each other", ctx=ctx)
        return super().invoke(ctx)


def quiet(ctx=None) -> bool:
    """Whether this command runs with ``--quiet``."""
    ctx = ctx or click.get_current_context(silent=True)
    return bool(ctx and ctx.meta.get(QUIET))


class AuditGroup(click.Group):
    """The single place where an exception becomes a message and an exit code (module docstring)."""

    command_class = AuditCommand

    def make_context(self, info_name, args, parent=None, **extra):
        argv = [str(a) for a in args]
        try:
            ctx = super().make_context(info_name, args, parent=parent, **extra)
        except BrokenPipeError:  # --help or --version into a closed pipe
            _silence_stdout()
            raise click.exceptions.Exit(EXIT_BROKEN_PIPE) from None
        except KeyboardInterrupt:
            _tell("\ninterrupted")
            raise click.exceptions.Exit(EXIT_INTERRUPTED) from None
        except click.ClickException as err:  # a usage error: shown by click, its code kept
            _keep_code(err)
            raise
        ctx.meta[ARGV] = argv
        return ctx

    def invoke(self, ctx):
        from .notices import Notices

        ctx.meta[NOTICES] = Notices()
        try:
            with warnings.catch_warnings():
                from .errors import AuditWarning

                warnings.simplefilter("always", AuditWarning)
                warnings.showwarning = _show_warning
                try:
                    # a command's settings (its --max-memory) end with it: a second command in
                    # the same process (CliRunner, a notebook) starts from the defaults
                    result = contextvars.copy_context().run(super().invoke, ctx)
                except click.exceptions.Exit:  # check's verdict: the notes still belong to it
                    _print_notices(ctx)
                    raise
                _print_notices(ctx)
                if sys.stdout is not None:  # None when started with standard output closed
                    sys.stdout.flush()  # a reader gone away shows here, not at interpreter exit
                return result
        except click.ClickException as err:
            _keep_code(err)
            raise
        except (click.exceptions.Exit, click.Abort):
            raise
        except KeyboardInterrupt:
            _tell("\ninterrupted")
            ctx.exit(EXIT_INTERRUPTED)
        except BrokenPipeError:
            _silence_stdout()
            ctx.exit(EXIT_BROKEN_PIPE)
        except SystemExit as done:  # rich's Console.on_broken_pipe exits 1, which is check's code
            if isinstance(done.__context__, BrokenPipeError):
                _silence_stdout()
                ctx.exit(EXIT_BROKEN_PIPE)
            raise
        except Exception as err:  # noqa: BLE001 - this is the one place every error ends up
            ctx.exit(_report(ctx, err))


def _report(ctx, err: Exception) -> int:
    """Print ``err`` as the contract says; call the command's reporter; return the exit code."""
    import traceback

    from .errors import InternalError

    debug = bool(ctx.meta.get(DEBUG))
    if isinstance(err, AuditError) and not isinstance(err, InternalError):
        code, message = err.exit_code, f"error: {err}"
    elif isinstance(err, OSError):  # the system refused a file: not our bug, not a verdict
        code, message = 2, f"error: {_os_message(err)}"
    else:
        code, message = 3, _internal_line(err, ctx, debug=debug)
    if debug:
        _tell("".join(traceback.format_exception(err)).rstrip())
    reporter = ctx.meta.get(ON_ERROR)
    if reporter is not None:
        try:
            reporter(err, code, message)
        except Exception as extra:  # noqa: BLE001 - never hide the error being reported
            _tell(f"warning: could not record the error ({_detail(extra)})")
    from .escape.terminal import lines

    _tell(lines(message))  # messages quote data: shown inert, line by line
    return code


def _tell(message: str) -> None:
    """Print an error line on standard error. When its reader has gone away (``2>&1 | head``)
    the line is lost, not the exit code: click would exit 1 on the broken pipe, which reads as
    ``check``'s failed expectation."""
    try:
        click.echo(message, err=True)
    except BrokenPipeError:
        _silence(sys.stderr)


def _keep_code(err: click.ClickException) -> None:
    """Make ``err``'s message, which click prints as the process ends, go the way of
    :func:`_tell`: a usage error into a closed standard error is still exit 2."""
    show = err.show

    def show_or_drop(file=None):
        try:
            show(file)
        except BrokenPipeError:
            _silence(file if file is not None else sys.stderr)

    err.show = show_or_drop


def _detail(err: BaseException) -> str:
    """``Type: first line of the message``, cut to a readable length."""
    lines = str(err).strip().splitlines()
    text = lines[0] if lines else ""
    if len(text) > _DETAIL_CHARS:
        text = text[:_DETAIL_CHARS - 3] + "..."
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def _internal_line(err: Exception, ctx, *, debug: bool) -> str:
    if isinstance(err, MemoryError):
        what = (f"error: out of memory ({_detail(err)}): the data does not fit in this process; "
                "load it with --engine spark, or use a machine with more memory")
    else:
        what = f"error: internal error, a bug in {PROG} {__version__} ({_detail(err)}); " \
               "please report it"
    if debug:
        return f"{what} (traceback above)"
    rerun = " ".join(_shell_word(a) for a in [PROG, "--debug", *ctx.meta.get(ARGV, [])])
    if len(rerun) > _RERUN_CHARS:
        return f"{what}; rerun the command with --debug after {PROG} for the traceback"
    return f"{what}; rerun with --debug for the traceback: {rerun}"


def _shell_word(arg: str) -> str:
    """``arg`` quoted for a POSIX shell, on one line: one holding a line break or another
    control character as bash's ``$'...'``, each byte of it outside printable ASCII as ``\\xNN``
    (the file name's own bytes, so the command reruns on the same file)."""
    import os

    from .escape import CONTROL

    if not CONTROL.search(arg):
        return shlex.quote(arg)
    shown = "".join(chr(b) if 0x20 <= b < 0x7f and b not in b"\\'" else f"\\x{b:02x}"
                    for b in os.fsencode(arg))
    return f"$'{shown}'"


def _os_message(err: OSError) -> str:
    import os

    from .errors import shown_path

    files = [shown_path(os.fsdecode(f) if isinstance(f, bytes) else f)
             for f in (err.filename, err.filename2) if f is not None]
    reason = err.strerror or str(err)
    return f"{' -> '.join(files)}: {reason}" if files else reason


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush does not raise again."""
    _silence(sys.stdout)


def _silence(stream) -> None:
    """Point ``stream``'s file descriptor at /dev/null (:func:`_silence_stdout`)."""
    import os

    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # a captured stream (tests), already closed
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def _print_notices(ctx) -> None:
    """The by-design NaN notes gathered during the command (:mod:`audit.notices`), unless
    ``--quiet``; with ``--verbose``, their details."""
    notices = ctx.meta.get(NOTICES)
    if notices is None or quiet(ctx):
        return
    for line in notices.lines(verbose=bool(ctx.meta.get(VERBOSE))):
        click.echo(line, err=True)


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """One ``warning:`` line; its text (which quotes pool names, ids, paths) made inert by
    :func:`audit.escape.terminal.text`: control characters shown, nothing a CI runner obeys.
    A NaN by design (:class:`audit.errors.SingleAnnotatorPoolNaN`) is kept for the command's
    one ``info:`` line instead (:mod:`audit.notices`)."""
    from .errors import AuditWarning, SingleAnnotatorPoolNaN
    from .escape.terminal import text

    if issubclass(category, SingleAnnotatorPoolNaN) and isinstance(message, Warning):
        ctx = click.get_current_context(silent=True)
        notices = ctx.meta.get(NOTICES) if ctx is not None else None
        if notices is not None:
            notices.add(message)
            return
    if issubclass(category, AuditWarning):
        click.echo(f"warning: {text(message)}", err=True)
    elif not issubclass(category, (DeprecationWarning, FutureWarning, PendingDeprecationWarning)):
        click.echo(f"warning: {category.__name__}: {text(message)}", err=True)


def audit_options(f):
    """``--min-per-pool`` and ``--unit``: how the audit counts, shared by ``run`` and ``check``."""
    f = click.option("--unit", type=click.Choice(["judgment", "majority"]), default="judgment",
                     show_default=True, help="Leaderboard aggregation: every judgment, or one "
                                             "majority vote per item.")(f)
    return click.option("--min-per-pool", type=click.IntRange(min=1), default=2,
                        show_default=True, help="Judgments a pool needs on an item to count in "
                                                "pool disagreement.")(f)


def load_options(f):
    """The options every command that reads a dataset shares."""
    opts = [
        click.argument("source", type=SOURCE),
        click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto",
                     show_default=True, help="Source format; auto detects it from the file."),
        click.option("--spec", type=PathArg(dir_okay=False),
                     help="YAML dataset spec mapping a CSV / JSONL / Parquet / Excel / datasets table."),
        click.option("--pools", type=PathArg(),
                     help="Annotator -> pool file (CSV, JSON, or a metadata JSON with --pool-column)."),
        click.option("--pool-column", help="Field of the --pools metadata file (any field; for "
                     "LeWiDi, of the dataset's own *_annotators_meta.json) that names the pool."),
        click.option("--min-pool-annotators", type=click.IntRange(min=1), metavar="N",
                     expose_value=False, callback=_keep_in_meta,
                     help="Fold pools held by fewer than N annotators, and placeholder values "
                          "(nan, DATA_EXPIRED), into pool 'other', reported (default: no folding)."),
        click.option("--aspect", default="overall_pref", show_default=True,
                     help="MultiPref: which preference aspect is the label."),
        click.option("--split", help="MT-Bench / datasets: which split to load (default: all)."),
        click.option("--engine", type=click.Choice(["pandas", "spark"]), default="pandas",
                     show_default=True,
                     help="Where loading runs: this process, or Apache Spark for data lakes "
                          "(needs annotation-audit[spark] and Java)."),
        click.option("--spark-master", metavar="URL",
                     help="--engine spark: master URL (local[4], spark://host:7077, "
                          "sc://host:15002); default the active session, else local[*]."),
        click.option("--spark-conf", metavar="KEY=VALUE", multiple=True, callback=_spark_conf,
                     help="--engine spark: a Spark setting for the session it starts "
                          "(spark.driver.memory=8g); repeatable."),
        click.option("--allow-outside", is_flag=True, expose_value=False, callback=_keep_in_meta,
                     help="Let the --spec file name files outside its own folder (pools.file); "
                          "refused by default, so a spec from a pull request reads nothing "
                          "else on the machine."),
        click.option("--max-memory", type=MemorySize(), metavar="SIZE|N%", expose_value=False,
                     callback=_set_max_memory,
                     help="Memory the audit may use, estimated from the data's shape before it "
                          "runs (8G, 512MiB, 75%); over it is exit 2. Default: 50% of the "
                          "memory available."),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


_EMPTY = EMPTY_PATH


class PathArg(click.Path):
    """:class:`click.Path` refusing an empty value: to the system '' is the current folder, so
    ``--junit "$REPORT"`` with the variable unset wrote nothing without a word. ``-`` is
    refused too, saying it is not standard input (or, ``output=True``, output), not "-: file
    not found"."""

    def __init__(self, *args, output: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.output = output

    def convert(self, value, param, ctx):
        if value == "":
            self.fail(_EMPTY, param, ctx)
        if value == "-":
            self.fail(STDOUT_PATH if self.output else STDIN_PATH, param, ctx)
        return super().convert(value, param, ctx)


class SourceArg(click.ParamType):
    """SOURCE and --baseline: a path or URL, never empty (``run "$DATA"`` with the variable
    unset audited the current folder), never ``-``: a source is read more than once, so
    standard input cannot be one (:data:`audit.errors.STDIN_PATH`)."""

    name = "text"

    def convert(self, value, param, ctx):
        if value == "":
            self.fail(_EMPTY, param, ctx)
        if value == "-":
            self.fail(STDIN_PATH, param, ctx)
        return value


SOURCE = SourceArg()


def _spark_conf(ctx, param, values) -> dict | None:
    conf = {}
    for value in values:
        key, sep, setting = value.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{value!r} is not KEY=VALUE (spark.driver.memory=8g)",
                                     ctx=ctx, param=param)
        conf[key.strip()] = setting.strip()
    return conf or None


#: ``ctx.meta`` key of the card's publishing-metadata flags (:func:`card_meta_options`).
CARD_META = "annotation_audit.card_meta"


def card_meta_options(f):
    """The dataset card's publishing metadata (:mod:`audit.report.card_meta`), over the
    spec's ``card:`` section; kept in ``ctx.meta`` (:func:`_card_flags`)."""
    def keep(key):
        def callback(ctx, param, value):
            if value not in (None, ()):
                ctx.meta.setdefault(CARD_META, {})[key] = value
        return callback

    opts = [
        click.option("--license", expose_value=False, callback=keep("license"),
                     help="Card and croissant.json license: a Hub license id (cc-by-4.0, mit, "
                          "other, ...)."),
        click.option("--language", multiple=True, expose_value=False,
                     callback=keep("language"),
                     help="Card language: an ISO 639 code (en, zh, ...); repeatable."),
        click.option("--task-category", multiple=True, expose_value=False,
                     callback=keep("task_categories"),
                     help="Card task_categories: a Hub task id (text-classification, ...); "
                          "repeatable."),
        click.option("--tag", multiple=True, expose_value=False, callback=keep("tags"),
                     help="Card tag; repeatable."),
        click.option("--pretty-name", expose_value=False, callback=keep("pretty_name"),
                     help="Card pretty_name and croissant.json name (default: the dataset's "
                          "name)."),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


def _card_flags() -> dict | None:
    """The card flags given (:func:`card_meta_options`), or None."""
    ctx = click.get_current_context(silent=True)
    return dict(ctx.meta[CARD_META]) if ctx and ctx.meta.get(CARD_META) else None


def _keep_in_meta(ctx, param, value):
    """Keep a load option out of every command's signature: :func:`_load_kwargs` reads it."""
    ctx.meta[param.name] = value


class MemorySize(click.ParamType):
    """``--max-memory``: a size or a share of the available memory, checked at parse time
    (:func:`audit.budget.parse_max_memory`)."""

    name = "size"

    def convert(self, value, param, ctx):
        from .budget import parse_max_memory

        try:
            return parse_max_memory(value)
        except AuditError as err:
            self.fail(getattr(err, "message", str(err)), param, ctx)


def _set_max_memory(ctx, param, value):
    """The memory budget of this command's audits (:func:`audit.budget.set_limit`)."""
    from .budget import set_limit

    set_limit(value)


class _Finite(click.FloatRange):
    """A float in range that is a number: ``nan`` and ``inf`` are refused at parse time."""

    def convert(self, value, param, ctx):
        import math

        rv = super().convert(value, param, ctx)
        if not math.isfinite(rv):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return rv


SEED = click.IntRange(0, MAX_SEED)
RESAMPLES = click.IntRange(1, MAX_RESAMPLES)
_SEED_HELP = "Seed of every random step (0 to 2**63 - 1)."
_RESAMPLES_HELP = f"Number of item resamples for the CIs (1 to {MAX_RESAMPLES:,})."


def _load_kwargs(fmt, spec, pools, pool_column, aspect, split, engine="pandas",
                 spark_master=None, spark_conf=None) -> dict:
    ctx = click.get_current_context(silent=True)
    return {"format": fmt, "spec": spec, "pools": pools, "pool_column": pool_column,
            "aspect": aspect, "split": split, "engine": engine, "spark_master": spark_master,
            "spark_conf": spark_conf,
            "min_pool_annotators": ctx.meta.get("min_pool_annotators") if ctx else None,
            "allow_outside": bool(ctx.meta.get("allow_outside")) if ctx else False}


@click.group(cls=AuditGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="annotation-audit")
@click.option("--debug", is_flag=True, type=_DebugFlag(), expose_value=False,
              callback=_set_debug, envvar="AUDIT_DEBUG", show_envvar=True,
              help=_DEBUG_HELP + " AUDIT_DEBUG: 1, true, yes or on; another value is ignored "
                                 "with a warning.")
def cli():
    """Audit a human-annotation or preference dataset: who annotated, in which pools, how much
    they agree, and whether the pool changes who wins.

    \b
    annotation-audit run data/pandalm/testset-v1.json --out reports/pandalm
    """


@cli.command()
@load_options
@click.option("--out", type=PathArg(file_okay=False, output=True),
              help="Write results.json (and reports) here, with manifest.json, replacing the "
                   "folder's files as one set.")
@click.option("--seed", type=SEED, default=0, show_default=True, help=_SEED_HELP)
@click.option("--bootstrap", "n_bootstrap", type=RESAMPLES, default=1000,
              show_default=True, help=_RESAMPLES_HELP)
@audit_options
@click.option("--no-report", "no_report", is_flag=True,
              help="Write only OUT/results.json: no HTML report, charts, dataset card or "
                   "items.parquet.")
@click.option("--items-csv", is_flag=True,
              help="Also write OUT/items.csv, the per-item table for spreadsheets (cells a "
                   "spreadsheet would run as a formula are prefixed with ').")
@click.option("--profile", "profile", is_flag=True,
              help="Time each stage and sample its peak memory; write them as results.json "
                   "meta.profile and print them on standard error (timings differ between "
                   "runs, so does the run id).")
@card_meta_options
def run(source, fmt, spec, pools, pool_column, aspect, split, engine, spark_master, spark_conf,
        out, seed, n_bootstrap, min_per_pool, unit, no_report, items_csv, profile):
    """Load, validate and audit SOURCE; write OUT/results.json (and, unless --no-report, the
    HTML report, dataset card and OUT/items.parquet, one row per item) and print a summary."""
    from .pipeline import run as run_audit
    from .progress import steps
    from .report.summary import print_summary
    from .results import json_form

    if items_csv and out is None:
        raise click.UsageError("--items-csv writes OUT/items.csv: give --out")
    timer = _profile(profile)
    with steps(enabled=not quiet()) as step:
        results = run_audit(source, out=out, seed=seed, n_bootstrap=n_bootstrap,
                            card=_card_flags(),
                            min_per_pool=min_per_pool, unit=unit, report=not no_report,
                            items_csv=items_csv, step=step, profile=timer,
                            **_load_kwargs(fmt, spec, pools, pool_column, aspect, split, engine,
                                           spark_master, spark_conf))
    if not quiet():
        print_summary(json_form(results), out=out, report=not no_report)
    _print_profile(timer)


def _profile(enabled: bool):
    """A :class:`audit.profile.Profile` for ``--profile``, else None."""
    if not enabled:
        return None
    from .profile import Profile

    return Profile()


def _print_profile(profile) -> None:
    """``--profile``'s table on standard error, the writing stage included (unless --quiet)."""
    if profile is None or quiet():
        return
    from .profile import table_lines

    shown = profile.to_dict()
    click.echo("\n".join(["", "profile (also in results.json meta.profile, without the "
                                "writing stage):", *table_lines(shown["stages"],
                                                                 shown["beside"])]),
               err=True)


@cli.command()
@load_options
def validate(source, fmt, spec, pools, pool_column, aspect, split, engine, spark_master,
             spark_conf):
    """Load and validate SOURCE only: exit 0 when it is a valid annotation table, 2 when not."""
    from .ingest import load
    from .report.summary import print_dataset

    table = load(source, **_load_kwargs(fmt, spec, pools, pool_column, aspect, split, engine,
                                        spark_master, spark_conf))
    if not quiet():  # the exit code is the verdict
        print_dataset(table.summary(), source=table.source)


@cli.command()
@load_options
@click.argument("out_dir", metavar="OUT", type=PathArg(file_okay=False, output=True))
@click.option("--no-partition", is_flag=True, help="One flat folder instead of one per pool.")
def export(source, fmt, spec, pools, pool_column, aspect, split, engine, spark_master, spark_conf,
           out_dir, no_partition):
    """Write SOURCE's canonical table to OUT/judgments/ (Parquet, one folder per pool) and
    OUT/spec.yaml, which reads it back exactly, with either engine:
    annotation-audit run OUT/judgments --spec OUT/spec.yaml --engine spark"""
    from .export import DATA_DIR, SPEC_FILE, export_table
    from .ingest import load
    from .outputs import MANIFEST, find_inputs, guard_folder, verify_inputs

    inputs = find_inputs(source, spec=spec, pools=pools, format=fmt)
    guard_folder(out_dir, inputs, replace=False, names=(DATA_DIR, SPEC_FILE, MANIFEST))
    verify_inputs(inputs)
    table = load(source, **_load_kwargs(fmt, spec, pools, pool_column, aspect, split, engine,
                                        spark_master, spark_conf))
    paths = export_table(table, out_dir, partition_by_pool=not no_partition, inputs=inputs)
    dropped = sum(int(d["n"]) for d in table.info.get("dropped", []))
    kept = (f"; the {dropped:,} judgment(s) that reading SOURCE dropped are counted in its "
            "dropped_before_export" if dropped else "")
    if not quiet():
        click.echo(f"wrote {len(table.frame):,} judgments to {paths['data']} and "
                   f"{paths['spec']}{kept}")


@cli.command()
@load_options
@click.option("--out", type=PathArg(file_okay=False, output=True),
              help="Write OUT/dataset_card.md (and OUT/manifest.json), replacing OUT's files.")
@click.option("--card", "card_path", type=PathArg(dir_okay=False, output=True),
              help="Write, or update in place between its markers, this Markdown card "
                   "(*.md or *.markdown).")
@click.option("--default-creator", default="expert-generated", show_default=True,
              type=click.Choice(["found", "crowdsourced", "expert-generated", "machine-generated",
                                 "no-annotation", "other"]),
              help="annotations_creators kind of a pool whose name does not say crowd or expert.")
@click.option("--creator", "creators", multiple=True, metavar="POOL=KIND",
              help="annotations_creators kind of one pool (repeatable).")
@click.option("--seed", type=SEED, default=0, show_default=True, help=_SEED_HELP)
@click.option("--bootstrap", "n_bootstrap", type=RESAMPLES, default=1000,
              show_default=True, help=_RESAMPLES_HELP)
@card_meta_options
def card(source, fmt, spec, pools, pool_column, aspect, split, engine, spark_master, spark_conf,
         out, card_path, default_creator, creators, seed, n_bootstrap):
    """Audit SOURCE and write only its Hugging Face dataset card (kept hand edits outside markers)."""
    from .outputs import find_inputs, guard_file, guard_folder, write_card_set
    from .pipeline import run as run_audit
    from .report import write_card_file
    from .report.hub_tags import parse_creators

    if (out is None) == (card_path is None):
        raise click.UsageError("give exactly one of --out DIR or --card PATH")
    overrides = parse_creators(creators)
    inputs = find_inputs(source, spec=spec, pools=pools, format=fmt)
    if out is not None:
        guard_folder(out, inputs)
    else:
        real_card = guard_file(card_path, inputs, option="--card", card=True)
    from .progress import steps

    with steps(enabled=not quiet()) as step:
        results = run_audit(source, seed=seed, n_bootstrap=n_bootstrap,
                            card=_card_flags(), step=step,
                            **_load_kwargs(fmt, spec, pools, pool_column, aspect, split, engine,
                                           spark_master, spark_conf))
    from .results import json_form

    results = json_form(results)
    options = {"creators": overrides, "default_creator": default_creator}
    if out is not None:
        path = write_card_set(results, out, inputs=inputs, **options)
    else:
        write_card_file(results, real_card, card_shown=card_path, **options)
        path = card_path
    if not quiet():
        click.echo(f"card: {path}")


class CheckCommand(AuditCommand):
    """``check``: a usage error (an unknown option, a bad value) is recorded in ``--junit`` and
    by ``--github`` too, like every error after parsing (:func:`_check_error`), so a CI job whose
    workflow passes a wrong option shows an errored test, not a missing report."""

    def make_context(self, info_name, args, parent=None, **extra):
        argv = [str(a) for a in args]
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as err:
            try:
                _check_usage_error(err, argv)
            except Exception as extra_err:  # noqa: BLE001 - never hide the usage error itself
                click.echo(f"warning: could not record the error ({_detail(extra_err)})",
                           err=True)
            raise


@cli.command(cls=CheckCommand)
@load_options
@click.option("--suite", "suite_path", required=True, type=PathArg(dir_okay=False),
              help="Expectation suite (YAML), e.g. expectations/preference.yaml.")
@click.option("--baseline", type=SOURCE, help="Previous version of the dataset (dataset-PR mode): report what "
              "changed and run the suite's baseline claims.")
@click.option("--junit", "junit_path", type=PathArg(dir_okay=False, output=True),
              help="Write JUnit XML here: one test case per expectation.")
@click.option("--json", "json_path", type=PathArg(dir_okay=False, output=True),
              help="Write great_expectations' validation result (JSON) here.")
@click.option("--github", is_flag=True,
              help="Print GitHub Actions ::error annotations pointing at the suite's lines "
                   "(paths relative to the repository root), and append a Markdown summary to "
                   "$GITHUB_STEP_SUMMARY when it is set.")
@click.option("--out", type=PathArg(file_okay=False, output=True),
              help="Write what run --out writes (results.json, report.html, dataset card), "
                   "results.json with the pass/fail table (expectations) and, with --baseline, "
                   "what changed (baseline).")
@click.option("--seed", type=SEED, default=0, show_default=True, help=_SEED_HELP)
@click.option("--bootstrap", "n_bootstrap", type=RESAMPLES, default=1000,
              show_default=True, help=_RESAMPLES_HELP)
@audit_options
@click.option("--profile", "profile", is_flag=True,
              help="Time each stage and sample its peak memory; write them as results.json "
                   "meta.profile and print them on standard error (timings differ between "
                   "runs, so does the run id).")
@click.pass_context
def check(ctx, source, fmt, spec, pools, pool_column, aspect, split, engine, spark_master,
          spark_conf, suite_path, baseline, junit_path, json_path, github, out, seed, n_bootstrap,
          min_per_pool, unit, profile):
    """Check SOURCE against an expectation suite: exit 0 when every expectation holds, 1 when
    any fails, 2 on bad input or a bad suite, 3 on an internal error. With --junit / --github,
    a run that ends in 2 or 3 is recorded there too, as an error (not a failed expectation);
    so is a bad option."""
    from pathlib import Path

    from .escape.terminal import text as terminal_text
    from .suites import github as gh
    from .suites.baseline import text_lines as baseline_lines
    from .suites.check import check as run_check
    from .suites.junit import junit_xml
    from .suites.outcomes import text_lines
    from .suites import load_suite
    from .outputs import find_inputs, guard_file, guard_folder, write_text
    from .progress import steps
    from .results import dumps

    state = {"suite": Path(suite_path).stem, "junit": None, "summary": None}
    ctx.meta[ON_ERROR] = lambda err, code, message: _check_error(
        err, code, message, suite=state["suite"], junit_path=state["junit"], github=github,
        summary=state["summary"], argv=ctx.meta.get(ARGV, []))
    inputs = find_inputs(source, spec=spec, pools=pools, suite=suite_path, baseline=baseline,
                         format=fmt)
    out_folders = [out] if out else []
    if junit_path:  # first: a run refused below is still recorded there
        state["junit"] = guard_file(junit_path, inputs, option="--junit", out_folders=out_folders)
    if github:
        state["summary"] = _step_summary(inputs, out_folders=out_folders)
    if out:
        guard_folder(out, inputs)
    json_real = guard_file(json_path, inputs, option="--json", out_folders=out_folders) \
        if json_path else None
    if json_real is not None and json_real == state["junit"]:
        raise click.UsageError(f"--junit and --json are the same file {json_path}")
    suite = load_suite(suite_path)
    state["suite"] = suite.name
    shown = gh.repo_path(suite_path)  # as GitHub attaches annotations (and JUnit readers)
    timer = _profile(profile)
    with steps(enabled=not quiet(ctx)) as step:
        outcome = run_check(source, suite=suite, baseline=baseline, seed=seed,
                            n_bootstrap=n_bootstrap, min_per_pool=min_per_pool, unit=unit,
                            out=out, step=step, profile=timer,
                            load_options=_load_kwargs(fmt, spec, pools, pool_column, aspect,
                                                      split, engine, spark_master, spark_conf))
    if "baseline" in outcome.results:
        click.echo("\n".join(baseline_lines(outcome.results["baseline"])))
    click.echo("\n".join(text_lines(outcome.results["expectations"])))
    if out:
        click.echo(f"report: {terminal_text(str(Path(out) / 'report.html'))}")
    if state["junit"]:
        write_text(state["junit"], junit_xml(outcome.validation_json, path=shown))
    if json_real:
        write_text(json_real, dumps(outcome.validation_json))
    if github:
        for line in gh.annotations(outcome.validation_json, path=shown):
            click.echo(line)
        gh.append_step_summary(gh.step_summary(
            outcome.results["expectations"], baseline=outcome.results.get("baseline"),
            path=shown, report=str(Path(out) / "report.html") if out else None),
            environ=_summary_env(state["summary"]))
    _print_profile(timer)
    ctx.exit(0 if outcome.success else 1)


def _step_summary(inputs, *, out_folders=()):
    """``$GITHUB_STEP_SUMMARY`` (``check --github`` appends to it), resolved, or None when
    unset; refused like ``--junit`` (:func:`audit.outputs.guard_file`) when it is an input or
    lies in an input or output folder: pointed at the source or the suite, it was appended to."""
    import os

    from .outputs import guard_file

    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return None
    return guard_file(target, inputs, option="$GITHUB_STEP_SUMMARY", out_folders=out_folders)


def _summary_env(summary) -> dict:
    """The environment :func:`audit.suites.github.append_step_summary` reads: the guarded
    step summary, or none."""
    return {"GITHUB_STEP_SUMMARY": str(summary)} if summary is not None else {}


def _named_paths(argv: list[str], *, skip: int = -1, skip_option: str | None = None) -> list:
    """Every path the raw arguments name that exists (``find_inputs(extra=...)``'s form), but
    the argument at index ``skip`` and the value of ``skip_option=VALUE``: what an output
    written before (or without) parsing must not be."""
    from pathlib import Path

    named = [("argument", a) for i, a in enumerate(argv)
             if i != skip and not a.startswith("-") and Path(a).exists()]
    named += [("argument", a.partition("=")[2]) for a in argv
              if a.startswith("--") and "=" in a
              and not (skip_option and a.startswith(f"{skip_option}="))
              and Path(a.partition("=")[2]).exists()]
    return named


def _check_error(err, code, message, *, suite, junit_path, github, summary=None,
                 argv=()) -> None:
    """``check``'s record of a run that could not finish (exit 2 or 3): a JUnit file with one
    ``<error>`` test case, and a GitHub ``::error`` (at the suite line for a bad suite).
    ``summary``: the step summary guarded by the run; when the run did not get that far, it is
    guarded here against the paths ``argv`` names, and left unwritten when refused."""
    from .suites import github as gh
    from .suites.junit import junit_error_xml
    from .errors import SuiteFileError
    from .outputs import write_text

    text = message.removeprefix("error: ")
    file = line = None
    if isinstance(err, SuiteFileError):
        file, line, title, text = err.path, err.line, "bad expectation suite", err.message
    elif isinstance(err, click.UsageError):
        title = "bad option"
    elif code == 2:
        file = getattr(err, "path", None) or getattr(err, "filename", None)
        title = "bad input"
    else:
        title = f"internal error (a bug in {PROG})"
    file = gh.repo_path(file) if file is not None else None
    if junit_path:  # resolved and checked against the inputs: never written over one
        write_text(junit_path,
                   junit_error_xml(message.removeprefix("error: "), suite=suite,
                                   name=f"{PROG} check: {title}", error_type=type(err).__name__,
                                   file=file, line=line))
    if github:
        click.echo(gh.command("error", text, file=file, line=line, title=title))
        if summary is None:
            from .outputs import find_inputs

            try:
                summary = _step_summary(find_inputs(extra=_named_paths(list(argv))))
            except AuditError:  # an input, or a folder: the error says so, if it was that
                summary = None
        gh.append_step_summary(gh.error_summary(text, title=title, file=file, line=line),
                               environ=_summary_env(summary))


def _check_usage_error(err: click.UsageError, argv: list[str]) -> None:
    """Record a ``check`` usage error in the ``--junit`` file and for ``--github``, read from
    the raw arguments (parsing failed). The JUnit file is refused (nothing written) when it is
    any path the arguments name, or lies in a folder they name: an input is never written."""
    from pathlib import Path

    from .outputs import find_inputs, guard_file

    junit = suite = None
    junit_at = -1
    github = False
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        name, eq, value = arg.partition("=")
        if name in ("--junit", "--suite"):
            value = value if eq else (argv[i + 1] if i + 1 < len(argv) else None)
            if name == "--junit":
                junit, junit_at = value, (i if eq else i + 1)
            else:
                suite = value
        github = github or arg == "--github"
    if junit == "-":  # refused by --junit itself: no file of that name is written either
        junit = None
    if junit is None and not github:
        return
    junit_real = None
    if junit:
        named = _named_paths(argv, skip=junit_at, skip_option="--junit")
        junit_real = guard_file(junit, find_inputs(extra=named), option="--junit")
    _check_error(err, 2, f"error: {err.format_message()}",
                 suite=Path(suite).stem if suite else "check", junit_path=junit_real,
                 github=github, argv=argv)


def _numbers(ctx, param, text: str | None) -> list[float] | None:
    """A comma-separated list of finite numbers >= 0 (``--gaps``), checked at parse time."""
    import math

    if text is None:
        return None
    try:
        values = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise click.BadParameter(f"expected comma-separated numbers, got {text!r}",
                                 ctx=ctx, param=param) from None
    bad = [v for v in values if not math.isfinite(v) or v < 0]
    if bad:
        raise click.BadParameter(f"every value must be a finite number >= 0; got {bad[0]!r}",
                                 ctx=ctx, param=param)
    if not values:
        raise click.BadParameter(f"give at least one number; got {text!r}", ctx=ctx,
                                 param=param)
    return values


def _sizes(ctx, param, text: str) -> list[int]:
    """``--sizes``: comma-separated whole numbers in 2..MAX_BOARD_SIZE, checked at parse time."""
    sizes = []
    for part in (x.strip() for x in text.split(",")):
        if not part:
            continue
        if not part.isdigit() or not 2 <= int(part) <= MAX_BOARD_SIZE:
            raise click.BadParameter(f"every size must be a whole number from 2 to "
                                     f"{MAX_BOARD_SIZE:,}; got {part!r}", ctx=ctx, param=param)
        sizes.append(int(part))
    if not sizes:
        raise click.BadParameter("give at least one size", ctx=ctx, param=param)
    return sizes


@cli.command()
@click.option("--perturbation-sd", type=_Finite(min=0), required=True,
              help="SD of the per-model score perturbation (e.g. a pool switch's shift SD), on "
                   "the scale of the gaps.")
@click.option("--closest-gap", type=_Finite(min=0),
              help="One gap: every neighbour gap equal to it. With --sizes 2 this is a "
                   "two-model board, i.e. the closest pair alone.")
@click.option("--gaps", callback=_numbers,
              help="Measured gaps between neighbours, comma-separated; each simulated board "
                   "draws its gaps from them with replacement.")
@click.option("--score-range", type=_Finite(min=0),
              help="Measured score range; gaps are spread evenly over it instead.")
@click.option("--sizes", default="6,10,20,50,100", show_default=True, callback=_sizes,
              help=f"Leaderboard sizes to simulate, comma-separated (2 to {MAX_BOARD_SIZE:,}).")
@click.option("--approximation", type=click.Choice(["exact", "independent-adjacent", "both"]),
              default="exact", show_default=True,
              help="exact: the joint simulation; independent-adjacent: each neighbour pair "
                   "swaps independently with Phi(-gap / (sqrt(2) SD)), P = 1 - prod(1 - p_k); "
                   "both: side by side.")
@click.option("--sd-models", type=click.IntRange(2, MAX_BOARD_SIZE),
              help="Number of models the SD was measured over (degrees of freedom = this - 1): "
                   "adds a 95% interval over the SD's uncertainty.")
@click.option("--sd-df", type=_Finite(min=0, min_open=True),
              help="Degrees of freedom of the SD, instead of --sd-models (an SD pooled over "
                   "every pair of P pools ranking M models: (M - 1)(P - 1)).")
@click.option("--sims", "n_sims", type=click.IntRange(1, MAX_SIMS), default=20000,
              show_default=True, help=f"Simulated leaderboards per size (1 to {MAX_SIMS:,}).")
@click.option("--seed", type=SEED, default=0, show_default=True, help=_SEED_HELP)
@click.option("--json", "json_path", type=PathArg(dir_okay=False, output=True),
              help="Also write the inputs and every row (JSON) here.")
@click.option("--max-memory", type=MemorySize(), metavar="SIZE|N%", expose_value=False,
              callback=_set_max_memory,
              help="Memory the simulation may use (8G, 75%); default 50% of the memory "
                   "available.")
def simulate(perturbation_sd, closest_gap, gaps, score_range, sizes, approximation, sd_models,
             sd_df, n_sims, seed, json_path):
    """Probability that a leaderboard of each size is reshuffled by a perturbation.

    Give the numbers a paper states: the perturbation SD, one of --closest-gap / --gaps /
    --score-range, and the sizes. True scores are built from the gaps, every model's score gets
    independent N(0, SD) noise, and a board is displaced when any two models come out in the
    wrong order. --approximation both shows the exact simulation next to the
    independent-adjacent shortcut, so a published number can be traced to one of them; they
    agree for two models and the exact one is at least as large beyond, because neighbouring
    pairs share a model. With --sd-models (or --sd-df) each row also gets the probability at
    both ends of the SD's 95% chi-square interval.
    """
    from .budget import check_simulation
    from .rank import independent_adjacent, sd_interval
    from .rank import simulate as run_simulation
    from .rank.simulation import MODEL
    from .report.summary import print_simulation

    given = [name for name, v in (("--closest-gap", closest_gap), ("--gaps", gaps),
                                  ("--score-range", score_range)) if v is not None]
    if len(given) != 1:
        raise click.UsageError("give exactly one of --closest-gap (one gap), --gaps (resampled) "
                               "or --score-range (even)" + (f"; got {', '.join(given)}"
                                                            if given else ""))
    if sd_models is not None and sd_df is not None:
        raise click.UsageError("give at most one of --sd-models and --sd-df")
    df = float(sd_models - 1) if sd_models is not None else sd_df
    json_real = None
    if json_path:
        from .outputs import find_inputs, guard_file

        json_real = guard_file(json_path, find_inputs(), option="--json")
    gap_model = "even" if score_range is not None else "resample"
    kwargs = dict(sizes=sizes, perturbation_sd=perturbation_sd,
                  gaps=[closest_gap] if closest_gap is not None else gaps,
                  score_range=score_range, gap_model=gap_model, sd_df=df)
    exact = adjacent = []
    if approximation in ("exact", "both"):
        check_simulation(sizes, n_sims)
        exact = run_simulation(n_sims=n_sims, seed=seed, **kwargs)
    if approximation in ("independent-adjacent", "both"):
        adjacent = independent_adjacent(**kwargs)
    result = {"model": MODEL, "inputs": {**kwargs, "approximation": approximation,
                                         "n_sims": n_sims, "seed": seed},
              "perturbation_sd_ci95": (sd_interval(perturbation_sd, df) if df is not None
                                       else [None, None]),
              "exact": exact, "independent_adjacent": adjacent}
    print_simulation(result)
    if json_real is not None:
        from .outputs import write_text
        from .results import dumps

        write_text(json_real, dumps(result))


#: The fewest simulated boards a plan takes (:func:`audit.planning.plan_block` refuses fewer).
MIN_PLAN_SIMS = 100


def _targets():
    """``--target``'s choices, :data:`audit.advice.TARGETS` (the package imports nothing
    heavy: its functions import numpy when called)."""
    return TARGETS


def next_options(f):
    """What ``plan`` and ``advise`` share with ``run``: the audit's seed, resamples, counting
    and output options, so their figures are ``run``'s."""
    opts = [
        click.option("--out", type=PathArg(file_okay=False, output=True),
                     help="Write what run --out writes (results.json with this block, the report "
                          "and card) here, as one set."),
        click.option("--no-report", "no_report", is_flag=True,
                     help="With --out, write results.json (and the command's own files) only."),
        click.option("--seed", type=SEED, default=0, show_default=True, help=_SEED_HELP),
        click.option("--bootstrap", "n_bootstrap", type=RESAMPLES, default=1000,
                     show_default=True, help=_RESAMPLES_HELP),
    ]
    f = audit_options(f)
    for opt in reversed(opts):
        f = opt(f)
    return f


@cli.command()
@load_options
@click.option("--models", default="10,20", show_default=True, callback=_sizes,
              help=f"Leaderboard sizes to plan for, comma-separated (2 to {MAX_BOARD_SIZE:,}).")
@click.option("--stay", type=_Finite(0, 1, min_open=True, max_open=True), default=0.9,
              show_default=True,
              help="The probability that no model is displaced, strictly between 0 and 1.")
@click.option("--pool", help="Plan for this human pool: its leaderboard, its labels row and "
                             "its ceilings against the other pools (default: every pool).")
@click.option("--budget", type=click.IntRange(min=1),
              help="Judgments per pool you can pay for: also the best P(stay) within it.")
@click.option("--sims", "n_sims", type=click.IntRange(MIN_PLAN_SIMS, MAX_SIMS), default=20000,
              show_default=True, help=f"Simulated leaderboards per size ({MIN_PLAN_SIMS} to "
                                      f"{MAX_SIMS:,}).")
@next_options
def plan(source, fmt, spec, pools, pool_column, aspect, split, engine, spark_master, spark_conf,
         models, stay, pool, budget, n_sims, out, no_report, seed, n_bootstrap, min_per_pool,
         unit):
    """How many items (and judgments per item, per pool) a leaderboard of each --models size
    needs to keep its order with probability --stay, or that no size can: the pool effect does
    not shrink with more items. Audits SOURCE as run does and prints the answer (results.json
    'plan' with --out)."""
    from .budget import check_simulation
    from .pipeline import plan as run_plan
    from .progress import steps
    from .report.next_terminal import print_plan
    from .results import json_form

    check_simulation(models, n_sims, what="the plan's simulation", sizes_option="--models")
    with steps(enabled=not quiet()) as step:
        results = run_plan(source, models=models, stay=stay, pool=pool, budget=budget,
                           n_sims=n_sims, out=out, seed=seed, n_bootstrap=n_bootstrap,
                           min_per_pool=min_per_pool, unit=unit, report=not no_report,
                           step=step, **_load_kwargs(fmt, spec, pools, pool_column, aspect,
                                                     split, engine, spark_master, spark_conf))
    print_plan(json_form(results), out=out)


@cli.command()
@load_options
@click.option("--budget", type=click.IntRange(min=1), default=50, show_default=True,
              help="Most items to send back.")
@click.option("--target", type=click.Choice(_targets()),
              help="What re-annotation should improve: the leaderboard's closest pairs, or the "
                   "items' labels (default: leaderboard when the data compares models and "
                   "--unit majority scores them, else labels).")
@click.option("--more", type=click.IntRange(1, MORE_MAX), default=3, show_default=True,
              help=f"Annotators each re-annotated item gets, 1 to {MORE_MAX} (the expected "
                   "reduction assumes it).")
@click.option("--csv", "as_csv", is_flag=True,
              help="Print the advised items as CSV (spreadsheet-safe, as OUT/advice.csv) "
                   "instead of the answer; on a terminal or in a CI log, shown inert.")
@next_options
def advise(source, fmt, spec, pools, pool_column, aspect, split, engine, spark_master,
           spark_conf, budget, target, more, as_csv, out, no_report, seed, n_bootstrap,
           min_per_pool, unit):
    """Which items to send back for annotation: at most --budget items, ranked by the expected
    reduction of the closest pairs' swap probability (leaderboard) or of the label error
    (labels), each with its reasons. Audits SOURCE as run does and prints the answer; with
    --out also OUT/advice.csv and OUT/advice.parquet for an annotation tool."""
    from .advice import advise_frame
    from .pipeline import advise as run_advise
    from .progress import steps
    from .report.next_terminal import print_advice
    from .results import json_form

    frames = []
    with steps(enabled=not quiet()) as step:
        results = run_advise(
            source, budget=budget, target=target, more=more, out=out, seed=seed,
            n_bootstrap=n_bootstrap, min_per_pool=min_per_pool, unit=unit,
            report=not no_report, step=step,
            after=(lambda table, res: frames.append(advise_frame(table, res["advise"])))
            if as_csv else None,
            **_load_kwargs(fmt, spec, pools, pool_column, aspect, split, engine, spark_master,
                           spark_conf))
    if as_csv:
        from .report.advice_table import print_csv

        print_csv(frames[0])
    else:
        print_advice(json_form(results), out=out)


@cli.command()
def schema():
    """Print the JSON Schema of results.json (draft 2020-12): every block and key, its type and
    what it means, generated from the result contract (audit.contract.results) that every
    written results.json is checked against. docs/results.schema.json is a copy."""
    from .contract.results import schema_text

    click.echo(schema_text(), nl=False)


def main(argv=None):
    """Console-script entry point."""
    from .allocator import tune

    tune()
    _standard_fds()
    _encodable_streams()
    return cli.main(args=argv, prog_name="annotation-audit")


def _standard_fds() -> None:
    """Open /dev/null on standard input, output or error when the process started with one
    closed (``>&-``, some service managers): else the first file opened (a results.json being
    written) would take that number, and whatever writes to it (a library, a child process such
    as Spark's JVM) would write into the file. Python itself writes nothing there: its stream
    is None."""
    import os

    for fd, flags in ((0, os.O_RDONLY), (1, os.O_WRONLY), (2, os.O_WRONLY)):
        try:
            os.fstat(fd)
        except OSError:
            try:
                opened = os.open(os.devnull, flags)
            except OSError:
                continue
            if opened != fd:
                os.dup2(opened, fd)
                os.close(opened)


def _encodable_streams() -> None:
    """Let standard output and error show any text in any encoding. Model names, pools, ids
    and our own '·' and '–' are Unicode; on a stream that is not UTF-8 (``LC_ALL=C`` with
    ``PYTHONUTF8=0``, ``PYTHONIOENCODING=ascii``, a Latin-1 locale, Windows redirected to a file)
    a character the encoding lacks raised UnicodeEncodeError, exit 3. Such characters are now
    written as Python escapes (``\\u043c``), as Python's own standard error does."""
    import codecs

    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None)
        try:
            utf = codecs.lookup(encoding).name.startswith("utf") if encoding else True
        except LookupError:
            utf = False
        # strict, or surrogateescape (Python's choice in the C locale): both raise on '·'
        if not utf and getattr(stream, "errors", None) in ("strict", "surrogateescape"):
            try:
                stream.reconfigure(errors="backslashreplace")
            except (AttributeError, ValueError, OSError):  # not a TextIOWrapper, or closed
                pass


if __name__ == "__main__":
    sys.exit(main())
