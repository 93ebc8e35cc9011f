"""WMT23 Chinese-to-English MQM as a rating leaderboard with two rater pools.

Turns the side-by-side MQM error table of Google's WMT23 zh-en human evaluation (ten systems,
377 segments, three of eight professional raters per segment; ``../shared/data/
wmt23_sxs_mqm_zhen/``, Apache-2.0) into the toolkit's long rating table, one row per judgment,
and prints (or, with ``--run``, runs) the audit::

    python examples/wmt23_zhen_mqm.py --out /tmp/wmt23
    annotation-audit run /tmp/wmt23/wmt23_zhen_mqm.csv --spec /tmp/wmt23/wmt23_zhen_mqm.yaml \\
        --out /tmp/wmt23/audit

``data/wmt23_zhen_mqm/`` ships the first eight documents (2,400 judgments), written by
``python examples/wmt23_zhen_mqm.py --docs 8 --out data/wmt23_zhen_mqm``.

One judgment
    one rater's score of one system's translation of one segment: ``item`` = ``system|segment``
    (the thing judged; each is scored by three raters, which is what agreement is measured on),
    ``model`` = the system, ``annotator`` = the rater, ``label`` = the score.
The score
    the MQM segment score of Freitag et al. (2021, "Experts, Errors, and Context", TACL, Table 2):
    the sum of the rater's error weights in that (system, segment) -- Major 5, Minor 1, Minor
    ``Fluency/Punctuation`` 0.1, ``Non-translation`` 25, ``No-error`` and ``Source issue`` 0.
    ``Accuracy/Creative Reinterpretation`` (a category of the annotation tool newer than the
    paper, defined there as a change that *preserves* the source's intent) weighs 0, as in the
    data authors' own scorer (Marot's default weights, google-research/marot). With these rules
    the mean over raters reproduces the per-segment MQM the authors published in the data
    (``metadata.segment.metrics.MQM``) for all 3,770 (system, segment) pairs: see
    :func:`check_published`. Weights are summed in integer tenths, so every score is exact.
Sign
    MQM counts errors: lower is better. The toolkit ranks higher-is-better, so ``label`` is the
    **negated** sum (0 = no error, -5 = one major error), as many publications report it. Alpha
    and ICC do not change under negation; leaderboard scores are minus the mean MQM.
Dropped rows, counted
    ``HOTW-test`` rows (461: 460 ``Found``, 1 ``Missed``) record hands-on-the-wheel probes, errors
    injected to keep raters attentive; they are quality control, not ratings, and are excluded.
    No (system, segment, rater) consists of probes only, so no judgment is lost; should one
    occur, it keeps its judgment with score 0, as the authors' scorer gives it. Every other row
    counts; an unknown severity is an error, never a silent weight.
Two rater pools
    ``raters 1-4`` and ``raters 5-8``, by the number in the anonymised rater id. The data carry
    no rater attribute (the metadata hold timings, spans and segment information only), and
    raters were assigned per document in a rotation of eight overlapping triples, so neither
    workload nor documents give a natural grouping. A split fixed in advance by id is
    reproducible, independent of the scores (not chosen after looking at them) and balanced by
    the design: each pool holds 12 of the 24 rater slots of the rotation (5,670 and 5,640
    judgments). The two pools are halves of one professional panel, so the pool comparison is a
    baseline: how far two disjoint sets of equally qualified raters move the leaderboard. With
    three ratings per item no item has two judgments from each pool, so an item-level pool
    comparison rests on a single rating on one side; the pools meet in their leaderboards.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shlex
import shutil
import sys
import tarfile
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
SPEC = HERE / "wmt23_zhen_mqm.yaml"
DATA_DIR = HERE.parent.parent / "shared" / "data" / "wmt23_sxs_mqm_zhen"
SOURCE = DATA_DIR / "sxs_mqm_generalMT2023_zhen.3ratingsPerSegment.tsv.tar.gz"
CSV_NAME = "wmt23_zhen_mqm.csv"

#: The ten columns of the error table (google-research/marot README, "Data file format").
COLUMNS = ("system", "doc", "docSegId", "globalSegId", "rater", "source", "target", "category",
           "severity", "metadata")
UNIT = ("system", "globalSegId", "rater")
PROBE_SEVERITY = "HOTW-test"
POOLS = ("raters 1-4", "raters 5-8")

#: Weights in tenths of an MQM point, first matching rule wins (Freitag et al. 2021, Table 2;
#: Creative Reinterpretation as in Marot's default weights). ``None`` matches anything.
#: (severity, category test, tenths, rule)
WEIGHT_RULES = (
    ("No-error", None, 0, "no error"),
    (None, lambda c: c == "Source issue", 0, "source issue: not the translation's error"),
    (None, lambda c: "reinterpretation" in c.lower(), 0,
     "creative reinterpretation: preserves the source's intent"),
    (None, lambda c: c.lower().startswith("non-translation"), 250, "non-translation"),
    ("Minor", lambda c: c == "Fluency/Punctuation", 1, "minor punctuation"),
    ("Major", None, 50, "major"),
    ("Minor", None, 10, "minor"),
)


@dataclass(frozen=True)
class Counts:
    """How the error table became judgments; every row is accounted for."""

    rows_read: int
    probe_rows: int
    scored_rows: int
    judgments: int
    judgments_with_probe: int
    judgments_probe_only: int
    system_segments: int
    systems: int
    segments: int
    raters: int
    distinct_scores: int


def read_errors(path: str | Path = SOURCE) -> pd.DataFrame:
    """The MQM error table as text columns, one row per annotated error (or ``No-error`` row).

    ``path`` is the published ``.tsv.tar.gz`` (one TSV inside) or an extracted ``.tsv``. The
    file is read with ``quoting=csv.QUOTE_NONE``: texts contain double quotes that are not CSV
    quoting, and tabs inside texts are escaped. Every value stays text (``docSegId`` ``"1"``).

    Raises
    ------
    FileNotFoundError
        ``path`` does not exist.
    ValueError
        The archive does not hold exactly one TSV, or the columns are not the ten documented
        ones (a header line with a trailing documentation link is accepted when that column is
        empty in every row).
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file; the data are described in "
                                f"{DATA_DIR / 'PROVENANCE.md'}")
    options = dict(sep="\t", quoting=csv.QUOTE_NONE, dtype=str, keep_default_na=False,
                   encoding="utf-8")
    if path.name.endswith((".tar.gz", ".tgz")):
        with tarfile.open(path, "r:gz") as tar:
            members = [m for m in tar.getmembers() if m.isfile() and m.name.endswith(".tsv")]
            if len(members) != 1:
                raise ValueError(f"{path}: expected one .tsv in the archive, found "
                                 f"{[m.name for m in members]}")
            frame = pd.read_csv(tar.extractfile(members[0]), **options)
    else:
        frame = pd.read_csv(path, **options)
    if tuple(frame.columns[:len(COLUMNS)]) != COLUMNS:
        raise ValueError(f"{path}: columns {list(frame.columns)}; expected {list(COLUMNS)}")
    extra = frame.columns[len(COLUMNS):]
    filled = [c for c in extra if (frame[c] != "").any()]
    if filled:
        raise ValueError(f"{path}: unexpected values in column(s) {filled}")
    return frame[list(COLUMNS)]


def error_tenths(errors: pd.DataFrame) -> pd.Series:
    """Each row's MQM weight in tenths of a point (:data:`WEIGHT_RULES`); probes are NaN.

    Raises
    ------
    ValueError
        A row that is not a probe and matches no rule (an unknown severity), naming the values.
    """
    tenths = pd.Series(np.nan, index=errors.index)
    todo = errors["severity"] != PROBE_SEVERITY
    for severity, category, weight, _ in WEIGHT_RULES:
        hit = todo.copy()
        if severity is not None:
            hit &= errors["severity"] == severity
        if category is not None:
            hit &= errors["category"].map(category).astype(bool)
        tenths[hit] = weight
        todo &= ~hit
    if todo.any():
        left = errors.loc[todo, ["severity", "category"]].value_counts()
        raise ValueError(f"no MQM weight for (severity, category) {left.to_dict()}; add a rule "
                         f"to WEIGHT_RULES")
    return tenths


def segment_scores(errors: pd.DataFrame) -> tuple[pd.DataFrame, Counts]:
    """One MQM score per (system, segment, rater), and how the rows were counted.

    Returns a frame with ``system, doc, docSegId, globalSegId, rater, mqm_tenths, mqm`` (``mqm``
    the Freitag et al. 2021 sum, lower is better), sorted by segment, system and rater.
    """
    tenths = error_tenths(errors)
    probe = tenths.isna()
    keys = list(UNIT) + ["doc", "docSegId"]
    units = (errors.assign(_t=tenths.fillna(0).astype(np.int64), _probe=probe)
             .groupby(keys, sort=False)
             .agg(mqm_tenths=("_t", "sum"), _probes=("_probe", "sum"), _rows=("_probe", "size"))
             .reset_index())
    if units.duplicated(list(UNIT)).any():
        raise ValueError("a (system, globalSegId, rater) spans two documents or segments")
    units["mqm"] = units["mqm_tenths"] / 10
    order = units["globalSegId"].astype(int)
    units = (units.assign(_seg=order).sort_values(["_seg", "system", "rater"])
             .reset_index(drop=True))
    counts = Counts(
        rows_read=len(errors), probe_rows=int(probe.sum()), scored_rows=int((~probe).sum()),
        judgments=len(units), judgments_with_probe=int((units["_probes"] > 0).sum()),
        judgments_probe_only=int((units["_probes"] == units["_rows"]).sum()),
        system_segments=int(units[["system", "globalSegId"]].drop_duplicates().shape[0]),
        systems=int(units["system"].nunique()), segments=int(units["globalSegId"].nunique()),
        raters=int(units["rater"].nunique()), distinct_scores=int(units["mqm_tenths"].nunique()))
    cols = ["system", "doc", "docSegId", "globalSegId", "rater", "mqm_tenths", "mqm"]
    return units[cols], counts


def rater_pool(rater: str) -> str:
    """``raters 1-4`` or ``raters 5-8``, from the number in ``rater`` (``rater6``)."""
    match = re.fullmatch(r"rater(\d+)", rater)
    if match is None or not 1 <= int(match.group(1)) <= 8:
        raise ValueError(f"rater id {rater!r} is not rater1 .. rater8; the pool split is by "
                         f"that number")
    return POOLS[0] if int(match.group(1)) <= 4 else POOLS[1]


def long_table(scores: pd.DataFrame) -> pd.DataFrame:
    """The audit's long table: ``item, model, annotator, pool, label`` plus ``segment, doc``.

    ``label`` is the negated MQM score (higher is better), exact to the tenth, never ``-0.0``.
    """
    tenths = scores["mqm_tenths"].to_numpy()
    return pd.DataFrame({
        "item": scores["system"] + "|" + scores["globalSegId"],
        "model": scores["system"],
        "annotator": scores["rater"],
        "pool": scores["rater"].map(rater_pool),
        "label": np.where(tenths == 0, 0.0, -tenths / 10),
        "segment": scores["globalSegId"],
        "doc": scores["doc"],
    })


def published_mqm(errors: pd.DataFrame) -> pd.Series:
    """The per-(system, segment) MQM the data's authors published: the ``segment.metrics.MQM``
    field of the row's metadata, present on one row of each (system, segment)."""
    def mqm(text: str) -> float:
        segment = json.loads(text).get("segment") or {}
        return float(segment.get("metrics", {}).get("MQM", np.nan))

    values = errors["metadata"].map(mqm)
    keyed = errors[["system", "globalSegId"]].assign(published=values).dropna()
    return keyed.groupby(["system", "globalSegId"])["published"].first()


def check_published(scores: pd.DataFrame, errors: pd.DataFrame, *, tol: float = 1e-9) -> int:
    """Compare the mean score over raters per (system, segment) with the authors' published
    segment MQM; return how many pairs were compared.

    Raises
    ------
    ValueError
        A (system, segment) without a published score, or one that differs by more than ``tol``.
    """
    ours = scores.groupby(["system", "globalSegId"])["mqm"].mean()
    published = published_mqm(errors).reindex(ours.index)
    if published.isna().any():
        raise ValueError(f"{int(published.isna().sum())} (system, segment) pairs have no "
                         f"published MQM")
    diff = (ours - published).abs()
    if (diff > tol).any():
        raise ValueError(f"{int((diff > tol).sum())} (system, segment) scores differ from the "
                         f"published MQM, e.g. {diff.idxmax()} by {diff.max():.6g}")
    return len(ours)


def first_documents(long: pd.DataFrame, n_docs: int) -> pd.DataFrame:
    """The judgments of the first ``n_docs`` documents, in segment order: a sample that keeps
    every judgment of a document. Eight documents are one turn of the rater rotation (each of
    the eight rater triples once), so both pools keep items with two or more judgments."""
    docs = list(dict.fromkeys(long["doc"]))[:n_docs]
    return long[long["doc"].isin(docs)].reset_index(drop=True)


def write(out: str | Path, source: str | Path = SOURCE, *,
          n_docs: int | None = None) -> tuple[Path, Path, Counts]:
    """Write ``out/wmt23_zhen_mqm.csv`` (the long table; with ``n_docs``, only the first
    documents: :func:`first_documents`) and ``out/wmt23_zhen_mqm.yaml`` (its spec); return both
    paths and the counts of the whole table. Each file is written beside its target and renamed
    into place, so a reader never sees half a file."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    errors = read_errors(source)
    scores, counts = segment_scores(errors)
    check_published(scores, errors)
    long = long_table(scores)
    if n_docs is not None:
        long = first_documents(long, n_docs)
    table, spec = out / CSV_NAME, out / SPEC.name
    tmp = out / f".{CSV_NAME}.tmp"
    long.to_csv(tmp, index=False, lineterminator="\n")
    os.replace(tmp, table)
    tmp = out / f".{SPEC.name}.tmp"
    shutil.copyfile(SPEC, tmp)
    os.replace(tmp, spec)
    return table, spec, counts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="folder for the long CSV, spec and audit")
    parser.add_argument("--source", default=str(SOURCE), help="the .tsv.tar.gz (or .tsv)")
    parser.add_argument("--run", action="store_true", help="also run the audit into OUT/audit")
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--docs", type=int, default=None, metavar="N",
                        help="write only the first N documents (8: the shipped sample)")
    args = parser.parse_args(argv)
    table, spec, counts = write(args.out, args.source, n_docs=args.docs)
    for key, value in asdict(counts).items():
        print(f"{key:>22}: {value:,}")
    print("mean scores over raters match the published segment MQM")
    if args.docs is not None:
        kept = len(pd.read_csv(table, usecols=["item"]))
        print(f"kept the first {args.docs} documents: {kept:,} judgments")
    print(f"wrote {table} and {spec}")
    audit_out = Path(args.out) / "audit"
    command = ["annotation-audit", "run", str(table), "--spec", str(spec), "--out",
               str(audit_out), "--bootstrap", str(args.bootstrap), "--seed", str(args.seed)]
    print("audit it with:\n  " + shlex.join(command))
    if args.run:
        from audit.cli import main as cli_main

        return cli_main(command[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
