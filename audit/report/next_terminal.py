"""The ``plan`` and ``advise`` commands' answers on the terminal: one screen each.

Each is a pure function of the result's JSON form. Every dataset string (item ids, model and
pool names, item texts) is printed inert, as in the summary (:mod:`audit.report.summary`):
rich :class:`~rich.text.Text` never parsed as markup, control characters shown
(:func:`audit.escape.terminal.text`), no soft wrapping that could start a line with a
workflow command.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from ..escape import terminal
from .nextsteps import (
    advice_rows,
    advise_sentences,
    advised,
    label_rows,
    plan_rows,
    plan_sentences,
)
from .summary import Table

#: Advised items listed as a table; the ids of the rest follow on one wrapped line.
TABLE_ROWS = 10
#: The reasons as the terminal's narrow table names them (the report and advice.csv keep the
#: keys of :data:`audit.advice.advise.REASONS`).
SHORT = {"pools_opposed": "pools opposed", "decides_close_pair": "close pair",
         "uncertain_label": "uncertain"}


def _console() -> Console:
    return Console(highlight=False, soft_wrap=True, emoji=False)


def _line(value, style: str = "") -> Text:
    return Text(terminal.text(value), style=style)


def _where(console, out, name: str | None = None) -> None:
    if out:
        console.print(_line(f"results: {out}/results.json"
                            + (f" · {name}: {out}/{name}" if name else "")))


def print_plan(results: dict, *, out=None, console: Console | None = None) -> None:
    """``plan``'s answer: the plan's sentences, the leaderboard table (per size and judgments
    per item: planned items, judgments per pool, P(stay) ± MC s.e., the planned items'
    interval; or that no size suffices, with the ceiling) and the labels table (per pool: the
    annotators per item planned)."""
    console = console or _console()
    block = results.get("plan") or {}
    console.print(_line(f"plan: {(results.get('dataset') or {}).get('name') or 'dataset'}",
                        "bold"))
    for s in plan_sentences(results):
        console.print(_line(s))
    rows = plan_rows(block)
    if rows:
        t = Table("models", "per item", "items", "judgments", "P(stay) ± MC s.e.",
                  "items, 95% interval", title="leaderboard: items per pool to keep the order",
                  title_justify="left")
        for r in rows:
            t.add_row(r["models"], r["per_item"], r["planned"], r["judgments"], r["p_stay"],
                      r["interval"])
        console.print(t)
    labels = label_rows(block)
    if labels:
        t = Table("pool", "per item today", "agreement today", "annotators planned",
                  title="labels: annotators per item for the pool's majority",
                  title_justify="left")
        for r in labels:
            t.add_row(r["pool"], r["now"], r["agreement_now"], r["planned"])
        console.print(t)
    _where(console, out)


def print_advice(results: dict, *, out=None, console: Console | None = None) -> None:
    """``advise``'s answer: the advice's sentences, the first :data:`TABLE_ROWS` items with
    their reasons and expected reduction, then every other advised id on one line."""
    console = console or _console()
    block = results.get("advise") or {}
    console.print(_line(f"advice: {(results.get('dataset') or {}).get('name') or 'dataset'}",
                        "bold"))
    for s in advise_sentences(results):
        console.print(_line(s))
    rows = advice_rows(block, TABLE_ROWS)
    if rows:
        items = advised(block)
        pairwise = any(r["models"] for r in rows)
        pools = {r["pool"] for r in advice_rows(block, len(items))}  # every item's, listed or not
        to = ""
        if len(pools) == 1:
            pool = pools.pop()
            to = f" to {pool}"
        headers = ["#", "item", *(["models"] if pairwise else []), *([] if to else ["send to"]),
                   "why", "reduction"]
        t = Table(*headers, title=f"items to send back{to} (target: {block.get('target')})",
                  title_justify="left", box=None)
        for r, it in zip(rows, items):
            why = ", ".join(SHORT.get(str(x), str(x)) for x in it.get("reasons") or [])
            t.add_row(r["rank"], r["item"], *([r["models"]] if pairwise else []),
                      *([] if to else [r["pool"]]), why, r["reduction"])
        console.print(t)
        rest = [str(it.get("item")) for it in items[TABLE_ROWS:]]
        if rest:
            console.print(_line(f"and {len(rest)} more: " + ", ".join(rest)))
    _where(console, out, "advice.csv" if rows else None)
