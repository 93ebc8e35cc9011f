"""Checking a result against the contract, and the contract as a JSON Schema."""

from __future__ import annotations

import json
from collections.abc import Mapping

from pydantic import ValidationError
from pydantic.json_schema import GenerateJsonSchema

from ... import __version__
from ...errors import InternalError
from .docs import field_docs
from .root import Results

#: The JSON Schema dialect of :func:`json_schema`.
DIALECT = "https://json-schema.org/draft/2020-12/schema"
#: The schema's identifier: the contract of the annotation-audit version that writes the file
#: (``meta.version``).
SCHEMA_ID = f"urn:annotation-audit:results:{__version__}"
#: Errors named in a :class:`ResultsContractError` message (the count covers the rest).
SHOWN = 5


class ResultsContractError(InternalError):
    """A result that breaks its contract (:class:`Results`): a producer wrote a key the
    contract does not name, left out a required one, or wrote a value of the wrong type. A bug
    in annotation-audit, not bad input (exit 3). ``errors`` holds pydantic's error list."""

    def __init__(self, message: str, errors: list[dict]):
        super().__init__(message)
        self.errors = errors


def _where(loc: tuple) -> str:
    """A pydantic location as a JSON path: ``pool_disagreement[0].null.p_value``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part == "[key]":
            out += " (key)"
        else:
            out += f".{part}" if out else str(part)
    return out or "(top level)"


def _describe(error: dict) -> str:
    """One pydantic error as ``where: what`` (the value shown cut to 60 characters)."""
    if error["type"] == "extra_forbidden":
        what = "a key the contract does not name"
    elif error["type"] == "missing":
        what = "missing"
    else:
        shown = repr(error.get("input"))
        what = f"{error['msg']} (got {shown[:57] + '...' if len(shown) > 60 else shown})"
    return f"{_where(error['loc'])}: {what}"


def validate(results: Mapping) -> Results:
    """``results`` (the dict :func:`audit.run` returns, NaN floats allowed, or its JSON form)
    as a :class:`Results`.

    Raises
    ------
    ResultsContractError
        Naming the block and key of each broken rule (the first :data:`SHOWN`, and how many
        more there are).
    """
    try:
        return Results.model_validate(results)
    except ValidationError as err:
        errors = err.errors(include_url=False)
        listed = "; ".join(_describe(e) for e in errors[:SHOWN])
        more = f"; and {len(errors) - SHOWN} more" if len(errors) > SHOWN else ""
        raise ResultsContractError(
            f"the result breaks its contract (audit.contract.results) at {listed}{more}",
            errors) from None


def checked(data):
    """``data`` unchanged, after :func:`validate` when it is a result (a mapping with ``meta``
    and ``dataset``): :func:`audit.results.dumps` also writes other JSON (great_expectations'
    validation result, Croissant), which passes through."""
    if isinstance(data, Mapping) and "meta" in data and "dataset" in data:
        validate(data)
    return data


class _Generator(GenerateJsonSchema):
    """pydantic's schema without per-field titles (the key is its title), without defaults
    (an optional key is absent, never filled in by a reader), and with each field's docstring
    as its description (:func:`audit.contract.results.docs.field_docs`), added where pydantic
    adds a field's description: before a description equal to that of the model the field
    refers to is dropped (``handle_ref_overrides``)."""

    def field_title_should_be_set(self, schema) -> bool:
        return False

    def model_schema(self, schema):
        json_schema = super().model_schema(schema)
        docs = field_docs(schema["cls"])
        properties = json_schema.get("properties", {})
        for name, prop in list(properties.items()):
            if name in docs and "description" not in prop:
                described = {**prop, "description": docs[name]}
                properties[name] = self.handle_ref_overrides(described)
        return json_schema

    def default_schema(self, schema):
        return self.generate_inner(schema["schema"])


def json_schema() -> dict:
    """The published JSON Schema of ``results.json`` (draft 2020-12), generated from
    :class:`Results`: ``$id`` and ``version`` name the annotation-audit version that writes
    files to it."""
    body = Results.model_json_schema(schema_generator=_Generator, mode="validation")
    head = {"$schema": DIALECT, "$id": SCHEMA_ID, "title": "annotation-audit results.json",
            "version": __version__}
    return {**head, **{k: v for k, v in body.items() if k != "title"}}


def schema_text() -> str:
    """:func:`json_schema` as the text ``annotation-audit schema`` prints and
    ``docs/results.schema.json`` holds."""
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"
