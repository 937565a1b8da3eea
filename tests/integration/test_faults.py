"""What loadgen records for each fault the mock injects: a classified row, no crash,
and the rest of the run intact. Every third request is faulted."""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise
from pathlib import Path

import pytest

from loadgen.records import Record
from loadgen.scenario import Scenario
from loadgen.summary import Summary

RunFixture = Callable[[Scenario], tuple[Summary, list[Record], Path]]
Make = Callable[..., Scenario]

FAULTED = {2, 5, 8}  # request ids (0-based) of the 3rd, 6th and 9th request


def run_with_fault(
    run: RunFixture,
    scenario: Make,
    fault: str,
    *extra: str,
    timeouts: dict[str, float] | None = None,
) -> tuple[Summary, dict[int, Record]]:
    sc = scenario(
        target={
            "api": "openai-completions",
            "extra_body": {"ignore_eos": True},
            "timeouts_s": timeouts or {},
            "mock": {
                "args": ["--ttft-ms", "5", "--itl-ms", "2", "--fault", f"{fault}=every:3", *extra]
            },
        },
        workload={"output_tokens": {"dist": "fixed", "value": 20}},
        load={"concurrency": [1], "requests_per_step": 9, "stop_early": None},
    )
    summary, records, _ = run(sc)
    assert len(records) == 9
    return summary, {r.id: r for r in records}


def assert_rest_intact(by_id: dict[int, Record]) -> None:
    for i, r in by_id.items():
        if i not in FAULTED:
            assert r.ok, (i, r.error_kind, r.error_detail)
            assert r.output_tokens == 20 and r.output_events == 20


@pytest.mark.parametrize(
    ("fault", "status"), [("http500", 500), ("http503", 503), ("http429", 429)]
)
def test_http_errors_keep_status_and_body(
    run: RunFixture, scenario: Make, fault: str, status: int
) -> None:
    summary, by_id = run_with_fault(run, scenario, fault)
    for i in FAULTED:
        r = by_id[i]
        assert not r.ok and r.error_kind == f"http_{status}" and r.http_status == status
        assert r.error_detail and "error" in r.error_detail  # the server's error JSON, kept
        assert r.first_token_ns is None
    assert summary.steps[0].requests.errors == {f"http_{status}": 3}
    assert_rest_intact(by_id)


def test_reset_before_headers_on_a_kept_alive_connection_is_retried(
    run: RunFixture, scenario: Make
) -> None:
    """At one stream every request after the first reuses the connection. A reset before
    any byte of the answer is the server dropping a kept-alive connection: the request
    goes again on a fresh one (a reconnect, not a failure). The mock counts the retry as a
    request, so its every-third fault lands on client requests 2, 4, 6 and 8."""
    summary, by_id = run_with_fault(run, scenario, "reset")
    assert all(r.ok for r in by_id.values()), {i: r.error_kind for i, r in by_id.items()}
    assert {i for i, r in by_id.items() if r.reconnects} == {2, 4, 6, 8}
    assert all(r.reconnects <= 1 for r in by_id.values())
    for i in (2, 4, 6, 8):
        r = by_id[i]
        assert r.start_ns <= r.sent_ns <= (r.first_token_ns or 0)  # timed from the retry
    assert summary.steps[0].requests.reconnects == 4
    assert summary.steps[0].requests.failed == 0


def test_disconnect_mid_stream_keeps_the_tokens_seen(run: RunFixture, scenario: Make) -> None:
    _summary, by_id = run_with_fault(run, scenario, "disconnect")
    for i in FAULTED:
        r = by_id[i]
        assert r.error_kind == "disconnected", r.error_kind
        assert r.http_status == 200
        assert 0 < r.output_events < 20  # the tokens that did arrive are kept
        assert r.last_token_ns == r.token_ns[-1]
    assert_rest_intact(by_id)


def test_stall_shows_as_one_long_gap(run: RunFixture, scenario: Make) -> None:
    summary, by_id = run_with_fault(run, scenario, "stall", "--stall-s", "0.3")
    for i in FAULTED:
        r = by_id[i]
        assert r.ok and r.output_events == 20
        gaps = [b - a for a, b in pairwise(r.token_ns)]
        assert max(gaps) >= 290_000_000
    assert summary.steps[0].itl_ms.max is not None and summary.steps[0].itl_ms.max >= 290
    assert_rest_intact(by_id)


def test_stall_past_the_idle_timeout(run: RunFixture, scenario: Make) -> None:
    _summary, by_id = run_with_fault(
        run, scenario, "stall", "--stall-s", "1.0", timeouts={"idle": 0.2}
    )
    for i in FAULTED:
        r = by_id[i]
        assert r.error_kind == "idle_timeout"
        assert 0 < r.output_events < 20
        # enforced within +1/8 of the limit after the last chunk
        assert r.last_token_ns is not None
        assert 0.2e9 <= r.end_ns - r.last_token_ns < 0.2e9 * 1.125 + 50e6
    assert_rest_intact(by_id)


def test_malformed_event(run: RunFixture, scenario: Make) -> None:
    summary, by_id = run_with_fault(run, scenario, "malformed")
    for i in FAULTED:
        r = by_id[i]
        assert r.error_kind == "malformed_event"
        assert r.error_detail is not None and "b'" in r.error_detail  # the bad event, excerpted
    assert summary.steps[0].requests.errors == {"malformed_event": 3}
    assert_rest_intact(by_id)


def test_events_split_across_writes_parse_the_same(run: RunFixture, scenario: Make) -> None:
    summary, by_id = run_with_fault(run, scenario, "split")
    assert summary.steps[0].requests.failed == 0
    for r in by_id.values():
        assert r.ok and r.output_events == 20 and r.output_tokens_server == 20


def test_slow_first_byte(run: RunFixture, scenario: Make) -> None:
    _summary, by_id = run_with_fault(run, scenario, "slow_first_byte", "--slow-first-byte-s", "0.3")
    for i in FAULTED:
        r = by_id[i]
        assert r.ok and r.first_token_ns is not None
        assert r.first_token_ns - r.sent_ns >= 300_000_000
    assert_rest_intact(by_id)


def test_slow_first_byte_past_the_first_token_timeout(run: RunFixture, scenario: Make) -> None:
    _summary, by_id = run_with_fault(
        run,
        scenario,
        "slow_first_byte",
        "--slow-first-byte-s",
        "1.5",
        timeouts={"first_token": 0.6},
    )
    for i in FAULTED:
        r = by_id[i]
        assert r.error_kind == "first_token_timeout"
        assert 0.6e9 <= r.end_ns - r.start_ns < 0.6e9 + 100e6
    assert_rest_intact(by_id)


def test_stream_without_done(run: RunFixture, scenario: Make) -> None:
    _summary, by_id = run_with_fault(run, scenario, "no_done")
    for i in FAULTED:
        r = by_id[i]
        assert r.error_kind == "incomplete_stream"
        assert r.output_events == 20  # every token came; only the end marker is missing
    assert_rest_intact(by_id)
