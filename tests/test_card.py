"""The Hugging Face dataset card, its in-place update, and the Croissant RAI fields."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from conftest import shared_data
from huggingface_hub import DatasetCard, DatasetCardData
from results_examples import PAYLOADS, full_results, minimal_results

import datasets
from audit.cli import cli
from audit.errors import InputError
from audit import format as F
from audit.report import card as C
from audit.report import hub_tags as H
from audit.report import prose as P
from audit.report import write_card_file
from audit.report.croissant import croissant_rai
from audit.report.limitations import limitations

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
MULTIPREF = FIXTURES / "multipref" / "multipref_sample.jsonl"
MTBENCH = FIXTURES / "mtbench"
HUB_RESOURCES = Path(datasets.__file__).parent / "utils" / "resources"


def hub_vocab(name: str):
    """The Hub's tag vocabularies as the ``datasets`` package ships them (an independent list)."""
    return json.loads((HUB_RESOURCES / name).read_text())


def assert_valid(text: str) -> DatasetCard:
    """Offline validation: parses, metadata in the Hub's vocabularies, round-trips unchanged."""
    assert C.check_card(text) == []
    card = DatasetCard(text)
    meta = card.data.to_dict()
    DatasetCardData(**meta)  # raises on metadata the card data class cannot hold
    assert set(meta.get("annotations_creators", [])) <= set(hub_vocab("creators.json")["annotations"])
    assert set(meta.get("size_categories", [])) <= set(hub_vocab("size_categories.json"))
    again = DatasetCard(str(card))
    assert again.data.to_dict() == meta and again.text == card.text
    return card


def test_vocabularies_match_the_hub_lists():
    assert list(H.CREATOR_KINDS) == hub_vocab("creators.json")["annotations"]
    assert list(H.SIZE_VALUES) == hub_vocab("size_categories.json")


def f3(x) -> str:
    return f"{x:.3f}"


def pc(x) -> str:
    return f"{100 * x:.1f}%"


def pt(x) -> str:
    return f"{100 * x:+.1f}"


def test_new_card_is_valid_and_has_the_sections():
    r = full_results()
    text = C.render_card(r)
    card = assert_valid(text)
    meta = card.data.to_dict()
    assert meta["annotations_creators"] == ["crowdsourced", "expert-generated", "machine-generated"]
    assert meta["size_categories"] == ["n<1K"]
    assert meta["pretty_name"] == "toy-preferences"
    for heading in ("## Annotations", "### Who the annotators are", "### Judgments per item",
                    "### Reliability per pool", "### Pool disagreement",
                    "### Within-pool variability", "### Leaderboard stability",
                    "### Automatic judges", "### Known limitations"):
        assert heading in card.text, heading
    assert text.count(C.START) == 1 and text.count(C.END) == 1
    rel = r["reliability"]
    cells = [rel["overall"]["krippendorff_alpha"]] + [rel["by_pool"][p]["krippendorff_alpha"]
                                                      for p in ("crowd", "expert")]
    assert "| Krippendorff's α | " + " | ".join(
        f"{f3(e['value'])} [{f3(e['ci95'][0])}, {f3(e['ci95'][1])}]" for e in cells) + " |" in text
    (row,) = [x for x in r["pool_disagreement"] if x["pool_b"] == "expert"
              and x["granularity"] == "label"]
    lo, hi = row["ci95"]["majority_differs_rate"]
    e = row["excess"]["majority_differs_rate"]
    assert (f"labels differ on {pc(row['majority_differs_rate'])} (95% CI {pc(lo)} to {pc(hi)}) "
            f"against {pc(row['null']['majority_differs_rate'])} expected if the pools were "
            f"interchangeable (excess {pt(e['estimate'])} points, 95% CI {pt(e['ci95'][0])} to "
            f"{pt(e['ci95'][1])})") in text
    lo, hi = row["ci95"]["winner_reversed_rate"]
    assert (f"opposite winners on {pc(row['winner_reversed_rate'])} (95% CI {pc(lo)} to "
            f"{pc(hi)}) against {pc(row['null']['winner_reversed_rate'])} expected") in text
    (pair,) = [x for x in r["stability"]["pool_pairs"] if x["pool_b"] == "expert"]
    assert f"(Kendall τ = {f3(pair['kendall_tau'])})" in text


@pytest.mark.parametrize("name", ["08", "1e3", "0o7", "0x1F", "007", "True", "no", "1_000"])
def test_a_dataset_named_like_a_number_is_text_to_yaml_1_1_and_1_2_readers(name):
    """PyYAML wrote pretty_name: 08 and 1e3 plain: text to YAML 1.1 (huggingface_hub's
    yaml.safe_load) but a number to YAML 1.2's core schema (the Hub's pages). The header now
    quotes every such text, so both read the name back as written."""
    from ruamel.yaml import YAML  # a YAML 1.2 reader (great_expectations depends on it)

    from audit.ingest import yamlsafe

    r = full_results()
    r["dataset"]["name"] = name
    text = C.render_card(r)
    header = text.split("---\n")[1]
    assert yaml.safe_load(header)["pretty_name"] == name
    assert YAML(typ="safe", pure=True).load(header)["pretty_name"] == name
    assert yamlsafe.construct(yamlsafe.compose(header))["pretty_name"] == name
    assert assert_valid(text).data.to_dict()["pretty_name"] == name


@pytest.mark.parametrize("name, shown", [
    ("my\x1b[31mset", "my\\x1b[31mset"), ("two\nlines", "two lines"),
    ("tab\there\x07", "tab here\\x07"), ("a\x85b", "a b"), ("rtl\u202eevil", "rtl\\u202eevil"),
    ("zero\u200bwidth", "zero\\u200bwidth"), ("  padded  ", "padded"), ("\n", None),
])
def test_the_default_pretty_name_is_one_line_with_controls_shown(name, shown):
    """The card's pretty_name defaults to the dataset's name, taken from the file name; a file
    named with ESC or a line break wrote it raw (YAML-escaped, shown as a control character on
    the Hub) while --pretty-name or card.pretty_name holding one is refused. It is now written
    as the card's title shows the name: one line, control characters as escapes."""
    r = full_results()
    r["dataset"]["name"] = name
    text = C.render_card(r)
    got = yaml.safe_load(text.split("---\n")[1]).get("pretty_name")
    assert got == shown
    assert assert_valid(text).data.to_dict().get("pretty_name") == shown
    if shown is not None:
        from audit.escape import CONTROL

        assert not CONTROL.search(got)
        assert C.md_escape(got) == C.md_escape(name)  # the title shows the name so


def test_a_file_named_with_an_escape_gets_a_card_without_it(tmp_path):
    source = tmp_path / "my\x1b[31mset.csv"
    source.write_text("item,annotator,label\n1,a,x\n1,b,y\n2,a,x\n2,b,x\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["card", str(source), "--out", str(tmp_path / "o"),
                                      "--bootstrap", "10"])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "o" / "dataset_card.md").read_text(encoding="utf-8")
    assert "\x1b" not in text
    assert yaml.safe_load(text.split("---\n")[1])["pretty_name"] == "my\\x1b[31mset"


@pytest.mark.parametrize(("pool", "judge", "kind"), [
    ("crowd", False, "crowdsourced"), ("normal_worker", False, "crowdsourced"),
    ("mturk", False, "crowdsourced"), ("expert", False, "expert-generated"),
    ("author", False, "expert-generated"), ("gpt-4", True, "machine-generated"),
    ("expert", True, "machine-generated"), ("target", False, "expert-generated"),
])
def test_pool_creator_rules(pool, judge, kind):
    assert H.pool_creator(pool, judge=judge) == kind


def test_creator_overrides_and_errors():
    r = minimal_results()  # pools target / control: neither says crowd nor expert
    assert C.card_data(r).annotations_creators == ["expert-generated"]
    assert C.card_data(r, default_creator="crowdsourced").annotations_creators == ["crowdsourced"]
    assert C.card_data(r, creators={"target": "found"}).annotations_creators == \
        ["found", "expert-generated"]
    with pytest.raises(InputError, match="volunteers") as err:
        C.card_data(r, creators={"target": "volunteers"})
    assert err.value.key == "creator target"
    with pytest.raises(InputError, match="no pool 'nobody'"):
        C.card_data(r, creators={"nobody": "found"})
    with pytest.raises(InputError, match="POOL=KIND"):
        H.parse_creators(["crowd"])
    assert H.parse_creators(["a=b=crowdsourced"]) == {"a=b": "crowdsourced"}


def test_a_pool_given_two_creator_kinds_is_refused():
    """``--creator crowd=found --creator crowd=crowdsourced`` kept the last silently."""
    with pytest.raises(InputError, match="two kinds, 'found' and 'crowdsourced'") as err:
        H.parse_creators(["crowd=found", "expert=expert-generated", "crowd=crowdsourced"])
    assert err.value.key == "creator"
    assert H.parse_creators(["crowd=found", "crowd= found"]) == {"crowd": "found"}


@pytest.mark.parametrize(("n", "cat"), [(0, "n<1K"), (999, "n<1K"), (1000, "1K<n<10K"),
                                        (9999, "1K<n<10K"), (10_000, "10K<n<100K"),
                                        (10**6, "1M<n<10M"), (None, "unknown")])
def test_size_category(n, cat):
    assert H.size_category(n) == cat


# -- known limitations from the numbers --------------------------------------------------------------
def test_limitations_follow_the_numbers():
    r = full_results()
    text = " ".join(limitations(r))
    alpha = {p: s["krippendorff_alpha"]["value"] for p, s in r["reliability"]["by_pool"].items()}
    assert alpha["crowd"] < 0.667 and "crowd pool is low" in text and f3(alpha["crowd"]) in text
    (row,) = [x for x in r["pool_disagreement"] if x["pool_b"] == "expert"
              and x["granularity"] == "label"]
    assert row["null"]["p_value"] < 0.05
    assert (f"differ on {pc(row['majority_differs_rate'])} of items against "
            f"{pc(row['null']['majority_differs_rate'])} expected") in text
    assert (f"opposite winners on {pc(row['winner_reversed_rate'])} against "
            f"{pc(row['null']['winner_reversed_rate'])} expected") in text
    effect = {w["pool"]: w["annotator_effect_p"] for w in r["within_pool"]}
    assert effect["crowd"] < 0.05 and "Annotators within crowd are not interchangeable " \
        "(within-item permutation p" in text
    assert "gpt-4 is an automatic judge" in text
    few = copy.deepcopy(r)
    few["dataset"]["judgments_per_item"]["min"] = 2
    assert "only 2 judgments" in " ".join(limitations(few))

    good = copy.deepcopy(r)
    for stats in good["reliability"]["by_pool"].values():
        stats["krippendorff_alpha"] = {"value": 0.9, "ci95": [0.85, 0.95]}
    good["pool_disagreement"] = [dict(row, null=dict(row["null"], p_value=0.4))
                                 for row in r["pool_disagreement"]]  # null p above 0.05
    good["within_pool"] = []
    good["dataset"]["judgments_per_item"]["min"] = 3
    good["stability"] = {}
    good["expectations"] = {}
    good["judge_alignment"] = []
    good["dataset"]["pools"]["gpt-4"]["judge"] = False
    assert limitations(good) == [limitations({})[0]]
    assert "No check crossed" in limitations({})[0]


def test_undefined_pools_are_named_once():
    r = minimal_results()
    for stats in r["reliability"]["by_pool"].values():
        stats["krippendorff_alpha"] = {"value": None, "ci95": [None, None]}
    lim = [s for s in limitations(r) if "cannot be measured" in s]
    e = r["reliability"]["overall"]["krippendorff_alpha"]
    assert lim == ["Agreement within control and target cannot be measured (a single annotator, or "
                   "no item judged twice), so the reliability of those pools is unknown; across "
                   f"every human annotator together, Krippendorff's α = {f3(e['value'])} (95% CI "
                   f"{f3(e['ci95'][0])} to {f3(e['ci95'][1])})."]
    assert P.reliability_sentences(r)[-1].startswith("Agreement is undefined within control, target")
    r["dataset"]["judgments_per_item"] = {"min": 6, "median": 6.0, "max": 6}
    assert P.annotations_per_item(r).startswith("6 judgments per item;")


def test_single_pool_is_a_limitation():
    r = minimal_results()
    r["dataset"]["pools"] = {"all": r["dataset"]["pools"]["target"]}
    assert any("one annotator pool (all)" in s for s in limitations(r))


# -- updating a card in place ------------------------------------------------------------------------
HAND_WRITTEN = """---
# my comment survives
license: mit
language:
- en
annotations_creators:
- found
---

# My dataset

Hand-written intro, *kept*.

{block}

## Citation

Hand-written citation, kept.
"""


def test_update_in_place_keeps_hand_text_and_user_yaml():
    old_block = f"{C.START}\nstale numbers 0.999\n{C.END}"
    existing = HAND_WRITTEN.format(block=old_block)
    text = C.render_card(full_results(), existing=existing)
    card = assert_valid(text)
    meta = card.data.to_dict()
    assert meta["license"] == "mit" and meta["language"] == ["en"]
    assert meta["annotations_creators"] == ["found"]  # the user's value wins
    assert meta["size_categories"] == ["n<1K"]  # computed keys are added
    assert "# my comment survives" in text
    assert "Hand-written intro, *kept*." in text and "Hand-written citation, kept." in text
    assert text.index("Hand-written intro") < text.index(C.START) < \
        text.index(C.END) < text.index("## Citation")
    e = full_results()["reliability"]["by_pool"]["crowd"]["krippendorff_alpha"]
    assert "stale numbers" not in text and \
        f"{f3(e['value'])} [{f3(e['ci95'][0])}, {f3(e['ci95'][1])}]" in text
    assert C.render_card(full_results(), existing=text) == text  # idempotent


def test_update_appends_block_when_no_markers():
    existing = "---\nlicense: mit\n---\n\n# Mine\n\nText.\n"
    text = C.render_card(minimal_results(), existing=existing)
    assert_valid(text)
    assert text.index("Text.") < text.index(C.START)
    no_yaml = C.render_card(minimal_results(), existing="# Mine\n\nNo metadata yet.\n")
    card = assert_valid(no_yaml)
    assert card.data.to_dict()["annotations_creators"] == ["expert-generated"]


def test_update_rejects_broken_markers_and_yaml():
    with pytest.raises(InputError, match="no .*annotation-audit:end"):
        C.render_card(full_results(), existing=f"# x\n{C.START}\nhalf a block\n")
    with pytest.raises(InputError, match="not a mapping"):
        C.render_card(full_results(), existing="---\n- a\n- b\n---\ntext\n")


def test_an_unclosed_yaml_block_is_refused_not_demoted_to_text():
    """A card whose first line opens the metadata (``---``) and that never closes it: its
    license and other keys would have been kept only as Markdown text, so the card is refused,
    naming the file."""
    with pytest.raises(InputError, match="no '---' line closes it") as err:
        C.render_card(full_results(), existing="---\nlicense: mit\n\n# Mine\n",
                      path="README.md")
    assert "README.md" in str(err.value)


def test_a_crlf_card_stays_crlf_and_keeps_its_lines():
    """A card written on Windows is updated with CRLF line breaks throughout: the user's lines
    are unchanged bytes, and re-running changes nothing."""
    existing = HAND_WRITTEN.format(block="").replace("\n", "\r\n")
    text = C.render_card(full_results(), existing=existing)
    assert "\n" not in text.replace("\r\n", "")  # no bare LF
    assert_valid(text)
    for line in existing.split("\r\n"):
        if line.strip() and not line.startswith(("annotations_creators", "---")):
            assert line + "\r\n" in text, line
    assert C.render_card(full_results(), existing=text) == text
    lf = C.render_card(full_results(), existing=HAND_WRITTEN.format(block=""))
    assert "\r" not in lf and text == lf.replace("\n", "\r\n")


def test_write_card_updates_the_file(tmp_path):
    path = tmp_path / "README.md"
    path.write_text(HAND_WRITTEN.format(block=""))
    write_card_file(full_results(), path)
    first = path.read_text()
    assert "Hand-written citation, kept." in first and first.count(C.START) == 1
    write_card_file(minimal_results(), path)
    second = path.read_text()
    assert second.count(C.START) == 1 and "target" in second and "toy-preferences" not in \
        second.split(C.START)[1]


def test_write_card_warns_on_a_bad_hand_written_tag(tmp_path):
    path = tmp_path / "card.md"
    path.write_text("---\nannotations_creators:\n- volunteers\n---\ntext\n")
    with pytest.warns(Warning, match="volunteers"):
        write_card_file(full_results(), path)


# -- escaping ----------------------------------------------------------------------------------------
def test_hostile_names_cannot_break_the_card():
    r = full_results(hostile=True)
    text = C.render_card(r)
    card = assert_valid(text)
    assert card.data.to_dict()["pretty_name"] == r["dataset"]["name"]  # YAML quoting round-trips
    body = card.text
    for bad in ("<script", "<img", "<svg", "</style", "</textarea"):
        assert bad not in body, bad
    assert body.count(C.START) == 1 and body.count(C.END) == 1
    assert "&lt;script&gt;" in body
    assert C.md_escape("a|b*c_d`e[f](g)<h>&") == r"a\|b\*c\_d\`e\[f\](g)&lt;h&gt;&amp;"
    assert C.md_escape("two\nlines") == "two lines"


# -- Croissant RAI -----------------------------------------------------------------------------------
def test_croissant_rai_fields():
    r = full_results()
    node = croissant_rai(r)
    assert node["@context"]["rai"] == "http://mlcommons.org/croissant/RAI/"
    assert node["@type"] == "sc:Dataset" and node["name"] == "toy-preferences"
    assert node["rai:annotationsPerItem"].startswith("6 judgments per item; 720 judgments of 120 "
                                                     "items by 8 annotators in 3 pools")
    rate = r["pool_disagreement"][0]["majority_differs_rate"]
    assert any(pc(rate) in s for s in node["rai:dataAnnotationAnalysis"])
    alpha = r["reliability"]["by_pool"]["crowd"]["krippendorff_alpha"]["value"]
    assert any(f"crowd: Krippendorff's α = {f3(alpha)}" in s
               for s in node["rai:dataAnnotationAnalysis"])
    assert node["rai:machineAnnotationTools"] == ["gpt-4"]
    assert node["rai:dataLimitations"] == limitations(r)
    hostile = croissant_rai(full_results(hostile=True))
    assert PAYLOADS[0] in json.dumps(hostile, ensure_ascii=False)  # JSON carries the raw text


# -- the CLI command and real data -------------------------------------------------------------------
def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_cli_card_writes_only_the_card(tmp_path):
    out = tmp_path / "out"
    result = invoke("card", MULTIPREF, "--out", out, "--bootstrap", 30)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["dataset_card.md", "manifest.json"]
    card = assert_valid((out / "dataset_card.md").read_text())
    assert card.data.to_dict()["annotations_creators"] == ["crowdsourced", "expert-generated"]


def test_cli_card_updates_a_card_in_place(tmp_path):
    path = tmp_path / "README.md"
    path.write_text(HAND_WRITTEN.format(block=""))
    result = invoke("card", MULTIPREF, "--card", path, "--bootstrap", 30,
                    "--default-creator", "crowdsourced")
    assert result.exit_code == 0, result.output
    text = path.read_text()
    assert "Hand-written citation, kept." in text and "license: mit" in text
    assert_valid(text)


@pytest.mark.parametrize("args", [[], ["--out", "x", "--card", "y.md"]])
def test_cli_card_needs_exactly_one_destination(args):
    result = invoke("card", MULTIPREF, *args)
    assert result.exit_code == 2 and "exactly one of --out DIR or --card PATH" in result.output


def test_cli_card_bad_creator_is_a_clean_error(tmp_path):
    result = invoke("card", MULTIPREF, "--card", tmp_path / "c.md", "--creator", "crowd",
                    "--bootstrap", 10)
    assert result.exit_code == 2 and "POOL=KIND" in result.output
    assert "Traceback" not in result.output


def _real_sources():
    yield pytest.param(lambda: MULTIPREF, ["crowdsourced", "expert-generated"], id="multipref")
    yield pytest.param(lambda: MTBENCH, ["expert-generated", "machine-generated"], id="mt-bench")
    yield pytest.param(lambda: shared_data("lewidi2023/HS-Brexit"), ["expert-generated"],
                       id="hs-brexit")


@pytest.mark.parametrize(("source", "creators"), list(_real_sources()))
def test_card_for_real_datasets(source, creators, tmp_path):
    import audit

    results = audit.run(source(), n_bootstrap=30)
    text = C.render_card(results)
    card = assert_valid(text)
    assert card.data.to_dict()["annotations_creators"] == creators
    for pool in results["dataset"]["pools"]:
        assert C.md_escape(pool) in text
    assert yaml.safe_load(text.split("---")[1])["size_categories"] == \
        [H.size_category(results["dataset"]["n_items"])]


# -- sentences: comments, counts, the pooled board --------------------------------------------------
@pytest.mark.parametrize(("text", "safe"), [
    ("0.1.0", "0.1.0"), ("1.0--rc", "1.0- -rc"), ("x-->y", "x- ->y"), ("a---b", "a- - -b"),
    ("><script>", "<script>"),
])
def test_a_version_in_the_html_comment_is_not_markdown_escaped_and_cannot_close_it(text, safe):
    assert C.html_comment(text) == safe
    assert "--" not in C.html_comment(text)


def test_the_generated_comment_shows_the_version_as_is():
    r = full_results()
    r["meta"]["version"] = "0.1.0--evil-->"
    block = C.annotations_block(r)
    comment = block.split("\n")[1]
    assert comment.startswith("<!-- Generated by annotation-audit 0.1.0- -evil- -> from")
    assert comment.count("-->") == 1 and comment.endswith("-->")
    assert "0\\.1" not in block


@pytest.mark.parametrize(("count", "text"), [(0, "0 models"), (1, "1 model"), (2, "2 models"),
                                             (1_234, "1,234 models"), (None, "NaN models")])
def test_counts_take_the_right_number(count, text):
    assert F.count(count, "model") == text


def test_no_count_is_written_with_a_parenthesised_plural():
    r = full_results()
    assert "(s)" not in C.annotations_block(r)
    r["stability"]["pool_pairs"][0]["n_displaced"] = 1
    assert "1 model changes rank" in C.annotations_block(r)


def test_the_all_board_reads_as_the_pooled_leaderboard():
    r = full_results()
    assert P.board("all", r) == "the pooled leaderboard (all human pools)"
    r["dataset"]["pools"]["all"] = {"n_annotators": 3}  # a pool really named "all"
    assert P.board("all", r) == "the all leaderboard"


def test_the_reason_for_no_null_is_said_once_and_names_its_pairs():
    said = ["On a and b, x.", "On a and c, y.", "On b and c, z."]
    assert P._say_no_null_once(said, []) == said
    assert P._say_no_null_once(said[:1], [("a and b", "why")]) == ["On a and b, x. No permutation "
                                                                   "null: why."]
    every = P._say_no_null_once(said, [("a and b", "why"), ("a and c", "why"), ("b and c", "why")])
    assert every == said + ["No pair has a permutation null: why."]
    some = P._say_no_null_once(said, [("a and b", "why"), ("b and c", "why")])
    assert some == said + ["No permutation null for a and b; b and c: why."]


def test_rank_changes_between_several_pool_pairs_are_one_sentence():
    r = {"stability": {"pool_pairs": [
        {"pool_a": "a", "pool_b": "b", "n_displaced": 5, "kendall_tau": 0.5},
        {"pool_a": "a", "pool_b": "c", "n_displaced": 0, "kendall_tau": 1.0},
        {"pool_a": "b", "pool_b": "c", "n_displaced": 1, "kendall_tau": 0.9}]}}
    said = [s for s in limitations(r) if "depends on who judges" in s]
    assert said == ["The leaderboard depends on who judges: switching from a to b changes the rank "
                    "of 5 models (Kendall τ = 0.500); from b to c, of 1 model (Kendall τ = 0.900)."]


CARD_TEXTS = {
    "rendered": None,  # filled in by the test: a card render_card writes
    "no_yaml": "# A card\n\nno metadata block\n",
    "empty_yaml": "---\n---\n# body\n",
    "crlf": "---\r\nlicense: mit\r\nlanguage:\r\n- en\r\n---\r\n# body\r\n",
    "indented_start": "  \n---\npretty_name: x\n---\nbody ---\n",
    "list_yaml": "---\n- a\n- b\n---\nbody\n",
    "broken_yaml": "---\nlicense: [mit\n---\nbody\n",
    "scalar_yaml": "---\njust text\n---\nbody\n",
    "unknown_keys": "---\nmy_key: 1\nannotations_creators: crowdsourced\n---\nbody\n",
    "markers_in_yaml": f"---\npretty_name: '{C.START}'\n---\n{C.START}\n{C.END}\n",
    "no_closing_fence": "---\nlicense: mit\nbody without a closing fence\n",
}


@pytest.mark.parametrize("name", list(CARD_TEXTS))
def test_parse_card_reads_a_card_as_datasetcard_does(name):
    """check_card parses without huggingface_hub.repocard (it imports the Hub client): the
    metadata and body it reads, and whether it fails, are DatasetCard's."""
    from huggingface_hub.repocard import REGEX_YAML_BLOCK

    assert C.YAML_BLOCK.pattern == REGEX_YAML_BLOCK.pattern
    text = CARD_TEXTS[name] or C.render_card(full_results())
    try:
        card = DatasetCard(text)
    except Exception as err:
        with pytest.raises(type(err)):
            C.parse_card(text)
        assert C.check_card(text)[0].startswith("metadata does not parse")
        return
    assert C.parse_card(text) == (card.data.to_dict(), card.text)
