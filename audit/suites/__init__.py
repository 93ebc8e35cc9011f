"""Suites: a dataset's stated assumptions as expectation suites, run through great_expectations.

A suite (``expectations/*.yaml``, written by hand) names the claims a dataset makes, each with a
threshold. Two layers, both validated by great_expectations for real:

* row expectations on the canonical table and on per-item / per-pool / per-model counts
  derived from it (:mod:`.batches`): ids not null, labels in the declared set, one judgment per
  (item, annotator), judgments per item and per pool, model names, position balance;
* statistical claims on the audit's measurements (:mod:`.measurements`): one row per
  measurement (Krippendorff's alpha per pool, within-pool disagreement, pool majority-differs
  and winner-reversal rates, Kendall's tau between pool leaderboards, bootstrap displacement
  probability, judge agreement, and in dataset-PR mode the change against a baseline
  (:mod:`.baseline`)); each claim is one built-in great_expectations expectation on one row.

Modules: :mod:`.catalogue` (the expectation names, their keys and thresholds), :mod:`.suite`
(the validated suite and its entries), :mod:`.suite_file` (YAML with line numbers) and
:mod:`.suite_model` (its pydantic models, one per expectation), :mod:`.gx_json` (the
great_expectations JSON form), :mod:`.measurement_ids` (the id a claim reads), :mod:`.batches` and
:mod:`.measurements` (the frames great_expectations validates), :mod:`.baseline` (what changed
between two versions), :mod:`.gx_run` (the only module importing great_expectations, with an
ephemeral context), :mod:`.outcomes`, :mod:`.junit`, :mod:`.github` (renderers, pure functions of
the validation result) and :mod:`.check` (the gate the CLI calls).
"""

from __future__ import annotations

__all__ = ["check", "load_suite"]


def check(source, **options):
    """Run a suite on ``source``; see :func:`audit.suites.check.check`."""
    from .check import check as _check
    return _check(source, **options)


def load_suite(path):
    """Read and validate a suite file; see :func:`audit.suites.suite_file.load_suite`."""
    from .suite_file import load_suite as _load
    return _load(path)
