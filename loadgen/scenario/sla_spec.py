"""The ``sla`` section: bounds on latency, errors, valid output and session time.

Owns :class:`SlaSpec` and its bounds (:class:`PercentileBounds` in ms,
:class:`SessionBounds` in s). The checks that need other sections (a session
bound needs sessions) are :mod:`~loadgen.scenario.models`'.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from loadgen.strict import Spec

__all__ = ["PercentileBounds", "SessionBounds", "SlaSpec"]


class PercentileBounds(Spec):
    mean: float | None = Field(None, gt=0, description="Bound on the mean, in ms.")
    p50: float | None = Field(None, gt=0, description="Bound on the median, in ms.")
    p90: float | None = Field(None, gt=0, description="Bound on the 90th percentile, in ms.")
    p95: float | None = Field(None, gt=0, description="Bound on the 95th percentile, in ms.")
    p99: float | None = Field(None, gt=0, description="Bound on the 99th percentile, in ms.")

    def items(self) -> list[tuple[str, float]]:
        return [(k, v) for k, v in self.model_dump().items() if v is not None]


class SessionBounds(Spec):
    """Bounds on the time of a whole session (agent task or multi-turn chat), in seconds."""

    mean: float | None = Field(None, gt=0, description="Bound on the mean, in s.")
    p50: float | None = Field(None, gt=0, description="Bound on the median, in s.")
    p90: float | None = Field(None, gt=0, description="Bound on the 90th percentile, in s.")
    p95: float | None = Field(None, gt=0, description="Bound on the 95th percentile, in s.")
    p99: float | None = Field(None, gt=0, description="Bound on the 99th percentile, in s.")

    def items(self) -> list[tuple[str, float]]:
        return [(k, v) for k, v in self.model_dump().items() if v is not None]


class SlaSpec(Spec):
    ttft_ms: PercentileBounds = Field(
        default_factory=PercentileBounds, description="Bounds on time to first token."
    )
    tpot_ms: PercentileBounds = Field(
        default_factory=PercentileBounds, description="Bounds on time per output token."
    )
    itl_ms: PercentileBounds = Field(
        default_factory=PercentileBounds, description="Bounds on inter-token latency."
    )
    e2e_ms: PercentileBounds = Field(
        default_factory=PercentileBounds, description="Bounds on end-to-end latency."
    )
    max_error_rate: float | None = Field(
        None, ge=0, le=1, description="Largest allowed fraction of failed requests."
    )
    ttft_of: Literal["any", "answer"] = Field(
        "any",
        description="Which first token TTFT is judged by: any (reasoning included) or the "
        "first answer token of a reasoning model.",
    )
    latency_from: Literal["scheduled", "sent"] = Field(
        "scheduled",
        description="Open loop (rate, trace): where TTFT and E2E count from, for the SLA, "
        "goodput and the reported figures: the intended send time (scheduled; queueing "
        "behind max_concurrency counts, as users feel it) or the actual send (sent). "
        "Closed loop sends when intended: both are the same.",
    )
    confidence: float = Field(
        0.95,
        ge=0.5,
        le=0.999,
        description="Confidence level of every interval (percentiles, means) and of the "
        "SLA verdicts: a bound is met when the interval's upper end is within it, missed "
        "when its lower end is beyond it, inconclusive otherwise.",
    )
    # -- tool calls and structured output
    valid_output_rate: float | None = Field(
        None,
        gt=0,
        le=1,
        description="Smallest allowed share of checked answers (tool calls, structured "
        "answers) that are valid for their schema; judged on its Wilson interval at "
        "`confidence`. Needs workload.tools or workload.response_format.",
    )
    # -- agent sessions and multi-turn chats
    session_s: SessionBounds = Field(
        default_factory=SessionBounds,
        description="Bounds on session time (first call's start to last call's end, in "
        "seconds); the highest percentile stated is also each session's bound for "
        "session goodput. Needs sessions in the workload (workload.sessions, an agent "
        "workload or a trace).",
    )
