"""The server's prefix-cache counters, read before and after each step.

A step's hit rate is the difference of the server's cumulative counters over
the step: hits / queries, both in prompt tokens. Names, by engine: vLLM V1
``vllm:prefix_cache_queries_total`` and ``vllm:prefix_cache_hits_total``;
older vLLM ``vllm:gpu_prefix_cache_queries_total`` / ``..._hits_total``. An
engine that only publishes a hit-rate gauge (SGLang ``sglang:cache_hit_rate``)
gives that gauge's value at the step's end. TGI publishes none. The scrape is
bounded in size and time (:data:`loadgen.control.METRICS`); one cut off at
its bound is a warning naming the URL and the bound, and the step has no rate.

Imports: loadgen.client.transport (TLS), loadgen.control, loadgen.redact,
loadgen.summary, loadgen.telemetry.prom.
"""

from __future__ import annotations

from loadgen.client.transport import TlsOptions
from loadgen.control import METRICS, ControlError, fetch
from loadgen.redact import warn
from loadgen.summary import PrefixCacheStats
from loadgen.telemetry.prom import parse_prometheus_text

__all__ = ["CACHE_COUNTERS", "prefix_cache_delta", "scrape_prefix_cache"]

#: (queries, hits) counter names, in order of preference.
CACHE_COUNTERS = (
    ("vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total"),
    ("vllm:gpu_prefix_cache_queries_total", "vllm:gpu_prefix_cache_hits_total"),
)
HIT_RATE_GAUGES = ("sglang:cache_hit_rate",)


def scrape_prefix_cache(
    url: str, headers: dict[str, str], tls: TlsOptions
) -> dict[str, float] | None:
    """``{"queries", "hits", "source"}`` or ``{"hit_rate", ...}`` now; None if none served."""
    try:
        where = url.rstrip("/") + "/metrics"
        reply = fetch("GET", where, METRICS, headers=headers, verify=tls.context())
    except ControlError as exc:
        if exc.limit_hit:  # a server without /metrics says nothing; one cut off is told
            warn(f"warning: {exc}; the step's prefix-cache hit rate is left out")
        return None
    if reply.status != 200:
        return None
    sums: dict[str, float] = {}
    samples, _bad = parse_prometheus_text(reply.text)
    for sample in samples:
        if sample.value == sample.value:  # not NaN
            sums[sample.name] = sums.get(sample.name, 0.0) + sample.value
    for i, (queries, hits) in enumerate(CACHE_COUNTERS):
        if queries in sums and hits in sums:
            return {"queries": sums[queries], "hits": sums[hits], "source": float(i)}
    for gauge in HIT_RATE_GAUGES:
        if gauge in sums:
            return {"hit_rate": sums[gauge], "source": float(len(CACHE_COUNTERS))}
    return None


def prefix_cache_delta(
    before: dict[str, float] | None, after: dict[str, float] | None
) -> PrefixCacheStats | None:
    """The step's hit rate from two scrapes (a counter reset gives None)."""
    if after is None:
        return None
    source = int(after["source"])
    if "hit_rate" in after:
        return PrefixCacheStats(hit_rate=after["hit_rate"], source=HIT_RATE_GAUGES[0])
    name = CACHE_COUNTERS[source][1]
    if before is None or int(before["source"]) != source:
        return None
    queries = after["queries"] - before["queries"]
    hits = after["hits"] - before["hits"]
    if queries < 0 or hits < 0:
        return None
    return PrefixCacheStats(
        queries_tokens=queries,
        hits_tokens=hits,
        hit_rate=hits / queries if queries > 0 else None,
        source=name,
    )
