"""Every metric loadgen's exporter serves: name, type, labels, meaning, buckets.

The one list: the collector renders from it, docs/prometheus.md documents it,
and the dashboard test checks each Grafana query against it. Latencies are in
seconds (Prometheus's base unit); buckets are spaced for LLM serving: TTFT and
E2E from 10 ms to minutes, ITL and TPOT from 1 ms to seconds, queue wait and
send lag from 0.1 ms.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "E2E_BUCKETS",
    "ITL_BUCKETS",
    "METRICS",
    "PREFIX",
    "TTFT_BUCKETS",
    "WAIT_BUCKETS",
    "MetricDef",
    "exposed_names",
]

PREFIX = "loadgen_"

#: time to first token, seconds
TTFT_BUCKETS = (
    *(0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75),
    *(1.0, 1.5, 2.0, 3.0, 5.0, 7.5, 10.0, 15.0, 20.0, 30.0, 60.0),
)
#: inter-token latency and time per output token, seconds
ITL_BUCKETS = (
    *(0.001, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04),
    *(0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0, 2.5),
)
#: end-to-end latency, seconds (long answers take minutes)
E2E_BUCKETS = (
    *(0.05, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 7.5, 10.0),
    *(15.0, 20.0, 30.0, 45.0, 60.0, 90.0, 120.0, 180.0, 300.0, 600.0),
)
#: queue wait and send lag (open loop), seconds
WAIT_BUCKETS = (
    *(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05),
    *(0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0),
)


@dataclass(frozen=True, slots=True)
class MetricDef:
    """One metric: its Prometheus type, label names, meaning, and buckets for a histogram."""

    kind: str  # counter | gauge | histogram
    labels: tuple[str, ...]
    help: str
    buckets: tuple[float, ...] = ()


_REQUEST_LABELS = ("step", "phase", "status", "error_kind")

#: exposed name (a counter's with its ``_total``) -> definition
METRICS: dict[str, MetricDef] = {
    f"{PREFIX}requests_total": MetricDef(
        "counter",
        _REQUEST_LABELS,
        "Finished requests (one per records.jsonl row): phase measured|warmup|ramp, "
        "status ok|error|cancelled, error_kind as in the record ('' when ok).",
    ),
    f"{PREFIX}ttft_seconds": MetricDef(
        "histogram",
        ("step",),
        "Time to first token (first token event - send), measured successful requests.",
        TTFT_BUCKETS,
    ),
    f"{PREFIX}itl_seconds": MetricDef(
        "histogram",
        ("step",),
        "Inter-token latency: every gap between consecutive token events of a measured "
        "successful request.",
        ITL_BUCKETS,
    ),
    f"{PREFIX}tpot_seconds": MetricDef(
        "histogram",
        ("step",),
        "Time per output token ((last - first token) / (output tokens - 1)), one per "
        "measured successful request with two tokens or more.",
        ITL_BUCKETS,
    ),
    f"{PREFIX}e2e_seconds": MetricDef(
        "histogram",
        ("step",),
        "End-to-end latency (end - send), measured successful requests.",
        E2E_BUCKETS,
    ),
    f"{PREFIX}queue_wait_seconds": MetricDef(
        "histogram",
        ("step",),
        "Open loop: start - scheduled send time (a free slot under max_concurrency, plus "
        "sender lag), measured successful requests.",
        WAIT_BUCKETS,
    ),
    f"{PREFIX}send_lag_seconds": MetricDef(
        "histogram",
        ("step",),
        "Open loop: how late the sender woke for each send deadline (every process).",
        WAIT_BUCKETS,
    ),
    f"{PREFIX}input_tokens_total": MetricDef(
        "counter",
        ("step",),
        "Prompt tokens of every finished request (the server's usage count, else the "
        "requested length).",
    ),
    f"{PREFIX}output_tokens_total": MetricDef(
        "counter",
        ("step",),
        "Output tokens of every finished request (the server's usage count, else token "
        "events); failed requests count what they streamed.",
    ),
    f"{PREFIX}in_flight_requests": MetricDef(
        "gauge", (), "Requests sent and not yet finished, over every loadgen process."
    ),
    f"{PREFIX}step": MetricDef("gauge", (), "Index of the step running (-1 before the first)."),
    f"{PREFIX}load_point": MetricDef(
        "gauge",
        ("mode",),
        "The running step's load: concurrency (streams), rate (requests/s), or the "
        "mode's value; one series, labelled with the mode.",
    ),
    f"{PREFIX}steps_planned": MetricDef(
        "gauge", (), "Steps in the sweep, when it knows (a list); absent for auto/sla-search."
    ),
    f"{PREFIX}run_finished": MetricDef(
        "gauge", (), "1 once the last step has ended (every record is counted), else 0."
    ),
    f"{PREFIX}run_info": MetricDef(
        "gauge", ("run_id", "scenario", "model"), "Always 1; the run's identity as labels."
    ),
}


def exposed_names() -> set[str]:
    """Every sample name a scrape can hold (a histogram's _bucket, _sum and _count)."""
    out: set[str] = set()
    for name, m in METRICS.items():
        if m.kind == "histogram":
            out |= {f"{name}_bucket", f"{name}_sum", f"{name}_count"}
        else:
            out.add(name)
    return out
