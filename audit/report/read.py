"""The statistics the renderers show, read out of a result dict in one place.

The HTML report (:mod:`audit.report.html`), the dataset card (:mod:`audit.report.card`) and the
terminal summary (:mod:`audit.report.summary`) format the same numbers three ways; the key names
of ``results.json`` are read here once, so a renamed key is one edit. Every function takes one
row of a result block and returns plain numbers (None when a number is undefined), never text:
formatting is the renderer's.

How to read what they return:

- **null** (pool disagreement): the mean of the statistic over permutations that shuffle the
  annotators between the two pools (pool sizes kept, within strata where the design needs it):
  what the two pools would show if they were interchangeable draws from one population.
  ``p`` is the permutation p-value of the observed statistic against that distribution, with its
  Monte-Carlo standard error.
- **excess**: observed minus null mean, with its interval: the part of the disagreement the pool
  split adds.
- **within-pool test**: a within-item permutation test (labels permuted among the annotators of
  the same item); its p-value is the one every sentence about "interchangeable annotators" reads.
  The classical tests beside it (Cochran's Q, Stuart-Maxwell, Friedman) apply to fully crossed
  designs only; the pooled chi-square over items is kept for reference (it ignores that every
  annotator labels the same items and is miscalibrated for crossed designs).
"""

from __future__ import annotations

from ..format import finite, interval

#: Reader-facing names of the tests ``within_pool[]`` reports.
TEST_NAMES = {
    "cochran_q": "Cochran's Q",
    "stuart_maxwell": "Stuart-Maxwell",
    "friedman": "Friedman",
    "within_item_permutation": "within-item permutation",
}
#: The pooled test over items kept for reference (categories, scores), by its key.
POOLED_NAMES = {"pooled_chi2": "pooled χ²", "pooled_anova": "pooled one-way ANOVA"}
#: Reader-facing names of the effect sizes.
EFFECT_NAMES = {"cramers_v": "Cramér's V", "eta_squared": "η²"}

#: Reader-facing names of the pool-disagreement statistics that carry a null.
STAT_NAMES = {"majority_differs_rate": "labels differ",
              "winner_reversed_rate": "opposite winners",
              "mean_abs_difference": "mean |difference|"}


def at_floor(p, n_permutations) -> bool:
    """``p`` is at the resolution of ``n_permutations`` permutations (``≤ 1 / (n + 1)``: none,
    or for a mid-p at most one tie, reached the observed statistic). The p-value is then a
    bound, ``p ≤ 1 / (n + 1)``, and its Monte-Carlo s.e. says nothing more; the renderers write
    the bound (Phipson & Smyth 2010, "Permutation p-values should never be zero", Stat. Appl.
    Genet. Mol. Biol. 9(1))."""
    return finite(p) and bool(n_permutations) and p * (n_permutations + 1) <= 1 + 1e-9


def name_of_test(name) -> str:
    """A test's reader-facing name (``cochran_q`` -> ``Cochran's Q``)."""
    return TEST_NAMES.get(str(name), str(name).replace("_", " "))


# -- pool disagreement ------------------------------------------------------------------------------
def against_null(row: dict, stat: str) -> dict | None:
    """One pool-disagreement statistic beside its permutation null.

    Returns
    -------
    dict or None
        ``{observed, ci95, ci_method, null, p, mc_se, n_permutations, method, not_defined,
        excess, excess_ci95}`` (None values where undefined); None when the row does not have
        ``stat``. ``not_defined`` is the reason the permutation null gives no test (no
        permutation can change the statistic, e.g. one judgment per pool on every item): the
        renderers then show that reason instead of a null equal to the observed value.
        ``p`` and ``mc_se`` are the row's (one permutation test per pool pair); ``null`` is the
        mean of ``stat`` over the permutations.
    """
    if stat not in row and stat not in (row.get("null") or {}):
        return None
    observed = row.get(stat)
    null = row.get("null") or {}
    excess = (row.get("excess") or {}).get(stat) or {}
    cis = row.get("ci95") or {}
    return {"observed": observed if finite(observed) else None,
            "ci95": interval(cis.get(stat) if isinstance(cis, dict) else None),
            "ci_method": row.get("ci_method"),
            "null": null.get(stat) if finite(null.get(stat)) else None,
            "p": null.get("p_value") if finite(null.get("p_value")) else None,
            "mc_se": null.get("mc_se") if finite(null.get("mc_se")) else None,
            "n_permutations": null.get("n_permutations"),
            "strata": null.get("strata"), "method": null.get("method"),
            "not_defined": null.get("not_defined") or (row.get("excess") or {}).get(
                "not_defined"),
            "excess": excess.get("estimate") if finite(excess.get("estimate")) else None,
            "excess_ci95": interval(excess.get("ci95"))}


def has_null(row: dict) -> bool:
    """The row carries a permutation null (False only for rows written before it existed)."""
    return isinstance(row.get("null"), dict)


# -- within pool ------------------------------------------------------------------------------------
def within_test(w: dict) -> dict:
    """The within-pool annotator-effect test and its references.

    Returns
    -------
    dict
        ``{name, p, mc_se, n_permutations, statistic_name, statistic, strata, n_items_informative,
        method, reference: [{name, statistic, dof, p, n_items, n_annotators}], pooled: {name,
        statistic, dof, p} | None, effect_name, effect}``. ``p`` is ``annotator_effect_p``, the p-value every
        claim about the pool reads.
    """
    test = w.get("test") if isinstance(w.get("test"), dict) else {}  # a name before issue 14
    refs = [{"name": name_of_test(r.get("name")), "statistic": r.get("statistic"),
             "dof": r.get("dof"), "p": r.get("p_value"), "n_items": r.get("n_items"),
             "n_annotators": r.get("n_annotators")}
            for r in w.get("reference_tests") or [] if isinstance(r, dict)]
    pooled_key = next((k for k in POOLED_NAMES if isinstance(w.get(k), dict)), None)
    pooled = w[pooled_key] if pooled_key else None
    p = w.get("annotator_effect_p")
    return {"name": name_of_test(test.get("name")) if test.get("name") else None,
            "p": p if finite(p) else None,
            "mc_se": test.get("mc_se") if finite(test.get("mc_se")) else None,
            "n_permutations": test.get("n_permutations"),
            "statistic_name": test.get("statistic_name"), "statistic": test.get("statistic"),
            "strata": test.get("strata"), "n_items_informative": test.get("n_items_informative"),
            "method": test.get("method"),
            "reference": refs,
            "pooled": {"name": POOLED_NAMES[pooled_key], "statistic": pooled.get("statistic"),
                       "dof": pooled.get("dof"), "p": pooled.get("p_value")} if pooled else None,
            "effect_name": EFFECT_NAMES.get(w.get("effect_size_name"),
                                            str(w.get("effect_size_name") or "effect size")
                                            .replace("_", " ")),
            "effect": w.get("effect_size") if finite(w.get("effect_size")) else None}


# -- judge ------------------------------------------------------------------------------------------
def judge_rows(entry: dict) -> list[dict]:
    """Per human pool: the judge's agreement with one annotator of the pool (CI, n), the pool's
    own internal agreement (the ceiling a judge that behaves like one more annotator reaches)
    and the agreement with the pool's majority (secondary: it favours pools with more votes).
    """
    out = []
    for r in entry.get("agreement") or []:
        if not isinstance(r, dict):
            continue
        ceiling = r.get("ceiling") if isinstance(r.get("ceiling"), dict) else {}
        majority = r.get("majority_agreement") \
            if isinstance(r.get("majority_agreement"), dict) else {}
        out.append({"pool": r.get("pool"), "agreement": r.get("agreement"),
                    "ci95": interval(r.get("ci95")), "n": r.get("n"),
                    "ceiling": ceiling.get("agreement"), "ceiling_ci95":
                    interval(ceiling.get("ci95")), "ceiling_n": ceiling.get("n_items"),
                    "majority": majority.get("agreement"),
                    "majority_ci95": interval(majority.get("ci95")),
                    "majority_n": majority.get("n")})
    return out


def judge_method(entry: dict) -> dict:
    """``{agreement, verdict, items}``: how the judge was compared (one sentence each)."""
    m = entry.get("method")
    return m if isinstance(m, dict) else {}


# -- stability --------------------------------------------------------------------------------------
def swap(r: dict) -> dict:
    """A neighbour pair's swap probability: bootstrap share ± its Monte-Carlo s.e., and the
    closed form Φ(−gap / (√2·SD)) a reader checks by hand, with the SD it used."""
    boot = r.get("swap_probability_bootstrap")
    se = r.get("swap_probability_bootstrap_mc_se")
    closed = r.get("swap_probability_closed_form")
    return {"bootstrap": boot if finite(boot) else None, "mc_se": se if finite(se) else None,
            "closed_form": closed if finite(closed) else None,
            "closed_form_sd": r.get("closed_form_sd") if finite(r.get("closed_form_sd")) else None}


def swap_key(r: dict) -> float:
    """Sort key: highest bootstrap swap probability first."""
    p = swap(r)["bootstrap"]
    return -(p if p is not None else -1.0)


def displacement(st: dict) -> list[tuple[str, float | None, float | None]]:
    """``[(pool, probability, mc_se)]`` of the bootstrap displacement probabilities."""
    ses = st.get("bootstrap_displacement_mc_se") or {}
    return [(pool, p if finite(p) else None, ses.get(pool) if finite(ses.get(pool)) else None)
            for pool, p in (st.get("bootstrap_displacement_probability") or {}).items()]


def simulation_row(r: dict) -> dict:
    """``{n_models, p, mc_se, interval95, interval_method, n_sims}`` of one simulated size:
    ``interval95`` is P(displaced) over the perturbation SD's own uncertainty."""
    p = r.get("displacement_probability")
    return {"n_models": r.get("n_models"), "p": p if finite(p) else None,
            "mc_se": r.get("mc_se") if finite(r.get("mc_se")) else None,
            "interval95": interval(r.get("interval95")),
            "interval_method": r.get("interval_method"), "n_sims": r.get("n_sims")}
