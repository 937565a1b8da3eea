"""The words every output uses: metric names, their labels, statistics, units, profiles.

One place for the lists that were written out by hand in the metrics, the
summary and every report: which statistics a latency distribution has and in
what order, how a summary field is named for people, which metric profiles
exist. A leaf: it imports nothing of loadgen, so every layer may import it.
"""

from __future__ import annotations

__all__ = [
    "API_NAMES",
    "CHAT_APIS",
    "CONSOLE_STATS",
    "CURVE_STATS",
    "DISTRIBUTION_STATS",
    "LATENCY_METRICS",
    "METRIC_LABELS",
    "PERCENTILES",
    "PERCENTILE_OF",
    "POOLING_APIS",
    "PROFILE_NAMES",
    "TABLE_STATS",
    "UNITS",
    "confidence_text",
    "metric_label",
    "metric_name",
    "pace",
    "stat_key",
    "stat_label",
]

#: Percentiles reported for every latency metric.
PERCENTILES = (50.0, 90.0, 95.0, 99.0, 99.9)


def stat_key(percentile: float) -> str:
    """The field name of a percentile: ``99.9`` -> ``"p99_9"``, ``50`` -> ``"p50"``."""
    return "p" + f"{percentile:g}".replace(".", "_")


#: Percentile field -> its percentile: ``{"p50": 50.0, ..., "p99_9": 99.9}``.
PERCENTILE_OF: dict[str, float] = {stat_key(p): p for p in PERCENTILES}
#: Every field of a latency distribution (summary ``Distribution``), in report order.
DISTRIBUTION_STATS = ("count", "mean", "std", "min", *PERCENTILE_OF, "max")
#: The columns of a latency table in report.md / report.html.
TABLE_STATS = ("count", "mean", *PERCENTILE_OF, "max")
#: The columns of the console's latency table.
CONSOLE_STATS = ("mean", "p50", "p90", "p95", "p99", "max")
#: The statistics drawn on curves: the median (dashed) and the tail (solid).
CURVE_STATS = ("p50", "p99")

#: The latency metrics with per-request samples, as summary field names.
LATENCY_METRICS = ("ttft_ms", "itl_ms", "tpot_ms", "e2e_ms")
#: Summary latency field -> the name people read.
METRIC_LABELS: dict[str, str] = {
    "ttft_ms": "TTFT",
    "ttft_from_scheduled_ms": "TTFT from schedule",
    "ttft_reasoning_ms": "TTFT reasoning",
    "ttft_answer_ms": "TTFT answer",
    "itl_ms": "ITL",
    "icl_ms": "ICL",
    "tpot_ms": "TPOT",
    "e2e_ms": "E2E",
}

#: Units as written in table headers and axis labels.
UNITS = {"latency": "ms", "requests": "req/s", "tokens": "tok/s", "fraction": "%"}

#: The APIs loadgen speaks (``target.api``; one adapter each in ``loadgen.client.adapters``).
API_NAMES = (
    "openai-completions",
    "openai-chat",
    "tgi",
    "openai-responses",
    "anthropic-messages",
    "openai-embeddings",
    "rerank",
    "openai-transcriptions",
)
#: The APIs whose prompts are chat messages (multi-turn sessions speak one of these).
CHAT_APIS = ("openai-chat", "openai-responses", "anthropic-messages")
#: Of API_NAMES, the pooling APIs: one JSON answer a request, no tokens generated
#: (metrics: E2E, requests/s, inputs/s, input tokens/s; docs/metrics.md "Pooling APIs").
POOLING_APIS = ("openai-embeddings", "rerank")

#: The metric-definition profiles (formulas in ``loadgen.metrics.profiles``).
PROFILE_NAMES = ("loadgen", "vllm", "aiperf", "guidellm")


def metric_name(metric: str) -> str:
    """``"ttft_ms"`` -> ``"TTFT"``; an unknown field is returned as is."""
    return METRIC_LABELS.get(metric, metric)


def stat_label(stat: str) -> str:
    """``"p99_9"`` -> ``"p99.9"``."""
    return stat.replace("_", ".")


def metric_label(metric: str, stat: str) -> str:
    """``("ttft_ms", "p99_9")`` -> ``"TTFT p99.9"``; no stat -> the metric's name alone."""
    name = metric_name(metric)
    return f"{name} {stat_label(stat)}" if stat else name


def confidence_text(confidence: float) -> str:
    """``0.95`` -> ``"95%"``, ``0.999`` -> ``"99.9%"`` (``:.0%`` would say 100%)."""
    return f"{100 * confidence:.4g}%"


def pace(time_scale: float) -> str:
    """What a trace's time scale does to its rate: ``2x slower``, ``2x faster``, ``as recorded``."""
    if time_scale == 1:
        return "as recorded"
    return f"{time_scale:g}x slower" if time_scale > 1 else f"{1 / time_scale:.3g}x faster"
