"""loadgen's own error on a step's timings, and verdicts decided with it.

Hand-built records whose token events shared reads (``token_slack_ns``): each
reading's bound follows from its stamps', a statistic's band is the statistic
over the readings moved by their bounds, and a verdict is inconclusive only
where the bound lies within that band, however busy (saturated) the client was.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from loadgen.metrics import StepColumns, summarize_step
from loadgen.metrics import vector as v
from loadgen.metrics.client_error import client_error
from loadgen.records import Record
from loadgen.scenario import SlaSpec
from loadgen.summary import ClientHealth, LoadPoint

MS = 1_000_000
CLOSED = LoadPoint(mode="concurrency", concurrency=8)
BUSY = ClientHealth(saturated=True, cpu_util=1.0, warnings=["loadgen used 100% of a CPU core"])


def rec(i: int, ttft_ms: float, slack_ms: float = 0.0, *, shared: int = 1) -> Record:
    """TTFT ``ttft_ms``, then 4 more token events 10 ms apart. With ``slack_ms``, the
    first ``shared`` token events shared a read with the next: each may have come that
    much before its stamp (and carries the next one's stamp)."""
    sent = i * 1000 * MS
    t = [sent + round(ttft_ms * MS) + k * 10 * MS for k in range(5)]
    slack = None
    if slack_ms:
        for k in range(shared):
            t[k] = t[shared]
        slack = [round(slack_ms * MS)] * shared
    fields: dict[str, Any] = dict(
        step=0, id=i, warmup=False, request_id=f"r{i}", prompt_tokens_requested=8,
        max_tokens=5, start_ns=sent, sent_ns=sent, first_token_ns=t[0], first_answer_ns=t[0],
        last_token_ns=t[-1], end_ns=t[-1] + MS, token_ns=t, output_events=5,
        output_tokens_server=5, ok=True, token_slack_ns=slack,
    )  # fmt: skip
    return Record(**fields)


def ttft_sla(p99: float) -> SlaSpec:
    return SlaSpec.model_validate({"ttft_ms": {"p99": p99}})


def test_a_quiet_client_has_exact_readings_and_no_band() -> None:
    s = summarize_step(0, CLOSED, [rec(i, 100) for i in range(50)], ttft_sla(500))
    e = s.client_error
    assert e is not None and e.ttft_ms is not None and e.itl_ms is not None
    assert (e.ttft_ms.readings, e.ttft_ms.uncertain, e.ttft_ms.max, e.ttft_ms.band) == (
        50,
        0,
        0.0,
        {},
    )
    assert e.itl_ms.readings == 200 and e.itl_ms.uncertain == 0
    assert s.sla.checks[0].client_band is None


def test_a_saturated_step_that_misses_by_far_is_missed() -> None:
    records = [rec(i, 800, slack_ms=10) for i in range(400)]
    s = summarize_step(0, CLOSED, records, ttft_sla(500), client=BUSY)
    assert s.client.saturated
    assert (s.sla.verdict, s.sla.cause) == ("missed", "missed")
    assert s.sla.checks[0].client_band == [pytest.approx(800.0), pytest.approx(810.0)]


def test_a_saturated_step_that_meets_with_a_wide_margin_is_met() -> None:
    records = [rec(i, 20, slack_ms=10) for i in range(400)]
    s = summarize_step(0, CLOSED, records, ttft_sla(500), client=BUSY)
    assert (s.sla.verdict, s.sla.cause) == ("met", "met")


def test_a_bound_within_the_clients_error_is_inconclusive_with_the_band_in_its_reason() -> None:
    # every first token shared its read with the second: read 10 ms after it may have come
    records = [rec(i, 498, slack_ms=6) for i in range(400)]
    s = summarize_step(0, CLOSED, records, ttft_sla(505))
    check = s.sla.checks[0]
    assert check.value == pytest.approx(508.0)  # the stamps: the second token's
    assert check.client_band == [pytest.approx(502.0), pytest.approx(508.0)]
    assert check.client_error and check.verdict == "inconclusive"
    assert (s.sla.verdict, s.sla.cause) == ("inconclusive", "client_error")
    assert s.sla.reason == (
        "ttft_ms.p99 508 against 505: loadgen's readings may be up to 6 ms late here"
    )
    # the same readings against a bound past the band: decided
    assert summarize_step(0, CLOSED, records, ttft_sla(501)).sla.verdict == "missed"
    assert summarize_step(0, CLOSED, records, ttft_sla(509)).sla.verdict == "met"


def test_each_metric_moves_the_way_its_stamps_do() -> None:
    records = [rec(i, 100, slack_ms=4) for i in range(100)]
    e = summarize_step(0, CLOSED, records, SlaSpec()).client_error
    assert e is not None and e.ttft_ms is not None and e.itl_ms is not None
    assert e.tpot_ms is not None and e.e2e_ms is not None
    assert e.ttft_ms.band["p50"] == [pytest.approx(106.0), pytest.approx(110.0)]  # early only
    assert e.ttft_ms.p50 == pytest.approx(4.0)
    # gaps: 0 (one read), then 10, 10, 10; the first may be 4 ms longer, no shorter
    assert (e.itl_ms.readings, e.itl_ms.uncertain) == (400, 100)
    assert e.itl_ms.band["max"] == [pytest.approx(10.0), pytest.approx(10.0)]
    assert e.itl_ms.band["mean"] == [pytest.approx(7.5), pytest.approx(8.5)]
    # TPOT = (last - first) / 4: the first stamp may be 4 ms early, so TPOT 1 ms longer
    assert e.tpot_ms.band["p50"] == [pytest.approx(7.5), pytest.approx(8.5)]
    assert e.e2e_ms.uncertain == 0  # the end was its own read's: exact


def test_the_sparse_gap_band_is_the_dense_one() -> None:
    rng = np.random.default_rng(5)
    records = []
    for i in range(300):
        r = rec(i, 50 + float(rng.integers(0, 100)))
        if i % 7 == 0:  # tokens 1..3 read together, each up to 0-9 ms early
            r.token_ns[1:3] = [r.token_ns[3]] * 2
            r.token_slack_ns = [0] + [int(x) * MS for x in rng.integers(0, 10, size=2)]
        records.append(r)
    cols = StepColumns.of(records)
    got = client_error(v.Columns(cols), "loadgen", "any", "sent").itl_ms
    assert got is not None
    gaps, lows, highs = [], [], []
    for r in records:
        s = (r.token_slack_ns or []) + [0] * 5
        for k in range(1, 5):
            gaps.append(r.token_ns[k] - r.token_ns[k - 1])
            lows.append(gaps[-1] - s[k])
            highs.append(gaps[-1] + s[k - 1])
    widths = np.maximum(np.subtract(gaps, lows), np.subtract(highs, gaps))
    assert got.uncertain == int(np.count_nonzero(widths))
    assert got.p99 == pytest.approx(float(np.percentile(widths, 99)) / MS)
    for stat, q in (("p50", 50), ("p99", 99)):
        want = [np.percentile(lows, q) / MS, np.percentile(highs, q) / MS]
        assert got.band[stat] == pytest.approx(want)
