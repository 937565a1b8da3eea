"""The schema of ``summary.json``: what metrics produce and every output reads.

Pydantic, because it is an edge: written by ``loadgen run``, read back by
``loadgen report`` and ``loadgen compare``. Latencies are milliseconds,
rates per second. Outputs (console, CSV, Markdown, HTML, plots) import this
module and nothing of the measuring side.

Imports: pydantic, loadgen.redact (no URL password reaches an output).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from loadgen.redact import redact_text, strip_userinfo

__all__ = [
    "PERCENTILES",
    "ClientHealth",
    "ClockAnchor",
    "Cost",
    "Distribution",
    "EndpointStats",
    "GpuStats",
    "GpuTotal",
    "HostStats",
    "Intervals",
    "LittleCheck",
    "LoadPoint",
    "Mean",
    "MeanMax",
    "Peak",
    "PrefixCacheStats",
    "PromptLengthCheck",
    "RequestCounts",
    "ServerStats",
    "SlaCheck",
    "SlaResult",
    "StepSummary",
    "StepTelemetry",
    "Summary",
    "TargetCheck",
    "TelemetryGap",
    "TelemetryWindow",
    "Throughput",
    "TokenCounts",
    "Verdict",
]

#: Percentiles reported for every latency metric; the key is ``p`` + the number
#: with ``.`` written ``_`` (p99.9 -> ``p99_9``).
PERCENTILES = (50.0, 90.0, 95.0, 99.0, 99.9)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Intervals(_Model):
    """Confidence intervals, ``[low, high]`` in ms; an end is None where the sample is too small
    to give it (docs/metrics.md: percentiles from order statistics, the mean by the normal
    approximation)."""

    confidence: float
    mean: list[float | None]
    p50: list[float | None]
    p90: list[float | None]
    p95: list[float | None]
    p99: list[float | None]
    p99_9: list[float | None]


class Distribution(_Model):
    """Summary statistics of one latency metric, in ms. Empty when ``count`` is 0."""

    count: int = 0
    mean: float | None = None
    std: float | None = None
    min: float | None = None
    p50: float | None = None
    p90: float | None = None
    p95: float | None = None
    p99: float | None = None
    p99_9: float | None = None
    max: float | None = None
    ci: Intervals | None = None


class LoadPoint(_Model):
    mode: str
    concurrency: int | None = None
    rate: float | None = None
    time_scale: float | None = Field(
        None,
        description="Trace replay: the factor gaps between the trace's arrivals were "
        "multiplied by (0.5 = twice the recorded rate).",
    )
    arrival: str | None = None
    burstiness: float | None = None
    max_concurrency: int | None = None


class RequestCounts(_Model):
    total: int = 0
    ok: int = 0
    failed: int = 0
    warmup: int = 0
    ramp: int = Field(
        0, description="Requests started during load.ramp_up_s: recorded, not in any metric."
    )
    cancelled: int = 0  # in flight when the run was interrupted; not in any metric
    reconnects: int = Field(
        0,
        description="Measured requests sent again on a fresh connection because the server "
        "dropped the kept-alive one before answering (not failures).",
    )
    errors: dict[str, int] = Field(default_factory=dict)
    error_rate: float = 0.0


class Throughput(_Model):
    requests_per_s: float = 0.0
    output_tokens_per_s: float = 0.0
    input_tokens_per_s: float = 0.0
    goodput_requests_per_s: float | None = None
    #: requests_per_s's confidence interval (the count as Poisson; docs/metrics.md)
    requests_per_s_ci: list[float | None] | None = None
    window: Literal["steady", "whole"] = Field(
        "whole",
        description="What the rates are over: the step's steady window (requests that "
        "completed in it / its length) or its whole window (docs/metrics.md).",
    )


class TokenCounts(_Model):
    output_total: int = 0
    input_total: int = 0
    output_events_total: int = 0
    count_mismatches: int = 0
    server_counts: int = 0  # requests whose counts came from the server's usage block
    prompt_requested_total: int = Field(
        0, description="Sum of the requested (planned) prompt lengths of successful requests."
    )
    reasoning_total: int = Field(
        0,
        description="Reasoning tokens of successful requests: the server's "
        "completion_tokens_details.reasoning_tokens where sent, else reasoning events.",
    )
    short_outputs: int = Field(
        0, description="Successful requests whose output_tokens < max_tokens."
    )
    full_output_expected: bool = Field(
        False,
        description="The request body forced full outputs (ignore_eos, or min_tokens = "
        "max_tokens), so any short output is flagged in the step's warnings.",
    )


class PromptLengthCheck(_Model):
    """The server's prompt token count against the requested length, per request.

    Relative difference = (server - requested) / requested.
    """

    compared: int = Field(
        0, description="Successful requests with a server prompt count (usage.prompt_tokens)."
    )
    mean_rel_diff: float | None = Field(
        None, description="Mean relative difference over the compared requests."
    )
    worst_rel_diff: float | None = Field(
        None, description="The relative difference largest in absolute value, with its sign."
    )
    beyond_tolerance: int = Field(
        0, description="Compared requests whose |relative difference| exceeds tolerance."
    )
    tolerance: float = Field(0.02, description="Relative tolerance; 0 means any difference counts.")


class PrefixCacheStats(_Model):
    """The server's prefix-cache counters over the step (filled from server metrics)."""

    queries_tokens: float | None = Field(
        None, description="Prompt tokens looked up in the prefix cache during the step."
    )
    hits_tokens: float | None = Field(None, description="Of those, tokens found in the cache.")
    hit_rate: float | None = Field(None, description="hits_tokens / queries_tokens.")
    source: str = Field(description="Where the numbers came from (e.g. the metric names).")


class SlaCheck(_Model):
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


class SlaResult(_Model):
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


class ClientHealth(_Model):
    """Was loadgen itself the bottleneck? See docs/metrics.md."""

    cpu_util: float = 0.0  # loadgen process CPU seconds per wall second (1.0 = one core)
    loop_lag_p99_ms: float | None = None
    loop_lag_max_ms: float | None = None
    # open loop: how late the sender woke for a deadline (from when a slot freed, if it
    # was waiting for one past the deadline); the slot wait itself is queue_wait_ms
    send_lag_p99_ms: float | None = None
    read_lag_p99_ms: float | None = None  # h1: read time - kernel receive stamp, exact p99
    read_lag_max_ms: float | None = None
    saturated: bool = False
    warnings: list[str] = Field(default_factory=list)
    #: peak resident memory during the step, MiB (read every 100 ms; with workers the
    #: largest worker's); None where it cannot be read (not Linux)
    rss_peak_mib: float | None = None
    #: load.workers > 1: every loadgen process's CPU together (the parent's included)
    cpu_util_total: float | None = None
    #: load.workers > 1: every process's peak RSS added up (the parent's at the step's end)
    rss_peak_total_mib: float | None = None
    #: load.workers > 1: each worker's own figures; those above are the worst of them
    workers: list[ClientHealth] | None = None


class LittleCheck(_Model):
    """Little's law: mean in flight = throughput x mean latency."""

    mean_in_flight: float
    predicted: float
    ratio: float | None
    flagged: bool


class Cost(_Model):
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


class MeanMax(_Model):
    """Mean and max of a telemetry series over the step window."""

    mean: float = Field(description="Plain mean of the samples (a fixed grid: a time mean).")
    max: float = Field(description="Largest sample.")


class Mean(_Model):
    mean: float = Field(description="Sum of the per-GPU means (total power).")


class Peak(_Model):
    peak: float = Field(description="Largest sample (in a total: the sum of the peaks).")


class TelemetryWindow(_Model):
    start_ns: int = Field(description="Start of the window, loadgen's monotonic ns.")
    end_ns: int = Field(description="End of the window, loadgen's monotonic ns.")
    duration_s: float = Field(description="end_ns - start_ns, in seconds.")


class GpuStats(_Model):
    """One GPU over the step window (see docs/telemetry.md for the formulas)."""

    agent: str = Field(description="The agent's URL.")
    gpu: int = Field(description="The GPU's index on that agent.")
    name: str | None = Field(None, description="The GPU's name, from the agent's /health.")
    samples: int = Field(description="Samples in the window.")
    util_pct: MeanMax | None = Field(None, description="GPU utilisation, %.")
    mem_used_bytes: Peak | None = Field(None, description="Memory used, bytes.")
    power_w: MeanMax | None = Field(None, description="Power draw, W.")
    energy_j: float | None = Field(
        None, description="Joules over the window from the cumulative energy series."
    )
    energy_source: str | None = Field(None, description="Where energy_j came from.")
    energy_coverage: float = Field(description="Share of the window the energy samples span.")
    j_per_output_token: float | None = Field(
        None,
        description="This GPU's energy_j / the step's output tokens; null without "
        "tokens or with coverage < 0.9.",
    )
    output_tokens_per_j: float | None = Field(None, description="The inverse.")


class GpuTotal(_Model):
    """All GPUs together; util: mean of the means, max of the maxes."""

    gpus: int = Field(description="GPUs with samples in the window.")
    util_pct: MeanMax | None = Field(None, description="GPU utilisation, %.")
    mem_used_bytes: Peak | None = Field(None, description="Sum of the per-GPU peaks, bytes.")
    power_w: Mean | None = Field(None, description="Sum of the per-GPU mean power, W.")
    energy_j: float | None = Field(
        None, description="Sum of the GPUs' energy_j; null if any GPU has none."
    )
    energy_coverage: float = Field(description="The smallest per-GPU coverage.")
    j_per_output_token: float | None = Field(
        None, description="energy_j / output tokens; null without tokens or coverage < 0.9."
    )
    output_tokens_per_j: float | None = Field(None, description="The inverse.")


class HostStats(_Model):
    agent: str = Field(description="The agent's URL.")
    samples: int = Field(description="Host samples in the window.")
    cpu_util_pct: MeanMax | None = Field(None, description="Host CPU utilisation, %.")
    mem_used_bytes: Peak | None = Field(None, description="Host memory used, bytes.")


class ServerStats(_Model):
    """The server's metrics over the window: gauges as mean/max, counters as increments."""

    source: str = Field(description="The metrics URL scraped.")
    engine: str | None = Field(None, description="The engine the metric names point to.")
    scrapes: int = Field(description="Scrapes in the window.")
    running: MeanMax | None = Field(None, description="Requests running.")
    waiting: MeanMax | None = Field(None, description="Requests waiting.")
    kv_usage: MeanMax | None = Field(None, description="KV-cache usage, a fraction.")
    preemptions: float | None = Field(
        None, description="Counter increments over the window; null if it went backwards."
    )
    prompt_tokens: float | None = Field(None, description="Prompt tokens counted by the server.")
    generation_tokens: float | None = Field(
        None, description="Output tokens counted by the server."
    )


class TelemetryGap(_Model):
    """Failed polls of one source in the window, or an agent that sent no sample."""

    source: str = Field(description="The agent or metrics URL.")
    kind: str = Field(description='"agent" or "server_metrics".')
    failures: int = Field(description="Failed polls (0: the agent was silent).")
    first_ns: int | None = Field(None, description="First failure; null for a silent agent.")
    last_ns: int | None = Field(None, description="Last failure; null for a silent agent.")
    error: str = Field(description="The last failure's error.")

    @field_validator("source", "error")
    @classmethod
    def _no_userinfo(cls, text: str) -> str:
        return redact_text(text)


class StepTelemetry(_Model):
    """What the telemetry collector saw over one step (docs/telemetry.md)."""

    window: TelemetryWindow
    output_tokens: int = Field(description="The step's output tokens (per-token energy).")
    gpus: list[GpuStats] = Field(default_factory=list, description="GPUs with samples.")
    total: GpuTotal | None = Field(None, description="All GPUs together; null without any.")
    hosts: list[HostStats] = Field(default_factory=list)
    server: ServerStats | None = Field(None, description="Null when not scraped in the window.")
    gaps: list[TelemetryGap] = Field(default_factory=list)


class EndpointStats(_Model):
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


class StepSummary(_Model):
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


class ClockAnchor(_Model):
    """One (monotonic, wall-clock) pair read together at the start of the run.

    Every ``*_ns`` stamp in the summary and the records is on loadgen's monotonic
    clock; this pair turns one into a date: wall = wall_ns + (t - monotonic_ns).
    """

    monotonic_ns: int = Field(description="loadgen's monotonic clock at the anchor.")
    wall_ns: int = Field(description="The wall clock at the anchor, ns since the Unix epoch.")


class TargetCheck(_Model):
    """What the pre-flight check saw of the target before the first step."""

    healthy: bool = Field(description="GET /health answered 200.")
    models: list[str] | None = Field(
        None, description="The models GET /v1/models listed; null when it did not answer."
    )
    warnings: list[str] = Field(
        default_factory=list, description="What the check warned of (also printed on stderr)."
    )
    http_versions: list[str] | None = Field(
        None,
        description="target.http2: the HTTP versions the server answered in (after the "
        "first step that had a response); null otherwise.",
    )


class Verdict(_Model):
    """The sweep's answer: the highest load that met every SLA bound."""

    mode: str  # "concurrency" | "rate"
    sweep: str = "list"  # "list" | "auto" | "sla-search"
    max_passing: float | None = None  # the highest passing load (trace: smallest time scale)
    goodput_requests_per_s: float | None = None  # at max_passing
    output_tokens_per_s: float | None = None  # at max_passing
    bracket: list[float] | None = None  # sla-search: [passing, failing] around the answer
    tolerance: float | None = None  # sla-search: the bracket width aimed for
    saturation_rps: float | None = None  # auto: throughput found by the saturation probe
    stopped_early: str | None = None  # why the sweep stopped before its last step
    inconclusive_steps: list[int] = Field(
        default_factory=list,
        description="Indexes of steps in which loadgen itself was saturated: neither pass "
        "nor fail (`--strict` exits 1 when this is not empty).",
    )
    text: str = ""  # one sentence for people


class Summary(_Model):
    loadgen_version: str
    name: str
    run_id: str
    target_url: str
    api: str
    model: str
    clock_anchor: ClockAnchor = Field(
        description="One (monotonic, wall-clock) pair taken together at the start."
    )
    #: processes that sent the load (load.workers); 1: this process alone
    workers: int = 1
    #: --ray: the worst worker's clock-offset uncertainty against the parent (half the
    #: best round trip); step windows and the timeline are good to this, latencies exact
    workers_clock_uncertainty_ms: float | None = None
    metrics_profile: str = "loadgen"
    steps: list[StepSummary] = Field(default_factory=list)
    verdict: Verdict | None = None
    interrupted: bool = False
    sla: dict[str, Any] = Field(default_factory=dict)
    target_check: TargetCheck | None = Field(
        None, description="What the pre-flight check saw of the target."
    )
    prompt_length_source: str = Field(
        "approximate",
        description="Where the requested prompt lengths come from: tokenizer | server | "
        "approximate | token_ids | dataset.",
    )
    workload: dict[str, Any] | None = Field(
        None, description="A short description of the workload (filled by the runner)."
    )
    endpoints: list[str] | None = Field(
        None,
        description="The base URLs requests were spread over (target.urls, or the mock "
        "replicas' local URLs); null for one endpoint.",
    )
    routing: str | None = Field(
        None, description="How requests picked their endpoint (target.routing); null for one."
    )

    @field_validator("target_url")
    @classmethod
    def _no_userinfo(cls, url: str) -> str:
        """A password in the target URL never reaches summary.json or the reports."""
        return strip_userinfo(url)

    @field_validator("endpoints")
    @classmethod
    def _no_userinfo_in_any(cls, urls: list[str] | None) -> list[str] | None:
        return None if urls is None else [strip_userinfo(u) for u in urls]
