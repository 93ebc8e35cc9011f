"""Files in the shapes annotation teams export them, found wanting by a sweep (helper-75).

A corpus of 80+ exports (Qualtrics, SurveyMonkey, Google Forms, MTurk batch results, Excel's
"CSV UTF-8" and "Unicode Text", cp1252 and Mac Roman, decimal commas, percentages and stars as
ratings, ids Excel rewrote, title and totals rows, repeated or padded header names, NUL
padding, compressed files, JSON Lines and JSON in every shape pandas and ``datasets`` write)
was run through ``validate`` / ``run`` / ``card`` / ``check`` / ``export`` on both engines, each
table compared with what its file says. Most were already read, or refused in one line saying
what to do; each test here is one that was not, with its minimal file:

* a rating table's words beside numbers (``N/A``, ``-``, ``4 stars``): the suggested
  ``label.order`` sorted the labels as text (``10`` before ``2``, ``100%`` before ``20%``) and
  put ``N/A`` on the scale without a word.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from audit.cli import cli


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def one_error(result, *words):
    """Exit 2, one ``error:`` message holding each of ``words``, no traceback."""
    out = result.output
    assert result.exit_code == 2, out
    assert "Traceback" not in out and "internal error" not in out, out
    assert sum(line.startswith("error:") for line in out.splitlines()) == 1, out
    for word in words:
        assert word in out, f"{word!r} not in {out!r}"
    return out


# -- ratings: the order a message suggests --------------------------------------------------

def _ratings(tmp_path: Path, labels) -> Path:
    path = tmp_path / "ratings.csv"
    rows = [f"s{k},m{k % 2},r{k % 3},{label}" for k, label in enumerate(labels)]
    path.write_text("item,model,annotator,label\n" + "\n".join(rows) + "\n")
    return path


def test_a_rating_scales_suggested_order_is_numeric_and_names_the_words(tmp_path):
    """Ratings 0..10 with one ``N/A``: the suggested order was ``"0", "1", "10", "2", ...,
    "N/A"`` (text order: a spec copied from it reads 10 as worse than 2, and N/A as the best
    rating). Now the numbers come in their order, and the words are named, with the
    ``na_values`` line for a missing rating."""
    out = one_error(invoke("validate", _ratings(tmp_path, [*range(11), "N/A"])),
                    "ratings.csv", "column 'label'", "'N/A' is not a number",
                    'read: {na_values: ["N/A"]}')
    assert 'order: ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "N/A"]' in out, out


def test_ratings_written_as_words_are_suggested_in_the_order_of_their_numbers(tmp_path):
    """``20%`` .. ``100%``: the text order put ``100%`` first."""
    out = one_error(invoke("validate", _ratings(tmp_path, ["20%", "40%", "60%", "80%", "100%"])),
                    "ratings.csv", "column 'label'")
    assert 'order: ["20%", "40%", "60%", "80%", "100%"]' in out, out
    assert "not a number" not in out, out
