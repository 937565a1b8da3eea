"""Session metrics from synthetic records: time split, sub-agent waits, goodput, the bound."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from loadgen.metrics import StepColumns, summarize_step
from loadgen.metrics.sessions import call_bucket, split_time
from loadgen.records import Record
from loadgen.scenario import SlaSpec
from loadgen.summary import LoadPoint, SessionStats, StepSummary

MS = 1_000_000
LOAD = LoadPoint(mode="concurrency", concurrency=2)


class Calls:
    """Makes records with unique ids; times in ms."""

    def __init__(self) -> None:
        self.next_id = 0

    def __call__(
        self, session: int, start: float, end: float, *, ttft: float = 5.0, **kw: Any
    ) -> Record:
        i = self.next_id
        self.next_id += 1
        s, e = round(start * MS), round(end * MS)
        first = s + round(ttft * MS)
        fields: dict[str, Any] = {
            "ok": True,
            "output_events": 2,
            "prompt_tokens_requested": 100,
        }
        fields.update(kw)
        return Record(
            step=0,
            id=i,
            warmup=fields.pop("warmup", False),
            request_id=f"r{i}",
            max_tokens=2,
            session=session,
            start_ns=s,
            sent_ns=s,
            first_token_ns=first,
            last_token_ns=e,
            end_ns=e,
            token_ns=[first, e],
            **fields,
        )


def summarize(records: list[Record], sla: dict[str, Any] | None = None) -> StepSummary:
    return summarize_step(0, LOAD, records, SlaSpec.model_validate(sla or {}))


def sessions_of(records: list[Record], sla: dict[str, Any] | None = None) -> SessionStats:
    s = summarize(records, sla).sessions
    assert s is not None
    return s


def test_a_chat_without_sub_agents_splits_into_llm_calls_and_the_rest() -> None:
    call = Calls()
    records = [
        call(0, 0, 100, turn=0, prompt_tokens_requested=50),
        call(0, 150, 250, turn=1, prompt_tokens_requested=120),
        call(0, 300, 420, turn=2, prompt_tokens_requested=260),
    ]
    s = sessions_of(records)
    assert (s.measured, s.completed, s.failed, s.left_out) == (1, 1, 0, 0)
    assert s.time_ms.p50 == 420.0
    assert s.llm_ms.p50 == 320.0  # 100 + 100 + 120
    assert s.sub_agent_wait_ms.p50 == 0.0
    assert s.tools_other_ms.p50 == 100.0  # the two 50 ms gaps
    assert s.llm_share == pytest.approx(320 / 420)
    assert s.tools_other_share == pytest.approx(100 / 420)
    assert (s.calls_mean, s.calls_max, s.sub_agents_mean) == (3.0, 3, 0.0)
    assert (s.first_prompt_tokens_p50, s.last_prompt_tokens_p50) == (50.0, 260.0)
    assert s.growth_tokens_p50 == 210.0
    assert sorted(s.ttft_by_call) == ["0", "1", "2"] and list(s.ttft_by_depth) == ["0"]
    assert s.cached_share is None and s.cached_reported == 0


def test_the_main_agent_waits_from_its_answer_to_its_last_sub_agents_answer() -> None:
    call = Calls()
    m0 = call(0, 0, 100, agent=0, call=0, agent_depth=0)
    a1 = call(0, 110, 200, agent=1, call=0, parent=m0.id, agent_depth=1)
    a1b = call(0, 210, 260, agent=1, call=1, parent=m0.id, agent_depth=1)
    a2 = call(0, 105, 300, agent=2, call=0, parent=m0.id, agent_depth=1)
    m1 = call(0, 320, 400, agent=0, call=1, agent_depth=0)
    s = sessions_of([m0, a1, a1b, a2, m1])
    assert s.time_ms.p50 == 400.0
    assert s.llm_ms.p50 == 180.0  # the main agent's calls only: 100 + 80
    assert s.sub_agent_wait_ms.p50 == 200.0  # 100 (m0's end) -> 300 (a2's end)
    assert s.tools_other_ms.p50 == 20.0  # 400 - 180 - 200
    assert s.calls_max == 5 and s.sub_agents_mean == 2.0
    assert s.llm_share + s.sub_agent_wait_share + s.tools_other_share == pytest.approx(1.0)  # type: ignore[operator]
    assert sorted(s.ttft_by_depth) == ["0", "1"]
    assert s.ttft_by_depth["0"].count == 2 and s.ttft_by_depth["1"].count == 3


def test_a_grandchild_counts_for_the_main_call_it_descends_from_capped_at_the_next_call() -> None:
    # ids by hand: the chain 3 -> 1 -> 0 leads to main call 0
    agent = [0, 1, 0, 2]
    ids = [10, 11, 12, 13]
    none = -(2**63)
    parent = [none, 10, none, 11]
    start = [0, 110 * MS, 320 * MS, 150 * MS]
    end = [100 * MS, 200 * MS, 400 * MS, 350 * MS]  # the grandchild ends after m1's start
    t = split_time(agent, ids, parent, start, end)
    assert t.wait == (320 - 100) * MS  # capped at the main agent's next call
    assert t.llm == (100 + 80) * MS and t.time == 400 * MS
    # children of the last main call: waited for up to the session's end
    t = split_time([0, 1], [1, 2], [none, 1], [0, 110 * MS], [100 * MS, 250 * MS])
    assert (t.time, t.llm, t.wait) == (250 * MS, 100 * MS, 150 * MS)


def test_an_unlinked_sub_agent_call_is_tools_and_other() -> None:
    none = -(2**63)
    t = split_time([0, 1], [1, 2], [none, none], [0, 110 * MS], [100 * MS, 250 * MS])
    assert t.wait == 0 and t.llm == 100 * MS


def test_sessions_with_a_warm_up_call_are_left_out_and_failures_counted() -> None:
    call = Calls()
    records = [
        call(0, 0, 10, turn=0, warmup=True),
        call(0, 20, 30, turn=1),  # its session started in the warm-up: left out
        call(1, 0, 10, turn=0),
        call(1, 20, 30, turn=1, ok=False, error_kind="http_500"),
        call(2, 0, 40, turn=0),
    ]
    s = sessions_of(records)
    assert (s.measured, s.completed, s.failed, s.left_out) == (2, 1, 1, 1)
    assert s.time_ms.count == 1 and s.time_ms.p50 == 40.0
    # TTFT by call: the successful calls of measured sessions (session 0's are not)
    assert s.ttft_by_call["0"].count == 2 and "1" not in s.ttft_by_call


def test_session_goodput_needs_the_bound_and_every_call_within_its_own() -> None:
    call = Calls()
    records = [
        *(call(0, 0, 100, turn=0), call(0, 120, 200, turn=1)),  # good
        *(call(1, 0, 100, turn=0), call(1, 120, 900, turn=1)),  # 0.9 s: beyond 0.5 s
        *(call(2, 0, 100, turn=0, ttft=80), call(2, 120, 200, turn=1)),  # a TTFT beyond 50
        *(call(3, 0, 100, turn=0), call(3, 120, 200, turn=1, ok=False)),  # failed
        *(call(4, 0, 100, turn=0), call(4, 120, 300, turn=1, ok=False, cancelled_by_client=True)),
    ]
    sla = {"session_s": {"p50": 10, "p90": 0.5}, "ttft_ms": {"p99": 50}}
    step = summarize(records, sla)
    s = step.sessions
    assert s is not None
    assert (s.completed, s.failed) == (4, 1)
    assert s.good_sessions == 2  # sessions 0 and 4 (a call the client cut is not judged)
    assert s.goodput_sessions_per_s == pytest.approx(2 / step.duration_s)
    assert s.sessions_per_s == pytest.approx(4 / step.duration_s)
    lo, hi = s.sessions_per_s_ci or (None, None)
    assert lo is not None and hi is not None and lo < s.sessions_per_s < hi
    # no bounds at all: every completed session is good
    assert sessions_of(records).good_sessions == 4


def test_the_session_bound_joins_the_steps_verdict_with_its_interval() -> None:
    call = Calls()
    rng = np.random.default_rng(0)
    records = []
    for i in range(60):
        length = float(rng.uniform(200, 1000))
        records += [call(i, 0, length / 2, turn=0), call(i, length / 2 + 10, length, turn=1)]
    times = sorted(r.end_ns for r in records if r.turn == 1)
    p90 = float(np.percentile(np.array(times) / 1e9, 90))
    met = summarize(records, {"session_s": {"p90": 5}}).sla
    (check,) = met.checks
    assert (check.metric, check.stat, check.verdict) == ("session_s", "p90", "met")
    assert met.verdict == "met"
    assert check.value == pytest.approx(p90)
    assert check.interval is not None and check.interval[0] is not None
    assert check.interval[0] <= check.value <= (check.interval[1] or 99)
    missed = summarize(records, {"session_s": {"p90": 0.1}}).sla
    assert missed.verdict == "missed" and "session_s.p90" in (missed.reason or "")
    close = summarize(records, {"session_s": {"p90": round(p90, 3)}}).sla
    assert close.verdict == "inconclusive"


def test_too_few_sessions_for_a_percentile_say_how_many_would_decide() -> None:
    call = Calls()
    records = [call(i, 0, 100, turn=0) for i in range(5)]
    sla = summarize(records, {"session_s": {"p90": 30}}).sla
    (check,) = sla.checks
    assert sla.verdict == "inconclusive" and sla.cause == "few_requests"
    assert check.reason == "5 sessions cannot decide a p90 at 95%; about 36 would"
    assert check.requests_needed == 36  # one call a session


def test_a_step_without_a_completed_session_misses_its_session_bound() -> None:
    call = Calls()
    records = [call(0, 0, 100, turn=0, ok=False, error_kind="http_500"), call(1, 0, 50)]
    records[1].session = None  # a plain request beside it succeeded
    sla = summarize(records, {"session_s": {"p90": 30}}).sla
    assert sla.verdict == "missed"
    assert sla.reason == "session_s.p90: no completed session"


def test_steps_without_sessions_have_no_block() -> None:
    call = Calls()
    plain = [call(0, 0, 10), call(1, 5, 20)]
    for r in plain:
        r.session = None
    assert summarize(plain).sessions is None


def test_cached_share_is_over_the_calls_that_report_it() -> None:
    call = Calls()
    records = [
        call(0, 0, 10, turn=0, prompt_tokens_server=100, cached_tokens_server=0),
        call(0, 20, 30, turn=1, prompt_tokens_server=300, cached_tokens_server=200),
        call(0, 40, 50, turn=2, prompt_tokens_server=500),  # not reported
    ]
    s = sessions_of(records)
    assert s.cached_reported == 2 and s.cached_share == pytest.approx(200 / 400)


def test_merged_tallies_give_the_sessions_one_tally_gives() -> None:
    call = Calls()
    records = []
    for i in range(12):
        m = call(i, 0, 50 + i, agent=0, call=0, agent_depth=0)
        records += [m, call(i, 60, 90 + i, agent=1, call=0, parent=m.id, agent_depth=1)]
        records.append(call(i, 100 + i, 140 + 2 * i, agent=0, call=1, agent_depth=0, ttft=i))
    parts = [records[:7], records[7:8], [], records[8:]]
    merged = StepColumns()
    for part in parts:
        merged.merge(StepColumns.of(part))
    sla = SlaSpec.model_validate({"session_s": {"p90": 1}, "ttft_ms": {"p99": 8}})
    whole = summarize_step(0, LOAD, StepColumns.of(records), sla)
    split = summarize_step(0, LOAD, merged, sla)
    assert split.sessions == whole.sessions
    assert whole.sessions is not None and 0 < whole.sessions.good_sessions < 12


def test_call_indexes_past_nine_share_doubling_buckets() -> None:
    assert [call_bucket(i) for i in (0, 9, 10, 19, 20, 39, 40, 100)] == [
        "0", "9", "10-19", "10-19", "20-39", "20-39", "40-79", "80-159",
    ]  # fmt: skip
    call = Calls()
    records = [call(0, 10 * i, 10 * i + 5, call=i, agent=0) for i in range(25)]
    s = sessions_of(records)
    assert list(s.ttft_by_call) == [*map(str, range(10)), "10-19", "20-39"]
    assert s.ttft_by_call["10-19"].count == 10 and s.ttft_by_call["20-39"].count == 5
