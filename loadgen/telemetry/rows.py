"""Typed telemetry rows: one agent sample, one server scrape, as the store keeps them.

An agent sends its samples as JSON objects (``kind`` gpu or host, format in
docs/telemetry.md); :func:`parse_sample` reads one into a :class:`GpuSample` or
a :class:`HostSample`, stamped in loadgen's monotonic ns. A scrape of the
server's /metrics becomes one :class:`ServerScrape` (the canonical keys of
:data:`~loadgen.telemetry.server_metrics.SERVER_METRICS`). telemetry.jsonl
keeps the agent's objects as sent; :meth:`ServerScrape.as_dict` gives a
scrape's line fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

__all__ = ["GpuSample", "HostSample", "ServerScrape", "parse_sample"]


@dataclass(frozen=True, slots=True)
class GpuSample:
    """One GPU at one instant; a value the agent did not send is None."""

    t_ns: int
    gpu: int
    util_pct: float | None = None
    mem_used_bytes: float | None = None
    power_w: float | None = None
    energy_j: float | None = None
    energy_source: str | None = None
    # -- memory held by the GPU's compute processes (the agent's processes_mem_bytes)
    processes_mem_bytes: float | None = None


@dataclass(frozen=True, slots=True)
class HostSample:
    """The agent's host at one instant."""

    t_ns: int
    cpu_util_pct: float | None = None
    mem_used_bytes: float | None = None


@dataclass(frozen=True, slots=True)
class ServerScrape:
    """The canonical values of one scrape; a metric the server does not expose is None."""

    running: float | None = None
    waiting: float | None = None
    kv_usage: float | None = None
    preemptions_total: float | None = None
    prompt_tokens_total: float | None = None
    generation_tokens_total: float | None = None
    #: the engine the metric names point to (vllm, tgi, sglang)
    engine: str | None = None

    def as_dict(self) -> dict[str, float | str]:
        """The values present, in field order (the fields of a telemetry.jsonl server line)."""
        found = ((f.name, getattr(self, f.name)) for f in fields(self))
        return {k: v for k, v in found if v is not None}


def parse_sample(row: Mapping[str, object], t_ns: int) -> GpuSample | HostSample | None:
    """An agent's sample object (``kind`` defaults to gpu); None for a GPU row without an
    integer ``gpu``."""
    if row.get("kind") == "host":
        return HostSample(t_ns, _num(row.get("cpu_util_pct")), _num(row.get("mem_used_bytes")))
    gpu = row.get("gpu")
    if not isinstance(gpu, int):
        return None
    source = row.get("energy_source")
    return GpuSample(
        t_ns,
        gpu,
        _num(row.get("util_gpu_pct")),
        _num(row.get("mem_used_bytes")),
        _num(row.get("power_w")),
        _num(row.get("energy_j")),
        source if isinstance(source, str) else None,
        _num(row.get("processes_mem_bytes")),
    )


def _num(value: object) -> float | None:
    """A JSON number as is (ints stay ints), anything else as ``None``."""
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None
