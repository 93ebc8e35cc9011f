"""Each result field's docstring, read from the models' source when the schema is published.

A field's docstring (the string literal right after its annotation in the class body) is its
``description`` in the JSON Schema (:func:`audit.contract.results.json_schema`). pydantic can
read them itself (``use_attribute_docstrings``), but it does so when each model class is
created, finding the class's source through ``inspect.getmodule`` for every frame: about 0.15 s
CPU of every run that validates a result, with the modules of a full audit loaded, for text
that only the published schema uses. Here the models' modules are parsed once, only for
:func:`~audit.contract.results.json_schema`, by pydantic's rule: the string must follow the
annotated assignment directly, and a field takes the docstring of the nearest class in the
method resolution order that declares it. ``tests/test_results_schema.py`` compares the
generated schema with the published ``docs/results.schema.json`` byte for byte.
"""

from __future__ import annotations

import ast
import functools
import inspect
import sys


def field_docs(cls: type) -> dict[str, str]:
    """``{field name: docstring}`` of a model's fields, its bases' included (the nearest class
    that declares a field gives its docstring; a field declared without one has none)."""
    docs: dict[str, str] = {}
    declared: set[str] = set()
    for klass in cls.__mro__:
        own = klass.__dict__.get("__annotations__", {})
        found = _class_docs(klass.__module__, klass.__qualname__) if own else {}
        for name in own:
            if name not in declared:
                declared.add(name)
                if name in found:
                    docs[name] = found[name]
    return docs


def _class_docs(module: str, qualname: str) -> dict[str, str]:
    return _module_docs(module).get(qualname, {})


@functools.cache
def _module_docs(module: str) -> dict[str, dict[str, str]]:
    """Every top-level class of ``module``: ``{class name: {attribute: docstring}}``."""
    try:
        tree = ast.parse(inspect.getsource(sys.modules[module]))
    except (KeyError, OSError, TypeError):
        return {}
    return {node.name: _attribute_docs(node.body) for node in tree.body
            if isinstance(node, ast.ClassDef)}


def _attribute_docs(body: list[ast.stmt]) -> dict[str, str]:
    docs = {}
    for before, node in zip(body, body[1:]):
        if (isinstance(before, ast.AnnAssign) and isinstance(before.target, ast.Name)
                and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)):
            docs[before.target.id] = inspect.cleandoc(node.value.value)
    return docs
