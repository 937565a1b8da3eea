"""One step of a run in ``summary.json``: :class:`StepSummary`, per endpoint and its cost.

Owns :class:`StepSummary`, :class:`EndpointStats` (one endpoint's share of a
step) and :class:`Cost`; the parts come from the package's other modules.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, SerializerFunctionWrapHandler, field_validator, model_serializer

from loadgen.redact import strip_userinfo
from loadgen.strict import Strict
from loadgen.summary.cache import CachedTokenStats
from loadgen.summary.client_error import ClientError
from loadgen.summary.counts import (
    LoadPoint,
    PrefixCacheStats,
    PromptLengthCheck,
    RequestCounts,
    Throughput,
    TokenCounts,
)
from loadgen.summary.frontier import FrontierPoint
from loadgen.summary.health import ClientHealth, LittleCheck
from loadgen.summary.latency import Distribution
from loadgen.summary.media import MediaStats
from loadgen.summary.mix import ModelStats
from loadgen.summary.phases import ConnectionPhases
from loadgen.summary.pooling import PoolingStats, drop_token_timing
from loadgen.summary.sessions import SessionStats
from loadgen.summary.sla import SlaResult
from loadgen.summary.spec_decode import SpecDecodeStats
from loadgen.summary.telemetry import StepTelemetry
from loadgen.summary.time_split import TimeSplit
from loadgen.summary.validity import OutputValidity

__all__ = ["Cost", "EndpointStats", "StepSummary"]


class Cost(Strict):
    """The price of the step at its measured throughput (scenario ``cost.usd_per_hour``).

    cost per token = (usd_per_hour / 3600) / output tokens per second.
    """

    usd_per_hour: float = Field(description="The serving hardware's price, USD per hour.")
    usd_per_million_output_tokens: float | None = Field(
        None, description="USD per million output tokens; null when no token came out."
    )
    usd_per_1000_requests: float | None = Field(
        None, description="USD per 1,000 requests; null when no request completed."
    )


class EndpointStats(Strict):
    """One endpoint's share of a step, when requests were spread over several."""

    endpoint: int = Field(description="Index into the run's `endpoints`.")
    url: str = Field(description="The endpoint's base URL (no password).")
    requests: RequestCounts = Field(default_factory=RequestCounts)
    throughput: Throughput = Field(
        default_factory=Throughput,
        description="Over the step's window (steady where the step has one), so the "
        "endpoints' figures add up to the step's.",
    )
    ttft_ms: Distribution = Field(default_factory=Distribution)
    itl_ms: Distribution = Field(default_factory=Distribution)
    tpot_ms: Distribution = Field(default_factory=Distribution)
    e2e_ms: Distribution = Field(default_factory=Distribution)

    @field_validator("url")
    @classmethod
    def _no_userinfo(cls, url: str) -> str:
        return strip_userinfo(url)


class StepSummary(Strict):
    index: int
    role: str = "step"  # "step", or "probe" for sweep auto's saturation probe
    load: LoadPoint
    started_ns: int = 0
    ended_ns: int = 0
    duration_s: float = 0.0
    requests: RequestCounts = Field(default_factory=RequestCounts)
    ttft_of: Literal["any", "answer"] = Field(
        "any",
        description="What ttft_ms (and TTFT bounds, goodput) measure to: the first token "
        "of any kind, or the first answer token (reasoning tokens before it not counted).",
    )
    ttft_ms: Distribution = Field(default_factory=Distribution)
    latency_from: Literal["scheduled", "sent"] = Field(
        "sent",
        description="Where ttft_ms and e2e_ms (and TTFT/E2E bounds, goodput) count from: "
        "the intended send time (open loop with sla.latency_from scheduled) or the send.",
    )
    ttft_from_scheduled_ms: Distribution | None = Field(
        None, description="Open loop: TTFT = first token - intended send time."
    )
    ttft_from_sent_ms: Distribution | None = Field(
        None, description="Open loop: TTFT from the actual send (the profile's origin)."
    )
    e2e_from_scheduled_ms: Distribution | None = Field(
        None, description="Open loop: E2E = the profile's end stamp - intended send time."
    )
    e2e_from_sent_ms: Distribution | None = Field(
        None, description="Open loop: E2E from the actual send (the profile's origin)."
    )
    queue_wait_ms: Distribution | None = Field(
        None,
        description="Open loop: start - intended send time: the wait for a free slot under "
        "max_concurrency (plus any sender lag, reported as client.send_lag_p99_ms).",
    )
    ttft_reasoning_ms: Distribution | None = Field(
        None,
        description="Time to the first reasoning token; present when a successful request "
        "had reasoning events.",
    )
    ttft_answer_ms: Distribution | None = Field(
        None,
        description="Time to the first answer token; present when a successful request "
        "had reasoning events.",
    )
    ttft_by_turn: dict[str, Distribution] | None = Field(
        None,
        description="TTFT (as ttft_ms) of each turn of multi-turn sessions, keyed by the "
        "0-based turn index; present when records carry turns.",
    )
    itl_ms: Distribution = Field(default_factory=Distribution)
    icl_ms: Distribution | None = None  # metrics profile aiperf: inter-chunk latency
    tpot_ms: Distribution = Field(default_factory=Distribution)
    e2e_ms: Distribution = Field(default_factory=Distribution)
    throughput: Throughput = Field(
        default_factory=Throughput,
        description="Over the steady window where the step has one, else the whole window.",
    )
    throughput_whole: Throughput | None = Field(
        None, description="Over the whole window: first measured send to last measured end."
    )
    steady_started_ns: int | None = Field(
        None,
        description="Start of the steady window (closed loop: the c-th measured send; "
        "open loop: the first measured completion).",
    )
    steady_ended_ns: int | None = Field(
        None, description="End of the steady window: the last measured send."
    )
    steady_duration_s: float | None = Field(None, description="Length of the steady window.")
    steady_unrated: str | None = Field(
        None,
        description="Why the step has no steady window to rate (none at all, or one too "
        "short: under half a request duration or 2 completions); throughput is then over the "
        "whole window.",
    )
    tokens: TokenCounts = Field(default_factory=TokenCounts)
    prompt_lengths: PromptLengthCheck = Field(
        default_factory=PromptLengthCheck,
        description="Server prompt counts against the requested lengths.",
    )
    prefix_cache: PrefixCacheStats | None = Field(
        None, description="The server's prefix-cache hits over the step, when scraped."
    )
    warnings: list[str] = Field(
        default_factory=list,
        description="What makes the step's numbers suspect, other than the client's health.",
    )
    sla: SlaResult = Field(default_factory=SlaResult)
    client: ClientHealth = Field(default_factory=ClientHealth)
    client_error: ClientError | None = Field(
        None,
        description="loadgen's own error per metric: how far its readings may be from "
        "what the server did, measured per reading; verdicts are decided with it.",
    )
    little: LittleCheck | None = None
    telemetry: StepTelemetry | None = Field(
        None, description="GPU, host and server telemetry over the step, when collected."
    )
    cost: Cost | None = Field(None, description="Set when the scenario gives a cost basis.")
    endpoints: list[EndpointStats] | None = Field(
        None,
        description="Per endpoint (several target URLs or mock replicas), beside the totals "
        "above; null for one endpoint.",
    )
    interrupted: bool = False
    # -- model mixes (target.models)
    models: list[ModelStats] | None = Field(
        None,
        description="Per model of the mix (target.models), beside the totals above; null "
        "for one model.",
    )
    # -- tool calls and structured output
    output_validity: OutputValidity | None = Field(
        None,
        description="Tool calls and structured answers against their schemas; present "
        "when the step's answers had tool calls or anything to check.",
    )
    # -- pooling APIs (embeddings, rerank)
    pooling: PoolingStats | None = Field(
        None,
        description="A pooling API's step: inputs and vector dimensions; the token-timing "
        "fields (TTFT, ITL, TPOT) are then left out.",
    )

    @model_serializer(mode="wrap")
    def _no_token_timing(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A pooling step has no token timing: its fields are left out (docs/metrics.md)."""
        data: dict[str, Any] = handler(self)
        if self.pooling is not None:
            drop_token_timing(data)
        return data

    # -- inputs beyond text (images, audio) and the send
    send_ms: Distribution | None = Field(
        None,
        description="Send duration = sent_ns - start_ns: from loadgen starting the request "
        "to its last byte written to the socket (a large body's upload is the client's "
        "time, not the server's TTFT, which counts from the last byte).",
    )
    media: MediaStats | None = Field(
        None, description="Images and audio the requests carried; null when none did."
    )
    # -- agent sessions and multi-turn chats
    sessions: SessionStats | None = Field(
        None,
        description="The step's sessions as wholes (time, its split, calls, context growth, "
        "sessions/s, goodput); null when no record of the step has a session.",
    )
    # -- the server's prefix cache, as its answers counted it
    cache: CachedTokenStats | None = Field(
        None,
        description="Prompt tokens the server served from its prefix cache, from each "
        "answer's usage (cached_tokens_server); null when no answer counted them.",
    )
    # -- speculative decoding
    spec_decode: SpecDecodeStats | None = Field(
        None,
        description="The server's speculative-decoding counters over the step (vLLM's "
        "spec_decode_*); null when the server exports none.",
    )
    # -- request phases
    phases: ConnectionPhases | None = Field(
        None,
        description="Requests on new connections beside those on reused ones: counts, "
        "connect and TLS handshake times, TTFT from start_ns; null when no transport said "
        "whether a request's connection was new.",
    )
    # -- frontier
    frontier: FrontierPoint | None = Field(
        None,
        description="The step as a point of the throughput-interactivity frontier "
        "(interactivity, throughput per GPU, cost); null for a pooling API's step.",
    )
    # -- where the time went
    time_split: TimeSplit | None = Field(
        None,
        description="Queue, prefill and decode time by the server's histograms over the "
        "step (percentiles approximate), and network + HTTP + client = client E2E - server "
        "E2E; null when the server exports none of them.",
    )

    @property
    def judged(self) -> bool:
        """The step counts: a step cut short by a stop signal (Ctrl-C, SIGTERM, SIGHUP:
        ``interrupted``) is shown as far as it got and judged by nothing, neither the
        run's verdict nor the frontier's best point nor any output's SLA column
        (docs/metrics.md, "The run's verdict")."""
        return not self.interrupted

    @property
    def standing(self) -> str | None:
        """The step's SLA verdict as every output shows it: ``interrupted`` for a step
        that is not :attr:`judged`, else ``sla.verdict`` (None without bounds)."""
        return "interrupted" if not self.judged else self.sla.verdict

    @property
    def meets_sla(self) -> bool:
        """The step met the SLA: it is :attr:`judged` and its verdict is *met*, or no bound
        was stated and a request succeeded with loadgen able to offer the load (not
        saturated). What the run's verdict and every report count as passing."""
        if not self.judged:
            return False
        if self.sla.verdict is None:
            return self.requests.ok > 0 and not self.client.saturated
        return self.sla.verdict == "met"
