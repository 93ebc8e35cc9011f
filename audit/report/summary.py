"""The terminal summary: a pure function of the result dict, rendered with rich.

Dataset strings (the dataset's name, pool and model names, paths) are shown, never obeyed: every
line and table cell is a rich :class:`~rich.text.Text` (never parsed as markup, so ``[/x]`` in a
name prints as ``[/x]``) made inert by :func:`audit.escape.terminal.text` (an ESC byte prints as
``\\x1b``, a line break as ``\\n``, workflow-command syntax is defused). The consoles print
without wrapping lines or reading emoji codes (``soft_wrap``, ``emoji=False``): a word wrapped
onto a new line could begin a line that a CI runner reads as a workflow command, and ``:smile:``
in a name is text.
"""

from __future__ import annotations

import contextlib
import time

from rich.console import Console
from rich.table import Table as _RichTable
from rich.text import Text

from ..escape import terminal
from ..format import (number, p_bound, p_is, p_value, percent, percent_with_interval,
                      points_with_interval, probability, standard_error, with_interval)
from ..metrics import keys
from .prose import interval_note
from .read import (STAT_NAMES, against_null, at_floor, displacement, judge_rows, simulation_row,
                   swap, swap_key, within_test)


def _console() -> Console:
    return Console(highlight=False, soft_wrap=True, emoji=False)


def _text(value, style: str = "") -> Text:
    """``value`` as inert rich text (module docstring)."""
    return Text(terminal.text(value), style=style)


class Table(_RichTable):
    """A rich table whose title, headers and cells are inert text (:func:`_text`), never markup
    (a str title is read as markup by rich), and whose columns fold a name too long for them
    onto the next lines of its cell rather than cut it with an ellipsis (on a CI log's 80
    columns, ``crowdworkers-recruited-2024-batch-1`` and ``-batch-2`` both read
    ``crowdworkers…``); a folded line starts inside the table's border, so it cannot start a
    workflow command. A table drawn without borders (``box=None``) keeps the
    ellipsis: there a word folded at ``::`` would start a line with it. A cell holds at most
    :data:`MAX_CELL` characters (the rest said as a count), so that a 100,000-character name is
    not thousands of folded lines."""

    def __init__(self, *headers, **kwargs):
        for key in ("title", "caption"):
            if isinstance(kwargs.get(key), str):
                kwargs[key] = _text(kwargs[key])
        super().__init__(**kwargs)
        overflow = "fold" if self.box is not None else "ellipsis"
        for header in headers:
            self.add_column(_cell(header), overflow=overflow)

    def add_row(self, *cells, **kwargs):
        super().add_row(*(_cell(c) if isinstance(c, str) else c for c in cells), **kwargs)


#: Characters a table cell shows (after escaping); results.json holds every name whole.
MAX_CELL = 300


def _cell(value) -> Text:
    """:func:`_text` of a table cell, cut to :data:`MAX_CELL` characters."""
    text = _text(value)
    if len(text.plain) > MAX_CELL:
        text = Text(f"{text.plain[:MAX_CELL]}… ({len(text.plain):,} characters)", style=text.style)
    return text


def _entry(entry: dict | None) -> str:
    """``value [lo, hi]`` for a ``{value, ci95}`` entry (:func:`audit.format.with_interval`);
    ``-`` when there is no entry."""
    if not entry:
        return "-"
    return with_interval(entry.get("value"), entry.get("ci95"))


@contextlib.contextmanager
def progress_steps(enabled: bool = True):
    """Yield ``step(name)``: a context manager showing a spinner and elapsed time for each step.

    rich draws it only on a terminal (stderr), so logs and CI output stay clean.
    """
    if not enabled:
        yield lambda name: contextlib.nullcontext()
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    console = Console(stderr=True, emoji=False, soft_wrap=True)
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=console, transient=True) as progress:
        @contextlib.contextmanager
        def step(name: str):
            task = progress.add_task(terminal.markup(name), total=None)
            t0 = time.perf_counter()
            try:
                yield
            finally:
                progress.remove_task(task)
                if console.is_terminal and time.perf_counter() - t0 > 2:
                    console.print(_text(f"{name}: {time.perf_counter() - t0:.1f} s", "dim"))
        yield step


def print_dataset(ds: dict, *, source: str | None = None, console: Console | None = None) -> None:
    console = console or _console()
    console.print(Text.assemble(_text(ds["name"], "bold"), "  (", _text(source or ""), ")"))
    jpi = ds.get("judgments_per_item", {})
    given = ds.get("n_annotators") is not None  # not for vote counts (dataset.annotators)
    annotators = (f"{ds['n_annotators']:,} annotators" if given else
                  f"annotators {ds.get('annotators') or 'not given'}")
    console.print(_text(f"{ds['n_items']:,} items · {ds['n_annotations']:,} judgments · "
                        f"{annotators} · label: {ds['label_kind']} · "
                        f"judgments per item {jpi.get('min')}–{jpi.get('max')}"))
    t = Table("pool", "annotators", "judgments", "items", title="pools", title_justify="left")
    for name, p in ds["pools"].items():
        t.add_row(name + (" (judge)" if p.get("judge") else ""),
                  f"{p['n_annotators']:,}" if p.get("n_annotators") is not None else
                  "not given", f"{p['n_annotations']:,}", f"{p['n_items']:,}")
    console.print(t)


def print_findings(results: dict, *, console: Console | None = None) -> None:
    """The findings (:func:`audit.report.findings.findings`), most severe first, one inert line
    each with the report section that details it; nothing when there is none."""
    from .findings import findings

    found = findings(results)
    if not found:
        return
    console = console or _console()
    console.print(_text("findings", "bold"))
    for i, f in enumerate(found, 1):
        console.print(Text.assemble(_text(f"{i}. "), _text(f.text),
                                    _text(f"  [#{f.section}]", "dim")))
    console.print()


def print_summary(results: dict, *, out=None, report: bool = True,
                  console: Console | None = None) -> None:
    """Headline figures of an audit; with ``out``, where its files are (``report=False``: only
    results.json was written)."""
    console = console or _console()
    print_findings(results, console=console)
    print_dataset(results["dataset"], source=results["meta"]["source"], console=console)
    _reliability(results.get("reliability"), console)
    _pool_disagreement(results.get("pool_disagreement"), console)
    _within_pool(results.get("within_pool"), console)
    _leaderboards(results, console)
    _judges(results.get("judge_alignment"), console)
    _expectations(results.get("expectations"), console)
    from .nextsteps import summary_lines

    for line in summary_lines(results):
        console.print(_text(line, "bold"))
    m = results["meta"]
    console.print(_text(f"seed {m['seed']} · {m['n_bootstrap']} bootstrap resamples · "
                        f"annotation-audit {m['version']}", "dim"))
    if out and report:
        console.print(_text(f"results: {out}/results.json · report: {out}/report.html · "
                            f"card: {out}/dataset_card.md"))
    elif out:
        console.print(_text(f"results: {out}/results.json"))


def _reliability(rel, console):
    if not rel:
        return
    pools = list(rel.get("by_pool", {}))
    t = Table("metric", "all humans", *pools, title="reliability (95% CI)", title_justify="left")
    shown = [m for m in keys(summary=True) if m in rel.get("overall", {})]
    for metric in shown:
        t.add_row(metric, _entry(rel["overall"].get(metric)),
                  *[_entry(rel["by_pool"][p].get(metric)) for p in pools])
    console.print(t)
    columns = [("all humans", rel.get("overall"))] + [(p, rel["by_pool"][p]) for p in pools]
    note = interval_note(columns, shown)
    if note:
        console.print(_text(note))


def _pool_disagreement(rows, console):
    """One line per pool pair and statistic: observed [95% CI], the rate expected if the pools
    were interchangeable (permutation null), the excess [95% CI] and the permutation p."""
    if not rows:
        return
    continuous = all("mean_difference" in r for r in rows)  # a continuous scale: no majorities
    t = Table("pools", "statistic (items)", "observed [95% CI]", "null", "excess [95% CI]",
              "p (perm.)",
              title=("pool comparison (per-item pool means)" if continuous else
                     "pool disagreement (items where each pool is unanimous)")
              + "; null = expected if the pools were interchangeable",
              title_justify="left")
    shown = set()  # (pair, statistic, value): a coarser granularity repeating it is left out
    for r in rows:
        ci = r.get("ci95") or {}
        pools = f"{r['pool_a']} vs {r['pool_b']}" + (
            f" ({r['granularity']})" if r.get("granularity") not in (None, "label") else "")
        if continuous:
            n = f" ({r['n_items_shared']:,})"
            t.add_row(pools, "mean b - a" + n,
                      with_interval(r["mean_difference"], ci.get("mean_difference")),
                      "-", "-", "-")
            t.add_row(pools, "mean |b - a|" + n,
                      with_interval(r["mean_abs_difference"], ci.get("mean_abs_difference")),
                      *_null_cells(against_null(r, "mean_abs_difference"), rate=False))
            continue
        for stat in ("majority_differs_rate", "winner_reversed_rate"):
            key = (r["pool_a"], r["pool_b"], stat, r.get(stat))
            if (stat == "winner_reversed_rate" and r.get(stat) is None) or key in shown:
                continue
            shown.add(key)
            n = against_null(r, stat)
            t.add_row(pools, f"{STAT_NAMES[stat]} ({r['n_items_both_unanimous']:,})",
                      percent_with_interval(n["observed"], n["ci95"]), *_null_cells(n))
    console.print(t)


def _null_cells(n: dict | None, *, rate: bool = True) -> tuple[str, str, str]:
    """The null's mean, the excess [95% CI] (a ``rate``'s in percentage points) and the
    permutation p ± MC s.e."""
    if n is None or (n["null"] is None and n["p"] is None):
        return "-", "-", "-"
    if n["not_defined"]:
        return "not defined", "-", "no test"
    if rate:
        excess = points_with_interval(n["excess"], n["excess_ci95"], unit="pt")
        null = percent(n["null"])
    else:
        excess = with_interval(n["excess"], n["excess_ci95"])
        null = number(n["null"])
    return null, excess, _p(n["p"], n["mc_se"], n["n_permutations"])


def _p(p, se, n_permutations=None) -> str:
    """A Monte-Carlo p-value with its s.e., or its bound when it is the smallest the
    permutations resolve."""
    if at_floor(p, n_permutations):
        return f"<= {p_bound(n_permutations)}"
    return p_value(p) + (f" ± {number(se, 4)}" if se is not None else "")


def _within_pool(rows, console):
    """Per pool: disagreement, the within-item permutation test's p ± MC s.e. (the annotator
    effect), the classical reference tests and the effect size."""
    if not rows:
        return
    spread = all("within_item_sd" in r for r in rows)  # a continuous scale
    t = Table("pool", "within-item SD" if spread else "items with a disagreement",
              "annotator effect p (permutation)", "reference tests", "effect size",
              title="within-pool variability", title_justify="left")
    for r in rows:
        w = within_test(r)
        refs = [f"{x['name']} {p_is(x['p'])}" for x in w["reference"] if x["p"] is not None]
        if w["pooled"] and w["pooled"]["p"] is not None:
            refs.append(f"{w['pooled']['name']} {p_is(w['pooled']['p'])}")
        if spread:
            value = with_interval(r.get("within_item_sd"), r.get("within_item_sd_ci95"))
        else:
            value = percent_with_interval(r.get("disagreement_rate"), r.get("ci95"))
        t.add_row(r["pool"], value,
                  _p(w["p"], w["mc_se"], w["n_permutations"]), "; ".join(refs) or "-",
                  f"{number(w['effect'])} ({w['effect_name']})")
    console.print(t)


def _leaderboards(results, console):
    boards = results.get("leaderboards") or {}
    if not boards:
        return
    pools = list(boards)
    models = [row["model"] for row in sorted(boards[pools[0]], key=lambda r: r["rank"])]
    t = Table("model", *pools, title="leaderboards: score [95% CI] (rank)", title_justify="left")
    by_pool = {p: {row["model"]: row for row in boards[p]} for p in pools}
    for m in models:
        cells = []
        for p in pools:
            row = by_pool[p].get(m)
            cells.append("-" if row is None else
                         f"{with_interval(row['score'], row.get('ci95'))} ({row['rank']})")
        t.add_row(m, *cells)
    console.print(t)
    st = results.get("stability") or {}
    for pp in st.get("pool_pairs", []):
        console.print(_text(f"pool switch {pp['pool_a']} -> {pp['pool_b']}: Kendall tau "
                            f"{number(pp.get('kendall_tau'))}, {pp.get('n_displaced')} model(s) "
                            f"displaced, score shift SD {number(pp.get('score_shift_sd'), 4)}"))
    bdp = displacement(st)
    if bdp:
        console.print(_text("bootstrap displacement probability (± MC s.e.): " + ", ".join(
            f"{p} {probability(v, 3)}" + (f" ± {standard_error(se)}" if se is not None else "")
            for p, v, se in bdp)))
    for r in sorted(st.get("closest_pairs") or [], key=swap_key)[:3]:
        s = swap(r)
        console.print(_text(
            f"closest pair in {r.get('pool')}: {r.get('model_hi')} / {r.get('model_lo')} (gap "
            f"{number(r.get('gap'), 4)}) swap probability {probability(s['bootstrap'], 3)}"
            + (f" ± {number(s['mc_se'])}" if s["mc_se"] is not None else "") + " bootstrap"
            + (f", {probability(s['closed_form'], 3)} closed form" if s["closed_form"] is not None
               else "")))
    sim = [simulation_row(r) for r in st.get("simulation") or []]
    if sim:
        console.print(_text(
            "P(at least one model displaced) by leaderboard size [95% interval over the SD's "
            "uncertainty]: " + ", ".join(
                f"{r['n_models']}: {probability(r['p'])}"
                + (f" [{probability(r['interval95'][0])}, {probability(r['interval95'][1])}]"
                   if r["interval95"] else "") for r in sim)))
    fl = st.get("flipped_items") or {}
    if fl.get("count") is not None:
        console.print(_text(f"items whose winner flips between pools: {fl['count']:,}"))


def _judges(rows, console):
    """Per judge and human pool: agreement with one annotator of the pool [95% CI], the pool's
    own ceiling and the majority agreement; then the verdict."""
    for r in rows or []:
        for a in judge_rows(r):
            line = (f"judge {r.get('judge')} vs {a['pool']}: one annotator "
                    f"{with_interval(a['agreement'], a['ci95'])} (n {a['n']})")
            if a["ceiling"] is not None:
                line += f", ceiling {with_interval(a['ceiling'], a['ceiling_ci95'])}"
            if a["majority"] is not None:
                line += (f", majority "
                         f"{with_interval(a['majority'], a['majority_ci95'])}")
            console.print(_text(line))
        console.print(_text(f"judge {r.get('judge')}: {r.get('verdict', '')}"))


def _expectations(exp, console):
    if not exp:
        return
    console.print(_text(f"expectations: {exp.get('n_passed', 0)} passed, "
                        f"{exp.get('n_failed', 0)} failed"))


def print_simulation(result: dict, console: Console | None = None) -> None:
    """The ``simulate`` command's table: one row per size, the exact simulation (with its
    Monte-Carlo s.e.) and / or the independent-adjacent approximation side by side, each with
    its range over the SD's 95% interval when the SD's degrees of freedom were given."""
    console = console or _console()
    exact = result.get("exact") or []
    adjacent = result.get("independent_adjacent") or []
    sd_ci = result.get("perturbation_sd_ci95") or [None, None]
    inputs = result.get("inputs") or {}
    with_interval = sd_ci[0] is not None
    if with_interval:
        console.print(_text(f"perturbation SD {number(inputs.get('perturbation_sd'), 4)}, 95% "
                            f"interval [{number(sd_ci[0], 4)}, {number(sd_ci[1], 4)}] "
                            f"(chi-square, df {number(inputs.get('sd_df'), 1)})"))
    headers = ["models"]
    if exact:
        headers += ["exact", "MC s.e."] + (["exact, SD 95%"] if with_interval else [])
    if adjacent:
        headers += ["indep.-adjacent"] + (["indep., SD 95%"] if with_interval else [])
    t = Table(*headers, title="P(at least one model displaced)", title_justify="left")
    sizes = [r["n_models"] for r in exact or adjacent]
    for k, n in enumerate(sizes):
        cells = [str(n)]
        if exact:
            r = exact[k]
            cells += [probability(r["displacement_probability"], 3), standard_error(r["mc_se"], 4)]
            cells += [_interval(r)] if with_interval else []
        if adjacent:
            r = adjacent[k]
            cells += [probability(r["displacement_probability"], 3)]
            cells += [_interval(r)] if with_interval else []
        t.add_row(*cells)
    console.print(t)


def _interval(row: dict) -> str:
    lo, hi = row.get("interval95") or (None, None)
    return f"[{probability(lo, 3)}, {probability(hi, 3)}]"
