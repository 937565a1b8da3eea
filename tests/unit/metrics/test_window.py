"""The steady window: throughput without the fill and the drain, the whole window beside it."""

from __future__ import annotations

from typing import Any

import pytest

from loadgen.metrics import summarize_step
from loadgen.metrics.window import steady_window
from loadgen.records import Record
from loadgen.scenario import SlaSpec
from loadgen.summary import LoadPoint

MS = 1_000_000


def rec(i: int, sent_ms: float, e2e_ms: float, scheduled: bool = False) -> Record:
    sent, end = round(sent_ms * MS), round((sent_ms + e2e_ms) * MS)
    fields: dict[str, Any] = dict(
        step=0, id=i, warmup=False, request_id=f"r{i}", prompt_tokens_requested=8,
        max_tokens=2, scheduled_ns=sent if scheduled else None, start_ns=sent, sent_ns=sent,
        first_token_ns=end - MS, last_token_ns=end - MS, end_ns=end, token_ns=[end - MS],
        output_events=1, output_tokens_server=1, ok=True,
    )  # fmt: skip
    return Record(**fields)


def closed_loop(c: int, rounds: int, e2e_ms: float = 100.0) -> list[Record]:
    """c users in lockstep: round k sends at k x e2e; the last round drains."""
    return [rec(k * c + u, k * e2e_ms, e2e_ms) for k in range(rounds) for u in range(c)]


def test_closed_loop_steady_window_is_the_send_after_the_first_completion_to_the_last() -> None:
    records = closed_loop(c=8, rounds=5)  # sends at 0..400 ms, ends at 100..500 ms
    assert steady_window(records, 8) == (100 * MS, 400 * MS)
    s = summarize_step(0, LoadPoint(mode="concurrency", concurrency=8), records, SlaSpec())
    # steady: 24 completions (200..400 ms) in 300 ms = 80/s = c / latency; whole: 40 in 500 ms
    # (in lockstep the drain ends all at once: the same rate; see the next test for a drain)
    assert s.throughput.window == "steady"
    assert s.throughput.requests_per_s == pytest.approx(80.0)
    assert s.throughput.goodput_requests_per_s == pytest.approx(80.0)
    assert s.throughput.output_tokens_per_s == pytest.approx(80.0)
    assert s.throughput_whole is not None and s.throughput_whole.window == "whole"
    assert s.throughput_whole.requests_per_s == pytest.approx(40 / 0.5)
    assert (s.steady_started_ns, s.steady_ended_ns) == (100 * MS, 400 * MS)
    assert s.steady_duration_s == pytest.approx(0.3)
    assert s.duration_s == pytest.approx(0.5)


def test_drain_heavy_step_rates_the_server_not_the_drain() -> None:
    # one long round per user at c=64: a quarter of the window is the drain
    records = closed_loop(c=64, rounds=4)
    s = summarize_step(0, LoadPoint(mode="concurrency", concurrency=64), records, SlaSpec())
    assert s.throughput.requests_per_s == pytest.approx(640.0)  # 64 / 0.1 s
    assert s.throughput_whole is not None
    assert s.throughput_whole.requests_per_s == pytest.approx(256 / 0.4)
    slow_drain = [*records[:-1], rec(999, 300, 900)]  # one straggler stretches the end
    s = summarize_step(0, LoadPoint(mode="concurrency", concurrency=64), slow_drain, SlaSpec())
    assert s.throughput.requests_per_s == pytest.approx(640.0)
    assert s.throughput_whole is not None and s.throughput_whole.requests_per_s < 256 / 1.1


def staggered(c: int, fill_ms: float, e2e_ms: float, deadline_ms: float) -> list[Record]:
    """c slots all sent at 0 (the fill); slot u's first request ends at fill + u x e2e / c,
    then each request takes e2e and the slot sends again until the deadline. Completions
    then come every e2e / c: the server's rate is c / e2e from the first one on. After the
    last send the c in flight end one by one over e2e (the drain)."""
    out: list[Record] = []
    for u in range(c):
        sent, end = 0.0, fill_ms + u * e2e_ms / c
        while True:
            out.append(rec(len(out), sent, end - sent))
            if end >= deadline_ms:
                break
            sent, end = end, end + e2e_ms
    return out


def test_closed_loop_window_starts_after_the_fill_and_ends_before_the_drain() -> None:
    # c=8, 800 ms per request: 10 completions/s; nothing completes for the first 400 ms
    records = staggered(c=8, fill_ms=400, e2e_ms=800, deadline_ms=3000)
    last_send = max(r.sent_ns for r in records)
    assert max(r.end_ns for r in records) - last_send >= 700 * MS  # a long drain
    assert steady_window(records, 8) == (400 * MS, last_send)
    # in flight is 8 all through the steady window: neither fill nor drain is in it
    start, end = 400 * MS, last_send
    for t in range(start, end, 10 * MS):
        assert sum(r.sent_ns <= t < r.end_ns for r in records) == 8, t
    s = summarize_step(0, LoadPoint(mode="concurrency", concurrency=8), records, SlaSpec())
    # counted from the 8th send (t=0), the 400 ms fill pulled it to ~8.3/s
    assert s.throughput.requests_per_s == pytest.approx(10.0, rel=0.05)
    assert s.throughput_whole is not None and s.throughput_whole.requests_per_s < 9.5


def test_closed_loop_window_runs_send_to_send() -> None:
    # one slot that waits between requests: sent every 100 ms, each 20 ms long. From the
    # first completion (20 ms) the window would be 1880 ms for 18 completions (9.6/s);
    # from the send after it (100 ms), 1800 ms for 18: the 10/s it ran at
    records = [rec(i, i * 100, 20) for i in range(20)]
    assert steady_window(records, 1) == (100 * MS, 1900 * MS)
    s = summarize_step(0, LoadPoint(mode="concurrency", concurrency=1), records, SlaSpec())
    assert s.throughput.requests_per_s == pytest.approx(10.0)
    # a step whose first completion comes after its last send has no steady window
    assert steady_window([rec(i, i, 500) for i in range(9)], 4) is None


def test_open_loop_steady_window_is_first_completion_to_last_send() -> None:
    records = [rec(i, i * 10, 50, scheduled=True) for i in range(100)]  # 100/s, 50 ms each
    assert steady_window(records, None) == (50 * MS, 990 * MS)
    s = summarize_step(0, LoadPoint(mode="rate", rate=100.0), records, SlaSpec())
    assert s.throughput.window == "steady"
    assert s.throughput.requests_per_s == pytest.approx(94 / 0.94)  # ends 60..990 ms


def test_too_short_for_a_steady_window_falls_back_to_the_whole() -> None:
    records = closed_loop(c=4, rounds=1)  # never past the first round
    assert steady_window(records, 4) is None
    s = summarize_step(0, LoadPoint(mode="concurrency", concurrency=4), records, SlaSpec())
    assert s.throughput.window == "whole" and s.steady_started_ns is None
    assert s.throughput.requests_per_s == pytest.approx(40.0)
    assert steady_window([], None) is None


def test_a_steady_window_too_short_to_rate_is_not_rated() -> None:
    # c=8, 2 x c requests: the first wave all sent at 0, each slot's second request sent as
    # its first ends (100.0 .. 101.2 ms). From the send after the first completion to the
    # last send is 1.2 ms, which held the 7 completions that triggered sends: 6,000 req/s
    # for a loop that ran at 8 / 0.1 s = 80/s.
    records = [rec(u, 0, 100 + u * 1.2 / 7) for u in range(8)]
    records += [rec(8 + u, 100 + u * 1.2 / 7, 100) for u in range(8)]
    assert steady_window(records, 8) is None
    s = summarize_step(0, LoadPoint(mode="concurrency", concurrency=8), records, SlaSpec())
    assert s.throughput.window == "whole"
    assert s.throughput.requests_per_s < 100
    assert s.steady_started_ns is None and s.steady_duration_s is None
    assert (
        s.steady_unrated is not None
        and "shorter than half a request's duration" in s.steady_unrated
    )


def test_the_step_says_why_it_has_no_steady_window() -> None:
    s = summarize_step(
        0, LoadPoint(mode="concurrency", concurrency=4), closed_loop(c=4, rounds=1), SlaSpec()
    )
    assert s.steady_unrated == "no more measured requests than the concurrency (4)"
    s = summarize_step(
        0, LoadPoint(mode="concurrency", concurrency=8), closed_loop(c=8, rounds=5), SlaSpec()
    )
    assert s.steady_unrated is None and s.throughput.window == "steady"
