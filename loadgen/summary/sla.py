"""The SLA in ``summary.json``: the run's bounds and each step's checks against them.

Owns :class:`SlaBounds` (the scenario's ``sla`` block as the run used it, only
the keys it gave), :class:`LatencyBounds`, and a step's :class:`SlaCheck` and
:class:`SlaResult`.

Imports: pydantic, loadgen.strict.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from loadgen.strict import Sparse, Strict

__all__ = ["LatencyBounds", "SlaBounds", "SlaCheck", "SlaResult"]


class LatencyBounds(Sparse):
    """Bounds on one latency metric, in ms (the scenario's ``PercentileBounds``)."""

    mean: float | None = None
    p50: float | None = None
    p90: float | None = None
    p95: float | None = None
    p99: float | None = None


class SlaBounds(Sparse):
    """The scenario's ``sla`` block as the run judged by it; a key it left out is left out."""

    ttft_ms: LatencyBounds | None = None
    tpot_ms: LatencyBounds | None = None
    itl_ms: LatencyBounds | None = None
    e2e_ms: LatencyBounds | None = None
    max_error_rate: float | None = None
    ttft_of: Literal["any", "answer"] | None = None
    latency_from: Literal["scheduled", "sent"] | None = None
    confidence: float | None = None

    def latency_bounds(self) -> list[tuple[str, str, float]]:
        """``(metric, stat, bound)`` of every latency bound given, in field order."""
        return [
            (metric, stat, bound)
            for metric, bounds in self
            if isinstance(bounds, LatencyBounds)
            for stat, bound in bounds.model_dump().items()
        ]

    def items(self) -> list[tuple[str, Any]]:
        """``(key, value)`` of the keys given, as in the scenario (bounds as dicts)."""
        return list(self.model_dump().items())


class SlaCheck(Strict):
    metric: str  # e.g. "ttft_ms", "error_rate"
    stat: str  # e.g. "p99", "value"
    bound: float
    value: float | None
    margin: float | None  # bound - value (positive = headroom)
    passed: bool  # the point estimate is within the bound
    #: with confidence (sla.confidence): met when the interval's upper end is within the
    #: bound, missed when its lower end is beyond it, inconclusive otherwise (a statistic
    #: with no interval, an error rate or a max, is decided by its value)
    verdict: Literal["met", "missed", "inconclusive"] | None = None
    interval: list[float | None] | None = None  # the statistic's interval, when it has one
    #: inconclusive percentile bounds: about how many requests would decide it at the
    #: share of values beyond the bound seen here (None: never, or not estimated)
    requests_needed: int | None = None
    #: why an inconclusive check is undecided, in words: too few requests for the
    #: percentile, or a value too close to the bound
    reason: str | None = None

    @property
    def stat_label(self) -> str:
        """``p99.9``, ``mean``: the statistic as people write it."""
        return self.stat.replace("_", ".")


class SlaResult(Strict):
    passed: bool = True
    inconclusive: bool = Field(
        False,
        description="loadgen itself was saturated in this step (client.saturated): the "
        "numbers describe the client as much as the server, so the step never passes; "
        "`loadgen run --strict` exits 1 when any step is inconclusive.",
    )
    checks: list[SlaCheck] = Field(default_factory=list)
    good_requests: int | None = None
    verdict: Literal["met", "missed", "inconclusive"] | None = Field(
        None,
        description="With confidence: missed when a check is missed, inconclusive when "
        "one is inconclusive or loadgen was saturated, else met. `--fail-on-sla` fails on "
        "missed, `--strict` on inconclusive too.",
    )
