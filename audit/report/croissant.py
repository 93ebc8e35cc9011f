"""``croissant.json``: a complete Croissant 1.0 document for the audited dataset.

Croissant (Akhtar et al. 2024, "Croissant: A Metadata Format for ML-Ready Datasets"; spec at
https://docs.mlcommons.org/croissant/docs/croissant-spec.html) describes a dataset as JSON-LD: a
``sc:Dataset`` with its metadata, a ``distribution`` of ``cr:FileObject`` resources (each with
its ``sha256`` and ``encodingFormat``) and ``recordSet`` nodes whose ``cr:Field`` s say how each
value is extracted from a file. The Responsible-AI extension (Jain et al. 2024, Croissant RAI)
adds the annotation fields (:func:`croissant_rai`).

The document written here holds

* the dataset's ``name`` (the card's ``pretty_name``), ``description``, ``license`` and ``url``
  from the publishing metadata (:mod:`audit.report.card_meta`), with a generated description
  when none is given;
* ``distribution``: the source data as published (the file, or every file of the source folder,
  by its path relative to the source, so the document is valid beside the data in a dataset
  repository) and ``items.parquet``, the per-item table of the same run (:mod:`audit.items`);
* ``recordSet`` ``judgments``, for a single long-format CSV / Parquet / JSON Lines source: one
  ``cr:Field`` per canonical column the file holds (item, annotator, pool, label, models),
  extracted from the source column the spec names for it;
* ``recordSet`` ``items``: one ``cr:Field`` per column of ``items.parquet`` (the item id, the
  judgments per item, and per pool the label counts, soft label, majority and unanimity, and
  across pools the disagreement class), each with its ``dataType`` and a column extraction.
  Other sources get no per-judgment record set: PandaLM's wide JSON or MT-Bench's nested
  records need an unpivot or a join that Croissant 1.0 cannot express, and a record set that
  reads a different table from the one audited would be wrong;
* the RAI fields (``rai:annotationsPerItem``, ``rai:dataAnnotationAnalysis``,
  ``rai:dataLimitations``, ``rai:machineAnnotationTools``).

Every string is data inside a JSON value (the serializer escapes it); ``@id`` values are built
from positions, never from names, so a pool or column name cannot alias another node.
``croissant_rai.json`` keeps the RAI node alone (:func:`croissant_rai`) for readers of earlier
runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

#: The Croissant JSON-LD context as the reference implementation writes it (``mlcroissant``'s
#: ``make_context``, the 1.0 context with ``equivalentProperty`` and ``samplingRate``).
CONTEXT = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}
CONFORMS_TO = ["http://mlcommons.org/croissant/1.0", "http://mlcommons.org/croissant/RAI/1.0"]
FILE = "croissant.json"
ITEMS = "items.parquet"
#: Encoding formats (MIME types) by file suffix; others are ``application/octet-stream``.
ENCODINGS = {".csv": "text/csv", ".tsv": "text/tab-separated-values", ".json": "application/json",
             ".jsonl": "application/jsonlines", ".parquet": "application/x-parquet",
             ".txt": "text/plain", ".yaml": "application/yaml", ".yml": "application/yaml",
             ".md": "text/markdown", ".arrow": "application/vnd.apache.arrow.file"}
#: The most source files listed one by one (a larger folder is described by its first files).
MAX_FILES = 1000


#: The context of ``croissant_rai.json``, the RAI node alone.
RAI_CONTEXT = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "sc": "https://schema.org/",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "dct": "http://purl.org/dc/terms/",
    "conformsTo": "dct:conformsTo",
}


def croissant_rai(results: dict) -> dict:
    """The Croissant RAI annotation fields as a JSON-LD ``sc:Dataset`` node
    (``croissant_rai.json``).

    ``rai:annotationsPerItem`` (judgments per item and per pool), ``rai:dataAnnotationAnalysis``
    (reliability, pool disagreement, within-pool variability, leaderboard stability: the
    sentences of :mod:`audit.report.prose`), ``rai:dataLimitations``
    (:func:`audit.report.limitations.limitations`) and ``rai:machineAnnotationTools`` (judge
    pools). Strings are plain text (JSON escapes them).
    """
    from .limitations import limitations
    from .prose import (annotations_per_item, disagreement_sentences, judge_sentences,
                        reliability_sentences, stability_sentences, within_sentences)

    ds = results.get("dataset") or {}
    meta = results.get("meta") or {}
    judges = [p for p, i in (ds.get("pools") or {}).items() if i.get("judge")]
    analysis = ([f"Reliability per pool: {s}" for s in reliability_sentences(results)]
                + disagreement_sentences(results)
                + [f"Within-pool variability, {s}" for s in within_sentences(results)]
                + stability_sentences(results)
                + judge_sentences(results))
    node = {
        "@context": RAI_CONTEXT,
        "@type": "sc:Dataset",
        "name": ds.get("name"),
        "conformsTo": list(CONFORMS_TO),
        "rai:annotationsPerItem": annotations_per_item(results),
        "rai:dataAnnotationAnalysis": analysis,
        "rai:dataLimitations": limitations(results),
    }
    if judges:
        node["rai:machineAnnotationTools"] = judges
    if meta.get("source"):
        node["isBasedOn"] = meta["source"]
    return node


def croissant(results: dict, folder, *, source_files: list[tuple[str, Path]] = (),
              spec=None, sha256: Callable[[Path], str] | None = None) -> dict:
    """The Croissant document of a run whose files are in ``folder``.

    Parameters
    ----------
    results
        The result dict (its ``dataset.card`` publishing metadata, when set).
    folder
        The run's output folder; ``items.parquet`` there, when written, is described and
        hashed.
    source_files
        ``(name, path)`` of each source data file: ``name`` its path relative to the source
        (``contentUrl``), ``path`` where to read it for the hash.
    spec
        The run's :class:`audit.ingest.spec.DatasetSpec`, if any: its ``columns`` say which
        source column holds each canonical column (record set ``judgments``).
    sha256
        The SHA-256 (hex) of a file; default :func:`audit.outputs.fs.sha256_file`.
        :func:`audit.outputs.write_run` passes digests it has been computing meanwhile
        (:class:`audit.outputs.fs.Digests`).
    """
    from ..outputs.fs import sha256_file

    sha256 = sha256_file if sha256 is None else sha256

    ds = results.get("dataset") or {}
    meta = ds.get("card") or {}
    rai = {k: v for k, v in croissant_rai(results).items() if k.startswith("rai:")}
    name = meta.get("pretty_name") or ds.get("name") or "dataset"
    node = {"@context": CONTEXT, "@type": "sc:Dataset", "name": name,
            "conformsTo": CONFORMS_TO,
            "description": meta.get("description") or _description(results, name)}
    for key in ("license", "url"):
        if meta.get(key):
            node[key] = meta[key]
    if meta.get("language"):
        node["inLanguage"] = meta["language"]
    if meta.get("tags"):
        node["keywords"] = meta["tags"]
    distribution = [_file_object(f"source/{i}", rel, path, sha256(path))
                    for i, (rel, path) in enumerate(list(source_files)[:MAX_FILES])]
    record_sets = []
    judgments = _judgments_record_set(results, list(source_files), spec)
    if judgments is not None:
        record_sets.append(judgments)
    items = Path(folder) / ITEMS
    if items.is_file():
        distribution.append(_file_object("items.parquet", ITEMS, items, sha256(items)))
        record_sets.append(_items_record_set(items))
    if record_sets:
        node["recordSet"] = record_sets
    node["distribution"] = distribution
    return {**node, **rai}


def _description(results: dict, name: str) -> str:
    from .prose import annotations_per_item

    return (f"Human annotation of {name}, audited by annotation-audit: "
            f"{annotations_per_item(results)}")


def _file_object(ident: str, rel: str, path: Path, sha256: str) -> dict:
    return {"@type": "cr:FileObject", "@id": ident, "name": rel, "contentUrl": rel,
            "contentSize": f"{os.path.getsize(path)} B",
            "encodingFormat": ENCODINGS.get(Path(rel).suffix.lower(), "application/octet-stream"),
            "sha256": sha256}


def _data_type(arrow_type) -> str:
    import pyarrow.types as t

    if t.is_dictionary(arrow_type):
        arrow_type = arrow_type.value_type
    if t.is_boolean(arrow_type):
        return "sc:Boolean"
    if t.is_integer(arrow_type):
        return "sc:Integer"
    if t.is_floating(arrow_type):
        return "sc:Float"
    return "sc:Text"


#: Source formats whose columns Croissant extracts by name.
TABULAR = {".csv": "text/csv", ".parquet": "application/x-parquet",
           ".jsonl": "application/jsonlines"}


def _source_columns(path: Path, suffix: str) -> list[str]:
    """The column names of a tabular source file, read from its header only."""
    if suffix == ".csv":
        import csv

        with path.open(newline="", encoding="utf-8-sig") as fh:
            return next(csv.reader(fh), [])
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        return list(pq.read_schema(path).names)
    import json

    with path.open(encoding="utf-8") as fh:
        first = json.loads(fh.readline() or "{}")
    return list(first) if isinstance(first, dict) else []


def _judgments_record_set(results: dict, source_files: list, spec) -> dict | None:
    """``judgments``: one record per row of a single long-format CSV / Parquet / JSON Lines
    source, a ``cr:Field`` per canonical column the file holds (named by the spec's ``columns``
    or by its canonical name). None for any other source (a folder, a wide table, a spec that
    renames or maps labels or reads with options Croissant cannot state, an adapter's format),
    and when the file lacks an item, annotator or label column: a record set that read other
    values than the audit did would be wrong."""
    from ..contract import columns as C

    if len(source_files) != 1:
        return None
    rel, path = source_files[0]
    suffix = Path(rel).suffix.lower()
    if suffix not in TABULAR:
        return None
    if spec is not None and (spec.layout != "long" or spec.read or spec.label_map
                             or spec.pools_file or spec.pools_map):
        return None
    mapping = dict(getattr(spec, "columns", None) or {})
    try:
        present = set(_source_columns(path, suffix))
    except (OSError, ValueError, UnicodeError):
        return None
    wanted = [c for c in C.REQUIRED + C.PAIRWISE + (C.MODEL,) if mapping.get(c, c) in present]
    if not {C.ITEM, C.ANNOTATOR, C.LABEL} <= set(wanted):
        return None
    kind = (results.get("dataset") or {}).get("label_kind")
    fields = [{"@type": "cr:Field", "@id": f"judgments/{c}", "name": c,
               "description": f"Canonical column {c!r} (annotation-audit's data contract), "
                              f"read from the source column {mapping.get(c, c)!r}.",
               "dataType": "sc:Float" if c == C.LABEL and kind == "interval" else "sc:Text",
               "source": {"fileObject": {"@id": "source/0"},
                          "extract": {"column": mapping.get(c, c)}}}
              for c in wanted]
    return {"@type": "cr:RecordSet", "@id": "judgments", "name": "judgments",
            "description": "One record per row of the source, in the canonical columns (rows "
                           "the audit dropped, counted in results.json's "
                           "dataset.rows_dropped, are records here too).",
            "field": fields}


def _items_record_set(path: Path) -> dict:
    """``items``: one field per column of ``items.parquet``, extracted by column name."""
    import pyarrow.parquet as pq

    schema = pq.read_schema(path)
    fields = [{"@type": "cr:Field", "@id": f"items/c{i}", "name": f.name,
               "description": f"Column {f.name!r} of items.parquet (see annotation-audit's "
                              "docs/items.md).",
               "dataType": _data_type(f.type),
               "source": {"fileObject": {"@id": "items.parquet"}, "extract": {"column": f.name}}}
              for i, f in enumerate(schema) if not f.name.startswith("__index_level_")]
    return {"@type": "cr:RecordSet", "@id": "items", "name": "items",
            "description": "One record per item: each pool's label distribution, majority and "
                           "unanimity, and across pools the disagreement class.",
            "field": fields}


def source_files(inputs) -> list[tuple[str, Path]]:
    """``(name relative to the source, real path)`` of every source data file of ``inputs``
    (:class:`audit.outputs.Inputs`): the file itself, or the files of a source folder, hidden
    ones (``.git``) left out."""
    from ..outputs.guard import real_path

    out = []
    for role, given in getattr(inputs, "given", ()):
        if role != "source":
            continue
        real = real_path(given)
        if real.is_file():
            out.append((real.name, real))
        elif real.is_dir():
            for root, dirs, names in os.walk(real):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(names):
                    if not name.startswith("."):
                        path = Path(root) / name
                        out.append((path.relative_to(real).as_posix(), path))
    return out


def write_croissant(results: dict, folder, *, inputs=None,
                    sha256: Callable[[Path], str] | None = None) -> Path:
    """Write ``folder/croissant.json`` atomically (after ``items.parquet``); return its path.
    ``sha256``: as :func:`croissant` takes it."""
    from ..outputs import write_text
    from ..results import dumps

    files = source_files(inputs) if inputs is not None else []
    spec = _spec(inputs)
    return write_text(Path(folder) / FILE,
                      dumps(croissant(results, folder, source_files=files, spec=spec,
                                      sha256=sha256)))


def hashed_sources(inputs) -> list[Path]:
    """The source files :func:`croissant` hashes for ``inputs`` (the first
    :data:`MAX_FILES`), for :func:`audit.outputs.write_run` to hash ahead."""
    return [path for _, path in source_files(inputs)[:MAX_FILES]]


def _spec(inputs):
    """The run's dataset spec, read from the inputs (already validated by the load)."""
    from ..ingest.spec import read_spec

    for role, given in getattr(inputs, "given", ()):
        if role == "spec":
            return read_spec(given, allow_outside=True)
    return None
