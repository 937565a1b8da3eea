"""The one clock: its units, the anchor to the wall clock, kernel stamps, and absolute waits.

Waits are checked for never ending early (the contract); how late they end is
only bounded loosely, as the machine may be busy.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

from loadgen import clock
from loadgen.clock import (
    NS_PER_MS,
    NS_PER_S,
    Anchor,
    anchor,
    from_kernel_ns,
    loop_time_at,
    now_ns,
    sleep_until,
    yield_lag_ns,
)
from loadgen.netstamp import MAX_AGE_NS

# durations held to tight bounds: run apart from the parallel tests (-m timing)
pytestmark = pytest.mark.timing

LATE_NS = 500 * NS_PER_MS  # a loose bound on lateness, for a loaded machine


def test_units() -> None:
    assert NS_PER_S == 1000 * NS_PER_MS == 10**9


def test_now_is_monotonic_nanoseconds() -> None:
    reads = [now_ns() for _ in range(1000)]
    assert all(isinstance(r, int) for r in reads)
    assert reads == sorted(reads)
    t0 = now_ns()
    time.sleep(0.01)
    assert 10 * NS_PER_MS <= now_ns() - t0 < 10 * NS_PER_MS + LATE_NS


def test_an_anchor_turns_monotonic_stamps_into_unix_time() -> None:
    a = Anchor(monotonic_ns=1_000, wall_ns=1_700_000_000 * NS_PER_S, uncertainty_ns=40)
    assert a.to_wall_ns(1_000) == a.wall_ns
    assert a.to_wall_ns(1_000 + 3 * NS_PER_S) == a.wall_ns + 3 * NS_PER_S


def test_the_anchor_keeps_the_tightest_bracket(monkeypatch: pytest.MonkeyPatch) -> None:
    mono = iter([0, 30, 100, 104, 200, 220])  # brackets of 30, 4 and 20 ns
    wall = iter([5_000, 6_000, 7_000])
    monkeypatch.setattr(time, "perf_counter_ns", lambda: next(mono))
    monkeypatch.setattr(time, "time_ns", lambda: next(wall))
    assert anchor(tries=3) == Anchor(monotonic_ns=102, wall_ns=6_000, uncertainty_ns=4)


def test_the_real_anchor_agrees_with_both_clocks() -> None:
    a = anchor()
    assert a.uncertainty_ns >= 0
    assert abs(a.to_wall_ns(now_ns()) - time.time_ns()) < LATE_NS


def test_a_kernel_stamp_becomes_the_monotonic_time_it_was() -> None:
    now = now_ns()
    wall = time.time_ns()
    stamp = from_kernel_ns(wall - 3 * NS_PER_MS, now)
    assert abs(stamp - (now - 3 * NS_PER_MS)) < NS_PER_MS  # the two reads were close
    assert from_kernel_ns(wall + NS_PER_S, now) == now  # in the future: a step in between
    assert from_kernel_ns(wall - MAX_AGE_NS - NS_PER_S, now) == now  # too old to trust


def test_loop_time_at_is_the_deadline_in_loop_time_never_before_it() -> None:
    async def main() -> tuple[float, float]:
        loop = asyncio.get_running_loop()
        before = loop.time()
        at = loop_time_at(now_ns() + NS_PER_S)
        return before, at

    before, at = asyncio.run(main())
    assert before + 1.0 + clock.LOOP_TIMER_SLACK_S <= at + 0.001
    assert at < before + 1.0 + clock.LOOP_TIMER_SLACK_S + LATE_NS / NS_PER_S


def test_sleep_until_ends_at_absolute_deadlines_and_does_not_drift() -> None:
    async def main() -> list[int]:
        t0 = now_ns()
        woke = []
        for k in range(1, 11):  # every 3 ms from t0, whatever each wait cost
            deadline = t0 + k * 3 * NS_PER_MS
            await sleep_until(deadline)
            woke.append(now_ns() - deadline)
        return woke

    late = asyncio.run(main())
    assert min(late) >= 0  # never early
    assert late[-1] < LATE_NS  # the tenth is not ten waits' lateness behind


def test_sleep_until_sleeps_on_a_timer_then_spins_the_last_stretch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[float] = []
    real_sleep = asyncio.sleep

    async def sleep(seconds: float) -> None:
        asked.append(seconds)
        await real_sleep(seconds)

    monkeypatch.setattr(asyncio, "sleep", sleep)

    async def main() -> int:
        start = now_ns()
        deadline = start + 20 * NS_PER_MS
        await sleep_until(deadline)
        return now_ns() - deadline

    assert asyncio.run(main()) >= 0
    coarse, *spins = asked
    assert 0 < coarse <= (20 * NS_PER_MS - clock.SPIN_NS) / NS_PER_S  # ends SPIN_NS early
    assert set(spins) <= {0}  # the rest yields to other tasks


def test_a_deadline_already_past_returns_without_a_timer(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[float] = []

    async def sleep(seconds: float) -> None:
        asked.append(seconds)

    monkeypatch.setattr(asyncio, "sleep", sleep)
    asyncio.run(sleep_until(now_ns() - NS_PER_S))
    assert asked == []


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def test_yield_lag_is_one_pass_of_the_loop(loop: asyncio.AbstractEventLoop) -> None:
    async def busy() -> None:
        clock.block_for(0.02)  # a task that holds the loop for 20 ms

    async def main() -> tuple[int, int]:
        quiet = await yield_lag_ns()
        task = asyncio.ensure_future(busy())
        held = await yield_lag_ns()
        await task
        return quiet, held

    quiet, held = loop.run_until_complete(main())
    assert 0 <= quiet < LATE_NS
    assert held >= 20 * NS_PER_MS


def test_cpu_time_counts_work_not_waiting() -> None:
    t0 = clock.cpu_ns()
    clock.block_for(0.05)
    idle = clock.cpu_ns() - t0
    t0 = clock.cpu_ns()
    end = now_ns() + 50 * NS_PER_MS
    while now_ns() < end:
        pass
    busy = clock.cpu_ns() - t0
    assert idle < busy


def test_uvloop_timers_armed_at_loop_time_at_never_fire_before_their_deadline() -> None:
    """uvloop reads its clock in whole milliseconds and rounds each delay to the nearest
    one: a deadline placed on its clock by an offset from its reading fires up to 0.5 ms
    early (a workload.cancel after_s cut then read as an idle timeout)."""
    uvloop = pytest.importorskip("uvloop")

    async def main() -> list[int]:
        loop = asyncio.get_running_loop()
        early: list[int] = []
        for k in range(400):  # armed and due at every phase within a millisecond
            spin = now_ns() + k * 7_919 % NS_PER_MS
            while now_ns() < spin:
                pass
            deadline = now_ns() + NS_PER_MS + k * 3_571 % (2 * NS_PER_MS)
            fired = loop.create_future()
            loop.call_at(loop_time_at(deadline), lambda f=fired: f.set_result(now_ns()))
            early.append(deadline - await fired)
        return early

    early = uvloop.run(main())
    assert max(early) <= 0, f"fired up to {max(early) / NS_PER_MS:.3f} ms early"
