"""Loadgen's side of telemetry: poll GPU agents and the server's /metrics during a run.

The runner starts one :class:`TelemetryCollector` per run, asks it for
``step_stats`` after each step and stops it at the end. It writes
``telemetry.jsonl`` (format in docs/telemetry.md). This package may import
loadgen's _version, clock, control (every poll and scrape, bounded), redact and
summary.
"""

from loadgen.telemetry.collector import FORMAT_VERSION, TelemetryCollector
from loadgen.telemetry.offset import ClockProbe, OffsetEstimate, best_offset
from loadgen.telemetry.prom import PromSample, parse_prometheus_text
from loadgen.telemetry.rows import GpuSample, HostSample, ServerScrape, parse_sample
from loadgen.telemetry.server_metrics import SERVER_METRICS, extract_server_metrics

__all__ = [
    "FORMAT_VERSION",
    "SERVER_METRICS",
    "ClockProbe",
    "GpuSample",
    "HostSample",
    "OffsetEstimate",
    "PromSample",
    "ServerScrape",
    "TelemetryCollector",
    "best_offset",
    "extract_server_metrics",
    "parse_prometheus_text",
    "parse_sample",
]
