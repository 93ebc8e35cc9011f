"""``annotation-audit advise`` and ``audit.advise`` end to end (issue 18, item 2's user side).

On the demo and HS-Brexit: the command prints the advise block's sentences and its items in
their order; ``--out`` adds ``advice.csv`` and ``advice.parquet`` to the set (in the manifest),
holding exactly the block's items; ``--csv`` prints the CSV file's bytes; the same seed gives
the same bytes. Hostile ids (leading zeros, Unicode, spreadsheet formulas) round-trip: Parquet
keeps them as written, the CSV defuses formulas and :func:`unescape_cell` gives them back.
Bad flags are exit 2 naming the flag, before the data is read.
"""

from __future__ import annotations

import csv
import io
import json
import re

import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import REPO, shared_data

import audit
from audit.advice import ADVISE_DEFAULTS, TARGETS, advise_sentences
from audit.cli import cli
from audit.errors import InputError
from audit.escape.spreadsheet import unescape_cell

DEMO = REPO / "data" / "pandalm" / "testset-v1.json"
FAST = ["--bootstrap", "20"]


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def read_csv(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("advise") / "demo"
    result = invoke("advise", DEMO, "--budget", "50", *FAST, "--out", out, "--quiet")
    assert result.exit_code == 0, result.output
    return result, json.loads((out / "results.json").read_text(encoding="utf-8")), out


def test_demo_prints_the_sentences_and_the_items_in_order(demo):
    result, results, _ = demo
    block = results["advise"]
    # the demo compares models, every judgment counted (the default unit): labels target
    assert block["target"] == "labels" and block["unit"] == "judgment" and block["note"]
    items = [str(it["item"]) for it in block["items"]]
    assert 0 < len(items) <= 50
    printed = " ".join(result.output.split())
    for s in advise_sentences(block):
        assert " ".join(s.split()) in printed
    lines = result.output.splitlines()
    for rank, item in enumerate(items[:10], 1):  # the table: rank and id side by side
        assert any(re.match(rf"\s*{rank}\s+{re.escape(item)}\s", line) for line in lines)
    assert all(item in printed for item in items)  # every advised id on the one screen


def test_out_writes_advice_files_with_the_block_s_items(demo):
    _, results, out = demo
    items = [str(it["item"]) for it in results["advise"]["items"]]
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert {"advice.csv", "advice.parquet", "results.json", "report.html"} <= \
        set(manifest["files"])
    rows = read_csv((out / "advice.csv").read_text(encoding="utf-8"))
    assert [unescape_cell(r["item"]) for r in rows] == items
    frame = pd.read_parquet(out / "advice.parquet")
    assert frame["item"].tolist() == items
    assert [int(r) for r in frame["rank"]] == list(range(1, len(items) + 1))
    assert 'href="advice.csv"' in (out / "report.html").read_text(encoding="utf-8")


def test_csv_flag_prints_the_file_s_bytes_same_seed_same_bytes(demo, tmp_path):
    _, _, out = demo
    printed = invoke("advise", DEMO, "--budget", "50", *FAST, "--csv", "--quiet")
    assert printed.exit_code == 0, printed.output
    assert printed.stdout.encode("utf-8") == (out / "advice.csv").read_bytes()
    again = invoke("advise", DEMO, "--budget", "50", *FAST, "--out", tmp_path / "a", "--quiet")
    assert again.exit_code == 0, again.output
    for name in ("results.json", "advice.csv", "advice.parquet", "report.html"):
        assert (tmp_path / "a" / name).read_bytes() == (out / name).read_bytes(), name


def test_budget_caps_the_list_and_run_has_the_defaults(demo):
    _, results, _ = demo
    few = audit.advise(DEMO, budget=5, n_bootstrap=20)["advise"]
    assert len(few["items"]) <= 5
    full = [it["item"] for it in results["advise"]["items"]]
    assert [it["item"] for it in few["items"]] == full[:len(few["items"])]
    ran = audit.run(DEMO, n_bootstrap=20)["advise"]
    assert ran["budget"] == ADVISE_DEFAULTS["budget"] and ran["more"] == ADVISE_DEFAULTS["more"]
    assert "plan" in audit.run(DEMO, n_bootstrap=20)


def test_hs_brexit_targets_labels(tmp_path):
    source = shared_data("lewidi2023/HS-Brexit")
    result = invoke("advise", source, "--budget", "50", *FAST, "--out", tmp_path / "o",
                    "--quiet")
    assert result.exit_code == 0, result.output
    results = json.loads((tmp_path / "o" / "results.json").read_text(encoding="utf-8"))
    block = results["advise"]
    assert block["target"] == "labels"  # no models: the labels are what re-annotation fixes
    rows = read_csv((tmp_path / "o" / "advice.csv").read_text(encoding="utf-8"))
    assert [unescape_cell(r["item"]) for r in rows] == [str(it["item"]) for it in block["items"]]
    pools = {it["pool"] for it in block["items"]}
    if len(pools) > 1:  # whom to send each item to: a column, not the title (the first ten's)
        assert "send to" in result.output and "items to send back (" in result.output
    else:
        assert f"items to send back to {pools.pop()}" in result.output


HOSTILE_IDS = ["007", "0042", "=cmd|' /C calc'!A0", "+SUM(1,1)", "@x", "-2+3", "héllo-ü",
               "日本語", "'=quoted", "a,b\"c"]


def hostile_frame() -> pd.DataFrame:
    """Ten items of two pools of three annotators, each item a split vote in the crowd (so
    every item has something to advise on), ids that a spreadsheet or a number parser would
    change."""
    rows = []
    for i, item in enumerate(HOSTILE_IDS):
        for pool in ("crowd", "expert"):
            for j in range(3):
                label = (i + j) % 2 if pool == "crowd" else i % 2
                rows.append({"item": item, "annotator": f"{pool}{j}", "pool": pool,
                             "label": label, "text": f"=HYPERLINK(\"x\") {item}"})
    return pd.DataFrame(rows)


def test_hostile_ids_round_trip(tmp_path):
    frame = hostile_frame()
    frame.to_csv(tmp_path / "hostile.csv", index=False)
    results = audit.advise(tmp_path / "hostile.csv", budget=10, target="labels",
                           n_bootstrap=20, out=tmp_path / "o", spec={
                               "columns": {"item": "item", "annotator": "annotator",
                                           "pool": "pool", "label": "label", "text": "text"},
                               "label": {"kind": "nominal"}})
    items = [str(it["item"]) for it in results["advise"]["items"]]
    assert items and set(items) <= set(HOSTILE_IDS)
    parquet = pd.read_parquet(tmp_path / "o" / "advice.parquet")
    assert parquet["item"].tolist() == items  # exactly as written: zeros, Unicode, formulas
    text = (tmp_path / "o" / "advice.csv").read_text(encoding="utf-8")
    rows = read_csv(text)
    assert [unescape_cell(r["item"]) for r in rows] == items
    for r in rows:
        for cell in r.values():
            assert not cell or cell[0] not in "=+@" or cell.startswith("'"), cell
        assert r["item"] in {"007", "0042"} or not r["item"].isdigit()


@pytest.mark.parametrize("args, flag", [(["--budget", "0"], "--budget"),
                                        (["--target", "votes"], "--target"),
                                        (["--more", "0"], "--more"),
                                        (["--seed", "-1"], "--seed")])
def test_bad_flag_is_exit_2_naming_it_before_reading(args, flag, tmp_path):
    result = invoke("advise", tmp_path / "absent.csv", *args)
    assert result.exit_code == 2
    assert flag in result.output and "absent.csv" not in result.output


@pytest.mark.parametrize("options, flag", [({"budget": 0}, "--budget"),
                                           ({"target": "votes"}, "--target"),
                                           ({"more": 0}, "--more"), ({"budget": 2.5}, "--budget")])
def test_api_checks_options_before_reading(options, flag, monkeypatch, tmp_path):
    import audit.ingest

    def never(*args, **kwargs):
        raise AssertionError("the data was read")

    monkeypatch.setattr(audit.ingest, "load", never)
    with pytest.raises(InputError, match=flag):
        audit.advise(tmp_path / "absent.csv", **options)


def test_cli_targets_are_the_library_s():
    option = next(p for p in cli.commands["advise"].params if p.name == "target")
    assert tuple(option.type.choices) == tuple(TARGETS)


def test_terminal_answer_shows_hostile_ids_inert(tmp_path):
    """Ids holding an escape sequence, rich markup and a workflow command print as text."""
    from rich.console import Console

    from audit.report.next_terminal import print_advice
    from audit.results import json_form

    frame = hostile_frame()
    evil = {"007": "\x1b]0;pwned\x07id", "0042": "[bold red]x[/bold red]", "@x": "::error::x"}
    frame["item"] = frame["item"].replace(evil)
    results = json_form(audit.advise(frame, budget=10, target="labels", n_bootstrap=20))
    advised = [str(it["item"]) for it in results["advise"]["items"]]
    assert set(evil.values()) <= set(advised)
    buf = io.StringIO()
    print_advice(results, console=Console(file=buf, width=200, highlight=False, soft_wrap=True,
                                          emoji=False))
    text = buf.getvalue()
    assert "\x1b" not in text and "\x07" not in text
    assert "[bold red]x[/bold red]" in text  # shown, not applied
    assert not any(line.lstrip("│ ").startswith("::") for line in text.splitlines())


def test_leaderboard_advice_follows_the_scoring(tmp_path):
    """A plain run and ``advise`` without ``--target`` advise on the leaderboard when it counts
    one vote per item (with what the benchmark found in its note), and on the labels, saying
    why, when it counts every judgment; there ``--target leaderboard`` lists nothing."""
    from audit.advice.advise import CAVEAT, JUDGMENT_SKIP, LABELS_NOTE, MAJORITY_NOTE

    ran = audit.run(DEMO, n_bootstrap=20, unit="majority")["advise"]
    assert ran["target"] == "leaderboard" and ran["note"] == MAJORITY_NOTE and ran["items"]
    assert advise_sentences(ran)[1] == CAVEAT["majority"]
    counted = audit.run(DEMO, n_bootstrap=20)["advise"]
    assert counted["target"] == "labels" and counted["note"] == LABELS_NOTE
    judged = audit.advise(DEMO, n_bootstrap=20, target="leaderboard")["advise"]
    assert judged["items"] == [] and judged["skipped"] == JUDGMENT_SKIP
    printed = invoke("advise", DEMO, *FAST, "--target", "leaderboard", "--out", tmp_path / "r")
    assert printed.exit_code == 0, printed.output
    assert "--unit majority" in " ".join(printed.output.split())


def test_an_item_without_text_is_listed_with_none_not_the_word(tmp_path):
    """Items whose text cell is empty: the flipped-item listing gives ``null`` (the results
    contract allows it), the advice files an empty cell, never ``nan`` / ``None``; an item
    whose text is the word ``nan`` keeps it."""
    rows = ["item,annotator,pool,model_a,model_b,label,text"]
    for i in range(40):
        text = "" if i % 4 == 0 else "nan" if i % 4 == 1 else f"prompt {i}"
        first, second = ("A", "B") if i % 2 else ("B", "A")
        for k in range(3):
            rows.append(f"{i:03d},c{k},crowd,m{i % 3},m{i % 3 + 1},{first},{text}")
            rows.append(f"{i:03d},e{k},expert,m{i % 3},m{i % 3 + 1},{second},{text}")
    rows += [f"{i:03d},c3,crowd,m{i % 3},m{i % 3 + 1},tie,{'' if i % 4 == 0 else 'x'}"
             for i in range(40, 44)]
    src = tmp_path / "t.csv"
    src.write_text("\n".join(rows) + "\n")
    out = tmp_path / "out"
    res = invoke("run", src, "--out", out, *FAST, "--quiet")
    assert res.exit_code == 0, res.output
    results = json.loads((out / "results.json").read_text())
    listed = results["stability"]["flipped_items"]["items"]
    assert len(listed) == 40
    for entry in listed:
        i = int(entry["item"])
        assert entry["text"] == (None if i % 4 == 0 else "nan" if i % 4 == 1 else f"prompt {i}")
    res = invoke("advise", src, "--budget", "50", "--target", "labels", "--out", tmp_path / "a",
                 *FAST)
    assert res.exit_code == 0, res.output
    advised = pd.read_parquet(tmp_path / "a" / "advice.parquet")
    assert len(advised)
    for item, text in zip(advised["item"], advised["text"]):
        i = int(item)
        want = (None if i % 4 == 0 else "x" if i >= 40 else "nan" if i % 4 == 1
                else f"prompt {i}")
        assert (None if pd.isna(text) else text) == want, item
    cells = {r["item"]: r["text"] for r in read_csv((tmp_path / "a" / "advice.csv").read_text())}
    assert all(cells[f"{i:03d}"] == "" for i in range(0, 44, 4) if f"{i:03d}" in cells)


def test_run_caps_the_leaderboard_target_advise_does_not(monkeypatch):
    """A plain run skips the leaderboard target above ``RUN_MAX_CELLS`` units x adjacent pairs
    (saying to run ``annotation-audit advise``); ``advise`` computes it whatever the size."""
    import audit.advice.advise as advise_mod

    monkeypatch.setattr(advise_mod, "RUN_MAX_CELLS", 10)
    ran = audit.run(DEMO, n_bootstrap=20, unit="majority")["advise"]
    assert ran["items"] == [] and "annotation-audit advise" in ran["skipped"]
    asked = audit.advise(DEMO, n_bootstrap=20, unit="majority")["advise"]
    assert asked["skipped"] is None and asked["items"]


def test_more_above_its_maximum_is_refused_before_the_audit():
    """``--more 11`` ran the whole audit and then failed naming ``key 'more'``; the option's
    range (1 to MORE_MAX, shown in --help) refuses it first, and so does the API."""
    from audit.advice import MORE_MAX

    result = invoke("advise", DEMO, "--more", str(MORE_MAX + 1), *FAST)
    assert result.exit_code == 2 and "--more" in result.output, result.output
    assert "loading" not in result.output and "key 'more'" not in result.output
    assert f"1<=x<={MORE_MAX}" in invoke("advise", "--help").output
    with pytest.raises(InputError, match=f"--more must be a whole number from 1 to {MORE_MAX}"):
        audit.advise(DEMO, more=MORE_MAX + 1, n_bootstrap=20)


def test_nothing_advised_prints_the_same_header_as_advice_csv(tmp_path):
    """Every item unanimous: nothing to advise. ``--csv`` printed fewer columns than
    ``advice.csv`` (no pool label-count columns); a tool reading either gets one header."""
    rows = ["item,annotator,pool,label"] + [f"{i},{a},crowd,{'xy'[i % 2]}"
                                            for i in range(30) for a in "abc"]
    (tmp_path / "u.csv").write_text("\n".join(rows) + "\n")
    printed = invoke("advise", tmp_path / "u.csv", *FAST, "--csv", "--quiet")
    written = invoke("advise", tmp_path / "u.csv", *FAST, "--out", tmp_path / "o", "--quiet")
    assert printed.exit_code == 0 and written.exit_code == 0, printed.output + written.output
    assert printed.stdout.encode("utf-8") == (tmp_path / "o" / "advice.csv").read_bytes()
    header = next(csv.reader(io.StringIO(printed.stdout)))
    assert header[-2:] == ["crowd:count:x", "crowd:count:y"] and len(printed.stdout.splitlines()) == 1
