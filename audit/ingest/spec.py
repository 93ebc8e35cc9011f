"""The YAML dataset spec: how a table's columns map onto the canonical table.

.. code-block:: yaml

    name: my-ratings
    layout: long            # or wide: one column per annotator
    columns: {item: tweet_id, annotator: worker, label: score, pool: worker_type, model: system}
    annotator_columns: [r1, r2, r3]   # wide layout only
    label: {kind: ordinal, order: [1, 2, 3, 4, 5], map: {"bad": 1}, names: [...]}
    # or, for an A/B table whose label is the winning model's name (gpt-4, tie, ...):
    # label: {kind: preference, names_winner: true}
    # or, for a label written as one column per outcome, each row marking one (MTurk's
    # Answer.pref.A / .B / .tie true / false): audit.ingest.label_columns
    # label: {from_columns: {Answer.pref.A: A, Answer.pref.B: B, Answer.pref.tie: tie}}
    # or, for a table of vote counts per item (how many chose A / B / tie; who voted is not
    # given): audit.ingest.label_counts
    # label: {from_counts: {votes_a: A, votes_b: B, votes_tie: tie}}
    pools: {file: pools.csv, column: group}   # annotator -> pool file, in the spec's folder
    judge_pools: [gpt-4]
    read: {sep: "\\t"}
    split: train            # datasets sources: which split
    card: {license: cc-by-4.0, language: [en], tags: [preference]}   # audit.report.card_meta
    dropped_before_export: [{rule: "repeated (item, annotator): last kept", n: 1}]  # export

``dropped_before_export`` is written by ``annotation-audit export`` (:mod:`audit.export`): the
judgments the exported table's source had that a documented rule dropped before the export was
written (MD-Agreement's one repeated judgment). Loading the export with this spec counts them as
read and dropped, first (:func:`audit.ingest.common.carry_dropped`, both engines), so its
results.json ``dataset.rows_read`` and ``rows_dropped`` are those of auditing the source.
``pools_folded_before_export`` (written by ``export`` after ``--min-pool-annotators`` folded
pools) is likewise the export's results.json ``dataset.pools_folded``, unless the export is read
with a ``--min-pool-annotators`` that folds pools again (:func:`audit.ingest.common.carry_folded`).

Every key is optional. Validation is strict (the pydantic model
:class:`audit.ingest.spec_model.SpecFile`, through :func:`audit.ingest.yamlmodel.validate`): an
unknown key at any level, or a value of the wrong type, is an InputError naming the key and its
line in the YAML file. The same keys as a Python dict (:func:`spec_from_dict`) go through the
same checks.

A spec may come with a pull request, so it is read as plain data (:mod:`audit.ingest.yamlsafe`:
no tags, aliases and depth bounded, keys single values), and the file it names (``pools.file``)
must lie inside the spec's own folder, links resolved, unless ``--allow-outside`` is given.

``columns`` maps canonical names (:mod:`audit.contract.columns`) to the source's column names; a canonical
column the source already carries under its own name needs no entry. Each entry reads the
column it names, whatever that column is called, all entries at once: ``{item: annotator,
annotator: item}`` swaps two columns; a source column named like a canonical column that an
entry maps to another column, and that no entry reads, is left out. ``label.map`` reads raw
labels as scale values before they are checked against ``label.order`` (a key matches a label
written the same way, but for surrounding whitespace, or, for a key written as a number, naming
the same number; unmapped labels are read as they are); without ``order`` the observed values
become the scale. How labels are read (numbers as numbers, text exactly as written) is stated in
:mod:`audit.contract.labels`; without ``label.kind``, :mod:`audit.ingest.infer` decides the kind from the
columns. Plain YAML values are read by YAML 1.2's core schema (:mod:`audit.ingest.yamlsafe`):
``yes``, ``no``, ``on`` and ``off`` are text, ``true`` and ``false`` booleans.

``read.sep`` cannot be ``"`` while ``read.quote`` is ``double`` (the default: ``"`` quotes a
value); a file separated by ``"`` is read with ``quote: none``.

The declared scale is checked when the spec is read, naming the key: ``label.order`` empty
(but for ``kind: interval``, an open range) or with values that repeat on its kind's scale
(as text without a kind: ``1`` and ``"1"``), ``label.names`` that repeat, and two
``label.map`` keys read as the same label (``1`` and ``"1"``, ``"x"`` and ``" x"``) with
different values.

``label.names_winner: true`` declares that a preference label is the winning model's name: a
label naming its row's ``model_a`` is -1, its ``model_b`` +1, read row by row
(:mod:`audit.ingest.winner`), every other label read as without it (numbers, tie words, a
``label.map``), and a label naming neither of its row's models a schema failure naming its row.
``false`` says it never is (the label is a vocabulary's side even where a model is called
``A``, a tie word or a number even where a model is called ``Both-7B`` or ``7``; ``true``: the
model). Without the key the reading is inferred, as :mod:`audit.ingest.infer` states. It needs
``kind: preference``, or no kind and ``model_a`` / ``model_b`` columns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..contract import columns as C
from ..contract.labels import LabelKind, LabelScale
from ..errors import EMPTY_PATH, InputError
from .sources import existing_path

#: ``layout``: one row per judgment, or one column per annotator (as :mod:`.spec_model`).
LAYOUTS = ("long", "wide")


@dataclass(frozen=True)
class DatasetSpec:
    """A validated dataset spec (see the module docstring). ``path`` is the YAML file, if any."""

    name: str | None = None
    layout: str = "long"
    columns: dict = field(default_factory=dict)
    annotator_columns: tuple[str, ...] = ()
    label_kind: str | None = None
    label_order: tuple | None = None
    label_map: dict = field(default_factory=dict)
    label_names: tuple[str, ...] | None = None
    label_names_winner: bool | None = None
    label_from_columns: dict = field(default_factory=dict)
    label_from_counts: dict = field(default_factory=dict)
    pools_file: str | None = None
    pools_column: str | None = None
    pools_map: dict | None = None
    judge_pools: tuple[str, ...] = ()
    read: dict = field(default_factory=dict)
    split: str | None = None
    card: dict = field(default_factory=dict)
    dropped_before_export: tuple = ()
    pools_folded_before_export: dict | None = None
    path: Path | None = None

    @property
    def base(self) -> Path | None:
        """The folder relative paths in the spec are read from."""
        return self.path.parent if self.path is not None else None

    def shadowed(self, columns) -> list[str]:
        """The source's ``columns`` the mapping leaves out: each named like a canonical column
        that ``columns`` maps to another source column, and read as no canonical column
        itself. A column an entry names is never left out, whatever its own name: ``{item:
        annotator, annotator: item}`` (a swap) leaves out none, ``{item: annotator,
        annotator: worker}`` (a chain) the source's ``item`` only. Both engines map a source
        by this, then :meth:`renames` (all at once)."""
        sources = set(self.columns.values())
        return [c for c in self.columns
                if c in columns and self.columns[c] != c and c not in sources]

    def renames(self) -> dict[str, str]:
        """Each source column the spec's ``columns`` names, to its canonical name; applied
        all at once, so a swap of two names reads each as the other's."""
        return {src: canon for canon, src in self.columns.items() if canon != src}

    def read_as_other(self, missing) -> str:
        """For a required column ``missing`` from the mapped table although the source has a
        column of that name, which ``columns`` entry reads that column as another canonical
        column (``"; column 'annotator' is read as 'item' (columns.item)"``), else ``""``."""
        taken = {src: canon for canon, src in self.columns.items() if canon != src}
        said = [f"column {m!r} is read as {taken[m]!r} (columns.{taken[m]})"
                for m in missing if m in taken]
        return "; " + ", ".join(said) if said else ""

    def _warn_unused_keys(self, observed, where: str) -> None:
        """A warning naming the ``label.map`` keys no observed label is read through
        (:func:`audit.contract.labels.reading.unused_keys`): silent before, so a key written
        otherwise than the data (``Tie`` for ``tie``) left that label as it is."""
        from ..contract.labels import distinct_labels, label_text
        from ..contract.labels.reading import unused_keys
        from .common import warn

        distinct = distinct_labels(observed)
        unused = unused_keys(list(self.label_map.items()), distinct)
        if not unused:
            return
        keys = ", ".join(repr(label_text(k)) for k in unused[:5]) + (", ..." if len(unused) > 5
                                                                      else "")
        labels = sorted({label_text(v) for v in distinct})
        shown = ", ".join(repr(t) for t in labels[:8]) + (", ..." if len(labels) > 8 else "")
        warn(f"{where}: label.map key(s) {keys} match no label in the data, so they read "
             f"nothing (a key matches a label written the same way, blanks around it aside, or "
             f"naming the same number); the labels: {shown}")

    def scale(self, observed, *, columns: Sequence[str] | None = None, source: str | None = None,
              default_kind: str = LabelKind.NOMINAL.value, winner=None) -> LabelScale:
        """The label scale, read from the declared ``label`` block and the observed raw labels.

        ``label.map`` becomes the scale's aliases (raw labels are read through it, once per
        distinct value, by :meth:`audit.contract.labels.LabelScale.codes`); ``label.order`` (and
        ``names``) declares the values, else the observed labels do
        (:func:`audit.contract.labels.infer_scale`). Without ``label.kind``, the kind comes from
        ``columns`` as :mod:`audit.ingest.infer` describes (preference for ``model_a`` /
        ``model_b``, ordinal or interval ratings for ``model``, else nominal), or is
        ``default_kind`` when no columns are given. ``winner`` (a
        :class:`audit.ingest.winner.Reading`) says the labels naming a model were read already
        (``observed`` holds ``-1`` / ``1`` for them).

        Raises
        ------
        InputError
            The labels cannot make the scale (preference labels that are no recognised
            vocabulary, ordinal text without an order); the message names the source and the
            spec lines that would fix it.
        """
        from ..contract.labels import infer_scale
        from . import infer

        where = source or str(self.path or "spec")
        aliases = dict(self.label_map) or None
        if aliases:
            self._warn_unused_keys(observed, where)
        if self.label_kind is not None:
            kind = LabelKind(self.label_kind)
        elif columns is not None:
            kind = infer.kind_from_columns(list(columns))
        else:
            kind = LabelKind(default_kind)
        try:
            if kind is LabelKind.PREFERENCE and aliases is None:
                return infer.preference_scale(observed, source=where,
                                              declared=self.label_kind is not None,
                                              order=self.label_order, names=self.label_names,
                                              winner=winner)
            if kind is None and self.label_order is None:
                return infer.rating_scale(observed, source=where, aliases=aliases)
            return infer_scale(kind or LabelKind.ORDINAL, observed, order=self.label_order,
                               names=self.label_names, aliases=aliases)
        except InputError as err:
            if err.path is not None:
                raise
            raise InputError(err.message, path=where, column=C.LABEL, row=err.row) from None


def read_spec(source, *, allow_outside: bool = False) -> DatasetSpec:
    """Read and strictly validate a YAML dataset spec (a path), or a dict of the same keys
    (:func:`spec_from_dict`); a :class:`DatasetSpec` is returned as it is.

    The YAML is read as plain data by :mod:`audit.ingest.yamlsafe` (no tags, bounded aliases,
    depth and size). A file the spec names (``pools.file``) must lie inside the spec's folder,
    symbolic links resolved first, unless ``allow_outside`` (the CLI's ``--allow-outside``): a
    spec that comes with a pull request cannot make the audit read, and quote into a public CI
    log, a file elsewhere on the machine (``pools: {file: ../../../etc/hostname}``).

    Raises
    ------
    InputError
        The path is empty (key ``spec``: to the system the current folder), the file is
        missing, larger than :data:`audit.ingest.yamlsafe.MAX_BYTES`, not UTF-8 or
        not YAML, uses a tag, an alias bomb or a non-scalar key, a key is unknown or has the
        wrong type, or a named file lies outside the spec's folder; the message names the key
        (where there is one) and the line.
    """
    from . import yamlmodel, yamlsafe

    if isinstance(source, DatasetSpec):
        return source
    if isinstance(source, Mapping):
        return spec_from_dict(source)
    if isinstance(source, str) and source == "":  # the current folder, to the system
        raise InputError(EMPTY_PATH, key="spec")
    path = existing_path(source, what="spec file", once=True)
    if path.is_dir():
        raise InputError("is a folder, expected a YAML spec file", path=str(path))
    try:
        data, lines = yamlmodel.read(yamlsafe.read_yaml_text(path, what="spec"))
    except yamlsafe.YamlProblem as err:
        raise InputError(_yaml_message(err), path=str(path)) from None
    except yamlmodel.YamlInvalid as err:
        raise _invalid(err.problem, path) from None
    if data is None:
        return DatasetSpec(path=path)
    return _build(data, lines, path, allow_outside=allow_outside)


def _yaml_message(err) -> str:
    if err.syntax:
        where = (f" at line {err.line}" + (f", column {err.column}" if err.column else "")
                 if err.line else "")
        return f"invalid YAML{where}: {err.message}"
    return f"line {err.line}: {err.message}" if err.line else err.message


def inside_folder(folder: Path, name: str) -> Path | None:
    """``folder / name`` with symbolic links resolved, or None when that lies outside
    ``folder`` (itself resolved): an absolute ``name``, ``..`` steps or a link leading out."""
    import os

    root = Path(os.path.realpath(folder))
    real = Path(os.path.realpath(root / name))
    return real if real == root or root in real.parents else None


def spec_from_dict(data: Mapping) -> DatasetSpec:
    """A dataset spec given as a dict (``audit.load(df, spec={"label": {"kind": "ordinal"}})``).

    The dict has the YAML file's keys and is validated by the same model, so a dict and a file
    accept and refuse exactly the same specs; messages name the key (``label.kind``), with
    ``spec`` in place of a file name. Tuples count as lists, ``pathlib.Path`` values as text,
    numpy scalars as numbers. Relative paths in it (``pools.file``) are read from the working
    directory.

    Raises
    ------
    InputError
        A key is unknown or has the wrong type, or a value is not text, a number, a boolean, a
        list or a mapping; the message names the key.
    """
    from .yamlmodel import Lines

    if not isinstance(data, Mapping):
        raise InputError(f"the spec must be a mapping of keys to values; got "
                         f"{type(data).__name__}", path=_DICT, key="(top level)")
    return _build(_plain(data, ""), Lines(), None)


_DICT = "spec"


def _plain(value, key: str):
    """``value`` as the plain value a YAML file holding it would read to (tuples as lists,
    paths as text, numpy scalars as Python numbers)."""
    import os

    import numpy as np

    if isinstance(value, Mapping):
        return {_plain(k, key): _plain(v, f"{key}.{k}" if key else str(k))
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, key) for v in value]
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    raise InputError(f"{key or 'the spec'!r} must be text, a number, a list or a mapping; got "
                     f"a value of type {type(value).__name__!r}", path=_DICT,
                     key=key or "(top level)")


def _invalid(problem, path: Path | None) -> InputError:
    """The InputError of a :class:`audit.ingest.yamlmodel.Problem` in the spec at ``path``."""
    where = f"line {problem.line}: " if problem.line is not None else ""
    return InputError(f"{where}{problem.message}", path=_DICT if path is None else str(path),
                      key=problem.key or "(top level)")


def _keys_reading_one_label(mapping: Mapping) -> tuple | None:
    """The first two keys of a ``label.map`` that a raw label is read through alike (the same
    text, or the same text without surrounding blanks: ``1`` and ``"1"``, ``"x"`` and
    ``" x"``; :class:`audit.contract.labels.reading.Aliases`) with different values: which
    one a label is read by would be the order of the keys, not the spec."""
    from ..contract.labels.text import label_text

    seen: dict[str, object] = {}
    for key, value in mapping.items():
        text = label_text(key)
        for form in {text, text.strip()} if text is not None else ():
            other = seen.setdefault(form, key)
            if other is not key and mapping[other] != value:
                return other, key
    return None


def _check_from_counts(from_counts: dict, fail, *, layout: str, columns: dict,
                       from_columns: dict, pools: dict) -> None:
    """Exit 2 naming ``label.from_counts`` where the spec contradicts it
    (:mod:`audit.ingest.label_counts`)."""
    at = ("label", "from_counts")
    why = None
    if layout == "wide":
        why = ("a wide layout's labels are its annotator_columns; vote counts are read from a "
               "long table, one row per item (and pool)")
    elif from_columns:
        why = "label.from_columns reads one label per row; give one of the two"
    elif C.LABEL in columns:
        why = "columns.label cannot also name a label column"
    elif C.ANNOTATOR in columns:
        why = ("columns.annotator names who judged, and a table of vote counts does not say "
               "it: a table with an annotator column is one row per judgment, read without "
               "label.from_counts")
    elif "file" in pools or "map" in pools:
        why = (f"pools.{'file' if 'file' in pools else 'map'} gives each annotator's pool, and "
               "the votes have no annotators: name the table's pool column with "
               "columns: {pool: COLUMN}")
    elif len(from_counts) < 2:
        why = ("it needs two or more count columns, one per outcome ({votes_a: A, votes_b: B, "
               "votes_tie: tie})")
    else:
        both = [c for c in from_counts if c in columns.values()]
        if both:
            canon = next(k for k, v in columns.items() if v == both[0])
            why = (f"the column {both[0]!r} is both a count column and columns.{canon}; a "
                   "column can be only one of them")
    if why is not None:
        fail("label.from_counts", at, f"label.from_counts makes one judgment per vote from "
             f"the count columns it names; {why}")


def _build(data, lines, path: Path | None, *, allow_outside: bool = False) -> DatasetSpec:
    """The :class:`DatasetSpec` of a spec's plain ``data``, validated by
    :class:`audit.ingest.spec_model.SpecFile`, then the checks that relate two keys."""
    from . import yamlmodel
    from .spec_model import SpecFile

    def fail(key: str, at: tuple, message: str):
        raise _invalid(yamlmodel.Problem(at, key, lines.value(at), message), path)

    try:
        spec = yamlmodel.validate(SpecFile, data, lines=lines, root="the spec")
    except yamlmodel.YamlInvalid as err:
        raise _invalid(err.problem, path) from None

    def given(block: str) -> dict:
        """The keys of ``block`` the spec gives, in its order, with their validated values."""
        model = getattr(spec, block)
        return {k: getattr(model, k) for k in data[block]} if model is not None else {}

    layout = spec.layout or "long"
    columns = given("columns")
    ann_cols = tuple(str(c) for c in spec.annotator_columns or [])
    named: dict[str, str] = {}
    for col, source in columns.items():  # a table's column becomes one canonical column
        if named.setdefault(source, col) != col:
            fail(f"columns.{col}", ("columns", col), f"columns.{named[source]} and columns."
                 f"{col} both name the column {source!r}; a column can be only one of them")
    if len(set(ann_cols)) != len(ann_cols):
        twice = next(c for i, c in enumerate(ann_cols) if c in ann_cols[:i])
        fail("annotator_columns", ("annotator_columns",),
             f"annotator_columns names {twice!r} twice; one column per annotator")
    if layout == "wide":
        if not ann_cols:
            fail("annotator_columns", ("layout",),
                 "a wide layout needs annotator_columns (one column per annotator)")
        for col in (C.ANNOTATOR, C.LABEL):
            if col in columns:
                fail(f"columns.{col}", ("columns",),
                     f"a wide layout takes annotators from annotator_columns, not columns.{col}")
    elif ann_cols:
        fail("annotator_columns", ("annotator_columns",),
             "annotator_columns is for the wide layout; set layout: wide")
    label = given("label")
    order = tuple(label["order"]) if "order" in label else None
    names = tuple(label["names"]) if "names" in label else None
    if names is not None and (order is None or len(names) != len(order)):
        fail("label.names", ("label", "names"),
             "label.names needs label.order, with one name per value")
    if label.get("names_winner") is not None and label.get("kind", LabelKind.PREFERENCE.value) \
            != LabelKind.PREFERENCE.value:
        fail("label.names_winner", ("label", "names_winner"),
             "label.names_winner says whether a preference label is the winning model's "
             f"name; it needs kind: preference (or no kind), not kind: {label['kind']}")
    if order is not None:
        # without a kind the data decides it; values repeating as text repeat on any scale
        kind = LabelKind(label.get("kind", LabelKind.NOMINAL.value))
        if not order and kind is not LabelKind.INTERVAL:
            fail("label.order", ("label", "order"), "label.order is empty; list the label "
                 "values in scale order, or leave it out to read them from the data")
        try:
            LabelScale(kind, order, names)
        except InputError as err:
            fail("label.order", ("label", "order"), err.message)
    if names is not None and len(set(names)) != len(names):
        fail("label.names", ("label", "names"), f"label.names repeat: {list(names)!r}; "
             "each value needs a name of its own")
    clash = _keys_reading_one_label(label.get("map", {}))
    if clash is not None:
        first, second = clash
        fail("label.map", ("label", "map", second),
             f"label.map keys {first!r} and {second!r} read the same label (as written, or "
             f"without surrounding blanks) as different values ({label['map'][first]!r}, "
             f"{label['map'][second]!r}); keep one")
    from_columns = dict(label.get("from_columns") or {})
    if from_columns:
        if layout == "wide":
            fail("label.from_columns", ("label", "from_columns"),
                 "label.from_columns reads a long table's label from one column per outcome; "
                 "a wide layout's labels are its annotator_columns")
        if C.LABEL in columns:
            fail("label.from_columns", ("label", "from_columns"),
                 "label.from_columns makes each row's label from the columns it names; "
                 "columns.label cannot also name a label column")
        if len(from_columns) < 2:
            fail("label.from_columns", ("label", "from_columns"),
                 "label.from_columns needs two or more columns (one per outcome: "
                 "{A_column: A, B_column: B, tie_column: tie})")
    from_counts = dict(label.get("from_counts") or {})
    if from_counts:
        _check_from_counts(from_counts, fail, layout=layout, columns=columns,
                           from_columns=from_columns, pools=given("pools"))
    read = given("read")
    if read.get("sep") == '"' and read.get("quote", "double") == "double":
        default = "" if "quote" in read else ", the default"
        fail("read.sep", ("read", "sep"),
             f"read.sep is '\"', the character that quotes a value (read.quote: double{default})"
             ": '\"\"' would be an empty cell and an empty quoted value at once; a file "
             "separated by '\"' has no quoting: set read.quote: none")
    pools = given("pools")
    if "file" in pools and "map" in pools:
        fail("pools", ("pools",), "give pools.file or pools.map, not both")
    if "column" in pools and "file" not in pools:
        fail("pools.column", ("pools",), "pools.column needs pools.file")
    if ("file" in pools and path is not None and not allow_outside
            and inside_folder(path.parent, pools["file"]) is None):
        import os

        fail("pools.file", ("pools", "file"),
             f"{pools['file']!r} resolves to {os.path.realpath(path.parent / pools['file'])}"
             f", outside the spec's folder {os.path.realpath(path.parent)}; a spec names "
             "files in its own folder only (pass --allow-outside, or allow_outside=True, "
             "to read it)")
    return DatasetSpec(
        name=spec.name, layout=layout, columns=columns, annotator_columns=ann_cols,
        label_kind=label.get("kind"), label_order=order, label_map=label.get("map", {}),
        label_names=names, label_names_winner=label.get("names_winner"),
        label_from_columns=from_columns, label_from_counts=from_counts,
        pools_file=pools.get("file"), pools_column=pools.get("column"),
        pools_map=pools.get("map"), judge_pools=tuple(spec.judge_pools or []),
        read=read, split=spec.split, card=given("card"),
        dropped_before_export=tuple({"rule": d.rule, "n": d.n}
                                    for d in spec.dropped_before_export or ()),
        pools_folded_before_export=(spec.pools_folded_before_export.model_dump()
                                    if spec.pools_folded_before_export else None),
        path=path)
