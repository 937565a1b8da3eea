"""Prometheus ``/metrics`` with vLLM's names, labels and meanings.

Owns the counters and histograms the server updates as requests progress and
the text exposition format (0.0.4) they are rendered in, among them vLLM's
per-request phase histograms (queue, prefill, decode) from the engine's own
times. Gauges (running, waiting, KV-cache usage) are read from the engine at
scrape time; the speculative-decoding counters (``--spec-decode``) are
``spec``'s, rendered only when it is set, as vLLM publishes them only with a
draft model.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable

from loadgen.mock.spec import SpecDecode

__all__ = ["E2E_BUCKETS", "TTFT_BUCKETS", "Histogram", "Metrics", "cache_labels"]

# vLLM's bucket bounds (vllm/v1/metrics/buckets.py, vLLM 0.32).
TTFT_BUCKETS = (
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0,
    2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
)  # fmt: skip
E2E_BUCKETS = (
    0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0,
    50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0,
)  # fmt: skip
FINISH_REASONS = ("stop", "length", "abort", "error", "repetition")


class Histogram:
    """Cumulative-bucket histogram in seconds."""

    def __init__(self, bounds: tuple[float, ...]):
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.total = 0.0

    def observe(self, seconds: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, seconds)] += 1
        self.total += seconds

    def lines(self, name: str, labels: str) -> list[str]:
        out = []
        running = 0
        for bound, count in zip(self.bounds, self.counts, strict=False):
            running += count
            out.append(f'{name}_bucket{{{labels},le="{bound}"}} {float(running)}')
        running += self.counts[-1]
        out.append(f'{name}_bucket{{{labels},le="+Inf"}} {float(running)}')
        out.append(f"{name}_count{{{labels}}} {float(running)}")
        out.append(f"{name}_sum{{{labels}}} {self.total}")
        return out


def cache_labels(block_size: int, kv_cache_tokens: int, prefix_caching: bool) -> dict[str, str]:
    """The labels vLLM's ``vllm:cache_config_info`` would carry for this mock."""
    return {
        "block_size": str(block_size),
        "cache_dtype": "auto",
        "enable_prefix_caching": str(prefix_caching),
        "num_gpu_blocks": str(kv_cache_tokens // block_size),
    }


class Metrics:
    """Server-wide counters; ``gauges`` returns (running, waiting, kv usage 0..1)."""

    def __init__(self, model_name: str, gauges: Callable[[], tuple[int, int, float]]):
        self.labels = f'model_name="{model_name}",engine="0"'
        self.gauges = gauges
        #: vllm:cache_config_info's labels (vLLM states its cache configuration so)
        self.cache_info: dict[str, str] = {}
        self.prompt_tokens = 0
        self.generation_tokens = 0
        self.preemptions = 0
        self.prefix_queries = 0
        self.prefix_hits = 0
        self.success = dict.fromkeys(FINISH_REASONS, 0)
        self.ttft = Histogram(TTFT_BUCKETS)
        self.e2e = Histogram(E2E_BUCKETS)
        self.spec: SpecDecode | None = None  # --spec-decode: a draft model's counters
        # -- where the time went: vLLM's per-request phase histograms (its E2E buckets)
        self.queue = Histogram(E2E_BUCKETS)
        self.prefill = Histogram(E2E_BUCKETS)
        self.decode = Histogram(E2E_BUCKETS)

    def first_token(self, recv_ns: int, now_ns: int, prompt_tokens: int) -> None:
        self.ttft.observe((now_ns - recv_ns) / 1e9)
        self.prompt_tokens += prompt_tokens

    def prefix_cache(self, queried: int, hit: int) -> None:
        """One prefix-cache lookup, in tokens (vLLM counts them when it schedules a request)."""
        self.prefix_queries += queried
        self.prefix_hits += hit

    def finished(self, recv_ns: int, now_ns: int, tokens: int, reason: str) -> None:
        """A request ended; ``reason`` is stop, length or abort."""
        self.generation_tokens += tokens
        self.success[reason] = self.success.get(reason, 0) + 1
        if reason != "abort":
            self.e2e.observe((now_ns - recv_ns) / 1e9)

    def phases(self, recv_ns: int, admit_ns: int, first_ns: int, end_ns: int) -> None:
        """A finished request's phases, as vLLM splits it: queue = scheduled - arrived,
        prefill = first token - scheduled, decode = last token - first token (the three
        add up to its E2E)."""
        self.queue.observe((admit_ns - recv_ns) / 1e9)
        self.prefill.observe((first_ns - admit_ns) / 1e9)
        self.decode.observe((end_ns - first_ns) / 1e9)

    def render(self) -> bytes:
        running, waiting, kv = self.gauges()
        lab = self.labels
        families: list[tuple[str, str, str, list[str]]] = [
            ("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.",
             [f"vllm:num_requests_running{{{lab}}} {float(running)}"]),
            ("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.",
             [f"vllm:num_requests_waiting{{{lab}}} {float(waiting)}"]),
            ("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.",
             [f"vllm:kv_cache_usage_perc{{{lab}}} {kv}"]),
            ("vllm:prefix_cache_queries", "counter",
             "Prefix cache queries, in terms of number of queried tokens.",
             [f"vllm:prefix_cache_queries_total{{{lab}}} {float(self.prefix_queries)}"]),
            ("vllm:prefix_cache_hits", "counter",
             "Prefix cache hits, in terms of number of cached tokens.",
             [f"vllm:prefix_cache_hits_total{{{lab}}} {float(self.prefix_hits)}"]),
            ("vllm:num_preemptions", "counter", "Cumulative number of preemption from the engine.",
             [f"vllm:num_preemptions_total{{{lab}}} {float(self.preemptions)}"]),
            ("vllm:prompt_tokens", "counter", "Number of prefill tokens processed.",
             [f"vllm:prompt_tokens_total{{{lab}}} {float(self.prompt_tokens)}"]),
            ("vllm:generation_tokens", "counter", "Number of generation tokens processed.",
             [f"vllm:generation_tokens_total{{{lab}}} {float(self.generation_tokens)}"]),
            ("vllm:request_success", "counter", "Count of successfully processed requests.",
             [f'vllm:request_success_total{{{lab},finished_reason="{r}"}} {float(n)}'
              for r, n in self.success.items()]),
            ("vllm:time_to_first_token_seconds", "histogram",
             "Histogram of time to first token in seconds.",
             self.ttft.lines("vllm:time_to_first_token_seconds", lab)),
            ("vllm:e2e_request_latency_seconds", "histogram",
             "Histogram of e2e request latency in seconds.",
             self.e2e.lines("vllm:e2e_request_latency_seconds", lab)),
            ("vllm:request_queue_time_seconds", "histogram",
             "Histogram of time spent in WAITING phase for request.",
             self.queue.lines("vllm:request_queue_time_seconds", lab)),
            ("vllm:request_prefill_time_seconds", "histogram",
             "Histogram of time spent in PREFILL phase for request.",
             self.prefill.lines("vllm:request_prefill_time_seconds", lab)),
            ("vllm:request_decode_time_seconds", "histogram",
             "Histogram of time spent in DECODE phase for request.",
             self.decode.lines("vllm:request_decode_time_seconds", lab)),
        ]  # fmt: skip
        if self.spec is not None:
            families += self.spec.families(lab)
        if self.cache_info:
            info = ",".join(f'{k}="{v}"' for k, v in self.cache_info.items())
            families.append(
                (
                    "vllm:cache_config_info",
                    "gauge",
                    "Information of the LLMEngine CacheConfig",
                    [f'vllm:cache_config_info{{engine="0",{info}}} 1.0'],
                )
            )
        out: list[str] = []
        for name, kind, text, samples in families:
            out.extend((f"# HELP {name} {text}", f"# TYPE {name} {kind}", *samples))
        return ("\n".join(out) + "\n").encode()
