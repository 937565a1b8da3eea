"""The frontier's formulas: each step's point from its records and figures, the Pareto
front and the best point under the SLA on constructed data (docs/metrics.md)."""

from __future__ import annotations

import pytest

from loadgen.metrics.columns import StepColumns
from loadgen.metrics.frontier import (
    NO_GPUS,
    best_under_sla,
    frontier_point,
    interactivity,
    pareto_front,
    per_request_interactivity,
    with_gpus,
)
from loadgen.metrics.step import step_cost, summarize_step
from loadgen.records import Record
from loadgen.scenario import SlaSpec
from loadgen.summary import GpuTotal, LoadPoint, StepTelemetry, TelemetryWindow

MS = 1_000_000
LP = LoadPoint(mode="concurrency", concurrency=2)


def _record(i: int, n: int, gap_ms: float, *, events: int | None = None, ok: bool = True) -> Record:
    """Request i: n output tokens (the server's count) over ``events`` token events
    (default n), ``gap_ms`` apart, the first at 10 ms after the send."""
    sent = 1_000 * MS + i * 100 * MS
    first = sent + 10 * MS
    stamps = [first + round(k * gap_ms * MS) for k in range(events if events is not None else n)]
    return Record(
        step=0, id=i, warmup=False, request_id=f"r{i}", prompt_tokens_requested=8,
        max_tokens=n, sent_ns=sent, headers_ns=sent, first_token_ns=first if ok else None,
        last_token_ns=stamps[-1] if ok else None, end_ns=stamps[-1] + MS,
        token_ns=stamps if ok else [], output_events=len(stamps) if ok else 0,
        output_tokens_server=n if ok else None, ok=ok,
        error_kind=None if ok else "http_503", finish_reason="length" if ok else None,
    )  # fmt: skip


def test_per_request_interactivity_is_output_tokens_over_decode_time() -> None:
    records = [
        _record(0, 5, 2.0),  # decode 8 ms: 5 / 0.008 = 625 tok/s
        _record(1, 11, 1.0),  # decode 10 ms: 1100 tok/s
        _record(2, 3, 5.0),  # decode 10 ms: 300 tok/s
        _record(3, 1, 2.0),  # one token: no decode time, left out
        _record(4, 8, 2.0, events=1),  # one event (not streamed): left out
        _record(5, 5, 2.0, ok=False),  # failed: left out
    ]
    cols = StepColumns.of(records)
    assert list(per_request_interactivity(cols)) == pytest.approx([625.0, 1100.0, 300.0])
    assert interactivity(cols) == (pytest.approx(625.0), 3)
    # an even count: the mean of the two middle values
    even = StepColumns.of(records[:2])
    assert interactivity(even) == (pytest.approx((625.0 + 1100.0) / 2), 2)
    assert interactivity(StepColumns.of(records[3:])) == (None, 0)


def test_the_point_of_a_step_from_its_figures() -> None:
    records = [_record(i, 5, 2.0 + i) for i in range(4)]
    cols = StepColumns.of(records)
    step = summarize_step(0, LP, cols, SlaSpec())
    step.cost = step_cost(step, 3.6)
    point = frontier_point(step, cols, 2)
    assert point.interactivity_requests == 4
    # decode times 8, 12, 16, 20 ms: 625, 416.7, 312.5, 250 tok/s; the median of the middle two
    assert point.interactivity_tok_s == pytest.approx((5 / 0.012 + 5 / 0.016) / 2)
    assert step.tpot_ms.p50 is not None
    assert point.tpot_tok_s == pytest.approx(1000.0 / step.tpot_ms.p50)
    tok_s = step.throughput.output_tokens_per_s
    assert tok_s > 0 and point.output_tokens_per_s == tok_s
    assert (point.gpus, point.gpus_from) == (2, "cost.gpus")
    assert point.output_tokens_per_s_per_gpu == pytest.approx(tok_s / 2)
    assert point.per_gpu_missing is None
    assert step.cost is not None and step.cost.usd_per_million_output_tokens is not None
    assert point.usd_per_million_output_tokens == step.cost.usd_per_million_output_tokens


def test_the_gpus_come_from_cost_gpus_else_telemetry_else_a_reason() -> None:
    cols = StepColumns.of([_record(i, 5, 2.0) for i in range(3)])
    step = summarize_step(0, LP, cols, SlaSpec())
    bare = frontier_point(step, cols, None)
    assert bare.gpus is None and bare.output_tokens_per_s_per_gpu is None
    assert bare.per_gpu_missing == NO_GPUS and bare.usd_per_million_output_tokens is None
    step.telemetry = StepTelemetry(
        window=TelemetryWindow(start_ns=0, end_ns=1, duration_s=1e-9),
        output_tokens=15,
        total=GpuTotal(gpus=4, energy_coverage=1.0),
    )
    seen = with_gpus(step, bare, None)
    assert (seen.gpus, seen.gpus_from) == (4, "telemetry")
    assert seen.output_tokens_per_s_per_gpu == pytest.approx(
        step.throughput.output_tokens_per_s / 4
    )
    assert seen.interactivity_tok_s == bare.interactivity_tok_s  # kept as it was
    stated = with_gpus(step, bare, 1)  # the scenario's word on what serves wins
    assert (stated.gpus, stated.gpus_from) == (1, "cost.gpus")


def test_the_front_leaves_out_dominated_points_and_keeps_ties() -> None:
    points: list[tuple[float | None, float | None]] = [
        (10.0, 900.0),  # 0: most throughput
        (20.0, 700.0),  # 1
        (15.0, 600.0),  # 2: dominated by 1 (less of both)
        (20.0, 650.0),  # 3: as interactive as 1, less throughput: dominated
        (40.0, 300.0),  # 4: most interactive
        (40.0, 300.0),  # 5: the same point as 4: a tie, both on the front
        (30.0, 300.0),  # 6: dominated by 4 (equal throughput, less interactive)
        (None, 2000.0),  # 7: no interactivity: on no front
        (50.0, None),  # 8: no throughput: on no front
    ]
    assert pareto_front(points) == [0, 1, 4, 5]
    assert pareto_front([]) == []
    assert pareto_front([(1.0, 1.0)]) == [0]


def test_the_best_point_under_the_sla_has_the_most_throughput() -> None:
    points: list[tuple[float | None, float | None]] = [
        (10.0, 900.0), (20.0, 700.0), (25.0, 700.0), (40.0, 300.0), (5.0, None)
    ]  # fmt: skip
    assert best_under_sla(points, [False, True, True, True, True]) == 2  # tie: more interactive
    assert best_under_sla(points, [True, True, True, True, True]) == 0
    assert best_under_sla(points, [False, False, False, True, False]) == 3
    assert best_under_sla(points, [False, False, False, False, True]) is None  # no throughput
    assert best_under_sla(points, [False] * 5) is None
    same = [(10.0, 5.0), (10.0, 5.0)]
    assert best_under_sla(same, [True, True]) == 0  # the first of equals
