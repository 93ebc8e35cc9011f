"""A/B tables whose winner is written as the winning model's name (``model_a, model_b, winner``
with ``winner`` = ``gpt-4`` or a tie word): read row by row, model_a's name -> -1, model_b's ->
+1 (audit.ingest.winner), on both engines.

Each shape is written as CSV and JSON Lines from one set of judgments, and again with the
labels -1 / 0 / 1: the judgments read, the win rates and the Bradley-Terry strengths must be
those of the integer table (the strengths checked against choix too), and the Spark engine's
those of the pandas engine.
"""

from __future__ import annotations

import csv
import json
import random
import re
import unicodedata
import warnings
from collections import Counter

import choix
import numpy as np
import pytest
from click.testing import CliRunner

from audit.cli import cli
from audit.contract import columns as C
from audit.errors import InputError, SchemaError
from audit.ingest import LoadWarning, load
from audit.pipeline import run
from benchmarks.compare import result_differences

#: Model ids as exports write them: Unicode, spaces inside and around (kept as written).
MODELS = ["gpt-4", " llama-2-70b ", "claude-2", "模型-7b", "Mistral 7B",
          unicodedata.normalize("NFC", "José-13b"), "\U0001F916-bot"]
TIES = ["tie", "tie (bothbad)", "Tie (inconsistent)", "draw", " TIE "]
NOTICE = "labels read as the winning model's name"
ROWS = ("item", "annotator", "model_a", "model_b")


def judgments(seed: int = 3, n_items: int = 40) -> list[dict]:
    """Pairwise judgments: each item a pair of models judged by three annotators, value -1 /
    0 / 1 and the label written as the winner's name (a tie word for 0)."""
    rng = random.Random(seed)
    rows = []
    for i in range(n_items):
        a, b = rng.sample(MODELS, 2)
        for ann in rng.sample(["ann-α", "ann 2", "ann3", "ann4"], 3):
            value = rng.choice([-1, -1, 0, 1, 1, 1])
            name = {-1: a, 1: b}.get(value) or rng.choice(TIES)
            rows.append({"item": f"q{i:03d}", "annotator": ann, "model_a": a, "model_b": b,
                         "value": value, "name": name})
    return rows


def write(path, rows: list[dict], label: str = "name", column: str = "label"):
    """``rows`` as CSV or JSON Lines (by ``path``'s suffix), the label taken from ``label``
    and written under ``column``."""
    records = [{**{k: r[k] for k in ROWS}, column: r[label]} for r in rows]
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                        encoding="utf-8")
    else:
        with open(path, "w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=list(records[0]))
            writer.writeheader()
            writer.writerows(records)
    return path


def loaded(source, **options):
    """The table and the LoadWarnings given while loading it."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        table = load(source, **options)
    return table, [str(w.message) for w in seen if issubclass(w.category, LoadWarning)]


def read(table) -> dict:
    """(item, annotator) -> the label read."""
    f = table.frame
    return dict(zip(zip(f[C.ITEM].astype(str), f[C.ANNOTATOR].astype(str)),
                    f[C.LABEL].astype(int)))


def expected(rows) -> dict:
    return {(r["item"], r["annotator"]): r["value"] for r in rows}


def audited(source, **options) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run(source, n_bootstrap=100, seed=5, report=False, **options)


def same_audit(a: dict, b: dict) -> list:
    """Where two results differ, but for what names the source, the engine and the labels'
    aliases (the tie words, which a -1 / 0 / 1 table has none of)."""
    def cleaned(r):
        r = {k: v for k, v in r.items() if k != "meta"}
        r["dataset"] = {k: v for k, v in r["dataset"].items()
                        if k not in ("name", "source", "label_scale", "engine")}
        return r
    return result_differences(cleaned(a), cleaned(b))


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def error_lines(result) -> list[str]:
    return [line for line in result.output.splitlines() if line.startswith("error:")]


@pytest.fixture(scope="module")
def rows():
    return judgments()


@pytest.fixture(scope="module")
def written(tmp_path_factory, rows):
    """The judgments as names (CSV, JSON Lines, and a CSV whose column is ``winner``, with
    its spec) and as integers (CSV)."""
    d = tmp_path_factory.mktemp("winner")
    spec = d / "winner.yaml"
    spec.write_text("columns: {label: winner}\n", encoding="utf-8")
    return {"csv": write(d / "names.csv", rows), "jsonl": write(d / "names.jsonl", rows),
            "winner": write(d / "winner.csv", rows, column="winner"), "winner_spec": spec,
            "ints": write(d / "ints.csv", rows, label="value")}


# -- reading -------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", ["csv", "jsonl", "winner"])
def test_names_read_as_the_integers_with_one_notice(written, rows, shape):
    spec = written["winner_spec"] if shape == "winner" else None
    table, notices = loaded(written[shape], spec=spec)
    assert table.scale.values == (-1, 0, 1) and table.is_pairwise
    assert read(table) == expected(rows)
    said = [n for n in notices if NOTICE in n]
    assert len(said) == 1 and "\n" not in said[0], notices
    named = sum(1 for r in rows if r["value"])
    assert f"on {named} row(s)" in said[0] and "negative = model_a better" in said[0]
    assert "' llama-2-70b '" in said[0] and "'tie (bothbad)' -> 0" in said[0]
    assert not [n for n in notices if "labels read as preference" in n]  # one notice only
    assert set(table.frame[C.MODEL_A].astype(str)) <= set(MODELS)  # ids as written


def test_win_rates_and_strengths_equal_the_integer_tables_and_choix(written, rows):
    names, ints = audited(written["csv"]), audited(written["ints"])
    assert not same_audit(names, ints)
    board = {r["model"]: r for r in names["leaderboards"]["all"]}
    # independent: counted from the written judgments (a tie half a win each) ...
    games, wins = Counter(), Counter()
    for r in rows:
        for side, model in ((-1, r["model_a"]), (1, r["model_b"])):
            games[model] += 1
            wins[model] += 1.0 if r["value"] == side else 0.5 if r["value"] == 0 else 0.0
    for model in MODELS:
        assert board[model]["win_rate"] == pytest.approx(wins[model] / games[model], abs=1e-12)
    # ... and choix's ILSR on the games, a tie one win each way, a decisive game two
    index = {m: k for k, m in enumerate(MODELS)}
    data = []
    for r in rows:
        a, b = index[r["model_a"]], index[r["model_b"]]
        data += ([(a, b)] * 2 if r["value"] < 0 else [(b, a)] * 2 if r["value"] > 0
                 else [(a, b), (b, a)])
    est = choix.ilsr_pairwise(len(MODELS), data, alpha=0.0, tol=1e-13, max_iter=10_000)
    est -= est.mean()
    got = np.array([board[m]["bt_strength"] for m in MODELS])
    np.testing.assert_allclose(got - got.mean(), est, atol=1e-6)


def test_a_stray_row_fails_the_schema_check_naming_its_line(tmp_path, rows):
    spoilt = [dict(r) for r in rows]
    other = next(m for m in MODELS if m not in (rows[4]["model_a"], rows[4]["model_b"]))
    spoilt[4]["name"] = other  # names a model, not one of its row's
    src = write(tmp_path / "t.csv", spoilt)
    result = invoke("validate", src)
    assert result.exit_code == 2, result.output
    assert len(error_lines(result)) == 1
    assert f"failed for value {other!r} (line 6)" in result.output
    assert "1 schema failure(s)" in result.output
    assert "names neither of its row's models" in result.output  # the hint
    assert NOTICE in result.output and "not read: 1 row(s)" in result.output


def test_more_strays_than_rows_read_is_exit_2_naming_a_line(tmp_path):
    src = tmp_path / "t.csv"
    src.write_text("item,annotator,model_a,model_b,label\n"
                   "q1,x,gpt-4,llama,gpt-4\nq1,y,gpt-4,llama,mistral\n"
                   "q2,x,claude,gpt-4,vicuna\nq2,y,claude,gpt-4,llama\n", encoding="utf-8")
    result = invoke("validate", src)
    assert result.exit_code == 2, result.output
    (line,) = error_lines(result)
    assert f"{src}, column 'label', line 3:" in line
    assert "1 row(s) name one of their models" in line and "3 row(s) name neither" in line
    assert "names_winner: true" in result.output and "Traceback" not in result.output
    # declared, the same table is read: each stray a schema failure naming its line
    spec = tmp_path / "s.yaml"
    spec.write_text("label: {kind: preference, names_winner: true}\n")
    declared = invoke("validate", src, "--spec", spec)
    assert declared.exit_code == 2
    assert re.findall(r"\(line (\d)\)", declared.output) == ["3", "4", "5"]


def test_a_model_against_itself_named_is_no_reading(tmp_path):
    src = tmp_path / "t.csv"
    src.write_text("item,annotator,model_a,model_b,label\n"
                   "q1,x,gpt-4,llama,gpt-4\nq1,y,gpt-4,llama,llama\n"
                   "q2,x,claude,claude,claude\nq2,y,claude,gpt-4,tie\n", encoding="utf-8")
    result = invoke("validate", src)
    assert result.exit_code == 2, result.output
    assert "failed for value 'claude' (line 4)" in result.output
    assert "model_a differs from model_b failed for value ('claude', 'claude') (line 4)" \
        in result.output


def test_blanks_around_a_name_are_kept_as_ids_are(tmp_path):
    """`` llama`` is not the model ``llama``: ids are read as written, so the label names
    neither; the message says that the blanks are the difference."""
    src = tmp_path / "t.csv"
    src.write_text("item,annotator,model_a,model_b,label\n"
                   "q1,x,gpt-4,llama,gpt-4\nq1,y,gpt-4,llama, llama\n"
                   "q2,x,claude,llama, llama\n", encoding="utf-8")
    result = invoke("validate", src)
    assert result.exit_code == 2, result.output
    assert "line 3" in result.output and "only in surrounding blanks" in result.output


# -- models named like a vocabulary's sides --------------------------------------------------------
AMBIGUOUS = ("item,annotator,model_a,model_b,label\n"
             "q1,x,A,B,A\nq1,y,A,B,B\nq2,x,B,A,B\nq2,y,B,A,tie\nq3,x,A,B,tie\n")


def test_models_named_a_and_b_read_differently_are_exit_2_naming_the_row(tmp_path):
    src = tmp_path / "t.csv"
    src.write_text(AMBIGUOUS, encoding="utf-8")
    result = invoke("validate", src)
    assert result.exit_code == 2, result.output
    (line,) = error_lines(result)
    assert f"{src}, column 'label', line 4: label 'B', model_a 'B', model_b 'A'" in line
    assert "A / B vocabulary it is 1 (model_b better)" in line
    assert "winning model's name it is -1 (model_a better)" in line
    assert "label: {kind: preference, names_winner: true}" in result.output
    assert "label: {kind: preference, names_winner: false}" in result.output
    for flag, values in (("true", [-1, 1, -1, 0, 0]), ("false", [-1, 1, 1, 0, 0])):
        spec = tmp_path / f"{flag}.yaml"
        spec.write_text(f"label: {{kind: preference, names_winner: {flag}}}\n")
        table, notices = loaded(src, spec=spec)
        assert [table.scale.values[c] for c in table.label_codes] == values
        assert not [n for n in notices if NOTICE in n]


def test_models_named_a_and_b_read_alike_are_read_with_the_vocabulary_notice(tmp_path):
    src = tmp_path / "t.csv"
    src.write_text("item,annotator,model_a,model_b,label\n"
                   "q1,x,A,B,A\nq1,y,A,B,B\nq2,x,A,C,A\nq2,y,A,C,tie\n", encoding="utf-8")
    table, notices = loaded(src)
    assert [table.scale.values[c] for c in table.label_codes] == [-1, 1, -1, 0]
    assert any("labels read as preference (A / B vocabulary" in n for n in notices)
    assert not [n for n in notices if NOTICE in n]


def test_a_vocabulary_table_whose_models_have_other_names_is_unchanged(tmp_path):
    src = tmp_path / "t.csv"
    src.write_text("item,annotator,model_a,model_b,label\n"
                   "q1,x,gpt-4,llama,A\nq1,y,gpt-4,llama,B\nq2,x,claude,gpt-4,tie\n")
    table, notices = loaded(src)
    assert [table.scale.values[c] for c in table.label_codes] == [-1, 1, 0]
    assert [n for n in notices if "A / B vocabulary" in n] and not [
        n for n in notices if NOTICE in n]


# -- models named like a tie word or a number ------------------------------------------------------
#: ``Both-7B`` and ``Same-LLM`` read as tie words (``both``, ``same``), ``7`` as a number; the
#: other labels name their models. Line 2: Both-7B, model_a, wins; line 3: Same-LLM, model_b.
LOOKALIKES = ("item,annotator,model_a,model_b,label\n"
              "q1,x,Both-7B,Same-LLM,Both-7B\nq1,y,gpt-4,Same-LLM,Same-LLM\n"
              "q2,x,gpt-4,llama,llama\nq2,y,gpt-4,llama,tie\nq3,x,7,gpt-4,gpt-4\n"
              "q3,y,7,gpt-4,7\nq4,x,llama,7,-1\n")
#: The labels as the winning model's name: each row's value.
LOOKALIKE_VALUES = [-1, 1, 1, 0, 1, -1, -1]


def declared(tmp_path, flag: str):
    spec = tmp_path / f"{flag}.yaml"
    spec.write_text(f"label: {{kind: preference, names_winner: {flag}}}\n")
    return spec


def test_a_model_named_like_a_tie_word_winning_is_exit_2_naming_the_row(tmp_path):
    """Before, 'Both-7B' (a tie word, 'both') naming its row's model_a was read as a tie, exit
    0: a changed judgment. Now the two readings are named, and the spec line that settles them."""
    src = tmp_path / "t.csv"
    src.write_text(LOOKALIKES.replace("q3,y,7,gpt-4,7\n", ""), encoding="utf-8")
    result = invoke("validate", src)
    assert result.exit_code == 2, result.output
    (line,) = error_lines(result)
    assert (f"{src}, column 'label', line 2: label 'Both-7B', model_a 'Both-7B', model_b "
            f"'Same-LLM': the label reads two ways, which differ on 2 row(s): as a tie word "
            f"it is 0 (a tie), as the winning model's name it is -1 (model_a better)") in line
    assert "label: {kind: preference, names_winner: true}" in result.output
    assert "Traceback" not in result.output
    table, notices = loaded(src, spec=declared(tmp_path, "true"))
    assert [table.scale.values[c] for c in table.label_codes] == \
        LOOKALIKE_VALUES[:5] + LOOKALIKE_VALUES[6:]
    assert not [n for n in notices if NOTICE in n]


def test_a_model_named_as_a_number_winning_is_exit_2_naming_the_row(tmp_path):
    """Before, '7' naming its row's model_a was read as the number 7 (model_b far better) on a
    -7..7 scale, exit 0. Now exit 2; declared, it is model_a's win."""
    src = tmp_path / "t.csv"
    src.write_text(LOOKALIKES.replace("Both-7B", "mistral").replace("Same-LLM", "claude"),
                   encoding="utf-8")
    result = invoke("validate", src)
    assert result.exit_code == 2, result.output
    (line,) = error_lines(result)
    assert (f"{src}, column 'label', line 7: label '7', model_a '7', model_b 'gpt-4': the "
            f"label reads two ways, which differ on 1 row(s): as a number it is 7 (model_b "
            f"better), as the winning model's name it is -1 (model_a better)") in line
    assert "names_winner: true" in result.output
    assert "4 other row(s) name their models ('claude', 'gpt-4', 'llama', 'mistral')" \
        in result.output
    table, _ = loaded(src, spec=declared(tmp_path, "true"))
    assert [table.scale.values[c] for c in table.label_codes] == LOOKALIKE_VALUES
    assert table.scale.values == (-1, 0, 1)
    # a JSON Lines file whose numbers are typed (the model 7, the label 7) reads alike
    jsonl = tmp_path / "t.jsonl"
    with open(src, encoding="utf-8") as f:
        records = list(csv.DictReader(f))
    jsonl.write_text("".join(json.dumps({k: int(v) if v.lstrip("-").isdigit() else v
                                         for k, v in r.items()}) + "\n" for r in records))
    with pytest.raises(InputError, match="line 6: label '7', model_a '7'"):
        load(jsonl)
    table, _ = loaded(jsonl, spec=declared(tmp_path, "true"))
    assert [table.scale.values[c] for c in table.label_codes] == LOOKALIKE_VALUES


def test_a_tie_word_that_is_no_model_name_is_still_a_tie(tmp_path):
    """'both' and 'same' are not the models 'Both-7B' and 'Same-LLM': ties, with or without
    the declaration (a guard: so they were before)."""
    src = tmp_path / "t.csv"
    src.write_text("item,annotator,model_a,model_b,label\n"
                   "q1,x,Both-7B,Same-LLM,both\nq1,y,Both-7B,gpt-4,gpt-4\n"
                   "q2,x,gpt-4,Same-LLM,same\nq2,y,Same-LLM,gpt-4,Tie\n", encoding="utf-8")
    for spec in (None, declared(tmp_path, "true")):
        table, _ = loaded(src, spec=spec)
        assert [table.scale.values[c] for c in table.label_codes] == [0, 1, 0, 0]


def test_a_number_naming_its_model_as_the_number_reads_it_is_read(tmp_path):
    """'1' naming its row's model_b is +1 both ways: read without a question. Before, the
    number 1 without a negative one was exit 2 (which side a positive number favours cannot
    be told), though every row naming the model 1 read alike."""
    src = tmp_path / "t.csv"
    src.write_text("item,annotator,model_a,model_b,label\n"
                   "q1,x,gpt-4,1,1\nq1,y,gpt-4,1,gpt-4\nq2,x,llama,gpt-4,tie\n",
                   encoding="utf-8")
    table, notices = loaded(src)
    assert [table.scale.values[c] for c in table.label_codes] == [1, -1, 0]
    assert [n for n in notices if NOTICE in n]


def test_models_all_named_like_tie_words_offer_both_spec_lines(tmp_path):
    """No other label names a model: names_winner: false is a reading of the table (the old
    one: ties), and the message offers it."""
    src = tmp_path / "t.csv"
    src.write_text("item,annotator,model_a,model_b,label\n"
                   "q1,x,Both-7B,Same-LLM,Both-7B\nq1,y,Both-7B,Same-LLM,tie\n",
                   encoding="utf-8")
    result = invoke("validate", src)
    assert result.exit_code == 2, result.output
    assert "line 2: label 'Both-7B'" in result.output
    assert "names_winner: true}" in result.output and "names_winner: false}" in result.output
    for flag, values in (("true", [-1, 0]), ("false", [0, 0])):
        table, _ = loaded(src, spec=declared(tmp_path, flag))
        assert [table.scale.values[c] for c in table.label_codes] == values


def test_an_integer_table_whose_models_are_numbered_is_unchanged(tmp_path):
    """Labels -1 / 0 / 1 and models 0, 1, 2: no label is text naming a model, so the numbers
    are numbers (0 on a row whose model_a is 0 is a tie), as before."""
    src = tmp_path / "t.csv"
    src.write_text("item,annotator,model_a,model_b,label\n"
                   "q1,x,0,1,0\nq1,y,0,1,1\nq2,x,2,0,-1\nq2,y,1,2,1\n", encoding="utf-8")
    table, notices = loaded(src)
    assert [table.scale.values[c] for c in table.label_codes] == [0, 1, -1, 1]
    assert not [n for n in notices if NOTICE in n]


#: Models named 1 and 2, the winner written as the winning model's name.
NUMBERED = ("item,annotator,model_a,model_b,winner\n"
            "q1,x,1,2,1\nq1,y,1,2,2\nq2,x,2,1,1\nq2,y,2,1,{tie}\n")
NUMBERED_VALUES = [-1, 1, 1, 0]
NAMES_HINT = ("or, as '1', '2' are also the names of models in model_a / model_b, if the label "
              "names the winning model, say so instead:")


@pytest.mark.parametrize("tie", ["tie", "1"])
def test_models_named_as_the_numbers_their_labels_are_point_to_names_winner(tmp_path, tie):
    """Models named 1 and 2 and labels 1 / 2 (with a tie word, or only numbers: read as typed
    integers): the numbers without a negative one are not -k..k, and the name reading is not
    guessed (:func:`audit.ingest.winner.decide`). Before, the message asked for a label.map
    only; now it also says the labels are the models' names and gives the names_winner line,
    which reads the table."""
    src = tmp_path / "t.csv"
    src.write_text(NUMBERED.format(tie=tie), encoding="utf-8")
    result = invoke("validate", src)
    assert result.exit_code == 2, result.output
    assert NAMES_HINT in result.output and "names_winner: true}" in result.output
    assert "Traceback" not in result.output
    table, _ = loaded(src, spec=declared(tmp_path, "true"))
    values = NUMBERED_VALUES if tie == "tie" else NUMBERED_VALUES[:3] + [1]
    assert [table.scale.values[c] for c in table.label_codes] == values
    # labels that name no model get the message without the line; names_winner: false too
    other = tmp_path / "other.csv"
    other.write_text(NUMBERED.format(tie=tie).replace(",1,2,", ",a,b,").replace(",2,1,", ",b,a,"),
                     encoding="utf-8")
    for source, spec in ((other, None), (src, declared(tmp_path, "false"))):
        result = invoke("validate", source, *(["--spec", spec] if spec else []))
        assert result.exit_code == 2 and "neither the integers -k..k" in result.output
        assert "also the name" not in result.output, result.output


# -- a winner column without a spec ----------------------------------------------------------------
COLUMN_NOTICE = "no label column: labels read from the column 'winner' (beside model_a / model_b)"


def test_a_winner_column_is_the_label_without_a_spec(written, rows):
    """Before: 'cannot detect the format' (exit 2), a spec's columns: {label: winner} needed.
    Now detected as a table, read as the spec reads it, with a notice saying so."""
    from audit.ingest import detect_format

    assert detect_format(written["winner"]) == "table"
    table, notices = loaded(written["winner"])
    assert read(table) == expected(rows)
    assert [n for n in notices if COLUMN_NOTICE in n] == [
        f"{written['winner']}: {COLUMN_NOTICE}; a spec's columns: {{label: COLUMN}} reads them "
        "from another"]
    assert len([n for n in notices if NOTICE in n]) == 1
    # mapped by a spec: no notice about the column
    _, mapped = loaded(written["winner"], spec=written["winner_spec"])
    assert not [n for n in mapped if COLUMN_NOTICE in n]
    # the audit is the -1 / 0 / 1 table's, from the command line too
    assert not same_audit(audited(written["winner"]), audited(written["ints"]))
    result = invoke("validate", written["winner"])
    assert result.exit_code == 0 and COLUMN_NOTICE in result.output, result.output


def test_a_winner_column_in_memory_and_with_a_spec_that_maps_no_label(written, rows):
    import pandas as pd

    frame = pd.read_csv(written["winner"], dtype=str, keep_default_na=False)
    table, notices = loaded(frame)
    assert read(table) == expected(rows) and [n for n in notices if COLUMN_NOTICE in n]
    table, notices = loaded(written["winner"], spec={"label": {"names_winner": True}})
    assert read(table) == expected(rows) and [n for n in notices if COLUMN_NOTICE in n]


@pytest.mark.parametrize("header, detected", [
    ("item,annotator,model_a,model_b,winner", "table"),
    ("item,annotator,pool,model_a,model_b,category,winner", "table"),
    # MT-Bench's columns (judge, question_id, ...) are MT-Bench, item and annotator or not
    ("question_id,model_a,model_b,winner,judge,turn", "mt-bench"),
    ("item,annotator,question_id,model_a,model_b,winner,judge,turn", "mt-bench"),
    # a label column is the label, a winner column beside it an extra
    ("item,annotator,model_a,model_b,winner,label", "table"),
    # a winner without both model columns or without the ids is no table
    ("item,annotator,winner", None),
    ("item,annotator,model_a,winner", None),
    ("item,model_a,model_b,winner", None),
])
def test_detection_of_a_winner_column(header, detected):
    from audit.ingest.detect import format_from_columns

    assert format_from_columns(header.split(","), folder=False) == detected


def test_a_label_column_beside_a_winner_column_is_the_label(tmp_path):
    src = tmp_path / "t.csv"
    src.write_text("item,annotator,model_a,model_b,winner,label\n"
                   "q1,x,gpt-4,llama,gpt-4,B\nq1,y,gpt-4,llama,llama,A\n", encoding="utf-8")
    table, notices = loaded(src)
    assert [table.scale.values[c] for c in table.label_codes] == [1, -1]
    assert not [n for n in notices if COLUMN_NOTICE in n]


def test_a_winner_column_without_model_columns_is_still_not_detected(tmp_path):
    src = tmp_path / "t.csv"
    src.write_text("item,annotator,winner\nq1,x,gpt-4\n", encoding="utf-8")
    result = invoke("validate", src)
    assert result.exit_code == 2 and "cannot detect the format" in result.output


# -- the spec --------------------------------------------------------------------------------------
def test_declared_names_are_read_without_a_notice(written, rows, tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text("columns: {label: winner}\nlabel: {kind: preference, names_winner: true}\n")
    table, notices = loaded(written["winner"], spec=spec)
    assert read(table) == expected(rows) and not [n for n in notices if NOTICE in n]
    table, _ = loaded(written["winner"], spec={"columns": {"label": "winner"},
                                               "label": {"names_winner": True}})
    assert read(table) == expected(rows)


def test_names_winner_false_never_reads_names(written):
    with pytest.raises(InputError, match="neither the integers -k..k nor a preference"):
        load(written["csv"], spec={"label": {"names_winner": False}})


@pytest.mark.parametrize("label, said", [
    ("{kind: nominal, names_winner: true}", "line 1: label.names_winner says whether a "
                                            "preference label is the winning model's name; it "
                                            "needs kind: preference (or no kind), not kind: "
                                            "nominal"),
    ('{names_winner: "yes"}', "line 1: 'label.names_winner' must be true or false; got 'yes'"),
    ("{names_winer: true}", "unknown key 'names_winer' (did you mean 'names_winner'?)"),
])
def test_the_spec_key_is_checked(tmp_path, written, label, said):
    spec = tmp_path / "s.yaml"
    spec.write_text(f"label: {label}\n")
    result = invoke("validate", written["csv"], "--spec", spec)
    assert result.exit_code == 2 and said in result.output, result.output
    assert "key 'label.names_win" in result.output


def test_declared_names_need_model_columns(tmp_path):
    src = tmp_path / "t.csv"
    src.write_text("item,annotator,label\nq1,x,gpt-4\n")
    with pytest.raises(InputError, match="needs model_a and model_b columns") as err:
        load(src, spec={"label": {"names_winner": True}})
    assert err.value.key == "label.names_winner"


def test_a_declared_map_is_read_as_declared(tmp_path):
    """A ``label.map`` is the reading: names are not inferred beside it (each is a schema
    failure, as before)."""
    src = tmp_path / "t.csv"
    src.write_text("item,annotator,model_a,model_b,label\nq1,x,gpt-4,llama,gpt-4\n"
                   "q1,y,gpt-4,llama,even\n")
    with pytest.raises(SchemaError, match="failed for value 'gpt-4'"):
        load(src, spec={"label": {"kind": "preference", "map": {"even": 0}}})


# -- the Spark engine ------------------------------------------------------------------------------
@pytest.mark.spark
@pytest.mark.parametrize("shape", ["csv", "jsonl"])
def test_spark_reads_the_names_as_the_pandas_engine(spark, written, rows, shape):
    table, notices = loaded(written[shape], engine="spark")
    assert read(table) == expected(rows)
    assert len([n for n in notices if NOTICE in n]) == 1
    pandas_notice = [n for n in loaded(written[shape])[1] if NOTICE in n]
    assert [n for n in notices if NOTICE in n] == pandas_notice


@pytest.mark.spark
def test_spark_audits_the_names_on_the_cluster_as_the_integer_table(spark, written):
    """The cluster path (a pairwise table is kept on the cluster): the rewrite is a column
    expression; the results are the pandas engine's on the -1 / 0 / 1 table."""
    from audit.ingest.spark.coded import ClusterTable

    kept, _ = loaded(written["winner"], engine="spark", spec=written["winner_spec"],
                     keep_on_cluster="auto")
    assert isinstance(kept, ClusterTable)
    got = audited(written["winner"], engine="spark",
                  load_options={"spec": written["winner_spec"]})
    assert got["meta"]["engine"] == "spark"
    assert not same_audit(got, audited(written["ints"]))


@pytest.mark.spark
def test_spark_reads_models_named_like_tie_words_and_numbers_as_pandas(spark, tmp_path):
    src = tmp_path / "t.csv"
    src.write_text(LOOKALIKES, encoding="utf-8")
    with pytest.raises(InputError) as err:
        load(src, engine="spark")
    text = str(err.value)
    assert "item 'q1', annotator 'x'" in text and "as a tie word it is 0 (a tie)" in text
    assert "names_winner: true" in text
    spec = declared(tmp_path, "true")
    table, _ = loaded(src, engine="spark", spec=spec)
    assert read(table) == read(loaded(src, spec=spec)[0])
    assert sorted(read(table).values()) == sorted(LOOKALIKE_VALUES)


@pytest.mark.spark
def test_spark_points_numbered_models_to_names_winner_as_pandas(spark, tmp_path):
    src = tmp_path / "t.csv"
    src.write_text(NUMBERED.format(tie="tie"), encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(NAMES_HINT)):
        load(src, engine="spark")
    table, _ = loaded(src, engine="spark", spec=declared(tmp_path, "true"))
    assert [table.scale.values[c] for c in table.label_codes] == NUMBERED_VALUES


@pytest.mark.spark
def test_spark_reads_a_winner_column_without_a_spec_as_pandas(spark, written, rows):
    table, notices = loaded(written["winner"], engine="spark")
    assert read(table) == expected(rows)
    assert [n for n in notices if COLUMN_NOTICE in n] == [
        n for n in loaded(written["winner"])[1] if COLUMN_NOTICE in n]
    kept, _ = loaded(written["winner"], engine="spark", keep_on_cluster="auto")
    from audit.ingest.spark.coded import ClusterTable

    assert isinstance(kept, ClusterTable)


@pytest.mark.spark
def test_spark_refusals_name_the_judgment(spark, tmp_path):
    src = tmp_path / "t.csv"
    src.write_text(AMBIGUOUS, encoding="utf-8")
    with pytest.raises(InputError) as err:
        load(src, engine="spark")
    assert "item 'q2', annotator 'x'" in str(err.value) and "names_winner: false" in str(err.value)
    src.write_text("item,annotator,model_a,model_b,label\n"
                   "q1,x,gpt-4,llama,gpt-4\nq1,y,gpt-4,llama,llama\n"
                   "q2,x,claude,gpt-4,tie\nq2,y,claude,gpt-4,llama\n", encoding="utf-8")
    with pytest.raises(SchemaError) as err:
        load(src, engine="spark")
    text = str(err.value)
    assert "failed for value 'llama' (file" in text and "item 'q2', annotator 'y'" in text
    assert "names neither of its row's models" in text
