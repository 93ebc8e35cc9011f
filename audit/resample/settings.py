"""The resampling settings written into every result: seed, number of resamples, CI level.

Every random step of an analysis draws from a named stream of one :class:`Bootstrap`
(``"reliability:counts"``, ``"items"``, ``"rank/judgment"`` for every leaderboard of a table
together, ...), so each analysis is reproducible alone: the same seed gives the same numbers
whatever else is measured.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

METHOD = "percentile bootstrap over items (multinomial weights on item patterns)"


@dataclass(frozen=True)
class Bootstrap:
    """The resampling settings written into every result: seed, number of resamples, method."""

    n_resamples: int = 1000
    seed: int = 0
    level: float = 0.95

    def rng(self, stream: str = "") -> np.random.Generator:
        """A generator for one named analysis: independent streams, each reproducible alone."""
        return np.random.default_rng(self.seed_sequence(stream))

    def seed_sequence(self, stream: str = "") -> np.random.SeedSequence:
        """The seed sequence of one named analysis (see :meth:`rng`)."""
        return np.random.SeedSequence([self.seed] + [ord(ch) for ch in stream])

    def to_dict(self) -> dict:
        """The ``meta.bootstrap`` block: resamples, seed, level and :data:`METHOD`."""
        return {"n_resamples": self.n_resamples, "seed": self.seed, "level": self.level,
                "method": METHOD}
