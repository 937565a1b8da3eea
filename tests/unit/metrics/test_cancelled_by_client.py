"""Requests the client aborted on purpose (workload.cancel): counted apart, neither ok nor
failed, out of the latencies, throughput and error rate; their tokens in their own total."""

from __future__ import annotations

import pickle

from loadgen.metrics import summarize_step
from loadgen.metrics.columns import StepColumns
from loadgen.records import Record
from loadgen.scenario import SlaSpec
from loadgen.summary import LoadPoint

MS = 1_000_000
T0 = 10**12


def record(i: int, *, tokens: int = 8, cut: bool = False, error: str | None = None) -> Record:
    start = T0 + i * 10 * MS
    stamps = [start + (5 + k) * MS for k in range(tokens)]
    r = Record(
        step=0,
        id=i,
        warmup=False,
        request_id=f"r-{i}",
        prompt_tokens_requested=16,
        max_tokens=8,
        start_ns=start,
        sent_ns=start,
        first_token_ns=stamps[0] if stamps else None,
        first_answer_ns=stamps[0] if stamps else None,
        last_token_ns=stamps[-1] if stamps else None,
        token_ns=stamps,
        output_events=tokens,
        end_ns=start + (6 + tokens) * MS,
        ok=not cut and error is None,
        error_kind=error,
        cancelled_by_client=cut,
    )
    return r


def records() -> list[Record]:
    out = [record(i) for i in range(12)]  # 12 complete answers, 8 tokens each
    out += [record(12 + i, tokens=3, cut=True) for i in range(5)]  # 5 users who stopped
    out += [record(17 + i, tokens=0, error="http_500") for i in range(3)]  # 3 failures
    return out


def test_counts_share_and_error_rate() -> None:
    step = summarize_step(0, LoadPoint(mode="concurrency", concurrency=2), records(), SlaSpec())
    r = step.requests
    assert (r.total, r.ok, r.failed, r.cancelled_by_client) == (20, 12, 3, 5)
    assert r.cancelled_by_client_share == 5 / 20
    assert r.error_rate == 3 / 15  # failed / (ok + failed): the cut ones are not in it
    assert r.errors == {"http_500": 3}
    assert step.tokens.output_total == 12 * 8
    assert step.tokens.cancelled_output_total == 5 * 3


def test_latencies_and_throughput_leave_them_out() -> None:
    step = summarize_step(0, LoadPoint(mode="concurrency", concurrency=2), records(), SlaSpec())
    assert step.ttft_ms.count == step.e2e_ms.count == step.tpot_ms.count == 12
    assert step.itl_ms.count == 12 * 7
    assert step.e2e_ms.max == 14.0  # every cut request ended sooner (9 ms): none is here
    plain = summarize_step(
        0, LoadPoint(mode="concurrency", concurrency=2), records()[:12], SlaSpec()
    )
    assert step.ttft_ms == plain.ttft_ms and step.itl_ms == plain.itl_ms
    # their sends and ends are in the window: it runs to the last measured end
    assert step.ended_ns == max(r.end_ns for r in records())


def test_merged_accumulators_keep_them() -> None:
    a, b = StepColumns.of(records()[:14]), StepColumns.of(records()[14:])
    a.merge(pickle.loads(pickle.dumps(b)))
    whole = StepColumns.of(records())
    assert (a.by_client, a.by_client_tokens) == (whole.by_client, whole.by_client_tokens) == (5, 15)


def test_a_cut_warm_up_request_is_only_warm_up() -> None:
    r = record(0, tokens=2, cut=True)
    r.warmup = True
    cols = StepColumns.of([r])
    assert (cols.warmup, cols.by_client, cols.measured_count) == (1, 0, 0)
