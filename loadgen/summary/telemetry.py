"""GPU, host and server telemetry over one step (docs/telemetry.md has the formulas).

Owns :class:`StepTelemetry` and its parts: per GPU (:class:`GpuStats`), all
GPUs (:class:`GpuTotal`), per host, the server's metrics, the gaps, and the
small :class:`MeanMax`, :class:`Mean` and :class:`Peak` series summaries.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from loadgen.redact import redact_text
from loadgen.strict import Strict
from loadgen.summary.prometheus import PrometheusStats

__all__ = [
    "GpuStats",
    "GpuTotal",
    "HostStats",
    "Mean",
    "MeanMax",
    "Peak",
    "ServerStats",
    "StepTelemetry",
    "TelemetryGap",
    "TelemetryWindow",
]


class MeanMax(Strict):
    """Mean and max of a telemetry series over the step window."""

    mean: float = Field(description="Plain mean of the samples (a fixed grid: a time mean).")
    max: float = Field(description="Largest sample.")


class Mean(Strict):
    mean: float = Field(description="Sum of the per-GPU means (total power).")


class Peak(Strict):
    peak: float = Field(description="Largest sample (in a total: the sum of the peaks).")


class TelemetryWindow(Strict):
    start_ns: int = Field(description="Start of the window, loadgen's monotonic ns.")
    end_ns: int = Field(description="End of the window, loadgen's monotonic ns.")
    duration_s: float = Field(description="end_ns - start_ns, in seconds.")


class GpuStats(Strict):
    """One GPU over the step window (see docs/telemetry.md for the formulas)."""

    agent: str = Field(description="The agent's URL, or the dcgm-exporter's (see source).")
    gpu: int = Field(description="The GPU's index on that agent (dcgm: the `gpu` label).")
    name: str | None = Field(
        None, description="The GPU's name, from the agent's /health (dcgm: `modelName`)."
    )
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
    # -- sources a cluster already has (issue 23)
    source: Literal["agent", "dcgm"] = Field(
        "agent", description="Where the figures came from: a loadgen agent or a dcgm-exporter."
    )
    uuid: str | None = Field(None, description="The GPU's UUID (dcgm: the `UUID` label).")
    hostname: str | None = Field(None, description="The node (dcgm: the `Hostname` label).")
    # -- the server's own footprint (issue 24)
    processes_mem_bytes: Peak | None = Field(
        None,
        description="Memory held by the GPU's compute processes (NVML's running-process "
        "list, summed), bytes; null where the agent could not read it.",
    )


class GpuTotal(Strict):
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
    # -- sources a cluster already has (issue 23)
    sources: list[Literal["agent", "dcgm"]] = Field(
        default_factory=list, description="Where the GPUs' figures came from, each once."
    )


class HostStats(Strict):
    agent: str = Field(description="The agent's URL.")
    samples: int = Field(description="Host samples in the window.")
    cpu_util_pct: MeanMax | None = Field(None, description="Host CPU utilisation, %.")
    mem_used_bytes: Peak | None = Field(None, description="Host memory used, bytes.")


class ServerStats(Strict):
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


class TelemetryGap(Strict):
    """Failed polls of one source in the window, or an agent that sent no sample."""

    source: str = Field(description="The agent, metrics, dcgm-exporter or Prometheus URL.")
    kind: str = Field(description='"agent", "server_metrics", "dcgm" or "prometheus".')
    failures: int = Field(description="Failed polls (0: the agent was silent).")
    first_ns: int | None = Field(None, description="First failure; null for a silent agent.")
    last_ns: int | None = Field(None, description="Last failure; null for a silent agent.")
    error: str = Field(description="The last failure's error.")

    @field_validator("source", "error")
    @classmethod
    def _no_userinfo(cls, text: str) -> str:
        return redact_text(text)


class StepTelemetry(Strict):
    """What the telemetry collector saw over one step (docs/telemetry.md)."""

    window: TelemetryWindow
    output_tokens: int = Field(description="The step's output tokens (per-token energy).")
    gpus: list[GpuStats] = Field(default_factory=list, description="GPUs with samples.")
    total: GpuTotal | None = Field(None, description="All GPUs together; null without any.")
    hosts: list[HostStats] = Field(default_factory=list)
    server: ServerStats | None = Field(None, description="Null when not scraped in the window.")
    gaps: list[TelemetryGap] = Field(default_factory=list)
    # -- sources a cluster already has (issue 23)
    prometheus: PrometheusStats | None = Field(
        None, description="The named queries of telemetry.prometheus over the window."
    )
