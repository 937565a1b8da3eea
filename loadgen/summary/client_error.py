"""loadgen's own error in ``summary.json``: how far each timing may be from what the
server did, measured per reading (docs/metrics.md, "Client error").

Owns :class:`ErrorBound` (one metric's readings: the distribution of their bounds,
and each statistic's band) and :class:`ClientError` (a step's, per metric).
Readings are only ever late or early in the direction the band says: a band's
low end is the statistic were every reading as early as its bound allows, its
high end as late; a reading with a bound of 0 is exact. Milliseconds.
"""

from __future__ import annotations

from pydantic import Field

from loadgen.strict import Strict

__all__ = ["ClientError", "ErrorBound"]


class ErrorBound(Strict):
    """loadgen's error on one metric's readings, ms."""

    readings: int = Field(description="Readings of the metric in the step.")
    uncertain: int = Field(
        description="Of them, those loadgen could not stamp exactly (a bound above 0)."
    )
    p50: float = Field(description="Median of the readings' bounds (how far each may be off).")
    p99: float
    max: float
    band: dict[str, list[float | None]] = Field(
        default_factory=dict,
        description="Per statistic (mean, p50 ... p99.9, max): [low, high], the statistic "
        "were every reading as far one way or the other as its bound allows; empty when "
        "every reading is exact.",
    )
    interval: dict[str, list[float | None]] = Field(
        default_factory=dict,
        description="Per statistic: the low end of the early band's confidence interval "
        "and the high end of the late one's (sla.confidence): where verdicts look; the max "
        "(no interval) its band.",
    )


class ClientError(Strict):
    """A step's client error, per metric; a metric without readings is left out."""

    ttft_ms: ErrorBound | None = None
    itl_ms: ErrorBound | None = None
    tpot_ms: ErrorBound | None = None
    e2e_ms: ErrorBound | None = None

    def bound(self, metric: str) -> ErrorBound | None:
        """The bound of ``metric`` (``ttft_ms`` ...), if the step has one."""
        got = getattr(self, metric, None)
        return got if isinstance(got, ErrorBound) else None
