"""A step's new- and reused-connection figures (``step.phases``) from hand-built records."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from loadgen.metrics import summarize_step
from loadgen.metrics.columns import StepColumns
from loadgen.records import Record
from loadgen.scenario import SlaSpec
from loadgen.summary import LoadPoint, StepSummary

from .test_step_fields import MS, rec

LP = LoadPoint(mode="concurrency", concurrency=1)


def summarize(records: list[Record]) -> StepSummary:
    return summarize_step(0, LP, records, SlaSpec())


def new(i: int, connect_ms: float, tls_ms: float | None, ttft_ms: float, **kw: Any) -> Record:
    """A request on a new connection: connect from start, then TLS, then the send."""
    start = i * 1000 * MS
    connected = start + round(connect_ms * MS)
    tls = None if tls_ms is None else connected + round(tls_ms * MS)
    phases = dict(
        new_connection=True, connect_start_ns=start, connect_ns=connected, tls_ns=tls,
        start_ns=start, first_byte_ns=start + round(ttft_ms * MS) - MS,
    )  # fmt: skip
    return rec(i, (tls or connected) / MS, (start + round(ttft_ms * MS)) / MS, **phases, **kw)


def reused(i: int, ttft_ms: float, **kw: Any) -> Record:
    start = i * 1000 * MS
    return rec(i, start / MS, start / MS + ttft_ms, new_connection=False, **kw)


def test_no_transport_said_no_block() -> None:
    assert summarize([rec(i, i * 10, i * 10 + 5) for i in range(3)]).phases is None


def test_new_and_reused_apart_with_their_percentiles() -> None:
    connects, tlss = [1.0, 2.0, 3.0, 10.0], [20.0, 30.0, 40.0, 50.0]
    records = [
        new(i, c, t, 80.0 + 10 * i) for i, (c, t) in enumerate(zip(connects, tlss, strict=True))
    ]
    records += [reused(10 + i, 20.0 + i) for i in range(5)]
    records.append(rec(20, 20_000, 20_005))  # the transport did not say
    records.append(new(21, 500.0, 500.0, 2000.0, ok=False, error_kind="http_500"))  # failed
    records.append(new(22, 500.0, 500.0, 2000.0, warmup=True))  # not measured

    p = summarize(records).phases

    assert p is not None
    assert (p.new.requests, p.reused.requests, p.unknown) == (4, 5, 1)
    assert p.new.connect_ms_p50 == pytest.approx(np.percentile(connects, 50))
    assert p.new.connect_ms_p99 == pytest.approx(np.percentile(connects, 99), abs=1e-3)
    assert p.new.tls_ms_p50 == pytest.approx(35.0)
    assert p.new.tls_ms_p99 == pytest.approx(np.percentile(tlss, 99), abs=1e-3)
    assert p.new.ttft_ms_p50 == pytest.approx(95.0)  # 80, 90, 100, 110: from start_ns
    assert p.reused.ttft_ms_p50 == pytest.approx(22.0)
    assert p.reused.connect_ms_p50 is p.reused.tls_ms_p50 is None
    assert p.new_share == pytest.approx(4 / 9)


def test_plain_http_has_no_tls_figures() -> None:
    p = summarize([new(0, 1.0, None, 50.0), reused(1, 10.0)]).phases
    assert p is not None
    assert p.new.tls_ms_p50 is p.new.tls_ms_p99 is None
    assert p.new.connect_ms_p50 == pytest.approx(1.0)


def test_merged_columns_give_the_same_figures() -> None:
    records = [new(i, 1.0 + i, 10.0 * i, 50.0 + i) for i in range(4)]
    records += [reused(10 + i, 5.0 + i) for i in range(4)]
    one = StepColumns.of(records)
    a, b = StepColumns.of(records[::2]), StepColumns.of(records[1::2])
    a.merge(b)
    assert (
        summarize_step(0, LP, one, SlaSpec()).phases == summarize_step(0, LP, a, SlaSpec()).phases
    )


def test_a_line_only_when_new_connections_carried_a_share_and_csv_columns_always() -> None:
    from loadgen.report.phases import PHASE_COLUMNS, phase_fields, phases_text

    busy = summarize([new(0, 1.0, 20.0, 80.0), *(reused(1 + i, 20.0) for i in range(9))])
    text = phases_text(busy)
    assert text == (
        "connections: 1 new (10%), connect 1.0/1.0 ms, TLS 20.0/20.0 ms (p50/p99); "
        "TTFT p50 from start 80.0 ms new vs 20.0 ms reused"
    )
    kept = summarize([new(0, 1.0, None, 80.0), *(reused(1 + i, 20.0) for i in range(20))])
    assert phases_text(kept) is None  # 1 in 21, under NEW_SHARE_NOTE: a kept-alive run
    row = phase_fields(kept)
    assert list(row) == list(PHASE_COLUMNS)
    assert (row["conn_new_requests"], row["conn_reused_requests"]) == (1, 20)
    assert row["connect_ms_p50"] == pytest.approx(1.0) and row["tls_ms_p50"] is None
    assert row["ttft_reused_conn_ms_p50"] == pytest.approx(20.0)
