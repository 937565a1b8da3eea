"""Coordinated omission: open-loop TTFT and E2E from the intended send time by default.

Hand-built records of an open loop whose second half waited for a free slot
(``max_concurrency``): the wait is in the SLA, goodput and percentiles unless
``sla.latency_from`` is ``sent``; both figures are kept, in every profile.
"""

from __future__ import annotations

from typing import Any

import pytest

from loadgen.metrics import summarize_step
from loadgen.metrics.profiles import PROFILES
from loadgen.metrics.sla import request_meets_sla
from loadgen.records import Record
from loadgen.scenario import SlaSpec
from loadgen.summary import ClientHealth, LoadPoint

MS = 1_000_000
RATE = LoadPoint(mode="rate", rate=20.0, max_concurrency=2)
CLOSED = LoadPoint(mode="concurrency", concurrency=2)


def rec(i: int, scheduled_ms: float, wait_ms: float, scheduled: bool = True) -> Record:
    """Scheduled at scheduled_ms, started after wait_ms in the queue, on the socket 1 ms
    later, first token 20 ms after that, 4 tokens 10 ms apart, ended 1 ms after the last."""
    start = round((scheduled_ms + wait_ms) * MS)
    sent = start + MS
    tokens = [sent + 20 * MS + k * 10 * MS for k in range(4)]
    fields: dict[str, Any] = dict(
        step=0, id=i, warmup=False, request_id=f"r{i}", prompt_tokens_requested=8,
        max_tokens=4, scheduled_ns=round(scheduled_ms * MS) if scheduled else None,
        start_ns=start, sent_ns=sent, first_token_ns=tokens[0], first_answer_ns=tokens[0],
        last_token_ns=tokens[-1], end_ns=tokens[-1] + MS, token_ns=tokens, output_events=4,
        output_tokens_server=4, ok=True,
    )  # fmt: skip
    return Record(**fields)


def queued() -> list[Record]:
    """10 requests 50 ms apart; the last 5 waited 200 ms for a slot."""
    return [rec(i, i * 50, 0 if i < 5 else 200) for i in range(10)]


def sla(**kw: Any) -> SlaSpec:
    return SlaSpec.model_validate({"ttft_ms": {"p99": 100}, **kw})


def test_open_loop_ttft_counts_the_queue_and_fails_the_sla() -> None:
    s = summarize_step(0, RATE, queued(), sla())
    assert s.latency_from == "scheduled"
    assert s.ttft_ms.max == pytest.approx(221.0)  # 200 ms queued + 1 ms to the socket + 20
    assert not s.sla.passed
    assert s.sla.good_requests == 5
    assert s.throughput_whole is not None
    assert s.throughput_whole.goodput_requests_per_s == pytest.approx(
        s.throughput_whole.requests_per_s / 2
    )
    assert s.ttft_from_scheduled_ms is not None and s.ttft_from_scheduled_ms.max == 221.0
    assert s.ttft_from_sent_ms is not None and s.ttft_from_sent_ms.max == pytest.approx(20.0)
    assert s.queue_wait_ms is not None and s.queue_wait_ms.max == pytest.approx(200.0)


def test_latency_from_sent_leaves_the_queue_out() -> None:
    s = summarize_step(0, RATE, queued(), sla(latency_from="sent"))
    assert s.latency_from == "sent"
    assert s.ttft_ms.max == pytest.approx(20.0)
    assert s.sla.passed and s.sla.good_requests == 10
    assert s.ttft_from_scheduled_ms is not None and s.ttft_from_scheduled_ms.max == 221.0


def test_e2e_both_ways() -> None:
    s = summarize_step(0, RATE, queued(), SlaSpec())
    # sent -> end: 20 + 30 + 1 ms; from the schedule the queue and the 1 ms to the socket add
    assert s.e2e_from_sent_ms is not None and s.e2e_from_sent_ms.max == pytest.approx(51.0)
    assert s.e2e_from_scheduled_ms is not None and s.e2e_from_scheduled_ms.max == 252.0
    assert s.e2e_ms.max == pytest.approx(252.0)
    e2e = SlaSpec.model_validate({"e2e_ms": {"p99": 100}})
    assert not request_meets_sla(queued()[-1], e2e)
    assert request_meets_sla(queued()[-1], e2e.model_copy(update={"latency_from": "sent"}))


@pytest.mark.parametrize("name", list(PROFILES))
def test_every_profile_counts_from_the_schedule(name: str) -> None:
    """Each profile's own TTFT and E2E, shifted to the intended send time: the same shift."""
    p = PROFILES[name]
    s = summarize_step(0, RATE, queued(), sla(), profile=p)
    r = queued()[-1]
    shift = (p.origin(r) - (r.scheduled_ns or 0)) / MS
    assert s.ttft_ms.max == pytest.approx(221.0)  # first token - scheduled, in any profile
    assert s.ttft_from_sent_ms is not None
    assert s.ttft_from_sent_ms.max == pytest.approx(221.0 - shift)
    assert s.e2e_from_sent_ms is not None
    assert s.e2e_ms.max == pytest.approx(s.e2e_from_sent_ms.max + shift)
    assert not s.sla.passed and s.sla.good_requests == 5  # goodput by the same values


def test_closed_loop_is_unchanged() -> None:
    records = [rec(i, i * 50, 200, scheduled=False) for i in range(4)]
    s = summarize_step(0, CLOSED, records, sla())
    assert s.latency_from == "sent"
    assert s.ttft_ms.max == pytest.approx(20.0) and s.sla.passed
    assert s.ttft_from_scheduled_ms is None and s.queue_wait_ms is None


def test_a_saturated_step_is_judged_by_its_bounds_and_warned_of() -> None:
    """Saturation is a warning beside the verdict (its error is measured per reading,
    tests/unit/metrics/test_client_error.py), not a verdict of its own."""
    records = [rec(i, i * 50, 0, scheduled=False) for i in range(400)]
    s = summarize_step(0, CLOSED, records, sla(), client=ClientHealth(saturated=True))
    assert all(c.passed for c in s.sla.checks) and s.sla.passed
    assert s.sla.verdict == "met" and s.client.saturated
