"""The TGI adapter against the mock's TGI server, and non-streaming requests of every api."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from loadgen.records import Record
from loadgen.scenario import Scenario
from loadgen.summary import Summary

RunFixture = Callable[[Scenario], tuple[Summary, list[Record], Path]]
Make = Callable[..., Scenario]


def test_tgi_streaming(run: RunFixture, scenario: Make) -> None:
    sc = scenario(
        target={
            "api": "tgi",
            "extra_body": {"parameters": {"ignore_eos": True}},
            "mock": {"args": ["--ttft-ms", "10", "--itl-ms", "3"]},
        },
        workload={"output_tokens": {"dist": "uniform", "min": 4, "max": 30}},
        load={"concurrency": [4], "requests_per_step": 16},
    )
    summary, records, _ = run(sc)
    step = summary.steps[0]
    assert step.requests.ok == 16, step.requests.errors
    for r in records:
        assert r.finish_reason == "length"
        assert r.output_tokens_server == r.max_tokens == r.output_events  # details.generated_tokens
        assert r.first_token_ns is not None and r.first_token_ns - r.sent_ns >= 10_000_000
    assert step.itl_ms.p50 is not None and abs(step.itl_ms.p50 - 3.0) < 0.5
    assert step.tokens.count_mismatches == 0


@pytest.mark.parametrize("api", ["tgi", "openai-completions", "openai-chat"])
def test_non_streaming(run: RunFixture, scenario: Make, api: str) -> None:
    extra = {"parameters": {"ignore_eos": True}} if api == "tgi" else {"ignore_eos": True}
    sc = scenario(
        target={
            "api": api,
            "stream": False,
            "extra_body": extra,
            "mock": {"args": ["--ttft-ms", "10", "--itl-ms", "2"]},
        },
        workload={"output_tokens": {"dist": "fixed", "value": 12}},
        load={"concurrency": [2], "requests_per_step": 6},
    )
    summary, records, _ = run(sc)
    step = summary.steps[0]
    assert step.requests.ok == 6, step.requests.errors
    for r in records:
        assert r.output_tokens_server == 12 and r.output_events == 0
        assert r.token_ns == []
        assert r.first_token_ns == r.last_token_ns
        # the whole answer comes after TTFT + 11 gaps
        assert r.first_token_ns is not None and r.first_token_ns - r.sent_ns >= 30_000_000
    assert step.tpot_ms.count == 0 and step.itl_ms.count == 0
    assert step.ttft_ms.count == 6
    assert step.throughput.output_tokens_per_s > 0
