"""Loadgen's side of telemetry: GPU agents, dcgm-exporters, the server's /metrics and an
existing Prometheus, read during a run.

The runner starts one :class:`TelemetryCollector` per run, asks it for
``step_stats`` after each step and stops it at the end. An agent's clock offset
and samples are asked for by :mod:`.agent_source`; a dcgm-exporter's
figures become the same GPU rows as an agent's (:mod:`.dcgm`); the named
queries of a Prometheus are read over each step's window (:mod:`.promql`). It writes
``telemetry.jsonl`` (format in docs/telemetry.md). This package may import
loadgen's _version, clock, control (every poll and scrape, bounded), redact and
summary.
"""

from loadgen.telemetry.collector import FORMAT_VERSION, TelemetryCollector
from loadgen.telemetry.dcgm import DCGM_FIELDS, DcgmGpu, parse_dcgm
from loadgen.telemetry.histograms import HistSnapshot, hist_delta, hist_quantile, histograms_from
from loadgen.telemetry.offset import ClockProbe, OffsetEstimate, best_offset
from loadgen.telemetry.prom import PromSample, parse_prometheus_text
from loadgen.telemetry.promql import PromQueries, query_stats
from loadgen.telemetry.rows import GpuSample, HostSample, ServerScrape, parse_sample
from loadgen.telemetry.server_metrics import SERVER_METRICS, extract_server_metrics

__all__ = [
    "DCGM_FIELDS",
    "FORMAT_VERSION",
    "SERVER_METRICS",
    "ClockProbe",
    "DcgmGpu",
    "GpuSample",
    "HistSnapshot",
    "HostSample",
    "OffsetEstimate",
    "PromQueries",
    "PromSample",
    "ServerScrape",
    "TelemetryCollector",
    "best_offset",
    "extract_server_metrics",
    "hist_delta",
    "hist_quantile",
    "histograms_from",
    "parse_dcgm",
    "parse_prometheus_text",
    "parse_sample",
    "query_stats",
]
