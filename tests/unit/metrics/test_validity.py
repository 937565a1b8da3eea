"""A step's validity rate, its Wilson interval and the valid_output_rate SLA verdict."""

from __future__ import annotations

import pytest

from loadgen.metrics.columns import StepColumns
from loadgen.metrics.confidence import floor_needed, floor_verdict, proportion_interval
from loadgen.metrics.validity import output_validity, validity_check
from loadgen.records import Record


def rec(i: int, valid: bool | None, calls: int = 1) -> Record:
    r = Record(step=0, id=i, warmup=False, request_id=f"r{i}", prompt_tokens_requested=1,
               max_tokens=4, ok=True, sent_ns=1000, start_ns=1000, end_ns=5000)  # fmt: skip
    r.valid_output, r.tool_calls, r.tool_events = valid, calls, 4 * calls
    r.first_tool_ns = 3000 if calls else None
    r.invalid_detail = None if valid is not False else f"bad {i}"
    r.finish_reason = "tool_calls" if calls else "stop"
    return r


def test_wilson_interval() -> None:
    ci = proportion_interval(100, 100, 0.95)
    assert ci.high == 1.0 and ci.low == pytest.approx(0.963, abs=1e-3)
    ci = proportion_interval(50, 100, 0.95)
    assert ci.low == pytest.approx(0.404, abs=1e-3) and ci.high == pytest.approx(0.596, abs=1e-3)
    assert proportion_interval(0, 0).low is None


def test_a_floor_is_met_missed_or_undecided() -> None:
    assert floor_verdict(proportion_interval(1000, 1000), 0.99) == "met"
    assert floor_verdict(proportion_interval(70, 100), 0.99) == "missed"
    assert floor_verdict(proportion_interval(100, 100), 0.99) == "inconclusive"
    assert floor_needed(100, 100, 0.99) == 381  # 381 / (381 + 1.96^2) >= 0.99
    assert floor_needed(100, 70, 0.99) == 100


def test_the_step_rate_example_and_tool_figures() -> None:
    cols = StepColumns.of(
        [rec(0, True), rec(1, False), rec(2, True, calls=2), rec(3, False), rec(4, None, 0)]
    )
    v = output_validity(cols.outputs, 0.95)
    assert v is not None
    assert (v.checked, v.valid, v.rate) == (4, 2, 0.5)
    assert v.example == "bad 1" and v.example_request == "r1"  # the first failure
    assert (v.answers, v.answers_with_calls, v.tool_calls) == (5, 4, 5)
    assert v.calls_per_answer == 1.25 and v.finish_tool_calls == 4
    assert v.first_tool_ms is not None and v.first_tool_ms.p50 == pytest.approx(0.002)
    # merged accumulators (workers) say the same
    a, b = StepColumns.of([rec(0, True), rec(1, False)]), StepColumns.of([rec(2, False)])
    a.merge(b)
    merged = output_validity(a.outputs, 0.95)
    assert merged is not None and (merged.checked, merged.valid, merged.example) == (3, 1, "bad 1")
    assert output_validity(StepColumns.of([rec(0, None, 0)]).outputs, 0.95) is None


def test_the_sla_check() -> None:
    bad = output_validity(StepColumns.of([rec(i, i % 3 != 0) for i in range(60)]).outputs, 0.95)
    c = validity_check(bad, 0.99, 0.95)
    assert c.verdict == "missed" and c.value == pytest.approx(40 / 60) and c.margin < 0
    good = output_validity(StepColumns.of([rec(i, True) for i in range(50)]).outputs, 0.95)
    c = validity_check(good, 0.99, 0.95)
    assert c.verdict == "inconclusive" and c.requests_needed == 381
    assert "50 checked answers cannot decide a 99% rate" in (c.reason or "")
    many = output_validity(StepColumns.of([rec(i, True) for i in range(400)]).outputs, 0.95)
    assert validity_check(many, 0.99, 0.95).verdict == "met"
    assert validity_check(None, 0.99, 0.95).verdict == "missed"
