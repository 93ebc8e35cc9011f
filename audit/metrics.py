"""The metric registry: every reliability coefficient the audit reports, named once.

Measurement (:mod:`audit.measure.scope`), suites (the ``metric`` a claim may name), the HTML
report, the dataset card, the charts and the terminal summary all read this table; none keeps
its own list. ``tests/test_registry.py`` fails when a metric exists in one of them and not in
the registry (as scikit-learn's ``ALL_METRICS`` and its common tests do).

Naming rule: a key is the coefficient's name in snake case (``krippendorff_alpha``); every
coefficient here is higher-is-better (1 = perfect agreement; 0 = chance for the chance-corrected
ones), so a suite's ``min`` is a floor.

To add a metric: one :class:`Metric` entry below, its statistic in one file of
:mod:`audit.measure` (a pure function over the family's sufficient statistic, see ``family``,
and its batched form over pattern weights), and one test against an independent
implementation (copy ``tests/test_reliability.py``). Measurement
(:func:`audit.measure.scope.scope_reliability`, :mod:`audit.measure.continuous`) iterates this
table per family and calls the functions the entry names; ``tests/test_registry.py`` then checks
the new key appears in ``measure()`` output at every level it lists, and passes the common
invariance tests. A ``counts`` metric on a wide scale (more categories than a dense count
matrix holds) is computed by :class:`audit.measure.wide.CountStatistics`, which returns the
family's statistics in registry order: add it there too, or it is NaN on wide scales.

The statistics are named by dotted path (``"audit.measure.alpha:krippendorff_alpha"``) and
imported when measurement first asks for them (:meth:`Metric.function`): this module imports
nothing heavy, since the CLI reads it at start-up (numpy alone takes a tenth of a second).
"""

from __future__ import annotations

from dataclasses import dataclass

#: Label levels (:attr:`audit.contract.labels.LabelScale.level`).
NOMINAL, ORDINAL, INTERVAL = "nominal", "ordinal", "interval"
ALL_LEVELS = frozenset({NOMINAL, ORDINAL, INTERVAL})
ORDERED = frozenset({ORDINAL, INTERVAL})

#: Families: the sufficient statistic a metric is computed from (:attr:`Metric.family`).
COUNTS, ICC, COHEN = "counts", "icc", "cohen"


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
    chance_corrected
        Whether 0 means chance agreement. Krippendorff's (2004) reference lines at 0.667 and 0.8
        apply only to these; the reliability chart leaves the others out.
    text
        Name in plain text, as warnings say it (``"Krippendorff's alpha is NaN: ..."``).
    statistic
        ``"module:function"`` of the point estimate over the family's sufficient statistic:
        ``counts`` the items x categories count matrix (plus the keywords ``level`` and
        ``values`` when the function takes them), ``icc`` the items x raters matrix of scale
        values. Empty for ``cohen`` (one table per annotator pair, :mod:`audit.measure.kappa`).
    batched
        ``"module:function"`` of the same statistic over B resamples at once: ``(patterns,
        weights)`` with weights (B, P) copies of each distinct pattern, returning (B,) values.
    on_moments
        ``"module:function"`` of the statistic on a continuous interval scale, (B,) values
        from (B, d) sums of its family's per-item moment columns (:mod:`audit.measure.moments`:
        ``counts`` :func:`~audit.measure.moments.alpha_columns`, ``icc``
        :func:`~audit.measure.moments.icc_columns`); empty when the metric needs categories
        and is NaN there.
    form
        The variant computed, written beside the value in ``results.json`` (ICC forms).
    """

    key: str
    name: str
    label: str
    reference: str
    family: str
    levels: frozenset = ALL_LEVELS
    summary: bool = True
    higher_is_better: bool = True
    chance_corrected: bool = True
    text: str = ""
    statistic: str = ""
    batched: str = ""
    on_moments: str = ""
    form: str = ""

    def function(self, role: str):
        """The function named by ``role`` (``"statistic"``, ``"batched"`` or ``"on_moments"``),
        imported on first use."""
        from importlib import import_module

        path = getattr(self, role)
        if not path:
            raise LookupError(f"metric {self.key!r} has no {role} function")
        module, _, name = path.partition(":")
        return getattr(import_module(module), name)


#: Every metric, in output order.
METRICS: tuple[Metric, ...] = (
    Metric("krippendorff_alpha", "Krippendorff's α", "Krippendorff α",
           "Krippendorff (2011), Computing Krippendorff's alpha-reliability", COUNTS,
           text="Krippendorff's alpha", statistic="audit.measure.alpha:krippendorff_alpha",
           batched="audit.measure.alpha:krippendorff_alpha_batched",
           on_moments="audit.measure.moments:alpha_from_sums"),
    Metric("fleiss_kappa", "Fleiss' κ", "Fleiss κ",
           "Fleiss (1971), Measuring nominal scale agreement among many raters", COUNTS,
           text="Fleiss' kappa", statistic="audit.measure.kappa:fleiss_kappa",
           batched="audit.measure.kappa:fleiss_kappa_batched"),
    Metric("gwet_ac1", "Gwet's AC1", "Gwet AC1",
           "Gwet (2008), Computing inter-rater reliability and its variance", COUNTS,
           text="Gwet's AC1", statistic="audit.measure.ac1:gwet_ac1",
           batched="audit.measure.ac1:gwet_ac1_batched"),
    Metric("percent_agreement", "percent agreement", "agreement",
           "pairwise percent agreement (Gwet 2014, Handbook of Inter-Rater Reliability, ch. 2)",
           COUNTS, chance_corrected=False, text="percent agreement",
           statistic="audit.measure.ac1:percent_agreement",
           batched="audit.measure.ac1:percent_agreement_batched"),
    Metric("cohen_kappa", "Cohen's κ (mean over pairs)", "Cohen κ",
           "Cohen (1960); weighted, Cohen (1968)", COHEN,
           text="Cohen's kappa"),
    Metric("icc", "ICC", "ICC", "Shrout & Fleiss (1979), ICC(2,1)", ICC, levels=ORDERED,
           text="ICC2", statistic="audit.measure.icc:icc2",
           batched="audit.measure.icc:icc2_batched",
           on_moments="audit.measure.moments:icc2_from_sums",
           form="ICC2: two-way random effects, absolute agreement, single rater"),
    Metric("icc_k", "ICC of the mean of k", "ICC (k)", "Shrout & Fleiss (1979), ICC(2,k)", ICC,
           levels=ORDERED, summary=False, text="ICC2k", statistic="audit.measure.icc:icc2k",
           batched="audit.measure.icc:icc2k_batched",
           on_moments="audit.measure.moments:icc2k_from_sums",
           form="ICC2k: two-way random effects, absolute agreement, mean of k raters"),
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
