"""Cached prompt tokens end to end: loadgen against the real mock over 127.0.0.1.

Each request's ``cached_tokens_server`` (read from its answer's usage) is what the
mock's prefix cache really served it, by its own truth file (matched by the
``x-request-id`` loadgen sends), and the step's ``cache`` block sums them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from loadgen.records import Record
from loadgen.scenario import Scenario
from loadgen.summary import Summary

RunFixture = Callable[[Scenario], tuple[Summary, list[Record], Path]]


def check_against_truth(
    summary: Summary, records: list[Record], truth_path: Path
) -> tuple[list[Record], dict[str, Any]]:
    truth = {}
    for line in truth_path.read_bytes().splitlines():
        row = orjson.loads(line)
        truth[row["request_id"]] = row
    assert summary.steps[0].requests.failed == 0
    measured = [r for r in records if not r.warmup and not r.ramp]
    for r in records:
        served = truth[r.request_id]
        assert r.cached_tokens_server == served["cached_tokens"], r.request_id
        assert r.prompt_tokens_server == served["prompt_tokens"]
    cache = summary.steps[0].cache
    assert cache is not None
    hits = sum(r.cached_tokens_server or 0 for r in measured)
    assert cache.cached_tokens == hits > 0
    assert cache.hit_rate == pytest.approx(hits / sum(r.prompt_tokens for r in measured))
    assert cache.reported == len(measured)
    return measured, truth


def test_sessions_later_turns_hit_the_conversation(
    run: RunFixture, scenario: Callable[..., Scenario], tmp_path: Path
) -> None:
    truth_path = tmp_path / "truth.jsonl"
    sc = scenario(
        target={"extra_body": {"ignore_eos": True}, "mock": {"args": ["--truth", str(truth_path)]}},
        workload={
            "prompt_tokens": {"dist": "fixed", "value": 40},
            "sessions": {"turns": {"dist": "fixed", "value": 3}},
        },
        load={"concurrency": [2], "requests_per_step": 4, "warmup_requests": 0},
    )
    summary, records, _ = run(sc)
    measured, _ = check_against_truth(summary, records, truth_path)
    assert len(measured) == 12
    cache = summary.steps[0].cache
    assert cache is not None and cache.by_turn_of == "turn" and len(cache.by_turn) == 3
    first, *later = cache.by_turn
    assert first == 0.0  # a session's first prompt is its own
    assert all(rate is not None and rate > 0.3 for rate in later)
    assert cache.session_hit_rate_mean is not None and cache.session_hit_rate_mean > 0.3
    # a later turn resends the conversation so far: it hits the full blocks of the last
    # turn's prompt (the mock caches prompt blocks only, not the answer's: docs/mock.md)
    prompt = {(r.session, r.turn): r.prompt_tokens_server or 0 for r in measured}
    for r in measured:
        assert r.turn is not None
        expected = 0 if r.turn == 0 else prompt[r.session, r.turn - 1] // 16 * 16
        assert r.cached_tokens_server == expected, (r.session, r.turn)


@pytest.mark.parametrize("api", ["openai-completions", "openai-responses", "anthropic-messages"])
def test_a_shared_prefix_is_served_from_the_cache(
    api: str, run: RunFixture, scenario: Callable[..., Scenario], tmp_path: Path
) -> None:
    truth_path = tmp_path / "truth.jsonl"
    sc = scenario(
        target={"api": api, "mock": {"args": ["--truth", str(truth_path)]}},
        workload={
            "prompt_tokens": {"dist": "fixed", "value": 100},
            "output_tokens": {"dist": "fixed", "value": 4},
            "prefix": {"tokens": 64, "groups": 1},
        },
        load={"concurrency": [1], "requests_per_step": 6, "warmup_requests": 1},
    )
    summary, records, _ = run(sc)
    measured, _ = check_against_truth(summary, records, truth_path)
    cache = summary.steps[0].cache
    assert cache is not None
    # the warm-up request cached the prefix: every measured one hits at least its full
    # blocks (the prefix's words are not all whole 16-token blocks of the mock's count)
    assert cache.requests_with_hits == 1.0
    assert all((r.cached_tokens_server or 0) >= 48 for r in measured)
