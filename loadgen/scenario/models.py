"""The scenario: what to load, how hard, and what counts as good enough.

Pydantic models at the edge, strict (``extra="forbid"``), one description per
field; ``docs/scenario.md`` documents the same fields. Nothing here does I/O.

Imports: pydantic only.
"""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "API_NAMES",
    "CostSpec",
    "Distribution",
    "FixedDist",
    "LoadSpec",
    "MockSpec",
    "PercentileBounds",
    "Scenario",
    "SlaSpec",
    "StopEarly",
    "TargetSpec",
    "TelemetrySpec",
    "Timeouts",
    "UniformDist",
    "WorkloadSpec",
]

API_NAMES = ("openai-completions", "openai-chat", "tgi")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Timeouts(_Strict):
    connect: float = Field(10.0, gt=0, description="Seconds to open the TCP connection.")
    first_token: float = Field(
        300.0, gt=0, description="Seconds from send to the first generated token."
    )
    idle: float = Field(
        120.0, gt=0, description="Longest gap in seconds between two chunks of one stream."
    )
    total: float = Field(1800.0, gt=0, description="Seconds for the whole request.")


class TlsSpec(_Strict):
    verify: bool = Field(
        True, description="Check an https:// server's certificate (false: accept any)."
    )
    ca_file: str | None = Field(
        None, description="PEM file of the CA certificates to trust instead of the system's."
    )

    @model_validator(mode="after")
    def _ca_file_loads(self) -> TlsSpec:
        if self.ca_file is not None:
            if not Path(self.ca_file).is_file():
                raise ValueError(f"ca_file {self.ca_file!r} is not a readable file")
            try:
                ssl.create_default_context(cafile=self.ca_file)
            except ssl.SSLError as exc:
                msg = f"ca_file {self.ca_file!r} holds no PEM certificate ({exc.reason})"
                raise ValueError(msg) from None
        return self


class MockSpec(_Strict):
    profile: str | None = Field(
        None, description="Built-in mock engine profile (see docs/mock.md); None = its default."
    )
    args: list[str] = Field(
        default_factory=list,
        description="Extra command-line arguments for `loadgen mock` (e.g. ['--itl-ms', '10']).",
    )


class TargetSpec(_Strict):
    url: str = Field(
        "mock",
        description="Base URL of the server (http://host:port), or `mock` for the built-in server.",
    )
    api: Literal["openai-completions", "openai-chat", "tgi"] = Field(
        "openai-chat", description="Wire protocol: openai-completions | openai-chat | tgi."
    )
    model: str = Field("mock-model", min_length=1, description="Model name sent in each request.")
    api_key_env: str | None = Field(
        None, description="Environment variable holding the API key (sent as a Bearer token)."
    )
    extra_body: dict[str, Any] = Field(
        default_factory=dict, description="Merged into every request body (e.g. ignore_eos)."
    )
    headers: dict[str, str] = Field(
        default_factory=dict, description="Extra HTTP headers sent with every request."
    )
    http2: bool = Field(False, description="Use HTTP/2 (through httpx).")
    transport: Literal["auto", "h1", "aiohttp", "httpx"] = Field(
        "auto",
        description="HTTP client: auto (h1, or httpx for http2), h1 (loadgen's own, "
        "kernel-stamped), aiohttp, httpx.",
    )
    tls: TlsSpec = Field(default_factory=TlsSpec, description="TLS for https:// targets.")
    stream: bool = Field(
        True, description="Streaming requests (false: one JSON answer; TTFT is then E2E)."
    )
    wait_for_health_s: float = Field(
        0.0, ge=0, description="Before the first step, wait up to this long for GET /health = 200."
    )
    timeouts_s: Timeouts = Field(
        default_factory=Timeouts, description="Per-request timeouts in seconds."
    )
    mock: MockSpec = Field(
        default_factory=MockSpec, description="Options for the built-in mock (url: mock)."
    )

    @model_validator(mode="after")
    def _transport_fits(self) -> TargetSpec:
        if self.http2 and self.transport in ("h1", "aiohttp"):
            raise ValueError(f"transport {self.transport} speaks HTTP/1.1 only; http2 needs httpx")
        return self


class FixedDist(_Strict):
    dist: Literal["fixed"] = Field(description="Every request gets `value`.")
    value: int = Field(ge=1, description="The token count.")


class UniformDist(_Strict):
    dist: Literal["uniform"] = Field(description="Integers drawn uniformly in [min, max].")
    min: int = Field(ge=1, description="Smallest token count.")
    max: int = Field(ge=1, description="Largest token count.")

    @model_validator(mode="after")
    def _ordered(self) -> UniformDist:
        if self.max < self.min:
            raise ValueError(f"max ({self.max}) must be >= min ({self.min})")
        return self


Distribution = Annotated[FixedDist | UniformDist, Field(discriminator="dist")]


class WorkloadSpec(_Strict):
    seed: int = Field(0, ge=0, description="Seed of every random draw (0 is a valid seed).")
    prompt_tokens: Distribution = Field(
        default_factory=lambda: FixedDist(dist="fixed", value=128),
        description="Prompt length in tokens.",
    )
    output_tokens: Distribution = Field(
        default_factory=lambda: FixedDist(dist="fixed", value=128),
        description="Output length in tokens, sent as max_tokens.",
    )
    prompt_as: Literal["text", "token_ids"] = Field(
        "text",
        description="text: N random common words; token_ids: N random token ids "
        "(exact prompt lengths with no tokenizer; openai-completions only).",
    )
    vocab_size: int = Field(
        1000, ge=2, description="prompt_as token_ids: ids are drawn from [100, vocab_size)."
    )


class StopEarly(_Strict):
    max_error_rate: float = Field(
        0.5, ge=0, le=1, description="Stop the sweep after a step with a higher error rate."
    )
    sla_factor: float = Field(
        4.0, gt=1, description="Stop after a step whose value exceeds an SLA bound this many times."
    )


class LoadSpec(_Strict):
    sweep: Literal["list", "auto", "sla-search"] = Field(
        "list",
        description="list: the given values in order; auto: saturation probe, then rates up to "
        "the maximum; sla-search: bisection for the highest load meeting the SLA.",
    )
    mode: Literal["concurrency", "rate"] = Field(
        "concurrency", description="concurrency (closed loop) | rate (open loop)."
    )
    concurrency: list[Annotated[int, Field(ge=1)]] | None = Field(
        None, min_length=1, description="Closed loop: one step per number of concurrent requests."
    )
    rate: list[Annotated[float, Field(gt=0)]] | None = Field(
        None, min_length=1, description="Open loop: one step per request rate (requests/s)."
    )
    arrival: Literal["poisson", "gamma", "constant"] = Field(
        "poisson", description="Open loop arrival process."
    )
    burstiness: float = Field(
        1.0, gt=0, description="Gamma shape; 1 = Poisson, <1 burstier, >1 steadier (as vLLM)."
    )
    max_concurrency: int | None = Field(
        None, ge=1, description="Open loop: cap on requests in flight (None = no cap)."
    )
    requests_per_step: int | None = Field(
        None, ge=1, description="Measured requests per step (warm-up not included)."
    )
    duration_s: float | None = Field(
        None, gt=0, description="Length of each step in seconds (instead of requests_per_step)."
    )
    warmup_requests: int = Field(
        0, ge=0, description="Requests sent first in each step, excluded from the metrics."
    )
    auto_points: int = Field(8, ge=2, description="sweep auto: number of rates to run.")
    probe_concurrency: int = Field(
        64, ge=1, description="sweep auto: concurrency of the saturation probe."
    )
    search_tolerance: float | None = Field(
        None,
        gt=0,
        description="sweep sla-search: stop when the bracket is this narrow "
        "(default 1 for concurrency, 5% of the upper bound for rate).",
    )
    max_search_steps: int = Field(
        12, ge=2, description="sweep sla-search: most steps the bisection may run."
    )
    stop_early: StopEarly | None = Field(
        default_factory=StopEarly,
        description="When to abandon a sweep early; null runs every step whatever happens.",
    )

    @model_validator(mode="after")
    def _consistent(self) -> LoadSpec:
        if self.sweep == "auto":
            pass  # the rates come from the saturation probe
        elif self.mode == "concurrency":
            if not self.concurrency:
                raise ValueError("mode concurrency needs a non-empty `concurrency` list")
        elif not self.rate:
            raise ValueError("mode rate needs a non-empty `rate` list")
        if self.sweep == "sla-search" and len(set(self.points)) < 2:
            raise ValueError("sweep sla-search needs two values: a low and a high bound")
        if self.requests_per_step is None and self.duration_s is None:
            raise ValueError("give `requests_per_step` or `duration_s`")
        if self.requests_per_step is not None and self.duration_s is not None:
            raise ValueError("give only one of `requests_per_step` and `duration_s`")
        return self

    @property
    def points(self) -> list[float]:
        """The sweep's load values, in order."""
        values = self.concurrency if self.mode == "concurrency" else self.rate
        return [float(v) for v in values or []]


class PercentileBounds(_Strict):
    mean: float | None = Field(None, gt=0, description="Bound on the mean, in ms.")
    p50: float | None = Field(None, gt=0, description="Bound on the median, in ms.")
    p90: float | None = Field(None, gt=0, description="Bound on the 90th percentile, in ms.")
    p95: float | None = Field(None, gt=0, description="Bound on the 95th percentile, in ms.")
    p99: float | None = Field(None, gt=0, description="Bound on the 99th percentile, in ms.")

    def items(self) -> list[tuple[str, float]]:
        return [(k, v) for k, v in self.model_dump().items() if v is not None]


class SlaSpec(_Strict):
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


class TelemetrySpec(_Strict):
    agents: list[str] = Field(
        default_factory=list, description="URLs of `loadgen agent` sidecars to poll."
    )
    server_metrics: str | None = Field(
        None,
        description="URL of the server's Prometheus /metrics endpoint to scrape; "
        "`target` means <target url>/metrics.",
    )
    token_env: str | None = Field(
        None, description="Environment variable holding the agents' bearer token."
    )
    interval_s: float = Field(1.0, gt=0, description="Polling interval in seconds.")


class CostSpec(_Strict):
    usd_per_hour: float | None = Field(
        None, gt=0, description="What the serving hardware costs per hour, in USD."
    )


class Scenario(_Strict):
    """A whole scenario file."""

    name: str = Field("scenario", min_length=1, description="Name shown in reports.")
    target: TargetSpec = Field(default_factory=TargetSpec, description="The server under test.")
    workload: WorkloadSpec = Field(
        default_factory=WorkloadSpec, description="Prompts and output lengths."
    )
    load: LoadSpec = Field(description="The sweep: load values and step length.")
    sla: SlaSpec = Field(default_factory=SlaSpec, description="Service-level objectives.")
    telemetry: TelemetrySpec = Field(
        default_factory=TelemetrySpec, description="Server-side telemetry sources."
    )
    cost: CostSpec = Field(default_factory=CostSpec, description="Price of the hardware.")

    @model_validator(mode="after")
    def _token_ids_need_completions(self) -> Scenario:
        if self.workload.prompt_as == "token_ids" and self.target.api != "openai-completions":
            raise ValueError(
                "workload.prompt_as token_ids needs target.api openai-completions, "
                f"not {self.target.api}"
            )
        return self
