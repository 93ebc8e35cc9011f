"""Pairwise data recognised without a spec: a recognised preference vocabulary is read as
preference with a one-line notice; anything else is exit 2 showing the labels and the spec lines
that would read them. Never silently nominal. Rating data (a ``model`` column) likewise."""

from __future__ import annotations

import json
import re
import warnings

import pytest
from click.testing import CliRunner

from audit.contract import columns as C
from audit.cli import cli
from audit.contract.labels import LabelKind
from audit.ingest import LoadWarning, load
from audit.ingest.infer import recognise_preference


def pairwise_csv(tmp_path, labels, name="pairs.csv"):
    """A long table with model columns: item i judged by annotators x, y, z, labels in turn."""
    lines = ["item,annotator,model_a,model_b,label"]
    for k, label in enumerate(labels):
        text = f'"{label}"' if "," in label else label
        lines.append(f"{k // 3},{'xyz'[k % 3]},m{k % 2},m{2 + k % 3},{text}")
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def read_labels(table) -> list:
    return [table.scale.values[c] for c in table.label_codes]


VOCABULARIES = {
    "A / B / tie": (["A", "B", "tie", "A"], [-1, 1, 0, -1]),
    "a / b": (["a", "b", "b"], [-1, 1, 1]),
    "model_a / model_b": (["model_a", "model_b", "tie"], [-1, 1, 0]),
    "Model A / Model B": (["Model A", "MODEL-B", "Tie"], [-1, 1, 0]),
    "left / right / equal": (["left", "right", "equal"], [-1, 1, 0]),
    "response_a / response_b": (["response_a", "Response B", "draw"], [-1, 1, 0]),
    "-1 / 0 / 1": (["-1", "0", "1", "1.0"], [-1, 0, 1, 1]),
    "tie variants": (["model_a", "tie (bothbad)", "tie (inconsistent)", "model_b", "Tie"],
                     [-1, 0, 0, 1, 0]),
    "case and whitespace": ([" a", "B ", " TIE ", "A"], [-1, 1, 0, -1]),
    "MultiPref five-point": (["A-is-clearly-better", "A-is-slightly-better", "Tie",
                              "B-is-slightly-better", "B-is-clearly-better"], [-2, -1, 0, 1, 2]),
}


@pytest.mark.parametrize("vocabulary", sorted(VOCABULARIES))
def test_each_vocabulary_is_read_as_preference_with_a_notice(tmp_path, vocabulary):
    labels, expected = VOCABULARIES[vocabulary]
    with pytest.warns(LoadWarning) as notices:
        table = load(pairwise_csv(tmp_path, labels))
    assert table.scale.kind is LabelKind.PREFERENCE and table.is_pairwise
    assert read_labels(table) == expected
    text = " ".join(str(w.message) for w in notices if issubclass(w.category, LoadWarning))
    assert "preference" in text and "negative = model_a better" in text
    for label in set(labels) - {"-1", "0", "1", "1.0"}:  # every word says how it was read
        value = expected[labels.index(label)]
        assert f"{label!r} -> {value}" in text


def test_the_notice_is_one_line(tmp_path):
    with pytest.warns(LoadWarning) as notices:
        load(pairwise_csv(tmp_path, ["A", "B", "tie"]))
    messages = [str(w.message) for w in notices if "preference" in str(w.message)]
    assert len(messages) == 1 and "\n" not in messages[0]


def test_unknown_words_are_exit_2_with_the_map_that_would_read_them(tmp_path):
    src = pairwise_csv(tmp_path, ["better", "worse", "same", "better"])
    result = CliRunner().invoke(cli, ["validate", str(src)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    out = result.output
    assert "column 'label'" in out and "'better', 'same', 'worse'" in out
    assert "label:\n    kind: preference\n    map: {" in out
    line = re.search(r"map: (\{.*\})", out).group(1)
    assert line == '{"better": ?, "same": 0, "worse": ?}'
    # the suggested lines, with each ? replaced, read the table
    spec = tmp_path / "spec.yaml"
    filled = line.replace('"better": ?', '"better": -1').replace('"worse": ?', '"worse": 1')
    spec.write_text(f"label:\n  kind: preference\n  map: {filled}\n")
    table = load(src, spec=spec)
    assert read_labels(table) == [-1, 1, 0, -1]


@pytest.mark.parametrize("labels", [["A", "right", "tie"],          # two vocabularies' sides
                                    ["0", "1", "2"],                  # PandaLM's raw coding
                                    ["1", "2", "1"],
                                    ["0.5", "-0.5", "0"],
                                    ["yes", "no", "yes"]])
def test_anything_else_with_model_columns_is_exit_2_never_nominal(tmp_path, labels):
    src = pairwise_csv(tmp_path, labels)
    result = CliRunner().invoke(cli, ["validate", str(src)])
    assert result.exit_code == 2, result.output
    assert "kind: preference" in result.output and "map: {" in result.output
    assert "Traceback" not in result.output


def test_a_table_without_model_columns_stays_nominal_without_a_notice(tmp_path):
    src = tmp_path / "t.csv"
    src.write_text("item,annotator,label\n1,x,A\n1,y,B\n2,x,tie\n2,y,A\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error", LoadWarning)
        table = load(src)
    assert table.scale.kind is LabelKind.NOMINAL


def test_recognition_units():
    aliases, vocabulary, unrecognised = recognise_preference(["A", "B", "tie", "C", "1"])
    assert aliases == {"A": -1, "B": 1, "tie": 0} and vocabulary == "A / B"
    assert unrecognised == ["C"]
    assert recognise_preference(["A", "left"])[0] == {}
    assert recognise_preference(["tiebreak"])[2] == ["tiebreak"]


def test_pairwise_data_without_a_spec_gets_leaderboards(tmp_path):
    """The issue's complaint: A / B / tie audited as nominal, with no leaderboards."""
    labels = ["A", "B", "tie", "A", "A", "B"] * 6
    src = pairwise_csv(tmp_path, labels)
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", str(src), "--out", str(out), "--no-report",
                                      "--bootstrap", "50"])
    assert result.exit_code == 0, result.output
    res = json.loads((out / "results.json").read_text())
    assert res["dataset"]["label_kind"] == "preference"
    assert res["dataset"]["label_scale"]["aliases"] == {"A": -1, "B": 1, "tie": 0}
    assert res["leaderboards"]


# -- ratings: a model column ---------------------------------------------------------------------
def rating_csv(tmp_path, labels):
    lines = ["item,annotator,model,label"]
    lines += [f"{k // 2},{'xy'[k % 2]},m{k % 3},{label}" for k, label in enumerate(labels)]
    path = tmp_path / "ratings.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_whole_number_ratings_are_ordinal_with_a_notice(tmp_path):
    notice = r"ratings read as ordinal \(5 distinct value\(s\), 1..5\)"
    with pytest.warns(LoadWarning, match=notice):
        table = load(rating_csv(tmp_path, ["1", "2", "3.0", "4", "5", "5"]))
    assert table.scale.kind is LabelKind.ORDINAL and table.is_rating
    assert table.scale.values == (1, 2, 3, 4, 5)


def test_fractional_ratings_are_interval_with_a_notice(tmp_path):
    with pytest.warns(LoadWarning, match=r"ratings read as interval"):
        table = load(rating_csv(tmp_path, ["1.5", "2", "-0.25", "7.75"]))
    assert table.scale.kind is LabelKind.INTERVAL
    assert read_labels(table) == [1.5, 2, -0.25, 7.75]


def test_text_ratings_are_exit_2_with_the_order_lines(tmp_path):
    src = rating_csv(tmp_path, ["good", "bad", "ok"])
    result = CliRunner().invoke(cli, ["validate", str(src)])
    assert result.exit_code == 2, result.output
    assert "kind: ordinal" in result.output
    assert 'order: ["bad", "good", "ok"]' in result.output


def test_a_declared_kind_is_respected(tmp_path):
    src = pairwise_csv(tmp_path, ["A", "B", "tie"])
    spec = tmp_path / "spec.yaml"
    spec.write_text("label: {kind: nominal}\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error", LoadWarning)
        table = load(src, spec=spec)
    assert table.scale.kind is LabelKind.NOMINAL and table.scale.values == ("A", "B", "tie")
    assert C.MODEL_A in table.frame.columns
