"""Write a canonical table as a Parquet dataset plus the spec that reads it back exactly.

``annotation-audit export SOURCE OUT`` turns any source the pandas engine reads (PandaLM, LeWiDi,
MultiPref, MT-Bench, a mapped CSV) into ``OUT/judgments/`` (Parquet, one Hive partition per pool:
``pool=crowd/part-0.parquet``) and ``OUT/spec.yaml`` (name, label scale with its order and
names, judge pools, and the judgments a documented rule dropped when SOURCE was read:
``dropped_before_export``, MD-Agreement's one repeated judgment). Auditing ``OUT/judgments
--spec OUT/spec.yaml`` with either engine gives the results of auditing SOURCE, its
``dataset.rows_read`` and ``rows_dropped`` included: it is how a dataset leaves a laptop for a
data lake, and how the Spark engine reads formats it has no adapter for.

Strings are written exactly as the source holds them, including ones that a spreadsheet would
read as a formula (a cell starting with ``=``, ``+``, ``-`` or ``@``, the "CSV injection" of
OWASP). That is deliberate: the export is data for programs (Parquet readers, Spark, this
toolkit), which never evaluate cells, and the usual defence, prefixing such cells with ``'``,
would change ids and labels (``-1`` is a label), so the re-read audit would no longer equal the
original. Open exported text in a spreadsheet only with formulas disabled, or import it as text.

The export is written into a staging folder beside OUT and moved in with ``OUT/manifest.json``
(every file's SHA-256) last (:func:`audit.outputs.staged`); auditing ``OUT/judgments`` checks the
files against it (:func:`audit.outputs.verify_inputs`). Nothing in OUT is overwritten: other
files there are kept, and an OUT that already holds ``judgments``, ``spec.yaml`` or
``manifest.json``, holds an input, or lies inside an input folder is refused before any work.
"""

from __future__ import annotations

from pathlib import Path

from .contract import columns as C
from .contract.table import AnnotationTable

DATA_DIR = "judgments"
SPEC_FILE = "spec.yaml"


def export_table(table: AnnotationTable, out, *, partition_by_pool: bool = True,
                 rows_per_file: int | None = None, inputs=None) -> dict[str, Path]:
    """Write ``table`` to ``out/judgments/`` and ``out/spec.yaml`` (with ``out/manifest.json``);
    return both paths.

    Ids and labels are written as text (labels as their scale value's text, which the spec's
    ``label.order`` matches), optional columns as they are in the table.

    Parameters
    ----------
    inputs
        What the export read (:func:`audit.outputs.find_inputs`; the CLI finds them before
        loading); default the table's source.

    Raises
    ------
    InputError
        A table of vote counts (its annotators are not given: the export would write its
        synthetic annotators as if they were); ``out/judgments``, ``out/spec.yaml`` or ``out/manifest.json`` already exists (nothing
        is overwritten), or ``out`` holds an input or lies inside an input folder.
    """
    import pyarrow as pa
    import pyarrow.dataset as ds
    from .escape import visible
    from .ingest.yamlsafe import dump
    from .outputs import MANIFEST, find_inputs, guard_folder, staged

    if not table.annotators_given:
        from .errors import InputError

        raise InputError("the table gives vote counts per item (label.from_counts), not who "
                         "voted: the export writes one judgment per row with its annotator, "
                         "which would read back as annotators; audit the counts as they are",
                         path=table.source, key="label.from_counts")
    out = Path(out)
    if partition_by_pool:
        _check_partition_names(table.frame[C.POOL].cat.categories, out)
    inputs = inputs if inputs is not None else find_inputs(table.source)
    names = (DATA_DIR, SPEC_FILE, MANIFEST)
    target = guard_folder(out, inputs, replace=False, names=names)
    data = out / DATA_DIR
    spec_path = out / SPEC_FILE
    f = table.frame
    columns = {}
    for col in f.columns:
        cat = f[col].cat
        if col == C.LABEL:
            names = [str(v) for v in table.scale.values]
        else:
            names = [str(v) for v in cat.categories]
        columns[col] = pa.DictionaryArray.from_arrays(
            pa.array(cat.codes.to_numpy(), mask=cat.codes.to_numpy() < 0),
            pa.array(names, type=pa.string()))
    arrow = pa.table(columns)
    options = {"max_rows_per_file": rows_per_file, "max_rows_per_group": rows_per_file} \
        if rows_per_file else {}
    label = {"kind": table.scale.kind.value, "order": [_plain(v) for v in table.scale.values]}
    if table.scale.names is not None:
        label["names"] = list(table.scale.names)
    spec = {"name": table.name, "label": label}
    if table.judge_pools:
        spec["judge_pools"] = list(table.judge_pools)
    dropped = [{"rule": str(d["rule"]), "n": int(d["n"])} for d in table.info.get("dropped", [])]
    if dropped:  # the judgments Parquet cannot hold: the re-read counts them (rows_dropped)
        spec["dropped_before_export"] = dropped
    folded = table.info.get("pools_folded") or {}
    if folded.get("pools"):  # --min-pool-annotators: the pools 'other' holds, by name
        spec["pools_folded_before_export"] = _folded_record(folded)
    # paths are a comment's text: a line break in a file name would start a line of YAML
    header = (f"# Written by annotation-audit export from {visible(table.source)}.\n"
              f"# Audit with: annotation-audit run {visible(data)} --spec "
              f"{visible(spec_path)}\n")
    with staged(target, command="export", replace=False,
                recheck=lambda: guard_folder(out, inputs, replace=False, names=names)) as stage:
        ds.write_dataset(arrow, stage.path / DATA_DIR, format="parquet",
                         partitioning=[C.POOL] if partition_by_pool else None,
                         partitioning_flavor="hive" if partition_by_pool else None,
                         basename_template="part-{i}.parquet", **options)
        (stage.path / SPEC_FILE).write_text(
            header + dump(spec), encoding="utf-8")
    return {"data": data, "spec": spec_path}


#: The folder name Hive partitioning (pyarrow, Spark, Hive) reads back as a null value.
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"


def _check_partition_names(pools, out: Path) -> None:
    """Raise InputError when a pool's partition folder name would be longer than the file
    system allows for one name (``NAME_MAX``, 255 bytes on Linux, macOS and Windows), or is
    :data:`HIVE_NULL`, which every Hive reader reads back as a missing pool (pyarrow then
    refuses the dataset: "Cannot yet unify dictionaries with nulls").

    The folder is ``pool=`` and the name percent-encoded (``quote(name, safe="")``, what
    pyarrow's Hive partitioning writes), so a pool named by a long free-text field fails with
    the system's "File name too long" and a path of the whole name; said here instead, before
    anything is written, with the way out (``--no-partition``)."""
    import os
    from urllib.parse import quote

    from .errors import InputError

    folder = out.resolve()
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        limit = os.pathconf(folder, "PC_NAME_MAX")
    except (AttributeError, OSError, ValueError):
        limit = 255
    for pool in pools:
        if str(pool) == HIVE_NULL:
            raise InputError(f"pool {HIVE_NULL!r} names the partition folder Hive readers read "
                             "as a missing pool, so the export would not read back; export "
                             "without a folder per pool (--no-partition, "
                             "partition_by_pool=False)", path=str(out))
        size = len(f"{C.POOL}={quote(str(pool), safe='')}".encode())
        if size > limit:
            shown = str(pool) if len(str(pool)) <= 40 else f"{str(pool)[:40]}..."
            raise InputError(f"pool {shown!r} ({len(str(pool)):,} characters) names a partition "
                             f"folder of {size:,} bytes, over the {limit} bytes the file system "
                             "allows for one name; export without a folder per pool "
                             "(--no-partition, partition_by_pool=False)", path=str(out))


def _plain(value):
    """A scale value as a plain YAML scalar."""
    if hasattr(value, "item"):
        return value.item()
    return value


def _folded_record(folded: dict) -> dict:
    """``pools_folded`` as plain YAML-writable values (the spec's
    ``pools_folded_before_export``)."""
    return {"min_annotators": int(folded["min_annotators"]), "into": str(folded["into"]),
            "pools": [{"pool": str(p["pool"]), "reason": str(p["reason"]),
                       "n_annotators": int(p["n_annotators"]),
                       "n_judgments": int(p["n_judgments"])} for p in folded["pools"]],
            "n_annotators": int(folded["n_annotators"]),
            "n_judgments": int(folded["n_judgments"])}
