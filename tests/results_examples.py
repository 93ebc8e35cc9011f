"""Hand-built result dicts in the shape of results.json, for the renderer tests.

The renderers are pure functions of this dict, so they are tested on it directly as well as on
real audits; ``hostile=True`` puts script-injection payloads in every dataset-supplied string.
"""

from __future__ import annotations

import copy

#: Strings that execute or break out of their context if a renderer does not escape them.
PAYLOADS = (
    "<script>window.__xss=1;document.title='pwned'</script>",
    "\"><img src=x onerror=\"window.__xss=1;document.title='pwned'\">",
    "</style><script>window.__xss=1</script>",
    "javascript:window.__xss=1",
    "'><svg onload=window.__xss=1>",
    "</textarea></title><script>window.__xss=1</script>",
    "<!-- annotation-audit:end -->$x^2$ | *bold* [link](javascript:alert(1))",
    "{{7*7}} ${7*7} &amp; &lt;b&gt;",
)


def _names(hostile: bool):
    if not hostile:
        return {"pools": ["crowd", "expert", "gpt-4"],
                "models": ["gpt-4", "claude-v1", "gpt-3.5-turbo", "vicuna-13b", "llama-13b"],
                "items": [f"cmp-{i:04d}" for i in range(30)], "name": "toy-preferences"}
    p = PAYLOADS
    return {"pools": [f"crowd{p[0]}", f"expert{p[1]}", f"judge{p[2]}"],
            "models": [f"m0{p[3]}", f"m1{p[4]}", f"m2{p[5]}", f"m3{p[6]}", f"m4{p[7]}"],
            "items": [f"item{p[i % len(p)]}{i}" for i in range(30)],
            "name": f"evil{p[0]}"}


def full_results(*, hostile: bool = False) -> dict:
    """A pairwise audit with two human pools, one judge pool and five models."""
    n = _names(hostile)
    crowd, expert, judge = n["pools"]
    models = n["models"]
    ci = lambda v, w=0.05: {"value": v, "ci95": [v - w, v + w]}  # noqa: E731
    board = lambda scores: [{"model": m, "score": s, "ci95": [s - 0.04, s + 0.04],  # noqa: E731
                             "rank": r + 1, "n": 400}
                            for r, (m, s) in enumerate(sorted(zip(models, scores),
                                                              key=lambda t: -t[1]))]
    return {
        "meta": {"tool": "annotation-audit", "version": "0.1.0", "seed": 7, "n_bootstrap": 200,
                 "bootstrap": {"n_resamples": 200, "seed": 7, "level": 0.95,
                               "method": "percentile bootstrap over items"},
                 "source": f"data/{n['name']}.jsonl",
                 "versions": {"python": "3.11.7", "numpy": "1.26.4", "pandas": "2.3.0"}},
        "dataset": {"name": n["name"], "n_items": 1000, "n_annotations": 5000,
                    "n_annotators": 41, "label_kind": "preference",
                    "label_scale": {"kind": "preference", "values": [-2, -1, 0, 1, 2],
                                    "names": ["A-is-clearly-better", "A-is-slightly-better",
                                              "Tie", "B-is-slightly-better",
                                              "B-is-clearly-better"]},
                    "judgments_per_item": {"min": 2, "median": 4.0, "max": 5},
                    "pools": {crowd: {"n_annotators": 30, "n_annotations": 2000, "n_items": 1000,
                                      "judge": False},
                              expert: {"n_annotators": 10, "n_annotations": 2000,
                                       "n_items": 1000, "judge": False},
                              judge: {"n_annotators": 1, "n_annotations": 1000, "n_items": 1000,
                                      "judge": True}},
                    "models": sorted(models)},
        "reliability": {
            "overall": {"krippendorff_alpha": ci(0.41), "fleiss_kappa": ci(0.39),
                        "gwet_ac1": ci(0.52), "percent_agreement": ci(0.61), "icc": ci(0.45)},
            "by_pool": {crowd: {"krippendorff_alpha": ci(0.32), "fleiss_kappa": ci(0.30),
                                "gwet_ac1": ci(0.44), "percent_agreement": ci(0.55),
                                "icc": ci(0.35)},
                        expert: {"krippendorff_alpha": ci(0.71), "fleiss_kappa": ci(0.70),
                                 "gwet_ac1": ci(0.75), "percent_agreement": ci(0.80),
                                 "icc": {"value": None, "ci95": [None, None]}}}},
        "pool_disagreement": [
            {"pool_a": crowd, "pool_b": expert, "granularity": "label",
             "n_items_both_unanimous": 412, "majority_differs_rate": 0.31,
             "winner_reversed_rate": None,
             "ci95": {"majority_differs_rate": [0.27, 0.35]}, "ci_method": "Wilson",
             "null": {"majority_differs_rate": 0.12, "winner_reversed_rate": None,
                      "p_value": 0.0005, "mc_se": 0.0007, "n_permutations": 2000,
                      "strata": "item", "method": "annotators shuffled between the pools"},
             "excess": {"majority_differs_rate": {"estimate": 0.19, "ci95": [0.15, 0.23]},
                        "winner_reversed_rate": None},
             "confusion": [[40, 10, 2, 1, 0], [8, 60, 9, 3, 1], [2, 12, 70, 11, 2],
                           [1, 4, 10, 58, 9], [0, 1, 3, 9, 46]]},
            {"pool_a": crowd, "pool_b": expert, "granularity": "winner",
             "n_items_both_unanimous": 530, "majority_differs_rate": 0.22,
             "winner_reversed_rate": 0.08,
             "ci95": {"majority_differs_rate": [0.19, 0.26], "winner_reversed_rate": [0.06, 0.1]},
             "ci_method": "Wilson",
             "null": {"majority_differs_rate": 0.09, "winner_reversed_rate": 0.021,
                      "p_value": 0.0005, "mc_se": 0.0007, "n_permutations": 2000,
                      "strata": "item", "method": "annotators shuffled between the pools"},
             "excess": {"majority_differs_rate": {"estimate": 0.13, "ci95": [0.1, 0.17]},
                        "winner_reversed_rate": {"estimate": 0.059, "ci95": [0.04, 0.08]}},
             "confusion": [[180, 20, 21], [15, 90, 18], [22, 19, 145]]},
        ],
        "within_pool": [
            {"pool": crowd, "disagreement_rate": 0.58, "ci95": [0.55, 0.61],
             "annotator_effect_p": 0.0003, "effect_size": 0.12, "effect_size_name": "cramers_v",
             "test": {"name": "within_item_permutation", "statistic_name": "stratified_x2",
                      "statistic": 40.2, "p_value": 0.0003, "n_permutations": 5000,
                      "mc_se": 0.00024, "strata": "item", "n_items_informative": 580,
                      "method": "labels permuted among the annotators of each item"},
             "reference_tests": [{"name": "stuart_maxwell", "statistic": 31.5, "dof": 8,
                                  "p_value": 0.0001, "n_items": 300, "n_annotators": 3}],
             "pooled_chi2": {"statistic": 12.1, "dof": 8, "p_value": 0.147,
                             "note": "ignores the crossed design"}},
            {"pool": expert, "disagreement_rate": 0.33, "ci95": [0.3, 0.36],
             "annotator_effect_p": 0.41, "effect_size": 0.02, "effect_size_name": "cramers_v",
             "test": {"name": "within_item_permutation", "statistic_name": "stratified_x2",
                      "statistic": 3.3, "p_value": 0.41, "n_permutations": 5000,
                      "mc_se": 0.007, "strata": "item", "n_items_informative": 330,
                      "method": "labels permuted among the annotators of each item"},
             "reference_tests": [], "pooled_chi2": None}],
        "leaderboards": {crowd: board([0.71, 0.62, 0.55, 0.48, 0.30]),
                         expert: board([0.69, 0.66, 0.47, 0.52, 0.28]),
                         judge: board([0.80, 0.60, 0.58, 0.44, 0.20])},
        "stability": {
            "pool_pairs": [{"pool_a": crowd, "pool_b": expert, "kendall_tau": 0.8,
                            "n_displaced": 2, "score_shift_sd": 0.041,
                            "shifts": {m: 0.01 * i for i, m in enumerate(models)}}],
            "closest_pairs": [{"pool": crowd, "model_hi": models[1], "model_lo": models[2],
                               "gap": 0.012, "swap_probability_bootstrap": 0.34,
                               "swap_probability_bootstrap_mc_se": 0.0335,
                               "swap_probability_closed_form": 0.3612,
                               "closed_form_sd": 0.0337},
                              {"pool": expert, "model_hi": models[3], "model_lo": models[2],
                               "gap": 0.05, "swap_probability_bootstrap": 0.08,
                               "swap_probability_bootstrap_mc_se": 0.0192,
                               "swap_probability_closed_form": 0.0915,
                               "closed_form_sd": 0.0264}],
            "bootstrap_displacement_probability": {crowd: 0.41, expert: 0.37},
            "bootstrap_displacement_mc_se": {crowd: 0.0348, expert: 0.0341},
            "displacement_histogram": {crowd: {"0": 118, "2": 70, "3": 12},
                                       expert: {"0": 126, "2": 66, "4": 8}},
            "simulation": [{"n_models": k, "displacement_probability": p, "mc_se": 0.003,
                            "interval95": [lo, hi], "interval_method": "chi-square SD interval",
                            "n_sims": 20000}
                           for k, p, lo, hi in ((6, 0.21, 0.11, 0.52), (10, 0.38, 0.2, 0.77),
                                                (20, 0.66, 0.42, 0.95), (50, 0.93, 0.77, 1.0),
                                                (100, 0.99, 0.93, 1.0))],
            "simulation_model": {"perturbation_sd": 0.041, "perturbation_sd_ci95": [0.026, 0.1],
                                 "gap_model": "resample", "n_sims": 20000},
            "flipped_items": {"count": 42, "items": [
                {"item": n["items"][i], "text": (PAYLOADS[i % len(PAYLOADS)] if hostile
                                                  else "Write a poem about the sea. " * 12),
                 "winners": {crowd: "A", expert: "B"}} for i in range(30)]},
        },
        "judge_alignment": [{
            "judge": judge,
            "agreement": [{"pool": crowd, "agreement": 0.63, "ci95": [0.58, 0.68], "n": 1000,
                           "ceiling": {"agreement": 0.61, "ci95": [0.57, 0.65], "n_items": 1000},
                           "majority_agreement": {"agreement": 0.7, "ci95": [0.67, 0.73],
                                                  "n": 1000}},
                          {"pool": expert, "agreement": 0.66, "ci95": [0.62, 0.7], "n": 1000,
                           "ceiling": {"agreement": 0.74, "ci95": [0.7, 0.78], "n_items": 1000},
                           "majority_agreement": {"agreement": 0.72, "ci95": [0.69, 0.75],
                                                  "n": 1000}}],
            "differences": [{"pool_a": crowd, "pool_b": expert, "difference": -0.03,
                             "ci95": [-0.07, 0.01], "n": 1000, "tracks": "indistinguishable",
                             "level": 0.95}],
            "tracks": "indistinguishable",
            "verdict": f"{judge} is indistinguishable between {crowd} and {expert}",
            "method": {"agreement": "agreement with one random annotator of the pool",
                       "verdict": "paired bootstrap CI of the difference",
                       "items": "picked and tested on the same items"}}],
        "expectations": {"n_passed": 2, "n_failed": 1, "results": [
            {"expectation": "krippendorff_alpha >= 0.667 in every pool", "passed": False,
             "observed": 0.32, "threshold": 0.667, "line": 3},
            {"expectation": "judgments per item >= 2", "passed": True, "observed": 2,
             "threshold": 2, "line": 5},
            {"expectation": f"pool {crowd} exists", "passed": True, "observed": crowd,
             "threshold": None, "line": 7}]},
    }


def minimal_results() -> dict:
    """An HS-Brexit-shaped audit: nominal labels, two pools, no models, no expectations."""
    r = full_results()
    ds = r["dataset"]
    ds.update({"name": "HS-Brexit", "label_kind": "nominal",
               "label_scale": {"kind": "nominal", "values": [0, 1]},
               "pools": {"target": {"n_annotators": 3, "n_annotations": 3360, "n_items": 1120,
                                    "judge": False},
                         "control": {"n_annotators": 3, "n_annotations": 3360, "n_items": 1120,
                                     "judge": False}},
               "judgments_per_item": {"min": 6, "median": 6.0, "max": 6}})
    ds.pop("models")
    return {"meta": r["meta"], "dataset": ds,
            "reliability": {"overall": r["reliability"]["overall"],
                            "by_pool": {"target": r["reliability"]["by_pool"]["crowd"],
                                        "control": r["reliability"]["by_pool"]["expert"]}},
            "pool_disagreement": [{"pool_a": "target", "pool_b": "control",
                                   "granularity": "label", "n_items_both_unanimous": 700,
                                   "majority_differs_rate": 0.12, "winner_reversed_rate": None,
                                   "ci95": {"majority_differs_rate": [0.1, 0.15]},
                                   "confusion": {"0": {"0": 560, "1": 70}, "1": {"0": 14, "1": 56}}}],
            "within_pool": [], "leaderboards": {}, "stability": {}, "judge_alignment": []}


def bare_results() -> dict:
    """Only the two blocks every audit has."""
    r = full_results()
    return {"meta": copy.deepcopy(r["meta"]), "dataset": minimal_results()["dataset"]}


# -- reading a rendered report -----------------------------------------------------------------------
def parse_html(html: str):
    """``(tags, texts)``: every start tag as ``(name, attrs dict)`` and every text node."""
    from html.parser import HTMLParser

    class Collect(HTMLParser):
        def __init__(self):
            super().__init__(convert_charrefs=True)
            self.tags, self.texts = [], []

        def handle_starttag(self, tag, attrs):
            self.tags.append((tag, dict(attrs)))

        def handle_startendtag(self, tag, attrs):
            self.tags.append((tag, dict(attrs)))

        def handle_data(self, data):
            self.texts.append(data)

    p = Collect()
    p.feed(html)
    p.close()
    return p.tags, p.texts


def section_html(html: str, section_id: str) -> str:
    """The markup of one ``<section id=...>`` of the report (sections do not nest)."""
    start = html.index(f'<section id="{section_id}">')
    return html[start: html.index("</section>", start)]


def section_text(html: str, section_id: str) -> str:
    """The visible text of one section, entities decoded, whitespace collapsed."""
    _, texts = parse_html(section_html(html, section_id))
    return " ".join(" ".join(texts).split())
