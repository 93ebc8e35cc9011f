"""The metric registry: every reliability coefficient the audit reports, named once.

Measurement (:mod:`audit.measure.scope`), suites (the ``metric`` a claim may name), the HTML
report, the dataset card, the charts and the terminal summary all read this table; none keeps
its own list. ``tests/test_registry.py`` fails when a metric exists in one of them and not in
the registry (as scikit-learn's ``ALL_METRICS`` and its common tests do).

Naming rule: a key is the coefficient's name in snake case (``krippendorff_alpha``); every
coefficient here is higher-is-better (1 = perfect agreement; 0 = chance for the chance-corrected
ones), so a suite's ``min`` is a floor.

To add a metric: one :class:`Metric` entry below, its statistic in one file of
:mod:`audit.measure` (a pure function over the family's sufficient statistic, see ``family``),
and one test against an independent implementation (copy ``tests/test_reliability.py``).
This module imports nothing heavy: the CLI reads it at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Label levels (:attr:`audit.contract.labels.LabelScale.level`).
NOMINAL, ORDINAL, INTERVAL = "nominal", "ordinal", "interval"
ALL_LEVELS = frozenset({NOMINAL, ORDINAL, INTERVAL})
ORDERED = frozenset({ORDINAL, INTERVAL})


@dataclass(frozen=True)
class Metric:
    """One reliability coefficient.

    Attributes
    ----------
    key
        Its key in ``results.json`` (``reliability.overall.<key>``) and in suites.
    name
        Display name in prose, tables and the card (Unicode Greek letters).
    label
        Short label for chart axes.
    reference
        Where the coefficient comes from, as cited in its module's docstring.
    family
        The sufficient statistic it is computed from, which decides the bootstrap stream it
        shares: ``counts`` (items x categories count patterns), ``icc`` (rating rows of the
        fully crossed subset) or ``cohen`` (annotator-pair tables).
    levels
        Label levels it is reported for (``icc`` needs ordered labels).
    summary
        Shown in the terminal summary, the report's reliability table and the card's table.
    higher_is_better
        Direction; every coefficient here is higher-is-better.
    """

    key: str
    name: str
    label: str
    reference: str
    family: str
    levels: frozenset = ALL_LEVELS
    summary: bool = True
    higher_is_better: bool = True


#: Every metric, in output order.
METRICS: tuple[Metric, ...] = (
    Metric("krippendorff_alpha", "Krippendorff's α", "Krippendorff α",
           "Krippendorff (2011), Computing Krippendorff's alpha-reliability", "counts"),
    Metric("fleiss_kappa", "Fleiss' κ", "Fleiss κ",
           "Fleiss (1971), Measuring nominal scale agreement among many raters", "counts"),
    Metric("gwet_ac1", "Gwet's AC1", "Gwet AC1",
           "Gwet (2008), Computing inter-rater reliability and its variance", "counts"),
    Metric("percent_agreement", "percent agreement", "agreement",
           "pairwise percent agreement (Gwet 2014, Handbook of Inter-Rater Reliability, ch. 2)",
           "counts"),
    Metric("cohen_kappa", "Cohen's κ (mean over pairs)", "Cohen κ",
           "Cohen (1960); weighted, Cohen (1968)", "cohen", summary=False),
    Metric("icc", "ICC", "ICC", "Shrout & Fleiss (1979), ICC(2,1)", "icc", levels=ORDERED),
    Metric("icc_k", "ICC of the mean of k", "ICC (k)", "Shrout & Fleiss (1979), ICC(2,k)", "icc",
           levels=ORDERED, summary=False),
)

REGISTRY: dict[str, Metric] = {m.key: m for m in METRICS}
#: Every key, in output order.
KEYS: tuple[str, ...] = tuple(REGISTRY)


def get(key: str) -> Metric:
    """The :class:`Metric` registered under ``key`` (``KeyError`` naming the known keys)."""
    try:
        return REGISTRY[key]
    except KeyError:
        raise KeyError(f"no metric {key!r}; registered: {', '.join(KEYS)}") from None


def keys(*, family: str | None = None, level: str | None = None,
         summary: bool | None = None) -> tuple[str, ...]:
    """Registered keys in output order, filtered by family, label level and summary flag."""
    return tuple(m.key for m in METRICS
                 if (family is None or m.family == family)
                 and (level is None or level in m.levels)
                 and (summary is None or m.summary == summary))


def display_name(key: str) -> str:
    """The display name of ``key``; an unregistered key is shown as itself."""
    m = REGISTRY.get(key)
    return m.name if m else key
