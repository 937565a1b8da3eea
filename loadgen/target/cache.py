"""The server's prefix-cache counters, read before and after each step.

A step's hit rate is the difference of the server's cumulative counters over
the step: hits / queries, both in prompt tokens. Names, by engine: vLLM V1
``vllm:prefix_cache_queries_total`` and ``vllm:prefix_cache_hits_total``;
older vLLM ``vllm:gpu_prefix_cache_queries_total`` / ``..._hits_total``. An
engine that only publishes a hit-rate gauge (SGLang ``sglang:cache_hit_rate``)
gives that gauge's value at the step's end. TGI publishes none. The parsers
read the step boundary's one answer of each endpoint's ``/metrics``
(:mod:`~loadgen.target.scrape`); several endpoints' counters are summed
(:func:`prefix_cache_all`).
"""

from __future__ import annotations

from collections.abc import Sequence

from loadgen.summary import PrefixCacheStats
from loadgen.telemetry import parse_prometheus_text

__all__ = ["CACHE_COUNTERS", "prefix_cache_all", "prefix_cache_counters", "prefix_cache_delta"]

#: (queries, hits) counter names, in order of preference.
CACHE_COUNTERS = (
    ("vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total"),
    ("vllm:gpu_prefix_cache_queries_total", "vllm:gpu_prefix_cache_hits_total"),
)
HIT_RATE_GAUGES = ("sglang:cache_hit_rate",)


def prefix_cache_counters(text: str) -> dict[str, float] | None:
    """``{"queries", "hits", "source"}`` or ``{"hit_rate", ...}`` from ``/metrics`` text;
    None if it has none."""
    sums: dict[str, float] = {}
    samples, _bad = parse_prometheus_text(text)
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


def prefix_cache_all(texts: Sequence[str | None]) -> dict[str, float] | None:
    """Every endpoint's counters (:func:`prefix_cache_counters`), summed (a hit-rate gauge
    is averaged); None unless every endpoint has the same kind, since a partial sum would
    be a wrong rate. A None text (no answer) has none."""
    scrapes = [prefix_cache_counters(t) if t is not None else None for t in texts]
    if len(scrapes) == 1:
        return scrapes[0]
    present = [s for s in scrapes if s is not None]
    if len(present) < len(scrapes) or len({s["source"] for s in present}) != 1:
        return None
    if "hit_rate" in present[0]:
        rate = sum(s["hit_rate"] for s in present) / len(present)
        return {"hit_rate": rate, "source": present[0]["source"]}
    return {
        "queries": sum(s["queries"] for s in present),
        "hits": sum(s["hits"] for s in present),
        "source": present[0]["source"],
    }


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
