"""The Prometheus text parser and the server-metric name mapping."""

from __future__ import annotations

import math

from loadgen.telemetry import ServerScrape, extract_server_metrics, parse_prometheus_text

VLLM = """\
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 3.0
vllm:num_requests_running{engine="1",model_name="m"} 2.0
vllm:num_requests_waiting{engine="0",model_name="m"} 7.0
vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.5
vllm:kv_cache_usage_perc{engine="1",model_name="m"} 0.7
vllm:gpu_cache_usage_perc{model_name="m"} 0.99
vllm:num_preemptions_total{engine="0",model_name="m"} 4.0
vllm:prompt_tokens_total{engine="0",model_name="m"} 1.2e+06
vllm:generation_tokens_total{engine="0",model_name="m"} 3456.0
vllm:time_to_first_token_seconds_bucket{le="+Inf",model_name="m"} 9.0
"""


def test_parses_labels_escapes_specials_and_timestamps() -> None:
    text = (
        "# comment\r\nup 1\r\n"
        'a{path="C:\\\\dir",q="say \\"hi\\"",n="x\\ny"} 2.5 1700000000000\n'
        'b{} +Inf\nc{le="0.1",} NaN\nd -Inf\n'
        'broken{a="1" 3\nnovalue\n{x="1"} 4\n'
    )
    samples, bad = parse_prometheus_text(text)
    assert bad == 3
    by = {s.name: s for s in samples}
    assert by["up"].value == 1.0 and by["up"].labels == {}
    assert by["a"].labels == {"path": "C:\\dir", "q": 'say "hi"', "n": "x\ny"}
    assert by["a"].value == 2.5
    assert by["b"].value == math.inf and by["d"].value == -math.inf
    assert math.isnan(by["c"].value) and by["c"].labels == {"le": "0.1"}


def test_vllm_names_sum_and_average() -> None:
    values = extract_server_metrics(parse_prometheus_text(VLLM)[0])
    assert values.as_dict() == {
        "running": 5.0,
        "waiting": 7.0,
        "kv_usage": 0.6,  # V1 name wins over the V0 one; averaged over engines
        "preemptions_total": 4.0,
        "prompt_tokens_total": 1.2e6,
        "generation_tokens_total": 3456.0,
        "engine": "vllm",
    }


def test_tgi_and_sglang_names() -> None:
    tgi = "tgi_queue_size 4\ntgi_batch_current_size 8\ntgi_request_generated_tokens_sum 99\n"
    assert extract_server_metrics(parse_prometheus_text(tgi)[0]).as_dict() == {
        "running": 8.0,
        "waiting": 4.0,
        "generation_tokens_total": 99.0,
        "engine": "tgi",
    }
    sglang = (
        'sglang:num_running_reqs{model_name="m"} 6\nsglang:num_queue_reqs{model_name="m"} 1\n'
        'sglang:token_usage{model_name="m"} 0.25\n'
        'sglang:num_retracted_requests_total{model_name="m"} 2\n'
    )
    values = extract_server_metrics(parse_prometheus_text(sglang)[0])
    assert values.kv_usage == 0.25 and values.preemptions_total == 2.0
    assert values.engine == "sglang" and values.running == 6.0


def test_unknown_server_gives_nothing() -> None:
    assert extract_server_metrics(parse_prometheus_text("foo 1\n")[0]) == ServerScrape()
