"""A step's cached prompt tokens (``step.cache``) from hand-built records."""

from __future__ import annotations

from typing import Any

import pytest

from loadgen.metrics import summarize_step
from loadgen.records import Record
from loadgen.scenario import SlaSpec
from loadgen.summary import BY_TURN_MAX, LoadPoint, StepSummary

from .test_step_fields import rec

LP = LoadPoint(mode="concurrency", concurrency=1)


def summarize(records: list[Record]) -> StepSummary:
    return summarize_step(0, LP, records, SlaSpec())


def cached(i: int, prompt: int, hit: int | None, **kw: Any) -> Record:
    return rec(i, i * 10, i * 10 + 5, prompt_tokens_server=prompt, cached_tokens_server=hit, **kw)


def test_no_count_no_block() -> None:
    assert summarize([rec(i, i * 10, i * 10 + 5) for i in range(3)]).cache is None


def test_sums_over_requests_and_a_missing_count_is_zero() -> None:
    records = [cached(0, 100, 0), cached(1, 100, 80), cached(2, 200, 160), cached(3, 100, None)]
    records.append(cached(4, 100, 100, ok=False, error_kind="http_500"))  # not a success
    records.append(cached(5, 100, 100, warmup=True))  # not measured
    c = summarize(records).cache
    assert c is not None
    assert c.hit_rate == pytest.approx(240 / 500)
    assert (c.cached_tokens, c.reported) == (240, 3)
    assert c.cached_tokens_per_request == pytest.approx(60.0)
    assert c.requests_with_hits == pytest.approx(0.5)
    assert (c.session_hit_rate_mean, c.by_turn_of, c.by_turn) == (None, None, [])


def test_by_turn_and_per_session() -> None:
    # two sessions of three turns; session 1's turn 1 missed its cache
    hits = {(0, 0): 0, (0, 1): 90, (0, 2): 180, (1, 0): 0, (1, 1): 0, (1, 2): 180}
    records = [
        cached(3 * s + t, 100 * (t + 1), hits[s, t], session=s, turn=t)
        for s in range(2)
        for t in range(3)
    ]
    c = summarize(records).cache
    assert c is not None
    assert c.by_turn_of == "turn"
    assert c.by_turn == pytest.approx([0.0, 90 / 400, 360 / 600])
    assert c.session_hit_rate_mean == pytest.approx((270 / 600 + 180 / 600) / 2)
    assert c.hit_rate == pytest.approx(450 / 1200)


def test_an_agents_calls_index_by_turn_and_only_the_first_ten() -> None:
    records = [cached(i, 100, 10 * (i % 10), session=0, call=i, turn=0) for i in range(12)]
    records.append(cached(20, 100, 50, session=1, call=None))  # a call index is missing: skip
    c = summarize(records).cache
    assert c is not None
    assert c.by_turn_of == "call" and len(c.by_turn) == BY_TURN_MAX
    assert c.by_turn[:3] == pytest.approx([0.0, 0.1, 0.2])
    assert c.by_turn[9] == pytest.approx(0.9)


def test_a_gap_in_the_turns_is_null() -> None:
    records = [cached(0, 100, 0, session=0, turn=0), cached(1, 100, 50, session=0, turn=2)]
    c = summarize(records).cache
    assert c is not None and c.by_turn == [0.0, None, 0.5]
