"""The pydantic model of a suite file: one model per expectation, chosen by ``expect``.

Each :class:`audit.suites.catalogue.Kind` becomes one model (:func:`entry_model`): its
parameters with their types and defaults, ``expect`` fixed to its name, an optional ``claim``,
unknown keys refused. :data:`Entry` is their union discriminated on ``expect``, so an entry is
checked against the model its ``expect`` names, and an unknown ``expect`` is refused with the
names it could be. :class:`SuiteFile` is the whole file.

The field types check a value as :meth:`audit.suites.catalogue.Param.describe` says and give
it its canonical form (a rate as a float, a pair of pools sorted); their messages are
:func:`audit.ingest.yamlmodel.failure` sentences naming the key. Only
:mod:`audit.suites.suite_file` imports this module, when a suite is read: pydantic stays off
the CLI's start-up path.
"""

from __future__ import annotations

import math
from typing import Annotated, Literal, Union

from pydantic import BeforeValidator, Field, PlainValidator, create_model, model_validator

from ..contract import columns as C
from ..ingest.yamlmodel import Strict, failure, unknown_name
from .catalogue import ALL, CATALOGUE, EVERY, RANGES, Kind, Param


def _number(value, p: Param):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise failure(f" must be {p.describe()}, got {value!r}")
    return value


def _check(p: Param, value):
    """``value`` of parameter ``p`` in its canonical form, or a failure naming the key."""
    expected = p.describe()
    if p.kind in RANGES:
        value = float(_number(value, p))
        lo, hi = RANGES[p.kind]
        if math.isnan(value) or not lo <= value <= hi:
            raise failure(f" = {value:g} is out of range; it must be {expected}")
        return value
    if p.kind == "share":  # unbounded above, but finite: max .inf would claim nothing
        if not math.isfinite(_number(value, p)) or value < 0:
            raise failure(f" = {value:g} is out of range; it must be {expected}")
        return float(value)
    if p.kind == "count":
        if isinstance(value, bool) or not isinstance(value, int):
            raise failure(f" must be {expected}, got {value!r}")
        if value < 0:
            raise failure(f" = {value} is out of range; it must be {expected}")
        return int(value)
    if p.kind == "values":
        if not isinstance(value, list) or not value or not all(
                isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value):
            raise failure(f" must be a non-empty list of labels or names, got {value!r}")
        return list(value)
    if p.kind == "column":
        if value not in C.COLUMNS:
            raise failure(unknown_name("column", value, C.COLUMNS), keyed=False)
        return value
    if p.kind == "pool":
        if not isinstance(value, (str, int)) or isinstance(value, bool) or str(value) == "":
            raise failure(f" must be {expected}, got {value!r}")
        value = str(value)
        if value in (ALL, EVERY) and value not in p.tokens:
            raise failure(f" cannot be {value!r} here; it must be {expected}")
        return value
    if p.kind == "pools":
        if value == EVERY:
            return EVERY
        if (not isinstance(value, list) or len(value) != 2
                or not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in value)
                or str(value[0]) == str(value[1])):
            raise failure(f" must be {expected}, got {value!r}")
        return sorted(str(v) for v in value)
    if p.kind == "choice":
        if value not in p.choices:
            raise failure(" " + unknown_name("value", value, p.choices))
        return value
    raise AssertionError(p.kind)  # a catalogue bug, not user input


def _text(value):
    """Non-empty text, with its whitespace as written."""
    if not isinstance(value, str) or not value.strip():
        raise failure(" must be a non-empty text")
    return value


#: ``claim``: the dataset's stated claim, its whitespace runs read as single spaces.
Claim = Annotated[str, PlainValidator(lambda v: " ".join(_text(v).split()))]
#: ``suite`` and ``description``: text, surrounding whitespace dropped.
Name = Annotated[str, PlainValidator(lambda v: _text(v).strip())]


def _between(model):
    """``min`` and ``max`` of a row count: at least one of them, ``min`` not above ``max``."""
    if model.min is None and model.max is None:
        raise failure("give 'min', 'max' or both", keyed=False)
    if model.min is not None and model.max is not None and model.min > model.max:
        raise failure(f"min {model.min} is above max {model.max}", keyed=False, at="min")
    return model


def entry_model(kind: Kind) -> type[Strict]:
    """The pydantic model of one suite entry naming ``kind`` (module docstring)."""
    fields = {}
    for p in kind.params:
        default = ... if p.required else p.default
        fields[p.name] = (Annotated[object, PlainValidator(lambda v, p=p: _check(p, v))],
                          Field(default, description=p.describe()))
    fields["expect"] = (Literal[kind.name], ...)
    fields["claim"] = (Claim, None)
    validators = ({"between": model_validator(mode="after")(_between)}
                  if kind.bound == "between" else {})
    name = "".join(part.title() for part in kind.name.split("_"))
    return create_model(name, __base__=Strict, __validators__=validators,
                        __doc__=f"A ``{kind.name}`` entry: {kind.summary}", **fields)


#: One model per expectation name, in the catalogue's order.
MODELS = {name: entry_model(kind) for name, kind in CATALOGUE.items()}
#: A suite entry: the model its ``expect`` names.
Entry = Annotated[Union[tuple(MODELS.values())],  # noqa: UP007 - a runtime tuple of models
                  Field(discriminator="expect", title="expectation")]


def _entries(value):
    if not isinstance(value, list) or not value:
        raise failure(" must be a non-empty list of entries")
    return value


class SuiteFile(Strict):
    """A suite file as written (:mod:`audit.suites.suite_file`)."""

    suite: Name = None
    description: Name = None
    expectations: Annotated[list[Entry], BeforeValidator(_entries)] = Field(
        description="the list of expectations")
