"""The live view's state: counters per record, rolling figures over the window, the lines drawn.

Records are built with known stamps; every figure asserted is worked out by
hand from those stamps (numpy's default percentile: linear between ranks).
"""

from __future__ import annotations

import pytest

from loadgen.records import Record
from loadgen.report.terminal.live import LiveView, sparkline
from loadgen.report.terminal.live_state import (
    ITL_RING,
    RING,
    WINDOW_S,
    GpuNow,
    HealthNow,
    LiveState,
    ServerNow,
)
from loadgen.scenario import SlaSpec

MS = 1_000_000
S = 1_000_000_000


def rec(
    i: int,
    end_s: float,
    ttft_ms: float,
    gaps_ms: tuple[float, ...] = (),
    *,
    ok: bool = True,
    kind: str | None = None,
    scheduled_back_ms: float | None = None,
) -> Record:
    """Sent at ``end - e2e``; tokens at sent + ttft, then each gap; E2E = ttft + the gaps."""
    end = int(end_s * S)
    e2e = int((ttft_ms + sum(gaps_ms)) * MS)
    sent = end - e2e
    stamps = [sent + int(ttft_ms * MS)]
    for g in gaps_ms:
        stamps.append(stamps[-1] + int(g * MS))
    r = Record(
        step=0,
        id=i,
        warmup=False,
        request_id=f"r{i}",
        prompt_tokens_requested=8,
        max_tokens=8,
        sent_ns=sent,
        start_ns=sent,
        end_ns=end,
        ok=ok,
        error_kind=kind,
    )
    if scheduled_back_ms is not None:
        r.scheduled_ns = sent - int(scheduled_back_ms * MS)
    if ok:
        r.first_token_ns, r.last_token_ns, r.token_ns = stamps[0], stamps[-1], stamps
        r.output_events = len(stamps)
    return r


def test_counters_errors_by_kind_and_tokens() -> None:
    s = LiveState()
    s.start_step("[1/2] concurrency 1", 10, None, 0)
    s.record(rec(0, 1.0, 20, (5, 5)))
    s.record(rec(1, 1.1, 0, ok=False, kind="http_500"))
    s.record(rec(2, 1.2, 0, ok=False, kind="http_500"))
    s.record(rec(3, 1.3, 0, ok=False, kind="read_timeout"))
    assert (s.done, s.failed, s.tokens) == (4, 3, 3)
    assert s.errors == {"http_500": 2, "read_timeout": 1}
    assert len(s.recent) == 1  # failures keep no latencies
    s.start_step("[2/2] concurrency 2", 10, None, 5 * S)
    assert (s.done, s.failed, s.errors, len(s.recent)) == (0, 0, {}, 0)
    assert s.tokens == 3  # the run's token count goes on
    assert s.step_seconds == [5.0]


def test_rolling_figures_cover_only_the_window() -> None:
    s = LiveState()
    s.start_step("x", None, None, 0)
    s.record(rec(0, 1.0, 500, (100, 100)))  # ends 29 s before "now": out of the window
    for i, ttft in enumerate((10, 20, 30, 40, 50), start=1):
        s.record(rec(i, 25.0 + i, ttft, (2, 4)))
    r = s.rolling(int(30 * S))
    assert r.n == 5
    assert r.ttft is not None and r.ttft.p50 == pytest.approx(30)
    assert r.ttft.p99 == pytest.approx(40 + 0.96 * 10)  # rank 3.96 of 0..4
    assert r.ttft.mean == pytest.approx(30)
    assert r.e2e is not None and r.e2e.p50 == pytest.approx(36)
    assert r.itl is not None and r.itl.p50 == pytest.approx(3)  # five 2s, five 4s
    assert r.tpot is not None and r.tpot.p50 == pytest.approx(3)  # (2+4)/(3-1)
    assert WINDOW_S == 10.0


def test_open_loop_counts_from_the_schedule_unless_the_sla_says_sent() -> None:
    late = rec(0, 1.0, 20, (), scheduled_back_ms=30)
    s = LiveState()
    s.start_step("x", None, None, 0)
    s.record(late)
    r = s.rolling(S)
    assert r.ttft is not None and r.ttft.p50 == pytest.approx(50)
    sent = LiveState(sla=SlaSpec(latency_from="sent"))
    sent.start_step("x", None, None, 0)
    sent.record(late)
    r = sent.rolling(S)
    assert r.ttft is not None and r.ttft.p50 == pytest.approx(20)


def test_the_rings_are_bounded() -> None:
    s = LiveState()
    s.start_step("x", None, None, 0)
    for i in range(RING + 50):
        s.record(rec(i, 1.0, 10, (1,)))
    assert len(s.recent) == RING and len(s.gaps) == ITL_RING
    assert s.done == RING + 50


def test_token_rate_is_closed_each_second_on_the_tick() -> None:
    s = LiveState()
    s.start_step("x", None, None, 0)
    s.tick(0)
    s.record(rec(0, 0.1, 10, (1,) * 9))  # 10 token events
    s.tick(S // 2)
    assert not s.rates  # the second is not over
    s.tick(S)
    s.record(rec(1, 1.1, 10, (1,) * 19))  # 20
    s.tick(3 * S)
    assert list(s.rates) == [10.0, 10.0]  # 10 in the 1st second, 20 over the next two


def test_saturation_is_kept_for_the_step_from_when_it_fired() -> None:
    s = LiveState()
    s.start_step("x", None, None, 0)
    s.tick(2 * S, HealthNow(in_flight=4, cpu_util=0.5, loop_lag_p99_ms=0.2))
    assert s.saturated is None
    s.tick(3 * S, HealthNow(in_flight=4, cpu_util=0.95, warnings=("cpu high",)))
    s.tick(4 * S, HealthNow(in_flight=4, cpu_util=0.5))
    assert s.saturated == (3.0, ("cpu high",))
    s.start_step("y", None, None, 5 * S)
    assert s.saturated is None


def test_time_left_from_the_duration_or_the_rate_and_the_runs_from_finished_steps() -> None:
    s = LiveState(steps_planned=3)
    s.start_step("[1/3]", None, 20.0, 0)
    assert s.step_left_s(5 * S) == pytest.approx(15)
    assert s.run_left_s(5 * S, 0) is None  # no finished step to go by
    s.start_step("[2/3]", 100, None, 20 * S)
    for i in range(25):
        s.record(rec(i, 21.0, 10))
    # 25 done in 5 s: 75 left at 5/s = 15 s; then one step at the mean (20 s)
    assert s.step_left_s(25 * S) == pytest.approx(15)
    assert s.run_left_s(25 * S, 1) == pytest.approx(35)


def test_sparkline_scales_to_the_largest() -> None:
    assert sparkline([0, 1, 2, 4]) == "▁▃▅█"
    assert sparkline([0, 0]) == "▁▁"
    assert sparkline(range(1, 11), width=3) == "▇▇█"  # 8, 9, 10 of 10: 6.1, 6.8, 7 of 7
    assert sparkline([]) == ""


def test_the_view_lines_show_each_part() -> None:
    clock = [0]
    sla = SlaSpec.model_validate({"ttft_ms": {"p50": 25, "p99": 100}, "tpot_ms": {"p90": 50}})
    view = LiveView(now=lambda: clock[0], sla=sla, steps_planned=2)
    view.state.start_step("[1/2] concurrency 4", 40, None, 0)  # no rich Live started
    for i, ttft in enumerate((10, 20, 30, 40)):
        view.record(rec(i, 1.0, ttft, (5, 5)))
    view.record(rec(9, 1.0, 0, ok=False, kind="http_503"))
    clock[0] = 2 * S
    view.tick(
        HealthNow(in_flight=3, cpu_util=0.93, loop_lag_p99_ms=0.4, warnings=("cpu 93%",)),
        ServerNow(running=3, waiting=1, kv_usage=0.25),
        (GpuNow("GPU 0", 87, 40.5 * 2**30, 310),),
    )
    text = [line for line, _ in view.lines()]
    assert text[0] == "[1/2] concurrency 4 · step 14 s left"  # 5 done in 2 s, 35 left
    assert text[1] == "requests 5/40 done · 1 failed · 3 in flight · 2.5 req/s"
    ttft = next(line for line in text if line.startswith("TTFT"))
    assert ttft.split()[1:5] == ["25.0", "ms", "39.7", "ms"]
    assert ttft.endswith("p50 ≤ 25 ms · p99 ≤ 100 ms")
    assert any(line.startswith("TPOT") and line.endswith("p90 ≤ 50 ms") for line in text)
    assert "errors   http_503 1" in text
    assert "server   running 3 · waiting 1 · KV 25%" in text
    assert "GPU 0    util 87% · mem 40.5 GiB · 310 W" in text
    assert "loadgen  CPU 93% · loop lag p99 0.4 ms" in text
    assert "⚠ saturated now: cpu 93%" in text
    clock[0] = 3 * S  # the next pulse is calm: the warning says it was earlier
    view.tick(HealthNow(in_flight=3, cpu_util=0.5, loop_lag_p99_ms=0.1), None, ())
    calm = [line for line, _ in view.lines()]
    assert "loadgen  CPU 50% · loop lag p99 0.1 ms" in calm
    assert "⚠ saturated earlier, at 2 s: cpu 93%" in calm
    assert not any(line.startswith("⚠ saturated now") for line in calm)
    styles = dict(view.lines())
    assert styles[ttft] == ""  # p50 25.0 is not over 25
    assert all(len(line) <= 80 for line in text)
