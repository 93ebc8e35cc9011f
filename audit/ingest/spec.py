"""The YAML dataset spec: how a table's columns map onto the canonical table.

.. code-block:: yaml

    name: my-ratings
    layout: long            # or wide: one column per annotator
    columns: {item: tweet_id, annotator: worker, label: score, pool: worker_type, model: system}
    annotator_columns: [r1, r2, r3]   # wide layout only
    label: {kind: ordinal, order: [1, 2, 3, 4, 5], map: {"bad": 1}, names: [...]}
    pools: {file: pools.csv, column: group}   # annotator -> pool file, in the spec's folder
    judge_pools: [gpt-4]
    read: {sep: "\\t"}
    split: train            # datasets sources: which split
    card: {license: cc-by-4.0, language: [en], tags: [preference]}   # audit.report.card_meta

Every key is optional. Validation is strict: an unknown key at any level, or a value of the wrong
type, is an InputError naming the key and its line in the YAML file. The same keys as a Python
dict (:func:`spec_from_dict`) go through the same checks.

A spec may come with a pull request, so it is read as plain data (:mod:`audit.ingest.yamlsafe`:
no tags, aliases and depth bounded, keys single values), and the file it names (``pools.file``)
must lie inside the spec's own folder, links resolved, unless ``--allow-outside`` is given.

``columns`` maps canonical names (:mod:`audit.contract.columns`) to the source's column names; a canonical
column the source already carries under its own name needs no entry. ``label.map`` reads raw
labels as scale values before they are checked against ``label.order`` (a key matches a label
written the same way, but for surrounding whitespace, or, for a key written as a number, naming
the same number; unmapped labels are read as they are); without ``order`` the observed values
become the scale. How labels are read (numbers as numbers, text exactly as written) is stated in
:mod:`audit.contract.labels`; without ``label.kind``, :mod:`audit.ingest.infer` decides the kind from the
columns. In YAML, quote labels such as ``yes``, ``no``, ``on`` and ``off``: unquoted, YAML reads
them as booleans.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..contract import columns as C
from ..errors import InputError, join_names
from ..contract.labels import LabelKind, LabelScale
from .common import existing_path

LAYOUTS = ("long", "wide")
_SCALAR = (str, int, float, bool)

# Declared shape of a spec: a dict is a mapping with exactly these keys; ("list", T) a sequence of
# T; ("map", T) a mapping of scalar keys to T; ("enum", values); a type or tuple of types a scalar.
_SHAPE = {
    "name": str,
    "layout": ("enum", LAYOUTS),
    "columns": {col: str for col in C.COLUMNS},
    "annotator_columns": ("list", str),
    "label": {
        "kind": ("enum", tuple(k.value for k in LabelKind)),
        "order": ("list", _SCALAR),
        "map": ("map", _SCALAR),
        "names": ("list", str),
    },
    "pools": {"file": str, "column": str, "map": ("map", str)},
    "judge_pools": ("list", str),
    "read": {"sep": str, "na_values": ("list", _SCALAR), "skiprows": int, "comment": str},
    "split": str,
    # publishing metadata for the dataset card and croissant.json (audit.report.card_meta)
    "card": {"license": str, "language": ("list", str), "task_categories": ("list", str),
             "tags": ("list", str), "pretty_name": str, "description": str, "url": str},
}


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
    pools_file: str | None = None
    pools_column: str | None = None
    pools_map: dict | None = None
    judge_pools: tuple[str, ...] = ()
    read: dict = field(default_factory=dict)
    split: str | None = None
    card: dict = field(default_factory=dict)
    path: Path | None = None

    @property
    def base(self) -> Path | None:
        """The folder relative paths in the spec are read from."""
        return self.path.parent if self.path is not None else None

    def scale(self, observed, *, columns: Sequence[str] | None = None, source: str | None = None,
              default_kind: str = LabelKind.NOMINAL.value) -> LabelScale:
        """The label scale, read from the declared ``label`` block and the observed raw labels.

        ``label.map`` becomes the scale's aliases (raw labels are read through it, once per
        distinct value, by :meth:`audit.contract.labels.LabelScale.codes`); ``label.order`` (and
        ``names``) declares the values, else the observed labels do
        (:func:`audit.contract.labels.infer_scale`). Without ``label.kind``, the kind comes from
        ``columns`` as :mod:`audit.ingest.infer` describes (preference for ``model_a`` /
        ``model_b``, ordinal or interval ratings for ``model``, else nominal), or is
        ``default_kind`` when no columns are given.

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
                                              order=self.label_order, names=self.label_names)
            if kind is None and self.label_order is None:
                return infer.rating_scale(observed, source=where, aliases=aliases)
            return infer_scale(kind or LabelKind.ORDINAL, observed, order=self.label_order,
                               names=self.label_names, aliases=aliases)
        except InputError as err:
            if err.path is not None:
                raise
            raise InputError(err.message, path=where, column=C.LABEL) from None


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
        The file is missing, larger than :data:`audit.ingest.yamlsafe.MAX_BYTES`, not UTF-8 or
        not YAML, uses a tag, an alias bomb or a non-scalar key, a key is unknown or has the
        wrong type, or a named file lies outside the spec's folder; the message names the key
        (where there is one) and the line.
    """
    from . import yamlsafe

    if isinstance(source, DatasetSpec):
        return source
    if isinstance(source, Mapping):
        return spec_from_dict(source)
    path = existing_path(source, what="spec file")
    if path.is_dir():
        raise InputError("is a folder, expected a YAML spec file", path=str(path))
    try:
        root = yamlsafe.compose(yamlsafe.read_yaml_text(path, what="spec"))
    except yamlsafe.YamlProblem as err:
        raise InputError(_yaml_message(err), path=str(path)) from None
    if root is None:
        return DatasetSpec(path=path)
    data = _check(root, _SHAPE, "", path, yamlsafe.constructor())
    return _build(data, root, path, allow_outside=allow_outside)


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

    The dict has the YAML file's keys and is validated by the same code, so a dict and a file
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
    import yaml

    if not isinstance(data, Mapping):
        raise InputError(f"the spec must be a mapping of keys to values; got "
                         f"{type(data).__name__}", path=_DICT, key="(top level)")
    root = _as_node(data, "")
    return _build(_check(root, _SHAPE, "", None, yaml.SafeLoader("")), root, None)


_DICT = "spec"
_TAG = "tag:yaml.org,2002:"


def _as_node(value, key: str):
    """``value`` as the YAML node a file holding it would compose to (no line marks)."""
    import os

    import numpy as np
    import yaml

    if isinstance(value, Mapping):
        return yaml.MappingNode(_TAG + "map", [
            (_as_node(k, key), _as_node(v, f"{key}.{k}" if key else str(k)))
            for k, v in value.items()])
    if isinstance(value, (list, tuple)):
        return yaml.SequenceNode(_TAG + "seq", [_as_node(v, key) for v in value])
    if value is None:
        return yaml.ScalarNode(_TAG + "null", "null")
    if isinstance(value, (bool, np.bool_)):
        return yaml.ScalarNode(_TAG + "bool", "true" if value else "false")
    if isinstance(value, (int, np.integer)):
        return yaml.ScalarNode(_TAG + "int", str(int(value)))
    if isinstance(value, (float, np.floating)):
        x = float(value)
        text = ".nan" if x != x else (".inf" if x > 0 else "-.inf") if abs(x) == float("inf") \
            else repr(x)
        return yaml.ScalarNode(_TAG + "float", text)
    if isinstance(value, (str, os.PathLike)):
        return yaml.ScalarNode(_TAG + "str", os.fspath(value))
    raise InputError(f"{key or 'the spec'!r} must be text, a number, a list or a mapping; got "
                     f"a value of type {type(value).__name__!r}", path=_DICT,
                     key=key or "(top level)")


def _line(node) -> int:
    return node.start_mark.line + 1


def _fail(path, key, node, message):
    where = f"line {_line(node)}: " if node.start_mark is not None else ""
    raise InputError(f"{where}{message}", path=_DICT if path is None else str(path),
                     key=key or "(top level)")


def _check(node, shape, key, path, loader):
    """Validate ``node`` against ``shape`` and return its Python value."""
    import yaml

    if isinstance(shape, dict):
        if not isinstance(node, yaml.MappingNode):
            _fail(path, key, node, f"{key or 'the spec'} must be a mapping of keys to values")
        out = {}
        for knode, vnode in node.value:
            name = loader.construct_object(knode, deep=True)
            dotted = f"{key}.{name}" if key else str(name)
            if name not in shape:
                _fail(path, dotted, knode, f"unknown key {name!r}; allowed keys"
                      f"{' under ' + repr(key) if key else ''}: {join_names(shape, limit=20)}")
            if name in out:
                _fail(path, dotted, knode, f"key {name!r} is given twice")
            out[name] = (_check(vnode, shape[name], dotted, path, loader), vnode)
        return out
    if isinstance(shape, tuple) and shape and shape[0] == "list":
        if not isinstance(node, yaml.SequenceNode):
            _fail(path, key, node, f"{key!r} must be a list")
        return [_check(item, shape[1], key, path, loader) for item in node.value]
    if isinstance(shape, tuple) and shape and shape[0] == "map":
        if not isinstance(node, yaml.MappingNode):
            _fail(path, key, node, f"{key!r} must be a mapping")
        return {_check(k, _SCALAR, key, path, loader): _check(v, shape[1], key, path, loader)
                for k, v in node.value}
    if isinstance(shape, tuple) and shape and shape[0] == "enum":
        value = _check(node, str, key, path, loader)
        if value not in shape[1]:
            _fail(path, key, node, f"{key!r} must be one of {join_names(shape[1])}; got {value!r}")
        return value
    if not isinstance(node, yaml.ScalarNode):
        _fail(path, key, node, f"{key!r} must be a single value, not a "
              f"{'list' if isinstance(node, yaml.SequenceNode) else 'mapping'}")
    value = loader.construct_object(node, deep=True)
    types = shape if isinstance(shape, tuple) else (shape,)
    if value is None or not isinstance(value, types) or (
            isinstance(value, bool) and bool not in types):
        want = "text" if types == (str,) else "an integer" if types == (int,) else "a value"
        _fail(path, key, node, f"{key!r} must be {want}; got {value!r}")
    return value


def _build(data: dict, root, path: Path | None, *, allow_outside: bool = False) -> DatasetSpec:
    def val(d, k, default=None):
        return d[k][0] if k in d else default

    def node(d, k):
        return d[k][1] if k in d else root

    layout = val(data, "layout", "long")
    columns = {k: v for k, (v, _) in val(data, "columns", {}).items()}
    ann_cols = tuple(str(c) for c in val(data, "annotator_columns", []))
    if layout == "wide":
        if not ann_cols:
            _fail(path, "annotator_columns", node(data, "layout"),
                  "a wide layout needs annotator_columns (one column per annotator)")
        for col in (C.ANNOTATOR, C.LABEL):
            if col in columns:
                _fail(path, f"columns.{col}", node(data, "columns"),
                      f"a wide layout takes annotators from annotator_columns, not columns.{col}")
    elif ann_cols:
        _fail(path, "annotator_columns", node(data, "annotator_columns"),
              "annotator_columns is for the wide layout; set layout: wide")
    label = val(data, "label", {})
    label_d = {k: v for k, (v, _) in label.items()}
    order = tuple(label_d["order"]) if "order" in label_d else None
    names = tuple(label_d["names"]) if "names" in label_d else None
    if names is not None and (order is None or len(names) != len(order)):
        _fail(path, "label.names", label["names"][1],
              "label.names needs label.order, with one name per value")
    if label_d.get("kind") == LabelKind.PREFERENCE.value and order is not None:
        try:
            LabelScale(LabelKind.PREFERENCE, order, names)
        except InputError as err:
            _fail(path, "label.order", label["order"][1], err.message)
    pools = {k: v for k, (v, _) in val(data, "pools", {}).items()}
    if "file" in pools and "map" in pools:
        _fail(path, "pools", node(data, "pools"), "give pools.file or pools.map, not both")
    if "column" in pools and "file" not in pools:
        _fail(path, "pools.column", node(data, "pools"), "pools.column needs pools.file")
    if "file" in pools and path is not None and not allow_outside:
        if inside_folder(path.parent, pools["file"]) is None:
            import os

            _fail(path, "pools.file", val(data, "pools")["file"][1],
                  f"{pools['file']!r} resolves to {os.path.realpath(path.parent / pools['file'])}"
                  f", outside the spec's folder {os.path.realpath(path.parent)}; a spec names "
                  "files in its own folder only (pass --allow-outside, or allow_outside=True, "
                  "to read it)")
    read = {k: v for k, (v, _) in val(data, "read", {}).items()}
    return DatasetSpec(
        name=val(data, "name"), layout=layout, columns=columns, annotator_columns=ann_cols,
        label_kind=label_d.get("kind"), label_order=order, label_map=label_d.get("map", {}),
        label_names=names, pools_file=pools.get("file"), pools_column=pools.get("column"),
        pools_map=pools.get("map"), judge_pools=tuple(val(data, "judge_pools", [])),
        read=read, split=val(data, "split"),
        card={k: v for k, (v, _) in val(data, "card", {}).items()}, path=path)
