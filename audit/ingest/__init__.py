"""The loader: every source shape into the one canonical table (:func:`audit.contract.table.build_table`).

================  ==========================================================  =============================
format            source                                                      module
================  ==========================================================  =============================
``multipref``     ``allenai/multipref`` rows (hub, save_to_disk, JSONL, ...)  :mod:`.adapters.multipref`
``mt-bench``      ``lmsys/mt_bench_human_judgments`` (hub, folders)           :mod:`.adapters.mtbench`
``pandalm``       PandaLM ``testset-v1.json``                                 :mod:`.adapters.pandalm`
``lewidi``        LeWiDi 2023 / 2025 files or dataset folders                 :mod:`.adapters.lewidi`
``label-studio``  Label Studio JSON, JSON-MIN or CSV / TSV exports            :mod:`.adapters.label_studio`
``prodigy``       Prodigy exports (``prodigy db-out``: JSON Lines)            :mod:`.adapters.prodigy`
``table``         any CSV / TSV / JSONL / JSON / Parquet table (+ YAML spec)  :mod:`.adapters.table`
``hf``            any ``datasets`` dataset (+ YAML spec)                      :mod:`.adapters.hf`
================  ==========================================================  =============================

A pandas ``DataFrame`` or a ``datasets.Dataset`` / ``DatasetDict`` in memory is a source too
(:mod:`.memory`): a DataFrame is read as a table file, a Dataset through the ``hf`` path, both
detected by their columns as files are.

The package, in the order a source meets it: :mod:`.sources` (a path or a hub name),
:mod:`.memory` (data in memory), :mod:`.detect` (which format), :mod:`.readers` (files into
frames), :mod:`.spec` (a YAML dataset spec), :mod:`.adapters` (each format into canonical
rows, sharing :mod:`.common`), :mod:`.infer` (the label scale when none is declared),
:mod:`.pools` (annotator pools), and :mod:`.spark` (the same on Spark).

Nothing after this package knows which source a table came from. Heavy imports (``datasets``,
``pyarrow``) happen inside the functions that need them, so importing this package stays light.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from ..mainguard import guard
from ..errors import EMPTY_PATH, STDIN_PATH, InputError, join_names
from ..contract.table import AnnotationTable
from .common import LoadWarning
from .detect import FORMATS, choose_format, detect_format
from .memory import InMemory, wrap
from .readers.folders import export_source

__all__ = ["FORMATS", "LoadWarning", "detect_format", "load"]

ENGINES = ("pandas", "spark")
DEFAULT_ASPECT = "overall_pref"

# format -> (module, function, the load() options it takes)
_ADAPTERS = {
    "multipref": ("multipref", "load_multipref", ("aspect", "split")),
    "mt-bench": ("mtbench", "load_mtbench", ("split",)),
    "pandalm": ("pandalm", "load_pandalm", ("pools", "pool_column")),
    "lewidi": ("lewidi", "load_lewidi", ("split", "pools", "pool_column", "min_pool_annotators",
                                         "spec")),
    "label-studio": ("label_studio", "load_label_studio", ("spec", "pools", "pool_column",
                                                           "min_pool_annotators")),
    "prodigy": ("prodigy", "load_prodigy", ("spec", "pools", "pool_column",
                                             "min_pool_annotators")),
    "table": ("table", "load_table", ("spec", "pools", "pool_column", "min_pool_annotators")),
    "hf": ("hf", "load_hf", ("spec", "split", "pools", "pool_column", "min_pool_annotators")),
}


def load(source, *, format: str = "auto", spec=None, pools=None, pool_column: str | None = None,
         min_pool_annotators: int | None = None, aspect: str = DEFAULT_ASPECT,
         split: str | None = None, name: str | None = None, engine: str = "pandas",
         spark_master: str | None = None, spark_conf: dict | None = None,
         allow_outside: bool = False, keep_on_cluster: bool | str = False) -> AnnotationTable:
    """Load ``source`` into a validated canonical :class:`audit.contract.table.AnnotationTable`.

    Parameters
    ----------
    source
        A file, a folder (LeWiDi dataset, ``datasets`` ``save_to_disk`` or hub download), a
        hub name such as ``allenai/multipref``, a pandas ``DataFrame`` (read as a table file),
        or a ``datasets.Dataset`` / ``DatasetDict`` (read as the ``hf`` format; ``split``
        picks one split). See :mod:`audit.ingest.memory`.
    format
        One of :data:`FORMATS`, or ``"auto"`` to detect it (:func:`detect_format`). With a
        ``spec`` and ``"auto"``, a file or DataFrame is read as ``table`` and a folder, hub
        name or Dataset as ``hf`` (a LeWiDi source stays ``lewidi``).
    spec
        A dataset spec for ``table``, ``hf`` and ``lewidi`` sources: a YAML file's path, a dict
        of the same keys (validated the same way, :func:`audit.ingest.spec.spec_from_dict`), or
        a :class:`audit.ingest.spec.DatasetSpec`.
    pools, pool_column
        An annotator -> pool file (CSV / TSV / JSON) or mapping; ``pool_column`` names the pool
        field of a metadata file (or, for a table without ``pools``, the column holding pools).
        Metadata keyed ``17`` matches the data's ``Ann17`` (:mod:`audit.ingest.pools`).
    min_pool_annotators
        Fold every pool fewer annotators hold, and placeholder pools (``nan``,
        ``DATA_EXPIRED``), into ``"other"``, reported in a warning and
        ``table.info["pools_folded"]``; no judgment is dropped. None (default) folds nothing;
        1 folds the placeholders only (:func:`audit.ingest.pools.fold_pools`).
    aspect
        MultiPref: ``overall_pref``, ``helpful_pref``, ``truthful_pref`` or ``harmless_pref``.
    split
        Which split of an MT-Bench, LeWiDi or ``datasets`` source; None loads every split.
    name
        Dataset name for reports; defaults to one derived from the source.
    engine
        ``"pandas"`` (default: this process, no Java) or ``"spark"``: read, map, validate and
        encode on Spark (:func:`audit.ingest.spark.load_spark`; long or spec-mapped tables,
        vote counts among them, only).
    spark_master
        ``--engine spark``: the master URL (``local[2]``, ``spark://...``, ``sc://...``); default
        the active session, else ``local[*]``.
    spark_conf
        ``--engine spark``: settings for the session it starts (``{"spark.driver.memory":
        "8g"}``); an already running session is used as it is.
    allow_outside
        Let a spec file name a file outside its own folder (``pools.file``); by default that
        is an InputError naming the key, so a spec from a pull request cannot make the audit
        read other files on the machine (:func:`audit.ingest.spec.read_spec`).
    keep_on_cluster
        ``--engine spark`` only: ``True`` returns a
        :class:`audit.ingest.spark.coded.ClusterTable` (the judgments numbered and left on the
        cluster) instead of collecting them; ``"auto"`` does so for the tables the
        aggregates path covers (pairwise preferences, :func:`audit.ingest.spark.load_spark`)
        and collects the others. What :func:`audit.pipeline.run` asks for.

    Raises
    ------
    TypeError
        ``source`` is none of the above (before anything is read).
    InputError
        The source is missing, unreadable, of an undetectable format, or an option does not
        apply to its format; ``source``, ``spec`` or ``pools`` is an empty path or ``-`` (not
        standard input: a source is read more than once), as the CLI refuses them; the message
        names the file, key, column or row.
    SchemaError
        Judgments that break the canonical schema, all listed with their source rows.
    """
    for option, value in (("source", source), ("spec", spec), ("pools", pools)):
        if isinstance(value, str) and value in ("", "-"):  # '': the current folder
            raise InputError(EMPTY_PATH if value == "" else STDIN_PATH, key=option)
    source = wrap(source)
    source, spec = export_source(source, spec)
    if engine not in ENGINES:
        raise InputError(f"unknown engine {engine!r}; engines: {join_names(ENGINES)}",
                         key="engine")
    if engine == "spark":
        if isinstance(source, InMemory):
            raise InputError(f"engine 'spark' reads files, folders and tables; a {source.kind} "
                             "in memory loads with engine='pandas'", path=str(source),
                             key="engine")
        from .spark import load_spark

        spec = _read_spec_path(spec, allow_outside)
        _refuse_counts_options(spec, pools=pools, min_pool_annotators=min_pool_annotators,
                               source=source)
        with guard():  # pandera and pyspark import pyspark.sql.connect (audit.mainguard)
            return load_spark(source, master=spark_master, conf=spark_conf, format=format,
                              spec=spec, pools=pools, pool_column=pool_column, name=name,
                              split=split, min_pool_annotators=min_pool_annotators,
                              aspect=None if aspect == DEFAULT_ASPECT else aspect,
                              keep_on_cluster=keep_on_cluster)
    if keep_on_cluster:
        raise InputError("keeping the judgments on the cluster needs --engine spark",
                         key="engine")
    for option, value in (("spark_master", spark_master), ("spark_conf", spark_conf)):
        if value:
            raise InputError(f"--{option.replace('_', '-')} needs --engine spark", key=option)
    if format == "auto":
        format = choose_format(source, spec)
    if format not in _ADAPTERS:
        raise InputError(f"unknown format {format!r}; formats: auto, {join_names(FORMATS)}",
                         key="format")
    if isinstance(source, InMemory):
        from . import memory

        if format not in memory.FORMATS:
            raise memory.unsupported(source, format)
        if format == "table" and not source.is_frame:
            format = "hf"  # a Dataset mapped like a table is what the hf adapter does
    module, function, accepted = _ADAPTERS[format]
    given = {"spec": spec, "pools": pools, "pool_column": pool_column, "split": split,
             "min_pool_annotators": min_pool_annotators,
             "aspect": None if aspect == DEFAULT_ASPECT and "aspect" not in accepted else aspect}
    for option, value in given.items():
        if value is not None and option not in accepted:
            raise InputError(f"--{option.replace('_', '-')} does not apply to the {format} "
                             f"format", key=option)
    kwargs = {k: v for k, v in given.items() if k in accepted}
    if "spec" in kwargs:
        kwargs["spec"] = _read_spec_path(kwargs["spec"], allow_outside)
    if isinstance(source, InMemory) and format == "table":
        from .memory import load_frame as adapter
    else:
        adapter = getattr(importlib.import_module(f".adapters.{module}", __name__), function)
    return adapter(source, name=name, **kwargs)


def _refuse_counts_options(spec, *, pools, min_pool_annotators, source) -> None:
    """For a spec reading vote counts (``label.from_counts``, :mod:`audit.ingest.label_counts`),
    exit 2 before Spark starts on the options that read annotators (``--pools``,
    ``--min-pool-annotators``), in the pandas engine's words."""
    if spec is None:
        return
    from .label_counts import refuse_options
    from .spec import read_spec

    if read_spec(spec).label_from_counts:
        refuse_options(pools=pools, min_pool_annotators=min_pool_annotators,
                       source=str(source))


def _read_spec_path(spec, allow_outside: bool):
    """A spec given as a path, read once here with ``allow_outside``; anything else as is."""
    from .spec import DatasetSpec, read_spec

    if spec is None or isinstance(spec, (Mapping, DatasetSpec)):
        return spec
    return read_spec(spec, allow_outside=bool(allow_outside))
