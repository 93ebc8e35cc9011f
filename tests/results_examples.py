"""Result dicts produced by the code, for the renderer tests.

The renderers are pure functions of results.json, so they are tested on the audits of small
tables built here (:func:`toy_table`, a pairwise audit with an expectation suite; an HS-Brexit
shaped one without models; the two blocks every audit has); ``hostile=True`` puts
script-injection payloads in every dataset-supplied string. Each is computed once per session
and handed out as a fresh copy.
"""

from __future__ import annotations

import functools
import json

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
                "items": [f"cmp-{i:04d}" for i in range(N_ITEMS)], "name": "toy-preferences",
                "text": "prompt"}
    p = PAYLOADS
    return {"pools": [f"crowd{p[0]}", f"expert{p[1]}", f"judge{p[2]}"],
            "models": [f"m0{p[3]}", f"m1{p[4]}", f"m2{p[5]}", f"m3{p[6]}", f"m4{p[7]}"],
            "items": [f"item{p[i % len(p)]}{i}" for i in range(N_ITEMS)],
            "name": f"evil{p[0]}", "text": p[1]}


#: Items of the code-built preference table.
N_ITEMS = 120
#: The suite run on it: two claims that hold and one that fails (a reliability floor the crowd
#: does not reach).
SUITE = """suite: toy
expectations:
  - expect: unique_judgments
  - expect: judgments_per_item
    min: 2
  - expect: min_reliability
    metric: krippendorff_alpha
    pool: {crowd}
    min: 0.99
    claim: The crowd agrees almost perfectly.
"""


def toy_table(*, hostile: bool = False, seed: int = 7):
    """A pairwise preference table built in code: pools crowd (five annotators, three per item),
    expert (two, both on every item) and a judge pool; five models of decreasing strength.

    The crowd errs more often than the experts, takes the other side as one on some hard items,
    and one crowd worker leans towards A, so every block of the audit has numbers to read
    (pool disagreement beyond its null, an annotator effect, flipped winners, close pairs).
    ``hostile=True`` names the pools, models, items, dataset and item texts with
    :data:`PAYLOADS`.
    """
    import numpy as np
    import pandas as pd

    from audit.contract import columns as C
    from audit.contract.labels import WINNER_NAMES, LabelKind, LabelScale
    from audit.contract.table import build_table

    n = _names(hostile)
    crowd, expert, judge = n["pools"]
    models = n["models"]
    strength = np.array([2.0, 1.5, 1.0, 0.9, 0.0])
    rng = np.random.default_rng(seed)
    rows = []
    for i, item in enumerate(n["items"]):
        a, b = rng.choice(len(models), size=2, replace=False)
        truth = 1 if rng.random() < 1.0 / (1.0 + np.exp(strength[a] - strength[b])) else -1
        hard = rng.random() < 0.2
        annotators = [(f"c{k}", crowd, 0.3) for k in rng.choice(5, size=3, replace=False)]
        annotators += [("e0", expert, 0.1), ("e1", expert, 0.1), (judge, judge, 0.15)]
        for ann, pool, err in annotators:
            u = rng.random()
            label = truth if u >= err else (0 if u < err / 2 else -truth)
            if pool == crowd and hard and rng.random() < 0.9:
                label = -truth
            if ann == "c3" and rng.random() < 0.7:
                label = -1
            rows.append({C.ITEM: item, C.ANNOTATOR: ann, C.POOL: pool, C.LABEL: label,
                         C.MODEL_A: models[a], C.MODEL_B: models[b],
                         C.TEXT: f"{n['text']} {i}"})
    scale = LabelScale(LabelKind.PREFERENCE, (-1, 0, 1), WINNER_NAMES)
    return build_table(pd.DataFrame(rows), scale, name=n["name"],
                       source=f"data/{n['name']}.jsonl", judge_pools=(judge,))


@functools.lru_cache(maxsize=None)
def _produced(hostile: bool) -> str:
    """The audit of :func:`toy_table` with the :data:`SUITE` outcome, as results.json text."""
    import warnings

    from audit.pipeline import audit_table
    from audit.resample import Bootstrap
    from audit.results import dumps
    from audit.suites import gx_run
    from audit.suites.batches import batches
    from audit.suites.check import CheckResult, fit_measurements, fit_table
    from audit.suites.measurements import measurements
    from audit.suites.outcomes import summary
    from audit.suites.suite_file import parse_suite

    table = toy_table(hostile=hostile)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = audit_table(table, bootstrap=Bootstrap(200, 7), sizes=(10, 20, 50),
                              n_sims=400)
        suite = parse_suite(SUITE.replace("{crowd}", "crowd"), path="toy.yaml")
        if not hostile:
            fit_table(suite, table, has_baseline=False)
            frames = batches(table, suite.batches)
            if "measurements" in suite.batches:
                frames["measurements"] = measurements(results)
                fit_measurements(suite, frames["measurements"])
            validation = gx_run.validate(suite, frames)
            results["expectations"] = summary(
                CheckResult(suite, results, validation).validation_json)
    return dumps(results)


def full_results(*, hostile: bool = False) -> dict:
    """The audit of :func:`toy_table` as results.json holds it (a fresh copy each call): two
    human pools and a judge pool, five models, and (not ``hostile``) the outcome of
    :data:`SUITE`."""
    return json.loads(_produced(hostile))


def minimal_results() -> dict:
    """An HS-Brexit-shaped audit: binary labels, two pools of three annotators on every item,
    no models, no expectations."""
    return json.loads(_minimal())


@functools.lru_cache(maxsize=None)
def _minimal() -> str:
    import warnings

    import numpy as np
    import pandas as pd

    from audit.contract import columns as C
    from audit.contract.labels import LabelKind, LabelScale
    from audit.contract.table import build_table
    from audit.pipeline import audit_table
    from audit.resample import Bootstrap
    from audit.results import dumps

    rng = np.random.default_rng(3)
    rows = []
    for i in range(200):
        truth = int(rng.random() < 0.3)
        for pool, err in (("target", 0.15), ("control", 0.25)):
            for k in range(3):
                label = truth if rng.random() >= err else 1 - truth
                rows.append({C.ITEM: f"t{i}", C.ANNOTATOR: f"{pool}{k}", C.POOL: pool,
                             C.LABEL: label})
    table = build_table(pd.DataFrame(rows), LabelScale(LabelKind.NOMINAL, (0, 1)),
                        name="HS-Brexit", source="data/HS-Brexit.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dumps(audit_table(table, bootstrap=Bootstrap(200, 7)))


def bare_results() -> dict:
    """Only the two blocks every audit has."""
    r = minimal_results()
    return {"meta": r["meta"], "dataset": r["dataset"]}


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


def without_cohen(results: dict) -> dict:
    """``results`` (JSON form) without ``meta`` and every Cohen's kappa entry: what must be
    equal between an audit whose Cohen interval was linearised (on a Spark cluster, or over the
    memory budget) and the item bootstrap's."""
    r = {k: v for k, v in results.items() if k != "meta"}
    rel = dict(r["reliability"])
    rel.pop("cohen_pairs")
    rel["overall"] = {k: v for k, v in rel["overall"].items() if k != "cohen_kappa"}
    rel["by_pool"] = {p: {k: v for k, v in m.items() if k != "cohen_kappa"}
                      for p, m in rel["by_pool"].items()}
    return {**r, "reliability": rel}
