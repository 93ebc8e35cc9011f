"""The dataset card's publishing metadata (issue 15, item 3): spec ``card:`` section and flags,
checked offline against huggingface_hub's metadata rules, and safe whatever the names hold.

``DatasetCard.validate()`` posts to the Hub, so the checks that can run offline are made with the
library itself: :class:`huggingface_hub.DatasetCard` loads the card, its
:class:`~huggingface_hub.DatasetCardData` is rebuilt from the YAML, and the metadata round-trips
through :func:`huggingface_hub.metadata_save` / :func:`~huggingface_hub.metadata_load`; language
codes are checked against the list the ``datasets`` library ships.
"""

from __future__ import annotations

import json
import warnings
from importlib.resources import files
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from huggingface_hub import DatasetCard, DatasetCardData, metadata_load, metadata_save

from audit.cli import cli
from audit.errors import InputError
from audit.escape.markdown import one_line
from audit.report import card_meta as M
from audit.report.card import check_card
from audit.report.hub_tags import CREATOR_KINDS, SIZE_VALUES

DEMO = Path(__file__).resolve().parents[1] / "data" / "pandalm" / "testset-v1.json"
TABLE = "item,annotator,pool,label\n" + "".join(
    f"{i},{a},{p},{'xy'[(i * 7 + ord(a)) % 3 == 0]}\n"
    for i in range(12) for a, p in (("a", "crowd"), ("b", "crowd"), ("c", "expert")))
FLAGS = ["--license", "apache-2.0", "--language", "en", "--task-category",
         "text-classification", "--tag", "preference", "--tag", "human-annotation",
         "--pretty-name", "PandaLM test set"]


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def front(text: str) -> dict:
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("\n---\n", 1)[0][4:])


@pytest.fixture(scope="module")
def demo_card(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "out"
    result = invoke("run", DEMO, "--out", out, "--bootstrap", 20, "--quiet", *FLAGS)
    assert result.exit_code == 0, result.output
    return (out / "dataset_card.md").read_text(encoding="utf-8")


# -- the demo's card against huggingface_hub -------------------------------------------------------
def test_demo_card_metadata_passes_huggingface_hub_checks(demo_card, tmp_path):
    card = DatasetCard(demo_card)
    meta = card.data.to_dict()
    assert meta["license"] == "apache-2.0"
    assert meta["language"] == ["en"]
    assert meta["task_categories"] == ["text-classification"]
    assert meta["tags"] == ["preference", "human-annotation"]
    assert meta["pretty_name"] == "PandaLM test set"
    assert meta["size_categories"] == ["n<1K"]  # 999 items
    assert set(meta["annotations_creators"]) <= set(CREATOR_KINDS)
    assert DatasetCardData(**meta).to_dict() == meta
    path = tmp_path / "README.md"
    path.write_text(demo_card, encoding="utf-8")
    assert metadata_load(path) == meta
    metadata_save(path, meta)
    assert metadata_load(path) == meta
    assert check_card(demo_card) == []


def test_demo_card_values_in_the_hubs_vocabularies(demo_card):
    meta = front(demo_card)
    languages = json.loads(files("datasets.utils.resources").joinpath("languages.json")
                           .read_text("utf-8"))
    sizes = json.loads(files("datasets.utils.resources").joinpath("size_categories.json")
                       .read_text("utf-8"))
    creators = json.loads(files("datasets.utils.resources").joinpath("creators.json")
                          .read_text("utf-8"))
    assert all(code in languages for code in meta["language"])
    assert set(meta["size_categories"]) <= set(sizes)
    assert set(meta["annotations_creators"]) <= set(creators["annotations"])
    assert meta["license"] in M.HUB_LICENSES and meta["task_categories"][0] in M.HUB_TASKS


def test_size_category_buckets_match_datasets_list():
    sizes = json.loads(files("datasets.utils.resources").joinpath("size_categories.json")
                       .read_text("utf-8"))
    assert list(SIZE_VALUES) == sizes


# -- parsing: spec section and flags ---------------------------------------------------------------
def test_flags_override_the_spec_key_by_key():
    spec = {"license": "mit", "language": ["en", "de"], "tags": ["a"], "pretty_name": "S",
            "description": "d", "url": "https://example.org/x"}
    out = M.card_metadata(spec, language=("fr", "fr", "en"), pretty_name=" Flag ")
    assert out == {"license": "mit", "language": ["fr", "en"], "tags": ["a"],
                   "pretty_name": "Flag", "description": "d", "url": "https://example.org/x"}
    assert M.yaml_fields(out) == {"license": "mit", "language": ["fr", "en"], "tags": ["a"],
                                  "pretty_name": "Flag"}
    assert M.card_metadata(None) == {}


@pytest.mark.parametrize("kwargs, key, words", [
    ({"license": "MIT License"}, "--license", "license identifier"),
    ({"language": ("english",)}, "--language", "ISO 639"),
    ({"task_categories": ("preference-ranking",)}, "--task-category", "task id"),
    ({"tags": ("x" * 101,)}, "--tag", "at most 100"),
    ({"pretty_name": "two\nlines"}, "--pretty-name", "one line"),
    ({"pretty_name": "  "}, "--pretty-name", "empty"),
])
def test_bad_flag_values_name_the_flag(kwargs, key, words):
    with pytest.raises(InputError) as err:
        M.card_metadata({}, **kwargs)
    assert err.value.key == key and words in err.value.message


def test_bad_spec_value_names_the_spec_key():
    with pytest.raises(InputError) as err:
        M.card_metadata({"url": "ftp://x"}, spec_path="s.yaml")
    assert err.value.key == "card.url" and err.value.path == "s.yaml"


def test_run_flag_error_is_exit_2_before_reading(tmp_path):
    src = tmp_path / "t.csv"
    src.write_text(TABLE)
    result = CliRunner().invoke(cli, ["run", str(src), "--license", "gpl-9",
                                      "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "--license" in result.output and "gpl-9" in result.output
    assert not (tmp_path / "o").exists()


def test_spec_card_section_reaches_card_and_results(tmp_path):
    src = tmp_path / "t.csv"
    src.write_text(TABLE)
    spec = tmp_path / "spec.yaml"
    spec.write_text("card:\n  license: cc-by-4.0\n  language: [en]\n  tags: [pairs]\n"
                    "  description: Twelve items.\n")
    out = tmp_path / "o"
    result = invoke("card", src, "--spec", spec, "--out", out, "--bootstrap", 5, "--quiet",
                    "--tag", "flagged")
    assert result.exit_code == 0, result.output
    meta = front((out / "dataset_card.md").read_text(encoding="utf-8"))
    assert meta["license"] == "cc-by-4.0" and meta["language"] == ["en"]
    assert meta["tags"] == ["flagged"]  # the flag replaces the spec's list
    assert "description" not in meta  # Croissant only


def test_unknown_spec_card_key_is_exit_2_naming_key_and_line(tmp_path):
    src = tmp_path / "t.csv"
    src.write_text(TABLE)
    spec = tmp_path / "spec.yaml"
    spec.write_text("name: t\ncard:\n  license: mit\n  licence: mit\n")
    result = CliRunner().invoke(cli, ["run", str(src), "--spec", str(spec)])
    assert result.exit_code == 2
    assert "card.licence" in result.output and "line 4" in result.output
    spec.write_text("card:\n  language: en\n")
    result = CliRunner().invoke(cli, ["validate", str(src), "--spec", str(spec)])
    assert result.exit_code == 2 and "card.language" in result.output and "list" in result.output


def test_no_metadata_leaves_results_unchanged(tmp_path):
    from audit.pipeline import run

    src = tmp_path / "t.csv"
    src.write_text(TABLE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = run(src, n_bootstrap=5)
        tagged = run(src, n_bootstrap=5, card={"tags": ["t"]})
    assert "card" not in plain["dataset"]
    assert tagged["dataset"]["card"] == {"tags": ["t"]}


# -- hostile names cannot break the YAML front matter ----------------------------------------------
HOSTILE = ['a: b', "x\n---\nlicense: evil", '"quoted" \'single\'', "---", "- item", "#c",
           "{x: 1}", "&anchor *alias", "\u2028sep\x85nel", "..."]


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_dataset_name_and_tags_stay_data(tmp_path, name):
    from audit.pipeline import run
    from audit.report.card import render_card

    src = tmp_path / "t.csv"
    src.write_text(TABLE.replace("crowd", "crowd: x\n---".replace("\n", " ")))
    tag = " ".join(name.split()) or "t"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = run(src, n_bootstrap=5, name=name, card={"tags": [tag]})
    text = render_card(results)
    card = DatasetCard(text)
    meta = card.data.to_dict()
    assert meta["pretty_name"] == one_line(name) and meta["tags"] == [tag]  # one line
    assert "license" not in meta
    path = tmp_path / "README.md"
    path.write_text(text, encoding="utf-8")
    assert metadata_load(path) == meta
    assert check_card(text) == []


def test_existing_card_keeps_its_keys_but_takes_the_flags(tmp_path):
    """A card's hand-written YAML is kept, except the keys a flag (or the spec) gives now:
    the user asked for those, so they replace the card's value; nothing else changes."""
    src = tmp_path / "t.csv"
    src.write_text(TABLE)
    readme = tmp_path / "card" / "README.md"
    readme.parent.mkdir()
    readme.write_text("---\nlicense: mit\npretty_name: Mine\n---\n\n# Mine\n\nHand-written.\n",
                      encoding="utf-8")
    result = invoke("card", src, "--card", readme, "--bootstrap", 5, "--quiet",
                    "--license", "cc-by-4.0", "--language", "en")
    assert result.exit_code == 0, result.output
    meta = front(readme.read_text(encoding="utf-8"))
    assert meta["license"] == "cc-by-4.0" and meta["language"] == ["en"]
    assert meta["pretty_name"] == "Mine"
    assert "keeps its own" not in result.output
    assert "Hand-written." in readme.read_text(encoding="utf-8")
    again = invoke("card", src, "--card", readme, "--bootstrap", 5, "--quiet")
    assert again.exit_code == 0
    assert front(readme.read_text(encoding="utf-8"))["license"] == "cc-by-4.0"


# -- golden front matter on three real datasets ----------------------------------------------------
GOLDEN = Path(__file__).resolve().parent / "golden" / "card_meta"
REAL = {
    "pandalm": lambda: [DEMO, "--license", "apache-2.0", "--language", "en",
                        "--task-category", "text-classification", "--tag", "preference"],
    "hs_brexit": lambda: [_shared("lewidi2023/HS-Brexit/HS-Brexit_train.json"), "--license",
                          "unknown", "--language", "en", "--task-category",
                          "text-classification", "--tag", "hate-speech"],
    "wmt23_zhen": lambda: [REPO / "data/wmt23_zhen_mqm/wmt23_zhen_mqm.csv", "--spec",
                           REPO / "data/wmt23_zhen_mqm/wmt23_zhen_mqm.yaml", "--license",
                           "apache-2.0", "--language", "zh", "--language", "en",
                           "--task-category", "translation", "--tag", "mqm"],
}
REPO = Path(__file__).resolve().parents[1]


def _shared(rel):
    from conftest import shared_data

    return shared_data(rel)


@pytest.mark.parametrize("name", sorted(REAL))
def test_real_dataset_front_matter_matches_golden(name, tmp_path):
    """The YAML header of each card, byte for byte (``UPDATE_GOLDEN=1`` rewrites the files
    after a reviewed change); it also passes the offline Hub checks."""
    import os

    out = tmp_path / "o"
    result = invoke("card", *REAL[name](), "--out", out, "--bootstrap", 5, "--quiet")
    assert result.exit_code == 0, result.output
    text = (out / "dataset_card.md").read_text(encoding="utf-8")
    header = text.split("\n---\n", 1)[0] + "\n---\n"
    golden = GOLDEN / f"{name}.yaml"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(header, encoding="utf-8")
    assert header == golden.read_text(encoding="utf-8")
    assert check_card(text) == []
    assert DatasetCardData(**DatasetCard(text).data.to_dict()).to_dict() == \
        DatasetCard(text).data.to_dict()


def test_check_out_card_takes_the_spec_section(tmp_path):
    src = tmp_path / "t.csv"
    src.write_text(TABLE)
    spec = tmp_path / "spec.yaml"
    spec.write_text("card:\n  license: mit\n  tags: [gate]\n")
    suite = tmp_path / "s.yaml"
    suite.write_text("suite: s\nexpectations:\n  - expect: unique_judgments\n")
    out = tmp_path / "o"
    result = invoke("check", src, "--spec", spec, "--suite", suite, "--out", out,
                    "--bootstrap", 5, "--quiet")
    assert result.exit_code == 0, result.output
    meta = front((out / "dataset_card.md").read_text(encoding="utf-8"))
    assert meta["license"] == "mit" and meta["tags"] == ["gate"]
    assert json.loads((out / "croissant.json").read_text())["license"] == "mit"
