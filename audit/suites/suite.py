"""A validated expectation suite: its entries, what each claims and where it is written.

:class:`Suite` and :class:`Expectation` are what the rest of the package works with; they come
from a suite file (:mod:`audit.suites.suite_file`, which validates the YAML with the models of
:mod:`audit.suites.suite_model`) or from great_expectations' JSON form
(:mod:`audit.suites.gx_json`). The names an entry may use and their keys are in
:data:`audit.suites.catalogue.CATALOGUE`.

Scopes, where an expectation takes ``pool`` (or ``pools`` for a pair, ``judge`` for a judge):
a pool's name; ``all`` = every human pool together (the audit's "overall"); ``every`` = each
(human) pool, or pair of pools, separately, and the worst one must satisfy the threshold.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import SuiteFileError
from .catalogue import ALL, CATALOGUE, EVERY, Kind
from .measurement_ids import claim_measurement


@dataclass(frozen=True)
class Expectation:
    """One validated entry of a suite: name, parameters (defaults filled in) and where it is.

    ``line`` is the 1-based line of the entry in the suite file; ``lines`` the line of each key.
    """

    expect: str
    params: dict
    line: int
    claim: str | None = None
    lines: dict = field(default_factory=dict)

    @property
    def kind(self) -> Kind:
        return CATALOGUE[self.expect]

    @property
    def batch(self) -> str:
        """The derived table this expectation runs on (``items`` becomes ``item_pools`` when a
        pool is named, since the counts are then per (item, pool))."""
        if self.expect == "judgments_per_item" and self.params.get("pool") != ALL:
            return "item_pools"
        return self.kind.batch

    @property
    def measurement(self) -> str | None:
        """The id of the one measurement a statistical claim reads (None for row expectations)."""
        if self.kind.batch != "measurements":
            return None
        return claim_measurement(self.kind.quantity, self.params)

    @property
    def title(self) -> str:
        """A short test-case name: the expectation and what it is about."""
        target = self.measurement or _row_target(self)
        return f"{self.expect}: {target}" if target else self.expect

    @property
    def description(self) -> str:
        """The expectation in words, with its thresholds."""
        p = self.params
        vals = {k: v for k, v in p.items() if v is not None}
        vals.setdefault("min", "-inf")
        vals.setdefault("max", "inf")
        pool = p.get("pool")
        vals["pool_scope"] = _pool_words(pool)
        vals["in_pool"] = "" if pool in (None, ALL) else f" from {_pool_words(pool)}"
        vals["judge_scope"] = ("every judge" if p.get("judge") == EVERY
                               else f"judge {p.get('judge')!r}")
        pools = p.get("pools")
        vals["pair_scope"] = ("every two human pools" if pools in (None, EVERY)
                              else f"pools {pools[0]!r} and {pools[1]!r}")
        vals["use_text"] = {"value": "", "ci_low": " (lower 95% CI bound)",
                            "ci_high": " (upper 95% CI bound)"}.get(p.get("use"), "")
        return self.kind.summary.format_map(_Blank(vals))

    def param_line(self, name: str) -> int:
        return self.lines.get(name, self.line)


class _Blank(dict):
    def __missing__(self, key):
        return ""


def _pool_words(pool) -> str:
    return {None: "", ALL: "all human pools together", EVERY: "every pool"}.get(
        pool, f"pool {pool!r}")


def _row_target(exp: Expectation) -> str:
    p = exp.params
    if "column" in p:
        return p["column"]
    if "pool" in p:
        return p["pool"]
    return ""


@dataclass(frozen=True)
class Suite:
    """A validated suite: a name, where it came from, and its expectations in file order."""

    name: str
    expectations: tuple[Expectation, ...]
    path: str | None = None
    description: str | None = None

    @property
    def needs(self) -> frozenset:
        return frozenset().union(*(e.kind.needs for e in self.expectations))

    @property
    def batches(self) -> list[str]:
        return list(dict.fromkeys(e.batch for e in self.expectations))

    def error(self, exp: Expectation, message: str, *, key: str | None = None) -> SuiteFileError:
        """An error about ``exp`` naming the suite file and the line (of ``key`` if given)."""
        line = exp.param_line(key) if key else exp.line
        return SuiteFileError(f"{exp.expect}: {message}", path=self.path, line=line)
