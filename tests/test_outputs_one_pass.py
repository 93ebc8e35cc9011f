"""The output set written in one pass: ``results.json`` serialised once with its run id
(:func:`audit.outputs.layout.stamped`), the extra files and the source digests written in a
thread beside the reports, and :func:`audit.results.jsonable`'s fast path for plain types.

Each is checked against the plain way it replaces: :func:`stamped` against :func:`run_id` plus a
second :func:`audit.results.dumps` (the id recomputed with :mod:`hashlib` from the text without
it), on hostile ``meta`` blocks; ``jsonable`` against a conversion by ``isinstance`` alone; the
threaded writer by the bytes of the set, its errors and its cleanup.
"""

from __future__ import annotations

import hashlib
import json
import math
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.outputs import fs, verify_outputs, write_run
from audit.outputs.layout import RUN_ID_DIGITS, run_id, stamped
from audit.results import dumps, jsonable

TABLE = "item,annotator,pool,label\n1,a,crowd,x\n1,b,crowd,y\n1,c,expert,x\n2,a,crowd,x\n" \
        "2,b,crowd,x\n2,c,expert,y\n3,a,crowd,y\n3,b,crowd,y\n3,c,expert,y\n"

text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12) | st.sampled_from(
    ["run_id", "meta", '\n  }', '"run_id": "x"', "\n  \"meta\": {", "}", ""])
scalar = st.none() | st.booleans() | st.integers(-10**6, 10**6) | text | st.floats(
    allow_nan=False, allow_infinity=False)
value = st.recursive(scalar, lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(text, inner, max_size=3), max_leaves=12)


def _plain_way(results: dict) -> tuple[str, str]:
    """What write_run did before: the id of the text without it, then a second serialisation
    with the id set in place (appended, or where ``meta`` already held one)."""
    copy = json.loads(json.dumps(results))
    ident = run_id(copy)
    copy.setdefault("meta", {})["run_id"] = ident
    return ident, dumps(copy)


@settings(max_examples=300, deadline=None)
@given(meta=st.none() | st.dictionaries(text, value, max_size=5),
       run_at=st.sampled_from([None, "first", "last", "middle"]),
       before=st.dictionaries(text.filter(lambda k: k != "meta"), value, max_size=2),
       after=st.dictionaries(text.filter(lambda k: k != "meta"), value, max_size=2))
def test_stamped_is_the_id_and_the_second_serialisation(meta, run_at, before, after):
    """``meta`` first, last or between other keys (never with ``dataset``: the result contract
    is not what is tested here), with or without an old ``run_id`` anywhere in it, values
    holding the texts the splice looks for."""
    results = dict(before)
    if meta is not None:
        meta = dict(meta)
        if run_at is not None:
            keys = [k for k in meta if k != "run_id"]
            at = {"first": 0, "last": len(keys), "middle": len(keys) // 2}[run_at]
            items = [(k, meta[k]) for k in keys]
            items.insert(at, ("run_id", "old"))
            meta = dict(items)
        results["meta"] = meta
    results.update({k: v for k, v in after.items() if k not in results})
    ident, written = stamped(results)
    assert (ident, written) == _plain_way(results)
    without = json.loads(written)
    del without["meta"]["run_id"]
    assert ident == hashlib.sha256(dumps(without).encode()).hexdigest()[:RUN_ID_DIGITS]


def test_stamped_on_a_real_result(tmp_path):
    from audit.pipeline import run

    src = tmp_path / "t.csv"
    src.write_text(TABLE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = run(src, n_bootstrap=5, seed=0)
    from audit.results import json_form

    shown = json_form(results)
    assert list(shown)[0] == "meta" and "dataset" in shown  # the contract is checked too
    assert stamped(shown) == _plain_way(shown)


def _by_isinstance(obj, finite):
    """The conversion as it was, by ``isinstance`` alone (the reference for the fast path)."""
    if isinstance(obj, dict):
        return {str(k): _by_isinstance(v, finite) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_by_isinstance(v, finite) for v in obj]
    if isinstance(obj, np.ndarray):
        return _by_isinstance(obj.tolist(), finite)
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return finite(float(obj))
    return obj


class Name(str):
    pass


numpyish = st.sampled_from([np.float64(1.5), np.float32(0.25), np.int64(-3), np.int8(7),
                            np.bool_(True), np.float64("nan"), np.array([1.0, np.nan]),
                            np.array([[1, 2]]), (1, 2.5), Name("k"), float("inf"),
                            float("-inf"), float("nan"), True, 0, -0.0])
mixed = st.recursive(scalar | numpyish, lambda inner: st.lists(inner, max_size=3)
                     | st.tuples(inner, inner)
                     | st.dictionaries(text | st.integers(0, 5) | st.just(Name("n")), inner,
                                       max_size=3), max_leaves=15)


def _same(a, b) -> bool:
    """Equal, with the same types all the way down (NaN equal to NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(type(k) is str for k in a) and all(
            _same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


@settings(max_examples=300, deadline=None)
@given(obj=mixed)
def test_jsonable_fast_path_equals_the_isinstance_conversion(obj):
    none_for_nan = lambda x: None if math.isnan(x) or math.isinf(x) else x  # noqa: E731
    assert _same(jsonable(obj), _by_isinstance(obj, none_for_nan))


def test_digests_are_sha256_file(tmp_path):
    files = []
    for i, size in enumerate([0, 10, 3 << 20]):
        path = tmp_path / f"f{i}"
        path.write_bytes(bytes(range(256)) * (size // 256) + b"x" * (size % 256))
        files.append(path)
    with ThreadPoolExecutor(max_workers=1) as pool:
        digests = fs.Digests(pool).start(files[:2])
        for path in files:  # the last was never started: hashed on the spot
            assert digests(path) == hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_extra_files_error_is_raised_and_nothing_is_left(tmp_path):
    """The files written in the thread: their error reaches the caller (after the reports
    waited for them), the staging folder goes, the old set stays."""
    out = tmp_path / "o"
    results = {"meta": {"tool": "t"}, "note": 1}
    write_run(results, out, report=False)
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def broken(folder):
        (folder / "items.parquet").write_bytes(b"half")
        raise RuntimeError("extra broke")

    with pytest.raises(RuntimeError, match="extra broke"):
        write_run({"meta": {"tool": "t"}, "note": 2}, out, report=False, extra=broken)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name] == []


def test_extra_files_are_in_the_manifest_and_hashed_by_croissant(tmp_path):
    """Written beside the reports, the extra file is still there for croissant.json (which
    hashes it) and the manifest."""
    from audit.pipeline import run

    src = tmp_path / "t.csv"
    src.write_text(TABLE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run(src, n_bootstrap=5, seed=0, out=tmp_path / "o")
    out = tmp_path / "o"
    manifest = verify_outputs(out)
    digest = hashlib.sha256((out / "items.parquet").read_bytes()).hexdigest()
    assert manifest["files"]["items.parquet"]["sha256"] == digest
    croissant = json.loads((out / "croissant.json").read_text())
    hashes = {d["@id"]: d.get("sha256") for d in croissant["distribution"]}
    assert hashes["items.parquet"] == digest
    assert hashes["source/0"] == hashlib.sha256(src.read_bytes()).hexdigest()


def test_the_report_rendered_in_two_steps_is_the_one_rendered_at_once(tmp_path):
    """The view built before the extra files exist, the advice.csv link decided after: the
    page of either answer is the page the view built with it gives, in any order of calls."""
    from audit.pipeline import run
    from audit.report.html import build_view, environment, html_renderer
    from audit.results import json_form

    src = tmp_path / "t.csv"
    src.write_text(TABLE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = json_form(run(src, n_bootstrap=5, seed=0))
    assert results["advise"]["items"], "a result with advised items, so the link can show"

    def at_once(flag):
        view = build_view(results, advice_csv=flag)
        return environment().get_template("report.html.j2").render(**view)

    render = html_renderer(results)
    pages = {flag: at_once(flag) for flag in (True, False)}
    assert pages[True] != pages[False]
    for flag in (False, True, False, True):
        assert render(flag) == pages[flag]
