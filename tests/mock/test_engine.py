"""The continuous-batching engine: step formula, admission, preemption, /metrics."""

from __future__ import annotations

import asyncio
import re
import statistics
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path

import pytest
from mockhttp import MockProc, completion_body, fetch, read_truth

from loadgen.mock import DEFAULT_PROFILE, PROFILES
from loadgen.mock.engine import step_ns

COMPLETIONS = "/v1/completions"


def metric(text: str, name: str) -> float:
    match = re.search(rf"^{re.escape(name)}(?:{{[^}}]*}})? (\S+)$", text, re.M)
    assert match, name
    return float(match.group(1))


def test_step_formula() -> None:
    profile = PROFILES["tiny-cpu"]
    assert step_ns(profile, 4, 100) == int((6.0 + 0.5 * 4 + 0.05 * 100) * 1e6)


def test_default_profile_knee_is_between_4_and_64() -> None:
    profile = PROFILES[DEFAULT_PROFILE]
    assert 4 <= profile.max_num_seqs <= 64

    def tokens_per_s(c: int) -> float:
        running = min(c, profile.max_num_seqs)
        return running / (step_ns(profile, running, 0) / 1e9)

    rates = [tokens_per_s(c) for c in (1, 2, 4, 8, 16, 32, 64, 128)]
    assert rates == sorted(rates) and rates[-1] == rates[-2]  # rises, then flat
    assert rates[3] > 5 * rates[0]


def test_running_and_waiting_follow_the_load(start_mock: Callable[..., MockProc]) -> None:
    mock = start_mock(
        "--max-num-seqs", "4", "--step-base-ms", "20", "--decode-ms-per-seq", "0",
        "--prefill-ms-per-token", "0",
    )  # fmt: skip

    async def run() -> tuple[str, str, list[int]]:
        body = completion_body(words=5, max_tokens=10)
        tasks = [
            asyncio.create_task(fetch(mock.port, "POST", COMPLETIONS, body)) for _ in range(12)
        ]
        await asyncio.sleep(0.1)
        during = (await fetch(mock.port, "GET", "/metrics")).body.decode()
        replies = await asyncio.gather(*tasks)
        after = (await fetch(mock.port, "GET", "/metrics")).body.decode()
        return during, after, [len(r.json_events()) for r in replies]

    during, after, lengths = asyncio.run(run())
    assert metric(during, "vllm:num_requests_running") == 4
    assert metric(during, "vllm:num_requests_waiting") == 8
    assert 0 < metric(during, "vllm:kv_cache_usage_perc") < 1
    assert lengths == [10] * 12
    assert metric(after, "vllm:num_requests_running") == 0
    assert metric(after, "vllm:num_requests_waiting") == 0
    assert metric(after, "vllm:generation_tokens_total") == 120
    assert metric(after, "vllm:prompt_tokens_total") == 60
    labels = 'model_name="loadgen-mock",engine="0",finished_reason="length"'
    assert f"vllm:request_success_total{{{labels}}} 12.0" in after
    assert metric(after, "vllm:time_to_first_token_seconds_count") == 12
    assert metric(after, "vllm:e2e_request_latency_seconds_count") == 12
    assert "# TYPE vllm:e2e_request_latency_seconds histogram" in after


@pytest.mark.timing  # the mock's step times to 0.5 ms: run apart, on a quiet machine
def test_step_durations_follow_the_formula(
    start_mock: Callable[..., MockProc], tmp_path: Path
) -> None:
    truth = tmp_path / "truth.jsonl"
    mock = start_mock(
        "--step-base-ms", "4", "--decode-ms-per-seq", "2", "--prefill-ms-per-token", "0.5",
        "--truth", str(truth),
    )  # fmt: skip

    async def run() -> None:
        for _ in range(5):  # alone, one after another
            await fetch(mock.port, "POST", COMPLETIONS, completion_body(words=10, max_tokens=10))
        body = completion_body(words=2, max_tokens=30)
        await asyncio.gather(*(fetch(mock.port, "POST", COMPLETIONS, body) for _ in range(4)))

    asyncio.run(run())
    mock.stop()
    records = read_truth(truth)
    alone, four = records[:5], records[5:]
    # the median of five, so that one stall of a busy box does not decide it
    ttft_ms = statistics.median((r["token_ns"][0] - r["recv_ns"]) / 1e6 for r in alone)
    # 4 + 2 * 1 + 0.5 * 10 prompt tokens = 11 ms, never sooner; later when the mock waits
    # for a core: 14.8 ms beside two busy loops (a first token a whole step late would
    # read 17, one without its prefill 6)
    assert 11.0 <= ttft_ms < 16.0
    gaps = [(b - a) / 1e6 for r in alone for a, b in pairwise(r["token_ns"])]
    assert abs(statistics.median(gaps) - 6.0) < 0.5  # 4 + 2 * 1 running
    gaps = [(b - a) / 1e6 for r in four for a, b in pairwise(r["token_ns"])]
    assert abs(statistics.median(gaps) - 12.0) < 0.5  # 4 + 2 * 4 running


def test_preemption_when_the_kv_budget_runs_out(start_mock: Callable[..., MockProc]) -> None:
    mock = start_mock(
        "--kv-cache-tokens", "200", "--max-num-seqs", "8", "--step-base-ms", "1",
        "--decode-ms-per-seq", "0", "--prefill-ms-per-token", "0",
    )  # fmt: skip

    async def run() -> tuple[list[int], str]:
        body = completion_body(words=20, max_tokens=40)
        replies = await asyncio.gather(
            *(fetch(mock.port, "POST", COMPLETIONS, body) for _ in range(6))
        )
        text = (await fetch(mock.port, "GET", "/metrics")).body.decode()
        return [len(r.json_events()) for r in replies], text

    lengths, text = asyncio.run(run())
    assert lengths == [40] * 6
    assert metric(text, "vllm:num_preemptions_total") > 0
