"""Prometheus text exposition (format 0.0.4) of the newest sample of each source.

Owns the metric names the agent publishes on ``GET /metrics``, so a standard
Prometheus or Grafana can scrape the agent as well as loadgen. Units follow
Prometheus conventions (bytes, watts, joules, hertz, celsius, percent as 0-100
as NVML reports it). Fields a GPU does not support are simply not emitted.
"""

from __future__ import annotations

from collections.abc import Mapping

from loadgen.gpu_agent.host import HostSample
from loadgen.gpu_agent.sampler import GpuInfo, GpuSample

__all__ = ["render"]

#: (metric name, type, help, GpuSample attribute, scale)
GPU_METRICS: tuple[tuple[str, str, str, str, float], ...] = (
    ("gpu_utilization_percent", "gauge", "GPU busy time share (NVML)", "util_gpu_pct", 1),
    ("gpu_memory_utilization_percent", "gauge", "Memory bus busy share", "util_mem_pct", 1),
    ("gpu_memory_used_bytes", "gauge", "Device memory used", "mem_used_bytes", 1),
    ("gpu_memory_total_bytes", "gauge", "Device memory total", "mem_total_bytes", 1),
    ("gpu_power_watts", "gauge", "Power draw", "power_w", 1),
    ("gpu_energy_joules_total", "counter", "Energy (counter or integrated)", "energy_j", 1),
    ("gpu_sm_clock_hertz", "gauge", "SM clock", "sm_clock_mhz", 1e6),
    ("gpu_memory_clock_hertz", "gauge", "Memory clock", "mem_clock_mhz", 1e6),
    ("gpu_temperature_celsius", "gauge", "GPU temperature", "temp_c", 1),
    ("gpu_pcie_tx_bytes_total", "counter", "PCIe bytes sent", "pcie_tx_bytes", 1),
    ("gpu_pcie_rx_bytes_total", "counter", "PCIe bytes received", "pcie_rx_bytes", 1),
    ("gpu_nvlink_tx_bytes_total", "counter", "NVLink data bytes sent", "nvlink_tx_bytes", 1),
    ("gpu_nvlink_rx_bytes_total", "counter", "NVLink data bytes received", "nvlink_rx_bytes", 1),
)
HOST_METRICS: tuple[tuple[str, str, str, str, float], ...] = (
    ("host_cpu_utilization_percent", "gauge", "Host CPU busy share", "cpu_util_pct", 1),
    ("host_memory_used_bytes", "gauge", "MemTotal - MemAvailable", "mem_used_bytes", 1),
    ("host_memory_total_bytes", "gauge", "MemTotal", "mem_total_bytes", 1),
)
PREFIX = "loadgen_agent_"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    return repr(float(value)) if isinstance(value, float) else str(value)


def render(
    latest: Mapping[str, GpuSample | HostSample],
    gpus: list[GpuInfo],
    stats: Mapping[str, int],
) -> str:
    """The exposition text; ``stats`` become ``loadgen_agent_<name>_total`` counters."""
    lines: list[str] = []
    samples = [(info, latest.get(f"gpu{info.index}")) for info in gpus]
    for name, kind, help_text, attr, scale in GPU_METRICS:
        body = []
        for info, s in samples:
            value = getattr(s, attr, None) if isinstance(s, GpuSample) else None
            if value is None:
                continue
            labels = f'gpu="{info.index}",uuid="{_escape(info.uuid)}",name="{_escape(info.name)}"'
            if attr == "energy_j":
                labels += f',source="{info.energy_source}"'
            body.append(f"{PREFIX}{name}{{{labels}}} {_number(value * scale)}")
        _block(lines, name, kind, help_text, body)
    host = latest.get("host")
    for name, kind, help_text, attr, scale in HOST_METRICS:
        value = getattr(host, attr, None) if isinstance(host, HostSample) else None
        body = [] if value is None else [f"{PREFIX}{name} {_number(value * scale)}"]
        _block(lines, name, kind, help_text, body)
    for stat, count in stats.items():
        _block(
            lines,
            f"{stat}_total",
            "counter",
            stat.replace("_", " "),
            [f"{PREFIX}{stat}_total {count}"],
        )
    return "\n".join(lines) + "\n"


def _block(lines: list[str], name: str, kind: str, help_text: str, body: list[str]) -> None:
    if body:
        lines.append(f"# HELP {PREFIX}{name} {help_text}")
        lines.append(f"# TYPE {PREFIX}{name} {kind}")
        lines.extend(body)
