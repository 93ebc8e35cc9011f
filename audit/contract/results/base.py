"""What every block of ``results.json`` is built from: the model settings, numbers, intervals.

A block is a frozen pydantic model that forbids unknown keys and converts nothing
(``strict``): a key the model does not name, or a string where a number belongs, is a
contract failure, not a value quietly coerced. Models describe the JSON form, which is what
:func:`audit.results.dumps` validates after its one NaN-to-null conversion; they also accept
NaN, so the library's own result dict (NaN floats, :func:`audit.run`) validates as is.
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer

from ...metrics import KEYS


class Block(BaseModel):
    """A block of results.json: frozen, unknown keys forbidden, no type coercion; each field's
    docstring is its description in the published JSON Schema (read from the source only when
    the schema is generated, :mod:`audit.contract.results.docs`)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


def _null_if_undefined(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else x


#: A number that may be undefined: NaN in the library, ``null`` in results.json.
Num = Annotated[float | None, PlainSerializer(_null_if_undefined, when_used="json")]

#: A 95% interval ``[low, high]`` (either end null when undefined).
Interval = Annotated[list[Num], Field(min_length=2, max_length=2)]

#: A reliability coefficient's key, as :mod:`audit.metrics` registers it.
MetricKey = Literal[KEYS]  # type: ignore[valid-type]

# The closed vocabularies results.json uses, spelt out so the schema lists them
# (tests/test_results_schema.py checks each against the code that writes it).

#: :class:`audit.contract.labels.LabelKind`.
Kind = Literal["nominal", "ordinal", "interval", "preference"]
#: :attr:`audit.contract.labels.LabelScale.level`: a preference scale is ordinal.
Level = Literal["nominal", "ordinal", "interval"]
#: :class:`audit.contract.labels.Granularity`.
Granularity = Literal["label", "winner"]
#: :data:`audit.rank.UNITS`.
Unit = Literal["judgment", "majority"]
#: :data:`audit.measure.disagreement.TIE_BREAKS`.
TieBreakRule = Literal["median", "drop"]
#: :data:`audit.rank.simulation.GAP_MODELS`.
GapModel = Literal["resample", "even"]
#: :data:`audit.rank.PERTURBATIONS`.
Perturbation = Literal["pool_switch", "bootstrap"]
#: :data:`audit.ingest.ENGINES`.
Engine = Literal["pandas", "spark"]
