"""YAML files validated by pydantic models, every error named by its key and its line.

The dataset spec (:mod:`audit.ingest.spec_model`) and the expectation suite
(:mod:`audit.suites.suite_model`) are each a pydantic model with ``extra="forbid"`` and strict
types; this module is what they share:

* :func:`read` turns a YAML text into plain Python values (read as data by
  :mod:`audit.ingest.yamlsafe`) and the :class:`Lines` its keys and values are on, refusing a
  key given twice;
* :func:`validate` runs a model on those values and turns pydantic's first error into one
  :class:`Problem`: the key path, the dotted key, the line and a sentence. An unknown key gets
  a "did you mean" suggestion (:mod:`difflib`) and the keys allowed where it stands; an unknown
  tag of a discriminated union (a suite's ``expect``) the tags it could be;
* the field types :data:`Text`, :data:`Scalar`, :data:`Boolean`, :data:`Character`,
  :func:`count` and :func:`one_of`, whose errors are :func:`failure`: a sentence about the
  key's value, written in this toolkit's words rather than pydantic's.

pydantic is imported when a spec or suite is read, never at the CLI's start-up: this module
and the models are imported inside the functions that read one
(:func:`audit.ingest.spec.read_spec`, :func:`audit.suites.suite_file.parse_suite`), not at the
top of any module the CLI loads (``tests/test_yaml_model.py`` checks).
"""

from __future__ import annotations

import difflib
import math
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Union

import yaml
from pydantic import BaseModel, ConfigDict, PlainValidator, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import PydanticCustomError

from ..errors import join_names

#: pydantic's error type for the sentences of :func:`failure`.
FAILURE = "annotation_audit"


class Strict(BaseModel):
    """Base of every YAML file model: unknown keys refused, no type coercion, frozen."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, protected_namespaces=())


@dataclass(frozen=True)
class Problem:
    """What is wrong in a YAML file, and where.

    Attributes
    ----------
    path
        The keys (and list positions) from the document's root to the offending value.
    key
        The dotted key names of ``path`` (list positions and free-form mapping keys left out,
        ``label.map`` for a key of ``label.map``); ``""`` at the top level.
    line
        The 1-based line, None for data that came from no file (a dict).
    message
        One sentence naming the key.
    """

    path: tuple
    key: str
    line: int | None
    message: str


class YamlInvalid(ValueError):
    """A YAML document its model refuses; ``problem`` says what and where."""

    def __init__(self, problem: Problem):
        self.problem = problem
        super().__init__(problem.message)


@dataclass
class Lines:
    """The 1-based lines of a document's keys and values, by path (a tuple of keys and list
    positions; ``()`` is the root). A path with no line of its own takes its parent's."""

    keys: dict = field(default_factory=dict)
    values: dict = field(default_factory=dict)

    def value(self, path) -> int | None:
        """The line of the value at ``path`` (or of its nearest ancestor)."""
        path = tuple(path)
        while path not in self.values and path:
            path = path[:-1]
        return self.values.get(path)

    def key(self, path) -> int | None:
        """The line of the key ending ``path`` (or of the value, where there is no key)."""
        return self.keys.get(tuple(path)) or self.value(path)


# -- reading ---------------------------------------------------------------------------------
def read(text: str):
    """The plain value of a YAML document and its :class:`Lines` (``(None, Lines())`` when
    empty), read as data by :func:`audit.ingest.yamlsafe.compose`.

    Raises
    ------
    audit.ingest.yamlsafe.YamlProblem
        The text is not YAML, or breaks one of :mod:`audit.ingest.yamlsafe`'s bounds.
    YamlInvalid
        A key is given twice in one mapping.
    """
    from . import yamlsafe

    root = yamlsafe.compose(text)
    lines = Lines()
    if root is None:
        return None, lines
    return _plain(root, (), (), lines, yamlsafe.constructor()), lines


def _plain(node, path: tuple, names: tuple, lines: Lines, loader):
    lines.values[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        out = {}
        for knode, vnode in node.value:
            key = loader.construct_object(knode, deep=True)
            sub = (*path, key)
            if key in out:
                raise YamlInvalid(Problem(
                    sub, ".".join(map(str, (*names, key))), knode.start_mark.line + 1,
                    f"key {key!r} is given twice (first on line {lines.keys[sub]})"))
            lines.keys[sub] = knode.start_mark.line + 1
            out[key] = _plain(vnode, sub, (*names, key), lines, loader)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_plain(item, (*path, i), names, lines, loader)
                for i, item in enumerate(node.value)]
    return loader.construct_object(node, deep=True)


# -- field types -----------------------------------------------------------------------------
def failure(detail: str, *, keyed: bool = True, at: str | None = None) -> PydanticCustomError:
    """The error a validator raises: ``detail`` follows the key's quoted name when ``keyed``
    (``" must be text; got 7"``), else it is the whole sentence. ``at`` names a key below the
    validated value that the error is about (a model validator comparing two keys), so the
    line is that key's."""
    return PydanticCustomError(FAILURE, "{detail}", {"detail": detail, "keyed": keyed, "at": at})


def single(value):
    """``value``, refused when it is a list or a mapping (where one value is expected)."""
    if isinstance(value, (list, tuple)):
        raise failure(" must be a single value, not a list")
    if isinstance(value, Mapping):
        raise failure(" must be a single value, not a mapping")
    return value


def _text(value):
    if not isinstance(single(value), str):
        raise failure(f" must be text; got {value!r}")
    if not value:
        raise failure(" must be non-empty text; got ''")
    return value


def _character(value):
    if len(_text(value)) != 1:
        raise failure(f" must be one character; got {value!r}")
    return value


def _scalar(value):
    if value is None or not isinstance(single(value), (str, int, float, bool)):
        raise failure(f" must be a value; got {value!r}")
    if isinstance(value, float) and math.isnan(value):
        raise failure(" must be a value; got .nan, which is not a number and equals nothing "
                      "(quote it to mean the text)")
    return value


def _boolean(value):
    if not isinstance(single(value), bool):
        raise failure(f" must be true or false; got {value!r}")
    return value


#: Text (a YAML string), not empty; null, numbers and booleans are refused.
Text = Annotated[str, PlainValidator(_text)]
#: One character of text.
Character = Annotated[str, PlainValidator(_character)]
#: One value: text, a number or a boolean (not null, not NaN).
Scalar = Annotated[str | int | float | bool, PlainValidator(_scalar)]
#: ``true`` or ``false`` (text such as ``"yes"`` and numbers are refused).
Boolean = Annotated[bool, PlainValidator(_boolean)]


def count(*, at_most: int) -> object:
    """The type of a whole number from 0 to ``at_most`` (a boolean is not one): a bound, so a
    value no reader could act on (``-1``, ``10**20``) is refused at its key, not by the reader
    that would misread it or run out of memory."""

    def check(value):
        if isinstance(single(value), bool) or not isinstance(value, int) \
                or not 0 <= value <= at_most:
            raise failure(f" must be a whole number from 0 to {at_most:,}; got {value!r}")
        return value

    return Annotated[int, PlainValidator(check)]


def one_of(values) -> object:
    """The type of a text that is one of ``values``."""
    values = tuple(values)

    def check(value):
        _text(value)
        if value not in values:
            raise failure(f" must be one of {join_names(values)}; got {value!r}")
        return value

    return Annotated[str, PlainValidator(check)]


def unknown_name(what: str, name, known) -> str:
    """``unknown WHAT 'name' (did you mean 'closest'?); expected one of ...`` (:mod:`difflib`
    finds the closest known name, if one is close)."""
    return f"unknown {what} {name!r}{_hint(name, known)}; expected one of " \
           f"{join_names(known, limit=30)}"


def _hint(name, known) -> str:
    close = difflib.get_close_matches(str(name), [str(k) for k in known], n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


# -- validating ------------------------------------------------------------------------------
def validate(model, data, *, lines: Lines | None = None, dotted: bool = True,
             root: str = "the document"):
    """``data`` validated by ``model`` (a pydantic model, or any type pydantic validates, such
    as a discriminated union of models), its first error raised as one :class:`Problem`.

    ``dotted`` names keys by their dotted path (``'read.skiprows'``), else by the last key
    (``'min'``); ``root`` names the document itself (``"the spec"``). Of several errors, the
    one reported lies in the first part of the document with an error (a top-level key, or an
    entry of a list), and within it an unknown key or name comes first, then a wrong value,
    then a missing key, each in line order.

    Raises
    ------
    YamlInvalid
        The data breaks the model.
    """
    try:
        if isinstance(model, type) and issubclass(model, BaseModel):
            return model.model_validate(data)
        return _adapter(model).validate_python(data)
    except ValidationError as err:
        lines = lines or Lines()
        found = [problem(model, e, lines, dotted=dotted, root=root) for e in err.errors()]
        ranks = [_RANK.get(e["type"], 1) for e in err.errors()]
        blocks = [lines.values.get(_block(p.path), math.inf) for p in found]
        best = min(range(len(found)),
                   key=lambda i: (blocks[i], ranks[i], found[i].line or 0, i))
        raise YamlInvalid(found[best]) from None


def _block(path: tuple) -> tuple:
    """The part of the document a path lies in: up to its first list position (a suite's
    entry), else its top-level key. A missing top-level key lies in no part: it comes last."""
    for k, seg in enumerate(path):
        if isinstance(seg, int):
            return path[:k + 1]
    return path[:1]


_ADAPTERS: dict[int, tuple] = {}


def _adapter(annotation) -> TypeAdapter:
    """One TypeAdapter per annotation (a union of models is built once)."""
    if id(annotation) not in _ADAPTERS:
        _ADAPTERS[id(annotation)] = (annotation, TypeAdapter(annotation))
    return _ADAPTERS[id(annotation)][1]


_RANK = {"extra_forbidden": 0, "invalid_key": 0, "union_tag_invalid": 0,
         "union_tag_not_found": 0, "missing": 2}


def problem(model, error: dict, lines: Lines, *, dotted: bool = True,
            root: str = "the document") -> Problem:
    """One pydantic error (an item of ``ValidationError.errors()``) as a :class:`Problem`."""
    kind, ctx = error["type"], error.get("ctx") or {}
    loc = tuple(error["loc"])
    is_key = bool(loc) and loc[-1] == "[key]"
    loc = tuple(s for s in loc if s != "[key]")
    walk = _walk(model, loc)
    path, names = walk.path, walk.names

    def shown(names_) -> str:
        if not names_:
            return root
        return repr(".".join(names_) if dotted else names_[-1])

    if kind in ("extra_forbidden", "invalid_key"):
        parent = _walk(model, loc[:-1])
        name, allowed = loc[-1], list(_fields(parent.type))
        under = f" under {shown(parent.names)}" if parent.names and dotted else ""
        return Problem(path, ".".join(map(str, (*parent.names, name))), lines.key(path),
                       f"unknown key {name!r}{_hint(name, allowed)}; allowed keys{under}: "
                       f"{join_names(allowed, limit=30)}")
    key = ".".join(names)
    if kind == FAILURE:
        at = ctx.get("at")
        if at is not None:
            path, key = (*path, at), ".".join((*names, at))
            names = (*names, at)
        detail = ctx["detail"]
        text = f"{shown(names)}{detail}" if ctx.get("keyed", True) else detail
        return Problem(path, key, lines.key(path) if is_key else lines.value(path), text)
    if kind == "missing":
        parent = _walk(model, loc[:-1])
        info = _fields(parent.type).get(loc[-1])
        about = f" ({info.description})" if info is not None and info.description else ""
        return Problem(path, key, lines.value(path[:-1]),
                       f"missing required key {loc[-1]!r}{about}")
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        disc, what, tags = _union(walk.type)
        if kind == "union_tag_not_found":
            return Problem(path, key, lines.value(path),
                           f"an entry without '{disc}:' (the {what}'s name)")
        tag = error["input"].get(disc) if isinstance(error["input"], Mapping) else ctx["tag"]
        return Problem((*path, disc), ".".join((*names, disc)), lines.value((*path, disc)),
                       unknown_name(what, tag, tags))
    if kind == "list_type":
        return Problem(path, key, lines.value(path), f"{shown(names)} must be a list")
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        if path and isinstance(path[-1], int):
            what = f"each entry of {shown(names)}"
        else:
            what = shown(names)
        return Problem(path, key, lines.value(path), f"{what} must be a mapping of keys to values")
    return Problem(path, key, lines.value(path), f"{shown(names)}: {error['msg']}")


@dataclass
class _At:
    path: tuple
    names: tuple
    type: object


def _fields(t) -> dict[str, FieldInfo]:
    return t.model_fields if isinstance(t, type) and issubclass(t, BaseModel) else {}


def _unwrap(t):
    """``t`` without ``Annotated`` and ``Optional``, and the discriminator's FieldInfo if any."""
    info = None
    while True:
        if typing.get_origin(t) is Annotated:
            args = typing.get_args(t)
            info = next((m for m in args[1:] if isinstance(m, FieldInfo) and m.discriminator),
                        info)
            t = args[0]
            continue
        if info is None and typing.get_origin(t) in (Union, types.UnionType):
            members = [a for a in typing.get_args(t) if a is not type(None)]
            if len(members) == 1:
                t = members[0]
                continue
        return t, info


def _union(t):
    """``(discriminator key, what a tag names, the tags)`` of a discriminated union type."""
    if isinstance(t, tuple):
        t, info = t
    else:
        t, info = _unwrap(t)
    disc = info.discriminator
    tags = [tag for member in typing.get_args(t)
            for tag in typing.get_args(member.model_fields[disc].annotation)]
    return disc, info.title or disc, tags


def _walk(model, loc) -> _At:
    """Follow pydantic's error location ``loc`` through ``model``'s annotations: the data path
    (union tags dropped), the model field names on it, and the type at its end (a
    ``(union, discriminator info)`` pair when that is a discriminated union)."""
    t, path, names = model, [], []
    for seg in loc:
        bare, info = _unwrap(t)
        if isinstance(bare, type) and issubclass(bare, BaseModel):
            f = bare.model_fields.get(seg) if isinstance(seg, str) else None
            path.append(seg)
            if f is None:
                t = None
                continue
            names.append(seg)
            t = (Annotated[f.annotation, f] if f.discriminator else f.annotation)
            continue
        if info is not None:  # a discriminated union: seg is the tag
            t = next((m for m in typing.get_args(bare)
                      if seg in typing.get_args(m.model_fields[info.discriminator].annotation)),
                     None)
            continue
        origin, args = typing.get_origin(bare), typing.get_args(bare)
        path.append(seg)
        if origin in (list, tuple) and args:
            t = args[0]
        elif origin is dict and args:
            t = args[1]
        else:
            t = None
    bare, info = _unwrap(t)
    return _At(tuple(path), tuple(names), (bare, info) if info is not None else bare)
