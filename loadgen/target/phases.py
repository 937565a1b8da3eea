"""Where the time went: the server's request-phase histograms, read before and after a step.

The server's histograms are cumulative; a step's share is the difference of two
scrapes (:func:`loadgen.telemetry.histograms.hist_delta`). Names, by engine:

======  =====================================  ======================================
part    vLLM                                   SGLang / TGI
======  =====================================  ======================================
queue   ``vllm:request_queue_time_seconds``    ``sglang:queue_time_seconds`` /
                                               ``tgi_request_queue_duration``
prefill ``vllm:request_prefill_time_seconds``  (none)
decode  ``vllm:request_decode_time_seconds``   (none)
e2e     ``vllm:e2e_request_latency_seconds``   ``sglang:e2e_request_latency_seconds`` /
                                               ``tgi_request_duration``
ttft    ``vllm:time_to_first_token_seconds``   ``sglang:time_to_first_token_seconds``
======  =====================================  ======================================

Several endpoints' histograms are summed bucket by bucket (the same layout, else
that part is left out). The server's frontend time is the server's E2E mean less
queue + prefill + decode, where the server exports all four (vLLM). The parsers
read the step boundary's one answer of each endpoint's ``/metrics``
(:mod:`~loadgen.target.scrape`); a scrape that failed gives no split for the step,
never an error: the figures are the server's, beside the client's own.
"""

from __future__ import annotations

from collections.abc import Sequence

from loadgen.summary import PhaseTime, TimeSplit
from loadgen.telemetry import (
    HistSnapshot,
    hist_delta,
    hist_quantile,
    histograms_from,
    parse_prometheus_text,
)

__all__ = [
    "PHASE_METRICS",
    "Scrape",
    "phase_histograms",
    "phases_all",
    "sum_scrapes",
    "time_split",
]

#: engine -> part -> histogram family name
PHASE_METRICS: dict[str, dict[str, str]] = {
    "vllm": {
        "queue": "vllm:request_queue_time_seconds",
        "prefill": "vllm:request_prefill_time_seconds",
        "decode": "vllm:request_decode_time_seconds",
        "server_e2e": "vllm:e2e_request_latency_seconds",
        "server_ttft": "vllm:time_to_first_token_seconds",
    },
    "sglang": {
        "queue": "sglang:queue_time_seconds",
        "server_e2e": "sglang:e2e_request_latency_seconds",
        "server_ttft": "sglang:time_to_first_token_seconds",
    },
    "tgi": {"queue": "tgi_request_queue_duration", "server_e2e": "tgi_request_duration"},
}
_ALL = {name for parts in PHASE_METRICS.values() for name in parts.values()}
#: the engine's own parts, which with the frontend's time add up to the server's E2E
_ENGINE_PARTS = ("queue", "prefill", "decode")

#: one scrape: family name -> snapshot
Scrape = dict[str, HistSnapshot]


def phase_histograms(text: str) -> Scrape | None:
    """The phase histograms in ``/metrics`` text; None when it has none."""
    samples, _bad = parse_prometheus_text(text)
    found = histograms_from(samples, _ALL)
    return found or None


def sum_scrapes(scrapes: list[Scrape | None]) -> Scrape | None:
    """Several endpoints' scrapes as one: each family summed where every endpoint has it
    with the same buckets; None when an endpoint served none."""
    if not scrapes or any(s is None for s in scrapes):
        return None
    present = [s for s in scrapes if s is not None]
    out: Scrape = {}
    for name in set.intersection(*(set(s) for s in present)):
        snaps = [s[name] for s in present]
        bounds = [b for b, _ in snaps[0].buckets]
        if any([b for b, _ in h.buckets] != bounds for h in snaps):
            continue
        buckets = tuple((b, sum(h.buckets[i][1] for h in snaps)) for i, b in enumerate(bounds))
        out[name] = HistSnapshot(buckets, sum(h.total for h in snaps), sum(h.count for h in snaps))
    return out or None


def phases_all(texts: Sequence[str | None]) -> Scrape | None:
    """Every endpoint's histograms (:func:`phase_histograms`), summed (:func:`sum_scrapes`);
    a None text (no answer) has none."""
    return sum_scrapes([phase_histograms(t) if t is not None else None for t in texts])


def _phase(delta: HistSnapshot, metric: str) -> PhaseTime:
    def ms(value: float | None) -> float | None:
        return None if value is None else value * 1000.0

    return PhaseTime(
        count=delta.count,
        mean_ms=ms(delta.mean),
        p50_ms_approx=ms(hist_quantile(delta, 0.50)),
        p90_ms_approx=ms(hist_quantile(delta, 0.90)),
        p99_ms_approx=ms(hist_quantile(delta, 0.99)),
        metric=metric,
    )


def _frontend(found: dict[str, PhaseTime]) -> float | None:
    """Server E2E mean - (queue + prefill + decode means): the server's time outside its
    engine's phases; None unless all four moved (vLLM observes the four together, for each
    finished request, so they are means over the same requests)."""
    means = [found[k].mean_ms if k in found else None for k in (*_ENGINE_PARTS, "server_e2e")]
    if any(m is None for m in means):
        return None
    *engine, e2e = [m for m in means if m is not None]
    return e2e - sum(engine)


def time_split(
    before: Scrape | None, after: Scrape | None, client_e2e_mean_ms: float | None
) -> TimeSplit | None:
    """The step's split from the scrapes around it; None when the server exports none of
    the histograms, or none moved (no request of the step finished on it)."""
    if before is None or after is None:
        return None
    for engine, parts in PHASE_METRICS.items():
        found: dict[str, PhaseTime] = {}
        for part, metric in parts.items():
            if metric not in after:
                continue
            delta = hist_delta(before.get(metric), after[metric])
            if delta is not None and delta.count > 0:
                found[part] = _phase(delta, metric)
        if not found:
            continue
        split = TimeSplit(engine=engine, frontend_ms=_frontend(found), **found)
        return split.seen_by_client(client_e2e_mean_ms)
    return None
