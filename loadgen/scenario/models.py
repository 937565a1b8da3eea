"""The scenario: what to load, how hard, and what counts as good enough.

Owns :class:`Scenario` (a whole scenario file), its small sections (``sla``,
``telemetry``, ``cost``) and the checks across sections (an open-loop step's
plan must fit in memory). The larger sections have modules of their own:
``target`` (:mod:`~loadgen.scenario.target_spec`), ``workload``
(:mod:`~loadgen.scenario.workload_spec`), ``load``
(:mod:`~loadgen.scenario.loadspec`) and the distributions
(:mod:`~loadgen.scenario.dists`); their models are re-exported here, so
``loadgen.scenario.models`` names every model of the file.

Pydantic models at the edge, strict (``extra="forbid"``), one description per
field; ``docs/scenario.md`` documents the same fields. Nothing here does I/O.

Imports: pydantic, loadgen.strict (the base model), loadgen.vocab and this package.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from loadgen.scenario.cancel_spec import check_cancel
from loadgen.scenario.dists import (
    DatasetSpec,
    Distribution,
    EmpiricalDist,
    FixedDist,
    FloatDistribution,
    LognormalDist,
    NormalDist,
    UniformDist,
)
from loadgen.scenario.limits import MAX_NAME, MAX_SECONDS
from loadgen.scenario.loadspec import (
    ConcurrencyLoad,
    LoadSpec,
    OfflineLoad,
    RateLoad,
    StopEarly,
    StopOnErrors,
    TraceLoad,
)
from loadgen.scenario.media_spec import media_fits
from loadgen.scenario.output_spec import FORMAT_APIS, OUTPUT_APIS, ResponseFormatSpec, ToolsSpec
from loadgen.scenario.planned import BYTES_PER_TOKEN, MAX_PLANNED_BYTES, mean_length, media_bytes
from loadgen.scenario.pooling import check_pooling
from loadgen.scenario.target_spec import (
    MAX_ENDPOINTS,
    MAX_MOCK_REPLICAS,
    MOCK_MODEL,
    ROUTING_POLICIES,
    LimitsSpec,
    MockSpec,
    TargetSpec,
    Timeouts,
    TlsSpec,
    check_base_url,
)
from loadgen.scenario.workload_spec import PrefixSpec, SessionSpec, WorkloadSpec
from loadgen.strict import Spec
from loadgen.vocab import API_NAMES, CHAT_APIS

__all__ = [
    "API_NAMES",
    "MAX_ENDPOINTS",
    "MAX_MOCK_REPLICAS",
    "MAX_PLANNED_TOKENS",
    "MOCK_MODEL",
    "ROUTING_POLICIES",
    "ConcurrencyLoad",
    "CostSpec",
    "DatasetSpec",
    "Distribution",
    "EmpiricalDist",
    "FixedDist",
    "FloatDistribution",
    "LimitsSpec",
    "LoadSpec",
    "LognormalDist",
    "MockSpec",
    "NormalDist",
    "OfflineLoad",
    "PercentileBounds",
    "PrefixSpec",
    "RateLoad",
    "ResponseFormatSpec",
    "Scenario",
    "SessionSpec",
    "SlaSpec",
    "StopEarly",
    "StopOnErrors",
    "TargetSpec",
    "TelemetrySpec",
    "Timeouts",
    "TlsSpec",
    "ToolsSpec",
    "TraceLoad",
    "UniformDist",
    "WorkloadSpec",
    "check_base_url",
]


#: a name that is safe as one path component
_SAFE_NAME = re.compile(r"[A-Za-z0-9_+=@,-][A-Za-z0-9 ._+=@,-]*")


class PercentileBounds(Spec):
    mean: float | None = Field(None, gt=0, description="Bound on the mean, in ms.")
    p50: float | None = Field(None, gt=0, description="Bound on the median, in ms.")
    p90: float | None = Field(None, gt=0, description="Bound on the 90th percentile, in ms.")
    p95: float | None = Field(None, gt=0, description="Bound on the 95th percentile, in ms.")
    p99: float | None = Field(None, gt=0, description="Bound on the 99th percentile, in ms.")

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


class TelemetrySpec(Spec):
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
    interval_s: float = Field(
        1.0, ge=0.01, le=MAX_SECONDS, description="Polling interval in seconds."
    )

    @field_validator("agents")
    @classmethod
    def _agents_are_urls(cls, urls: list[str]) -> list[str]:
        for url in urls:
            check_base_url(url)
        return urls

    @field_validator("server_metrics")
    @classmethod
    def _metrics_is_url(cls, url: str | None) -> str | None:
        if url is not None and url != "target":
            check_base_url(url)
        return url


class CostSpec(Spec):
    usd_per_hour: float | None = Field(
        None, gt=0, description="What the serving hardware costs per hour, in USD."
    )


class Scenario(Spec):
    """A whole scenario file."""

    name: str = Field(
        "scenario",
        min_length=1,
        max_length=MAX_NAME,
        description="Name shown in reports and used in the default results folder: "
        "letters, digits, spaces and . _ - + = @ , only, not starting with a dot.",
    )
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

    @field_validator("name")
    @classmethod
    def _name_is_a_path_part(cls, name: str) -> str:
        """The default results folder is results/<name>-<time>: no ../, no /, no \\."""
        if not _SAFE_NAME.fullmatch(name):
            raise ValueError(
                "letters, digits, spaces and . _ - + = @ , only, not starting with a dot or space"
            )
        return name

    @model_validator(mode="after")
    def _workload_fits(self) -> Scenario:
        w = self.workload
        latency = ("ttft_ms", "itl_ms", "tpot_ms", "e2e_ms")
        bounded = {m for m in latency if getattr(self.sla, m).items()}
        check_pooling(self.target, w, self.load, bounded)  # pooling APIs (embeddings, rerank)
        check_cancel(w.cancel, self.target.api, self.target.streams)  # users who stop
        if w.prompt_as == "token_ids" and self.target.api != "openai-completions":
            raise ValueError(
                "workload.prompt_as token_ids needs target.api openai-completions, "
                f"not {self.target.api}"
            )
        if w.sessions is not None and self.target.api not in CHAT_APIS:
            raise ValueError(
                f"workload.sessions needs a chat API ({' | '.join(CHAT_APIS)}), "
                f"not {self.target.api}"
            )
        server_state = w.sessions is not None and w.sessions.state == "server"
        if server_state and self.target.api != "openai-responses":
            raise ValueError(
                "workload.sessions.state server chains previous_response_id: it needs "
                f"target.api openai-responses, not {self.target.api}"
            )
        _output_fits(self)
        if (why := media_fits(self.target.api, w.images, w.audio)) is not None:
            raise ValueError(why)
        if w.sessions is not None and (w.images is not None or w.audio is not None):
            raise ValueError(
                "workload.images and workload.audio go with single requests: drop workload.sessions"
            )
        if isinstance(self.load, TraceLoad):
            for name in ("dataset", "sessions"):
                if getattr(w, name) is not None:
                    raise ValueError(
                        f"load.mode trace takes lengths from the trace: drop workload.{name}"
                    )
        if isinstance(self.load, OfflineLoad) and w.sessions is not None:
            raise ValueError("load.mode offline sends single requests: drop workload.sessions")
        if isinstance(self.load, RateLoad | OfflineLoad):
            _open_loop_fits(self.load, w)
        return self


def _output_fits(sc: Scenario) -> None:
    """Tools and response formats need an API that sends them; a validity bound needs one."""
    w = sc.workload
    for name, apis in (("tools", OUTPUT_APIS), ("response_format", FORMAT_APIS)):
        if getattr(w, name) is not None and sc.target.api not in apis:
            raise ValueError(
                f"workload.{name} needs target.api {' | '.join(apis)}, not {sc.target.api}"
            )
    if sc.sla.valid_output_rate is not None and w.tools is None and w.response_format is None:
        raise ValueError(
            "sla.valid_output_rate bounds the validity of tool calls and structured answers: "
            "it needs workload.tools or workload.response_format"
        )


#: Prompt tokens an open-loop step may plan up front (its requests are made
#: before the step starts so that sending them costs nothing): about 2.5 GB of text.
MAX_PLANNED_TOKENS = MAX_PLANNED_BYTES // BYTES_PER_TOKEN


def _open_loop_fits(load: RateLoad | OfflineLoad, w: WorkloadSpec) -> None:
    """An open-loop step's planned requests must fit in memory (closed loop plans lazily):
    their prompts' text and their synthetic images and audio together."""
    if isinstance(load, OfflineLoad):
        arrivals = float(load.requests_per_step or 0)
    elif load.requests_per_step is not None:
        rate = max(load.points, default=0.0)
        arrivals = load.requests_per_step + load.warmup_requests + rate * load.ramp_up_s / 2
    else:
        rate = max(load.points, default=0.0)
        arrivals = rate * ((load.duration_s or 0.0) + load.ramp_up_s / 2)
    # sessions plan turn lengths only; a dataset's rows are shared, not copied
    shared = w.sessions is not None or w.dataset is not None
    mean = 1.0 if shared else mean_length(w.prompt_tokens)
    media = media_bytes(w.images, w.audio)
    if media and arrivals * (mean * BYTES_PER_TOKEN + media) > MAX_PLANNED_BYTES:
        raise ValueError(
            f"load: an open-loop step plans its requests up front; about {arrivals:,.0f} "
            f"requests of ~{mean:,.0f} prompt tokens and ~{media / 1e6:,.1f} MB of images "
            f"and audio each is more than {MAX_PLANNED_BYTES / 1e9:g} GB: shorten the step "
            "(requests_per_step, duration_s), lower the rate or make the images smaller"
        )
    if arrivals * mean > MAX_PLANNED_TOKENS:
        raise ValueError(
            f"load: an open-loop step plans its requests up front; about {arrivals:,.0f} "
            f"requests of ~{mean:,.0f} prompt tokens is more than {MAX_PLANNED_TOKENS:,} "
            "tokens: shorten the step (requests_per_step, duration_s) or lower the rate"
        )
