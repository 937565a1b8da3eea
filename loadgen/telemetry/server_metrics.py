"""Which server metrics loadgen reads, under which names, per engine.

Owns the mapping from vLLM's, TGI's and SGLang's Prometheus names to one
canonical set. The first name of a key found in a scrape wins, so vLLM's come
first and older vLLM names follow the current ones. Series of one name (one
per model, engine or DP rank) are summed, except fractions (``kv_usage``),
which are averaged.

Names, by canonical key (vLLM | TGI | SGLang; "-" where the engine has none):

- running: ``vllm:num_requests_running`` | ``tgi_batch_current_size`` |
  ``sglang:num_running_reqs``
- waiting: ``vllm:num_requests_waiting`` | ``tgi_queue_size`` | ``sglang:num_queue_reqs``
- kv_usage (fraction 0-1): ``vllm:kv_cache_usage_perc`` (V1), then
  ``vllm:gpu_cache_usage_perc`` (V0) | - | ``sglang:token_usage``
- preemptions_total: ``vllm:num_preemptions_total`` | - |
  ``sglang:num_retracted_requests_total``
- prompt_tokens_total: ``vllm:prompt_tokens_total`` | ``tgi_request_input_length_sum`` |
  ``sglang:prompt_tokens_total``
- generation_tokens_total: ``vllm:generation_tokens_total`` |
  ``tgi_request_generated_tokens_sum`` | ``sglang:generation_tokens_total``
"""

from __future__ import annotations

import math

from loadgen.telemetry.prom import PromSample
from loadgen.telemetry.rows import ServerScrape

__all__ = ["SERVER_METRICS", "extract_server_metrics"]

#: canonical key -> names to look for, in order of preference.
SERVER_METRICS: dict[str, tuple[str, ...]] = {
    "running": ("vllm:num_requests_running", "tgi_batch_current_size", "sglang:num_running_reqs"),
    "waiting": ("vllm:num_requests_waiting", "tgi_queue_size", "sglang:num_queue_reqs"),
    "kv_usage": ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "sglang:token_usage"),
    "preemptions_total": ("vllm:num_preemptions_total", "sglang:num_retracted_requests_total"),
    "prompt_tokens_total": (
        "vllm:prompt_tokens_total",
        "tgi_request_input_length_sum",
        "sglang:prompt_tokens_total",
    ),
    "generation_tokens_total": (
        "vllm:generation_tokens_total",
        "tgi_request_generated_tokens_sum",
        "sglang:generation_tokens_total",
    ),
}
_AVERAGED = frozenset({"kv_usage"})
_ENGINES = (("vllm:", "vllm"), ("tgi_", "tgi"), ("sglang:", "sglang"))


def extract_server_metrics(samples: list[PromSample]) -> ServerScrape:
    """Canonical values present in one scrape, plus ``engine`` when recognised.

    A key whose metric is absent stays None; NaN values are ignored.
    """
    by_name: dict[str, list[float]] = {}
    for s in samples:
        if not math.isnan(s.value):
            by_name.setdefault(s.name, []).append(s.value)
    out: dict[str, float] = {}
    for key, names in SERVER_METRICS.items():
        for name in names:
            values = by_name.get(name)
            if values:
                total = sum(values)
                out[key] = total / len(values) if key in _AVERAGED else total
                break
    engine = next((e for pre, e in _ENGINES if any(n.startswith(pre) for n in by_name)), None)
    return ServerScrape(**out, engine=engine)
