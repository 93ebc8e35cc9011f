"""What the CLI prints about NaNs that are NaN by design: one ``info:`` line, not a warning each.

A pool that one annotator holds (each PandaLM annotator is a pool of its own) has no agreement,
within-pool disagreement or within-item spread: those statistics need two annotators. The
measurement reports them as :class:`audit.errors.SingleAnnotatorPoolNaN` (the rule is in that
class's docstring); the CLI gathers them here and, when the command ends, prints::

    info: 3 single-annotator pools ('annotator1', 'annotator2', 'annotator3'): agreement and
    within-pool statistics are undefined by design (null in the results); --verbose for details

``--verbose`` adds one ``info:`` line per scope naming each statistic and its reason (the text
the warnings carried before they were gathered); ``--quiet`` drops the note. Every other warning
(:class:`audit.errors.DegenerateDataWarning` on unexpected data, a dropped item) is printed as a
``warning:`` when it happens, whatever the verbosity. Nothing here touches the results: the
NaNs stay in ``results.json``, byte for byte the same at every verbosity. Pool names and
messages are made inert for the terminal (:func:`audit.escape.terminal.text`).
"""

from __future__ import annotations

from .errors import ContinuousScaleNaN, SingleAnnotatorPoolNaN, join_names


class Notices:
    """The by-design NaN notes of one command, shown together at its end."""

    def __init__(self):
        self.pools: list[str] = []
        self.details: list[str] = []
        self.scale: list[str] = []

    def add(self, warning: SingleAnnotatorPoolNaN) -> None:
        """Record one gathered warning (its pools and its message)."""
        if isinstance(warning, ContinuousScaleNaN):
            if str(warning) not in self.scale:
                self.scale.append(str(warning))
            return
        for pool in warning.pools:
            if pool not in self.pools:
                self.pools.append(pool)
        detail = str(warning)
        if detail not in self.details:
            self.details.append(detail)

    def lines(self, *, verbose: bool = False) -> list[str]:
        """The ``info:`` lines to print: none when nothing was noted."""
        from .escape.terminal import text

        out = []
        if self.scale:
            head = ("info: statistics of label categories (Fleiss' kappa, Gwet's AC1, percent "
                    "agreement, Cohen's kappa) are undefined on a continuous scale by design "
                    "(null in the results); the interval alpha, ICC and mean scores stand in")
            out += ([text(head + "; --verbose for details")] if not verbose else
                    [text(head + ":")] + [text(f"info:   {d}") for d in self.scale])
        if not self.details:
            return out
        n = len(self.pools)
        head = (f"info: {n} single-annotator pool{'' if n == 1 else 's'} "
                f"({join_names(self.pools)}): agreement and within-pool statistics are "
                "undefined by design (null in the results)")
        if not verbose:
            return out + [text(head + "; --verbose for details")]
        return out + [text(head + ":")] + [text(f"info:   {d}") for d in self.details]
