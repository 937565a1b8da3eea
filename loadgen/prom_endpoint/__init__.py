"""Loadgen's own client metrics for Prometheus, served while a run lasts.

Owns what ``--serve-metrics [HOST:]PORT`` (``telemetry.serve_metrics``)
exposes: every metric's name, type, labels and buckets
(:mod:`~loadgen.prom_endpoint.names`, documented in docs/prometheus.md), the counts
taken from each finished record at the parent process, with ``--workers`` too
(:mod:`~loadgen.prom_endpoint.state`), and the HTTP side in its own thread with the
agent's bearer-token rule (:mod:`~loadgen.prom_endpoint.server`). The run starts
one :class:`Exporter`, hands it every record and each step's load point, and
closes it after the last step.

May import: prometheus_client, numpy, loadgen's bearer, clock, errors and
records leaves, and loadgen.metrics.latency (the per-request formulas).
Imported by the run stage only.
"""

from loadgen.prom_endpoint.exporter import Exporter
from loadgen.prom_endpoint.names import METRICS, PREFIX, MetricDef, exposed_names
from loadgen.prom_endpoint.state import ClientMetrics, Live, LiveSource

__all__ = [
    "METRICS",
    "PREFIX",
    "ClientMetrics",
    "Exporter",
    "Live",
    "LiveSource",
    "MetricDef",
    "exposed_names",
]
