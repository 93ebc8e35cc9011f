"""The result contract: every block of ``results.json`` as a typed model, and its JSON Schema.

:class:`Results` is the root. :func:`validate` checks a result dict against it (the single
:func:`audit.results.dumps` calls it before anything is written, so a producer that drifts
from the contract is an internal error naming the block and key, exit 3); :func:`json_schema`
is the published schema (``annotation-audit schema``; a copy in ``docs/results.schema.json``).

Reading a field's docstring is reading the file: each becomes the key's ``description`` in the
schema. Numbers that may be undefined are NaN in the library and ``null`` in the file.
pydantic is imported here, never at CLI start-up: import this package only when validating.
"""

from __future__ import annotations

from .root import Results
from .validate import ResultsContractError, checked, json_schema, schema_text, validate

__all__ = ["Results", "ResultsContractError", "checked", "json_schema", "schema_text", "validate"]
