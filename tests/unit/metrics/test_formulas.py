"""Each metric formula on hand-built records."""

from __future__ import annotations

import pytest

from loadgen.metrics import (
    distribution_ms,
    e2e_ns,
    itl_gaps_ns,
    summarize_step,
    tpot_ns,
    ttft_from_scheduled_ns,
    ttft_ns,
)
from loadgen.records import Record
from loadgen.scenario import PercentileBounds, SlaSpec
from loadgen.summary import LoadPoint

MS = 1_000_000


def rec(
    id: int,
    sent: int,
    tokens: list[int],
    end: int,
    *,
    ok: bool = True,
    server_tokens: int | None = None,
    scheduled: int | None = None,
    warmup: bool = False,
    error: str | None = None,
) -> Record:
    return Record(
        step=0,
        id=id,
        warmup=warmup,
        request_id=f"r{id}",
        prompt_tokens_requested=10,
        max_tokens=len(tokens),
        scheduled_ns=scheduled,
        sent_ns=sent,
        first_token_ns=tokens[0] if tokens else None,
        last_token_ns=tokens[-1] if tokens else None,
        end_ns=end,
        token_ns=tokens,
        output_events=len(tokens),
        output_tokens_server=server_tokens,
        ok=ok,
        error_kind=error,
    )


def test_ttft_is_first_token_minus_send() -> None:
    r = rec(0, 100 * MS, [150 * MS, 160 * MS], 170 * MS)
    assert ttft_ns(r) == 50 * MS


def test_ttft_from_scheduled_includes_the_wait_before_sending() -> None:
    r = rec(0, 100 * MS, [150 * MS], 151 * MS, scheduled=90 * MS)
    assert ttft_from_scheduled_ns(r) == 60 * MS
    assert ttft_from_scheduled_ns(rec(1, 0, [5], 6)) is None


def test_itl_is_gaps_between_consecutive_token_events() -> None:
    r = rec(0, 0, [10, 25, 25, 45], 50)
    assert itl_gaps_ns(r) == [15, 0, 20]
    assert itl_gaps_ns(rec(1, 0, [10], 11)) == []


def test_tpot_divides_by_tokens_minus_one() -> None:
    r = rec(0, 0, [10 * MS, 20 * MS, 30 * MS, 70 * MS], 80 * MS)
    assert tpot_ns(r) == pytest.approx(20 * MS)


def test_tpot_prefers_the_servers_token_count() -> None:
    # 4 events carried 7 tokens (some events held several): (70-10)/(7-1) = 10 ms
    r = rec(0, 0, [10 * MS, 20 * MS, 30 * MS, 70 * MS], 80 * MS, server_tokens=7)
    assert tpot_ns(r) == pytest.approx(10 * MS)
    assert r.count_mismatch


def test_tpot_undefined_for_a_single_token() -> None:
    assert tpot_ns(rec(0, 0, [10], 20)) is None


def test_e2e_is_end_minus_send() -> None:
    assert e2e_ns(rec(0, 5 * MS, [10 * MS], 42 * MS)) == 37 * MS


def test_distribution_matches_numpy_linear_percentiles() -> None:
    d = distribution_ms([i * MS for i in range(1, 101)])  # 1..100 ms
    assert d.count == 100
    assert d.mean == pytest.approx(50.5)
    assert d.min == 1 and d.max == 100
    assert d.p50 == pytest.approx(50.5)
    assert d.p99 == pytest.approx(99.01)
    assert distribution_ms([]).count == 0 and distribution_ms([]).p50 is None


def test_step_summary_counts_window_and_throughput() -> None:
    records = [
        rec(0, 0, [1 * MS], 2 * MS, warmup=True),  # excluded
        rec(1, 1000 * MS, [1050 * MS, 1060 * MS, 1070 * MS], 1080 * MS),
        rec(2, 1100 * MS, [1150 * MS, 1170 * MS, 1190 * MS], 1200 * MS, server_tokens=3),
        rec(3, 1500 * MS, [], 2000 * MS, ok=False, error="http_503"),
    ]
    s = summarize_step(0, LoadPoint(mode="concurrency", concurrency=2), records, SlaSpec())
    assert s.requests.total == 3 and s.requests.ok == 2 and s.requests.warmup == 1
    assert s.requests.errors == {"http_503": 1}
    assert s.requests.error_rate == pytest.approx(1 / 3)
    assert s.duration_s == pytest.approx(1.0)  # first measured send 1.0 s -> last end 2.0 s
    assert s.throughput.requests_per_s == pytest.approx(2.0)
    assert s.throughput.output_tokens_per_s == pytest.approx(6.0)
    assert s.ttft_ms.mean == pytest.approx(50.0)
    assert s.itl_ms.count == 4 and s.itl_ms.max == pytest.approx(20.0)
    assert s.tpot_ms.p50 == pytest.approx(15.0)
    assert s.e2e_ms.max == pytest.approx(100.0)
    assert s.tokens.server_counts == 1


def test_sla_checks_and_goodput() -> None:
    records = [
        rec(1, 0, [40 * MS, 50 * MS], 60 * MS),  # ttft 40 ok
        rec(2, 0, [90 * MS, 100 * MS], 110 * MS),  # ttft 90 misses the per-request bound
    ]
    sla = SlaSpec(ttft_ms=PercentileBounds(p50=80), max_error_rate=0.0)
    s = summarize_step(0, LoadPoint(mode="concurrency", concurrency=1), records, sla)
    by_metric = {(c.metric, c.stat): c for c in s.sla.checks}
    assert by_metric[("ttft_ms", "p50")].value == pytest.approx(65.0)
    assert by_metric[("ttft_ms", "p50")].passed
    assert by_metric[("ttft_ms", "p50")].margin == pytest.approx(15.0)
    assert by_metric[("error_rate", "value")].passed
    assert s.sla.passed
    assert s.sla.good_requests == 1
    assert s.throughput.goodput_requests_per_s == pytest.approx(1 / 0.11)


def test_failed_sla_when_no_successful_request() -> None:
    records = [rec(1, 0, [], 10, ok=False, error="connect_error")]
    sla = SlaSpec(ttft_ms=PercentileBounds(p99=100))
    s = summarize_step(0, LoadPoint(mode="concurrency", concurrency=1), records, sla)
    assert not s.sla.passed
    assert s.sla.checks[0].value is None


def test_littles_law_flags_a_disagreement() -> None:
    records = [
        rec(i, i * 100 * MS, [i * 100 * MS + 5 * MS], i * 100 * MS + 100 * MS) for i in range(10)
    ]
    lp = LoadPoint(mode="concurrency", concurrency=1)
    agree = summarize_step(0, lp, records, SlaSpec(), mean_in_flight=1.0)
    assert agree.little is not None and not agree.little.flagged
    assert agree.little.predicted == pytest.approx(1.0)
    off = summarize_step(0, lp, records, SlaSpec(), mean_in_flight=2.0)
    assert off.little is not None and off.little.flagged


def test_littles_law_is_not_checked_when_nothing_succeeded() -> None:
    """A server that is down gives failures microseconds long: no latency to check against."""
    records = [
        rec(i, i * MS, [], i * MS + 10_000, ok=False, error="connect_error") for i in range(10)
    ]
    lp = LoadPoint(mode="concurrency", concurrency=1)
    assert summarize_step(0, lp, records, SlaSpec(), mean_in_flight=1.0).little is None
