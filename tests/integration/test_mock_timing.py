"""Acceptance of the core path: exact timings against the mock, over a real socket."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from loadgen.records import Record
from loadgen.scenario import Scenario
from loadgen.summary import Summary

# durations held to tight bounds: run apart from the parallel tests (-m timing)
pytestmark = pytest.mark.timing

RunFixture = Callable[[Scenario], tuple[Summary, list[Record], Path]]
Make = Callable[..., Scenario]


def test_fixed_ttft_and_itl_are_measured_exactly(run: RunFixture, scenario: Make) -> None:
    sc = scenario(
        target={
            "extra_body": {"ignore_eos": True},
            "mock": {"args": ["--ttft-ms", "50", "--itl-ms", "10"]},
        },
        workload={"output_tokens": {"dist": "fixed", "value": 64}},
        load={"concurrency": [8], "requests_per_step": 32, "warmup_requests": 8},
    )
    summary, records, out = run(sc)
    step = summary.steps[0]
    assert step.requests.failed == 0 and step.requests.ok == 32
    assert step.ttft_ms.p50 is not None and abs(step.ttft_ms.p50 - 50.0) < 1.0
    assert step.itl_ms.p50 is not None and abs(step.itl_ms.p50 - 10.0) < 0.3
    measured = [r for r in records if not r.warmup]
    assert len(measured) == 32
    assert all(r.output_tokens == 64 and r.output_events == 64 for r in measured)
    assert step.tokens.count_mismatches == 0
    # the summary on disk is the same, valid document
    assert Summary.model_validate_json((out / "summary.json").read_bytes()) == summary


def test_nothing_listening_gives_connection_errors_and_a_valid_summary(
    run: RunFixture, scenario: Make
) -> None:
    import socket

    with socket.socket() as s:  # a port that was free a moment ago
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sc = scenario(
        target={"url": f"http://127.0.0.1:{port}", "timeouts_s": {"connect": 2}},
        load={
            "concurrency": [1, 4],
            "requests_per_step": 6,
            "warmup_requests": 1,
            "stop_early": None,
        },
        sla={"max_error_rate": 0.01},
    )
    summary, records, out = run(sc)
    assert len(summary.steps) == 2
    assert len(records) == 14
    assert {r.error_kind for r in records} == {"connect_error"}
    for step in summary.steps:
        assert step.requests.errors == {"connect_error": 6}
        assert step.requests.ok == 0 and step.requests.error_rate == 1.0
        assert not step.sla.passed
    doc = orjson.loads((out / "summary.json").read_bytes())
    assert doc["steps"][1]["load"] == {
        "mode": "concurrency",
        "concurrency": 4,
        "rate": None,
        "time_scale": None,
        "arrival": None,
        "burstiness": None,
        "max_concurrency": None,
    }


@pytest.mark.parametrize("api", ["openai-completions", "openai-chat"])
def test_usage_counts_match_events(run: RunFixture, scenario: Make, api: str) -> None:
    sc = scenario(
        target={"api": api, "mock": {"args": ["--ttft-ms", "5", "--itl-ms", "1"]}},
        workload={
            "prompt_tokens": {"dist": "uniform", "min": 5, "max": 50},
            "output_tokens": {"dist": "uniform", "min": 1, "max": 40},
        },
        load={"concurrency": [4], "requests_per_step": 20},
    )
    summary, records, _ = run(sc)
    step = summary.steps[0]
    assert step.requests.ok == 20
    assert step.tokens.count_mismatches == 0
    assert step.tokens.server_counts == 20
    for r in records:
        assert r.prompt_tokens_server == r.prompt_tokens_requested  # the mock counts words
        assert r.output_tokens <= r.max_tokens


def test_a_dead_server_stops_the_sweep_early(run: RunFixture, scenario: Make) -> None:
    sc = scenario(
        target={"url": "http://127.0.0.1:9", "timeouts_s": {"connect": 2}},
        load={"concurrency": [1, 2, 4], "requests_per_step": 3},
    )
    summary, records, _ = run(sc)
    assert len(summary.steps) == 1
    assert len(records) == 3
    assert summary.verdict is not None
    assert summary.verdict.stopped_early == (
        "step 0: error rate 100% > stop_early.max_error_rate 50%"
    )
    assert summary.verdict.max_passing is None


def test_token_id_prompts_have_exact_lengths(run: RunFixture, scenario: Make) -> None:
    sc = scenario(
        target={"api": "openai-completions", "mock": {"args": ["--ttft-ms", "1", "--itl-ms", "1"]}},
        workload={
            "prompt_as": "token_ids",
            "vocab_size": 500,
            "prompt_tokens": {"dist": "uniform", "min": 3, "max": 300},
        },
        load={"concurrency": [2], "requests_per_step": 10},
    )
    summary, records, _ = run(sc)
    assert summary.steps[0].requests.ok == 10
    assert {r.prompt_tokens_server for r in records} == {r.prompt_tokens_requested for r in records}
    assert all(r.prompt_tokens_server == r.prompt_tokens_requested for r in records)


def test_preflight_warns_of_an_unserved_model(run: RunFixture, scenario: Make) -> None:
    sc = scenario(
        target={"model": "other", "mock": {"args": ["--model", "served", "--ttft-ms", "1"]}},
        load={"concurrency": [1], "requests_per_step": 3, "stop_early": None},
    )
    summary, records, _ = run(sc)
    check = summary.target_check
    assert check is not None and check.healthy is True
    assert check.models == ["served"]
    assert check.warnings == ["model 'other' is not among the served models (served)"]
    assert {r.error_kind for r in records} == {"http_404"}  # vLLM's answer to an unknown model
    assert all(r.http_status == 404 and r.error_detail for r in records)
