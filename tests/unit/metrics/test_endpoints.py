"""The per-endpoint breakdown of a step: each endpoint's own figures, adding up to the step's."""

from __future__ import annotations

from typing import Any

import pytest

from loadgen.metrics import summarize_step
from loadgen.records import Record
from loadgen.scenario import SlaSpec
from loadgen.summary import LoadPoint

MS = 1_000_000
URLS = ["http://a:1", "http://b:2"]


def rec(i: int, endpoint: int | None, ttft_ms: float, **kw: Any) -> Record:
    """An ok request sent at i*10 ms, first token ttft_ms later, a second 5 ms after."""
    sent = i * 10 * MS
    first = sent + round(ttft_ms * MS)
    fields: dict[str, Any] = dict(
        step=0, id=i, warmup=False, request_id=f"r{i}", prompt_tokens_requested=10,
        max_tokens=2, start_ns=sent, sent_ns=sent, first_token_ns=first, first_answer_ns=first,
        last_token_ns=first + 5 * MS, end_ns=first + 6 * MS, token_ns=[first, first + 5 * MS],
        output_events=2, ok=True, endpoint=endpoint,
    )  # fmt: skip
    fields.update(kw)
    return Record(**fields)


def summarize(records: list[Record], **kw: Any) -> Any:
    lp = LoadPoint(mode="rate", rate=100.0, arrival="constant")
    return summarize_step(0, lp, records, SlaSpec(), **kw)


def step_records() -> list[Record]:
    fast = [rec(i, 0, 10) for i in range(0, 12, 2)]  # endpoint 0: TTFT 10 ms
    slow = [rec(i, 1, 50) for i in range(1, 12, 2)]  # endpoint 1: TTFT 50 ms
    failed = rec(12, 1, 0, ok=False, error_kind="http_503", first_token_ns=None, token_ns=[])
    warm = rec(13, 0, 10, warmup=True)
    return [*fast, *slow, failed, warm]


def test_each_endpoint_gets_its_own_figures() -> None:
    step = summarize(step_records(), endpoints=URLS)
    assert step.endpoints is not None
    a, b = step.endpoints
    assert (a.endpoint, a.url, b.endpoint, b.url) == (0, URLS[0], 1, URLS[1])
    assert (a.requests.ok, a.requests.failed, a.requests.warmup) == (6, 0, 1)
    assert (b.requests.ok, b.requests.failed, b.requests.errors) == (6, 1, {"http_503": 1})
    assert b.requests.error_rate == pytest.approx(1 / 7)
    assert a.ttft_ms.p50 == pytest.approx(10.0) and b.ttft_ms.p50 == pytest.approx(50.0)
    assert a.itl_ms.p50 == pytest.approx(5.0) and a.e2e_ms.max == pytest.approx(16.0)
    # the step's totals hold both
    assert step.requests.ok == 12 and step.ttft_ms.count == 12


def test_endpoint_throughputs_add_up_to_the_step() -> None:
    step = summarize(step_records(), endpoints=URLS)
    assert step.endpoints is not None
    total = sum(e.throughput.requests_per_s for e in step.endpoints)
    assert total == pytest.approx(step.throughput.requests_per_s)
    out = sum(e.throughput.output_tokens_per_s for e in step.endpoints)
    assert out == pytest.approx(step.throughput.output_tokens_per_s)
    assert {e.throughput.window for e in step.endpoints} == {step.throughput.window}


def test_an_endpoint_that_got_nothing_still_has_its_row() -> None:
    records = [rec(i, 0, 10) for i in range(4)]
    step = summarize(records, endpoints=[*URLS, "http://c:3"])
    assert step.endpoints is not None
    assert [e.requests.total for e in step.endpoints] == [4, 0, 0]
    assert step.endpoints[2].ttft_ms.count == 0 and step.endpoints[2].ttft_ms.p50 is None


def test_one_endpoint_has_no_breakdown() -> None:
    assert summarize(step_records()).endpoints is None
    assert summarize(step_records(), endpoints=URLS[:1]).endpoints is None


def test_a_password_in_an_endpoint_url_is_left_out() -> None:
    step = summarize(step_records(), endpoints=["http://u:secret@a:1", URLS[1]])
    assert step.endpoints is not None and step.endpoints[0].url == "http://a:1"
    assert "secret" not in step.model_dump_json()
