"""Ids and text labels that look alike but differ are kept apart, with a warning naming them.

``José`` in its two Unicode forms (precomposed ``é``, NFC, and ``e`` + a combining accent,
NFD), an id with an invisible right-to-left mark or zero-width space, an id with a space a
spreadsheet kept: each was audited as a separate annotator (item, pool, label) with nothing
said, so one person counted as two and their judgments as disagreements. They are still
audited apart (ids are kept exactly as written), and a warning now names every group, each
text escaped so the difference shows. Found by tests/test_fuzz_tables.py.

So are ids and text labels that differ by the kind of space inside them (``John Smith`` typed,
``John\u00a0Smith`` with the no-break space a word processor or a French locale puts, a narrow
no-break space, two spaces), by a fullwidth digit (``１``, typed with an East Asian input
method), or that write one number two ways (``7`` and ``7.0``, what pandas writes for an id
column that once held a NaN; ``007`` and ``7``, a spreadsheet that dropped the zeros; labels
``1`` and ``1.0`` on a nominal scale, or ``1`` and Arabic-Indic ``١``): they were audited apart
without a word (found by helper-66's sweep of ids as files write them). Case is looked at for
model and pool names only.

So are texts whose difference is a letter or sign of another script drawn like an ASCII one
(Unicode's confusables data, UTS #39): a Cyrillic ``а`` in ``аnna``, an en dash or a
non-breaking hyphen pasted from a word processor in ``gpt‑4``, a contributor's ``gрt-4`` with a
Cyrillic ``р`` that shows as a second ``gpt-4`` row of a leaderboard; these said nothing.
"""

from __future__ import annotations

import json
import unicodedata
import warnings
from fractions import Fraction

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.cli import cli
from audit.contract.lookalikes import LookalikeWarning, lookalike_groups
from audit.ingest import load

NFC = unicodedata.normalize("NFC", "Jos\u00e9")
NFD = unicodedata.normalize("NFD", "Jos\u00e9")
TABLE = ("item,annotator,label\n"
         f"1,{NFC},x\n1,{NFD},y\n"            # one name in two normal forms
         "2,ann1,x\n2,ann1 ,x\n"               # a kept space
         "3,\u200fab,z\n3,ab,y\n"              # a right-to-left mark
         "4,Ann,x\n4,ann,y\n")                 # case: distinct ids, not look-alikes


def loaded(tmp_path, text: str, spec: str | None = None):
    path = tmp_path / "t.csv"
    path.write_text(text, encoding="utf-8")
    spec_path = None
    if spec is not None:
        spec_path = tmp_path / "s.yaml"
        spec_path.write_text(spec, encoding="utf-8")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        table = load(path, spec=spec_path)
    return table, [str(w.message) for w in seen if issubclass(w.category, LookalikeWarning)]


def test_look_alike_ids_stay_apart_and_are_named(tmp_path):
    table, said = loaded(tmp_path, TABLE)
    assert table.frame["annotator"].nunique() == 8  # nothing merged
    (message,) = said
    assert "column 'annotator'" in message
    assert "'Jos\\xe9' / 'Jose\\u0301'" in message or "'Jose\\u0301' / 'Jos\\xe9'" in message
    assert "'ann1' / 'ann1 '" in message
    assert "'\\u200fab'" in message
    assert "'Ann'" not in message


def test_the_cli_prints_the_warning(tmp_path):
    (tmp_path / "t.csv").write_text(TABLE, encoding="utf-8")
    result = CliRunner().invoke(cli, ["run", str(tmp_path / "t.csv"), "--bootstrap", "20",
                                      "--no-report", "--quiet", "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if "look alike" in line]
    assert len(lines) == 1 and lines[0].startswith("warning: ")
    dataset = json.loads((tmp_path / "o" / "results.json").read_text())["dataset"]
    assert dataset["n_annotators"] == 8


def test_look_alike_text_labels_are_named(tmp_path):
    _, said = loaded(tmp_path, f"item,annotator,label\n1,a,{NFC}\n1,b,{NFD}\n2,a,x\n2,b,x \n")
    (message,) = said
    assert "column 'label' holds labels that look alike" in message
    assert "'x' / 'x '" in message


def test_wide_table_rater_names_and_items(tmp_path):
    _, said = loaded(tmp_path, f"item,{NFC},{NFD}\nq1,1,2\nq1 ,2,2\n",
                     spec=f"layout: wide\nannotator_columns: [{NFC}, {NFD}]\n")
    assert sorted(m.split(" holds")[0].rsplit(" ", 1)[1] for m in said) == \
        ["'annotator'", "'item'"]


def test_clean_tables_say_nothing(tmp_path):
    _, said = loaded(tmp_path, "item,annotator,label\nq7,a,1\nQ7,b,1\n\u05e9,\u00e9,x\n"
                              "10,\u041c\u043e\u0441\u043a\u0432\u0430,x\n100,Mockba,x\n"
                              "11,\u0430nya,x\n12,anna,x\n11,x\u0667,y\n12,x7,y\n")
    # case; Cyrillic Москва and Latin Mockba differ in к and в; аnya / anna; a digit of another
    # script in a text that writes no number; 10 / 100
    assert said == []


@pytest.mark.parametrize("texts, groups", [
    ([NFC, NFD, "x"], [tuple(sorted([NFC, NFD]))]),
    (["a", " a", "a\u00a0", "b"], [(" a", "a", "a\u00a0")]),
    (["ab", "a\u200bb", "a\u00adb"], [("ab", "a\u00adb", "a\u200bb")]),  # soft hyphen is Cf
    (["a", "A", "GPT-4", "gpt-4"], []),  # case: different
    (["anna", "\u0430nna", "gpt-4", "g\u0440t-4", "gpt\u20134", "gpt\u20114", "gpt\u20144"],
     [("anna", "\u0430nna"), ("gpt-4", "gpt\u20114", "gpt\u20134", "g\u0440t-4")]),  # not —
    (["IBM", "\u0406BM", "lBM", "\u01c0BM"], [("IBM", "\u0406BM"), ("lBM", "\u01c0BM")]),
    (["it's", "it\u2019s", "\u039fK", "OK", "0K"], [("it's", "it\u2019s"), ("OK", "\u039fK")]),
    (["\u0667", "7", "V", "x\u0667", "xV"], [("7", "\u0667")]),  # a digit is a digit
    (["007", "7", "1.0", "1", "10", "1e1", "x7"], [("007", "7"), ("1", "1.0"), ("10", "1e1")]),
    (["John Smith", "John\u00a0Smith", "John  Smith", "John\u202fSmith"],  # kinds of space
     [("John  Smith", "John Smith", "John\u00a0Smith", "John\u202fSmith")]),
    (["1", "\uff11", "\u0661", "-1", "\u22121", "\uff0d1"],  # fullwidth, Arabic-Indic, minus
     [("1", "\u0661", "\uff11"), ("-1", "\u22121", "\uff0d1")]),
    ([1, "1", " 1", None], [(" 1", "1")]),  # values that are not text are left out
    ([10**30, -10**30, 1], []),  # a scale's integers past int64 (pyarrow cannot hold them)
    ([], []),
])
def test_lookalike_groups(texts, groups):
    assert lookalike_groups(texts) == groups


@pytest.mark.spark
def test_the_spark_engine_warns_alike(spark, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(TABLE, encoding="utf-8")
    said = [_said(path, engine=engine)[1] for engine in ("pandas", "spark")]
    assert len(said[0]) == 1
    assert said[0] == said[1]


def test_a_scale_of_integers_past_int64_loads(tmp_path):
    # the check ran pyarrow's type inference on the scale's values: an integer label past
    # int64 was an OverflowError, exit 3 (found by tests/test_fuzz_tables.py)
    (tmp_path / "t.csv").write_text("item,model,annotator,label\n"
                                    "1,m,a,123456789012345678901234567890\n"
                                    "1,m,b,1\n2,m,a,2\n2,m,b,3\n")
    result = CliRunner().invoke(cli, ["validate", str(tmp_path / "t.csv")])
    assert result.exit_code == 0, result.output



@pytest.mark.spark
def test_a_table_kept_on_the_cluster_warns_alike(spark, tmp_path):
    """A pairwise table that Spark keeps on the cluster is warned about from the dictionaries
    the driver holds (pools, annotators, models, labels), in the pandas engine's words; its
    item ids stay on the cluster."""
    path = tmp_path / "pairs.csv"
    path.write_text("item,annotator,model_a,model_b,label\n"
                    f"1,{NFC},m1,m2,A\n1,{NFD},m1,m2,B\n2,ann1,m1,m2,A\n2,ann1 ,m1,m2,tie\n",
                    encoding="utf-8")
    said = {}
    for engine, options in (("pandas", {}), ("spark", {"keep_on_cluster": True})):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            table = load(path, engine=engine, **options)
        said[engine] = [str(w.message) for w in seen
                        if issubclass(w.category, LookalikeWarning)]
    assert type(table).__name__ == "ClusterTable"
    assert len(said["pandas"]) == 1 and "column 'annotator'" in said["pandas"][0]
    assert said["spark"] == said["pandas"]


SPELLINGS = ("item,annotator,label\n"
             "1,John Smith,x\n1,John\u00a0Smith,y\n"      # a no-break space inside
             "2,ann7,x\n2,ann\uff17,y\n"                   # a fullwidth digit
             "3,7,x\n3,7.0,y\n3,007,x\n"                   # one number written three ways
             "4,a,1\n4,b,1.0\n4,c,2\n")                    # nominal labels 1 and 1.0


def test_spaces_digits_and_numbers_written_two_ways_are_named(tmp_path):
    (tmp_path / "t.csv").write_text(SPELLINGS, encoding="utf-8")
    result = CliRunner().invoke(cli, ["run", str(tmp_path / "t.csv"), "--bootstrap", "20",
                                      "--no-report", "--quiet", "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    said = [line for line in result.stderr.splitlines() if "look alike" in line]
    assert len(said) == 2, said
    ids = next(line for line in said if "column 'annotator'" in line)
    assert "'John Smith' / 'John\\xa0Smith'" in ids
    assert "'ann7' / 'ann\\uff17'" in ids
    assert "'007' / '7' / '7.0'" in ids
    labels = next(line for line in said if "column 'label'" in line)
    assert "'1' / '1.0'" in labels
    dataset = json.loads((tmp_path / "o" / "results.json").read_text())["dataset"]
    assert dataset["n_annotators"] == 10  # nothing merged


def oracle_key(text: str):
    """An independent reading of the look-alike key: Python's NFKC and Unicode categories,
    ``str.split``'s whitespace, a number by :class:`fractions.Fraction` (any script's
    digits; no underscores, which Fraction reads but no spreadsheet writes), else each
    character by :func:`oracle_prototype`."""
    text = "".join(ch for ch in unicodedata.normalize("NFKC", text)
                   if unicodedata.category(ch) != "Cf")
    text = " ".join(text.split())
    if "_" not in text and text and not text[-1].isspace():
        try:
            return Fraction(text.replace("\u2212", "-"))
        except (ValueError, ZeroDivisionError):
            pass
    return " ".join("".join(oracle_prototype(ch) for ch in text).split())


def oracle_prototype(ch: str) -> str:
    """The ASCII character under which the confusables package lists ``ch`` (searched, one
    prototype at a time), for a non-ASCII character that is not a digit or a mark; a capital
    of the ``l``/``I``/``1``/``|`` family is ``I``, any other member ``l``."""
    from confusable_homoglyphs.confusables import confusables_data

    if ch.isascii() or unicodedata.category(ch)[0] in "MZ" or unicodedata.category(ch) == "Nd":
        return ch
    for prototype in map(chr, range(0x20, 0x7F)):
        if any(entry["c"] == ch for entry in confusables_data.get(prototype, ())):
            if prototype in "lI1|":
                return "I" if ch.isupper() else "l"
            return prototype
    return ch


PIECES = ["a", "b", "7", "0", "07", "7.0", ".5", "0.50", "1e1", "10", "+", "-", "\u2212", " ",
          "  ", "\u00a0", "\u202f", "\u3000", "\u200b", "\u00ad", "\ufeff", "\uff17",
          "\u0667", "\u0967", "e\u0301", "\u00e9", "\ufb01", "fi", "x\u00b2", "x2", "E", ".",
          "\u0430", "\u0440", "p", "\u2013", "\u2011", "\u2014", "\u0406", "I", "l", "\u01c0",
          "'", "\u2019", "\u0399", "\u041e", "O", "\u0392"]


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.lists(st.lists(st.sampled_from(PIECES), min_size=1, max_size=3).map("".join),
                min_size=2, max_size=8, unique=True))
def test_lookalike_groups_agree_with_an_independent_key(texts):
    by_key: dict = {}
    for text in texts:
        by_key.setdefault(oracle_key(text), []).append(text)
    expected = sorted(tuple(sorted(g)) for g in by_key.values() if len(g) > 1)
    assert sorted(lookalike_groups(texts)) == expected


@pytest.mark.spark
def test_the_spark_engine_names_spellings_alike(spark, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(SPELLINGS, encoding="utf-8")
    said = [_said(path, engine=engine)[1] for engine in ("pandas", "spark")]
    assert len(said[0]) == 2
    assert said[0] == said[1]


#: Models and pools named by people, in two tools' spellings; annotators that differ by case
#: alone (platform ids may): said for models and pools only.
CASED = ("item,annotator,pool,model_a,model_b,label\n"
         "1,Ann,Crowd,GPT-4,llama,A\n1,ann,crowd,GPT-4,llama,B\n"
         "2,Ann,Crowd,llama,gpt-4,A\n2,ann,crowd,claude,GPT-4,tie\n")


def _said(path, **options):
    """The table loaded from ``path`` and its look-alike warnings, sorted."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        table = load(path, **options)
    return table, sorted(str(w.message) for w in seen if issubclass(w.category, LookalikeWarning))


def test_models_and_pools_differing_by_case_are_named(tmp_path):
    """GPT-4 as one row's model_a and gpt-4 as another's model_b were two models with nothing
    said (case was not in the key, and each model column was checked alone): one model's
    comparisons split over two leaderboard rows. Now the two columns are one set of models and
    case is in the key of model and pool names; annotators differing by case say nothing."""
    path = tmp_path / "t.csv"
    path.write_text(CASED, encoding="utf-8")
    table, said = _said(path)
    assert sorted(table.frame["pool"].cat.categories) == ["Crowd", "crowd"]  # nothing merged
    assert len(said) == 2, said
    models, pools = said
    assert "column 'model_a / model_b' holds ids that look alike" in models
    assert "or case" in models and "'GPT-4' / 'gpt-4'" in models
    assert "column 'pool'" in pools and "'Crowd' / 'crowd'" in pools
    assert not [m for m in said if "column 'annotator'" in m]
    rated = tmp_path / "r.csv"
    rated.write_text("item,annotator,model,label\n1,a,GPT-4,1\n2,a,gpt-4,2\n", encoding="utf-8")
    assert ["column 'model' holds" in m for m in _said(rated)[1]] == [True]


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.lists(st.lists(st.sampled_from([*PIECES, "A", "GPT", "gpt", "\u00c9", "\u0130", "I"]),
                         min_size=1, max_size=3).map("".join), min_size=2, max_size=8,
                unique=True))
def test_lookalike_groups_with_case_agree_with_an_independent_key(texts):
    by_key: dict = {}
    for text in texts:
        key = oracle_key(text)
        by_key.setdefault(key.lower() if isinstance(key, str) else key, []).append(text)
    expected = sorted(tuple(sorted(g)) for g in by_key.values() if len(g) > 1)
    assert sorted(lookalike_groups(texts, case=True)) == expected


@pytest.mark.spark
def test_spark_names_models_and_pools_differing_by_case_alike(spark, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(CASED, encoding="utf-8")
    want = _said(path)[1]
    for options in ({}, {"keep_on_cluster": True}):
        assert _said(path, engine="spark", **options)[1] == want, options


def test_a_model_spelled_with_a_letter_of_another_script_is_named(tmp_path):
    """A contributor's 'gрt-4' (Cyrillic р) beside 'gpt-4' was a second leaderboard row that
    reads 'gpt-4', with nothing said; and 'gpt‑4' pasted with a non-breaking hyphen. Both are
    named, escaped, and audited apart (nothing merged)."""
    path = tmp_path / "t.csv"
    path.write_text("item,annotator,model_a,model_b,label\n"
                    "1,a,gpt-4,llama,A\n2,a,llama,g\u0440t-4,B\n3,a,gpt\u20114,llama,A\n",
                    encoding="utf-8")
    table, said = _said(path)
    assert len(table.frame["model_a"].cat.categories.union(
        table.frame["model_b"].cat.categories)) == 4
    (message,) = said
    assert "column 'model_a / model_b'" in message and "other scripts drawn alike" in message
    assert "'gpt-4' / 'gpt\\u20114' / 'g\\u0440t-4'" in message, message
