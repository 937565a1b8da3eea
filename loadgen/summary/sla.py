"""The SLA in ``summary.json``: the run's bounds and each step's checks against them.

Owns :class:`SlaBounds` (the scenario's ``sla`` block as the run used it, only
the keys it gave), :class:`LatencyBounds`, and a step's :class:`SlaCheck` and
:class:`SlaResult`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from loadgen.strict import Sparse, Strict

__all__ = ["Cause", "LatencyBounds", "SlaBounds", "SlaCheck", "SlaResult", "StepVerdict"]

#: A step's verdict with confidence: every output renders this one value.
StepVerdict = Literal["met", "missed", "inconclusive"]
#: Why a step got its verdict: ``met`` (every bound decided within), ``missed`` (a bound
#: decided beyond), ``no_success`` (missed: no request succeeded), ``few_requests``
#: (inconclusive: too few requests for a percentile's interval to reach the bound),
#: ``client_error`` (inconclusive: the bound lies within loadgen's own error of the
#: statistic), ``close_call`` (inconclusive: the bound lies inside the interval).
#: ``saturated`` is only in summaries of loadgen before the client's error was measured.
Cause = Literal[
    "met", "missed", "no_success", "few_requests", "client_error", "close_call", "saturated"
]


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
    # -- tool calls and structured output
    valid_output_rate: float | None = None
    # -- agent sessions and multi-turn chats
    session_s: LatencyBounds | None = None  # in seconds, not ms: a whole session's time

    def latency_bounds(self) -> list[tuple[str, str, float]]:
        """``(metric, stat, bound)`` of every per-request latency bound given (in ms), in
        field order; the session bound (seconds) is :attr:`session_s`."""
        return [
            (metric, stat, bound)
            for metric, bounds in self
            if isinstance(bounds, LatencyBounds) and metric != "session_s"
            for stat, bound in bounds.model_dump().items()
        ]

    def stated(self) -> bool:
        """A bound is given (the settings ``ttft_of``, ``latency_from`` and ``confidence``
        alone bound nothing)."""
        settings = {"ttft_of", "latency_from", "confidence"}
        return any(v is not None for k, v in self if k not in settings)

    def items(self) -> list[tuple[str, Any]]:
        """``(key, value)`` of the keys given, as in the scenario (bounds as dicts)."""
        return list(self.model_dump().items())


class SlaCheck(Strict):
    metric: str  # e.g. "ttft_ms", "error_rate"
    stat: str  # e.g. "p99", "value"
    bound: float
    value: float | None
    margin: float | None  # bound - value (positive = headroom)
    passed: bool  # the point estimate alone is within the bound (outputs render `verdict`)
    #: with confidence (sla.confidence): met when the interval's upper end is within the
    #: bound, missed when its lower end is beyond it, inconclusive otherwise (a statistic
    #: with no interval, an error rate or a max, is decided by its value)
    verdict: Literal["met", "missed", "inconclusive"] | None = None
    interval: list[float | None] | None = None  # the statistic's interval, when it has one
    #: inconclusive percentile bounds: about how many requests would decide it at the
    #: share of values beyond the bound seen here (None: never, or not estimated)
    requests_needed: int | None = None
    #: why an inconclusive check is undecided, in words: too few requests for the
    #: percentile, loadgen's own error, or a value too close to the bound
    reason: str | None = None
    #: the statistic's band for loadgen's own error, [low, high] (ms): where it may lie
    #: were every reading off by its bound; None when every reading was exact
    client_band: list[float] | None = None
    #: the check would be decided but for loadgen's own error (it is then inconclusive)
    client_error: bool = False

    @property
    def stat_label(self) -> str:
        """``p99.9``, ``mean``: the statistic as people write it."""
        return self.stat.replace("_", ".")


class SlaResult(Strict):
    """A step against the SLA. ``verdict``, ``cause`` and ``reason`` are the one answer
    every output renders (:func:`loadgen.metrics.sla.decide` sets them)."""

    @model_validator(mode="before")
    @classmethod
    def _older(cls, data: Any) -> Any:
        """A summary from before loadgen measured its own error flagged a saturated step
        ``inconclusive`` here; ``client.saturated`` says it now, so the key is dropped."""
        if isinstance(data, dict) and "inconclusive" in data:
            data = {k: v for k, v in data.items() if k != "inconclusive"}
        return data

    passed: bool = Field(
        True,
        description="Every point estimate within its bound: the verdict without "
        "confidence or loadgen's error (outputs render `verdict`).",
    )
    checks: list[SlaCheck] = Field(default_factory=list)
    good_requests: int | None = None
    verdict: StepVerdict | None = Field(
        None,
        description="The step's verdict with confidence (None: no bound stated): missed "
        "when no request succeeded or a check is missed; inconclusive when a check is "
        "undecided (too few requests, loadgen's own error, a close call); else met. "
        "`--fail-on-sla` fails on missed, `--strict` on inconclusive too; "
        "`verdict.inconclusive_steps` lists the latter.",
    )
    cause: Cause | None = Field(None, description="Why the step got its verdict.")
    reason: str | None = Field(
        None,
        description="The cause in words, as every output prints it: e.g. '9 requests "
        "cannot decide a p99 at 95%; about 368 would'.",
    )
