"""The one clock of the load generator.

Owns every reading of time and every wait. Latency is integer nanoseconds from
``time.perf_counter_ns`` (CLOCK_MONOTONIC on Linux, shared by every process on
the host, so a server on the same machine can stamp in the same clock). The
wall clock is read only in :func:`anchor`, to align with other processes and
hosts, and for :func:`from_kernel_ns`, to turn the kernel's receive stamps
(which are in wall-clock time) into monotonic time; never to time an interval.
The conversion itself is ``loadgen.netstamp``'s (the mock shares it), which
reads no clock: this module hands it the two clocks to read.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from loadgen.netstamp import WallOffset

__all__ = [
    "LATELY",
    "NS_PER_MS",
    "NS_PER_S",
    "Anchor",
    "anchor",
    "block_for",
    "cpu_ns",
    "from_kernel_ns",
    "loop_time_at",
    "now_ns",
    "pause",
    "sleep_until",
    "yield_lag_ns",
]

NS_PER_MS = 1_000_000
NS_PER_S = 1_000_000_000

#: Added to loop-timer deadlines so that they never fire before the monotonic deadline:
#: uvloop rounds a timer's delay to the nearest millisecond (up to 0.5 ms early).
LOOP_TIMER_SLACK_S = 0.001

#: A loop whose clock reads within this of ``now_ns`` reads CLOCK_MONOTONIC too (asyncio's
#: and uvloop's do: uvloop in whole milliseconds, up to one behind).
SAME_CLOCK_S = 0.1

#: Added instead for a loop on some other clock, placed by an offset from its reading.
OTHER_CLOCK_SLACK_S = 0.002

#: Monotonic nanoseconds; the only latency clock loadgen uses.
now_ns = time.perf_counter_ns

#: CPU time of this process (user + system), for the saturation check.
cpu_ns = time.process_time_ns


def loop_time_at(deadline_ns: int) -> float:
    """The event loop time at monotonic ``deadline_ns``, for ``asyncio.timeout_at``.

    A loop on CLOCK_MONOTONIC gets the deadline itself: placing it by an offset
    from uvloop's reading, which is whole milliseconds and up to one behind,
    would move it up to 1 ms early. Its timers fire once their (possibly
    coarse) reading has passed the rounded deadline, so with
    ``LOOP_TIMER_SLACK_S`` a timeout fires up to about 2 ms late, never early.
    """
    loop = asyncio.get_running_loop()
    loop_s = loop.time()
    now = time.perf_counter_ns()
    if abs(loop_s - now / NS_PER_S) < SAME_CLOCK_S:
        return deadline_ns / NS_PER_S + LOOP_TIMER_SLACK_S
    return loop_s + (deadline_ns - now) / NS_PER_S + OTHER_CLOCK_SLACK_S


@dataclass(frozen=True, slots=True)
class Anchor:
    """A monotonic and a wall-clock reading taken together.

    ``wall_ns - monotonic_ns`` converts a monotonic stamp to Unix time.
    ``uncertainty_ns`` is the gap between the two monotonic reads that
    bracket the wall-clock read.
    """

    monotonic_ns: int
    wall_ns: int
    uncertainty_ns: int

    def to_wall_ns(self, mono_ns: int) -> int:
        return mono_ns - self.monotonic_ns + self.wall_ns


def anchor(tries: int = 5) -> Anchor:
    """Pair the monotonic and wall clocks; keep the tightest of ``tries`` brackets."""
    best: Anchor | None = None
    for _ in range(tries):
        before = time.perf_counter_ns()
        wall = time.time_ns()
        after = time.perf_counter_ns()
        candidate = Anchor((before + after) // 2, wall, after - before)
        if best is None or candidate.uncertainty_ns < best.uncertainty_ns:
            best = candidate
    assert best is not None
    return best


#: The wall-minus-monotonic offset kernel receive stamps are converted with; this
#: module passes it the clocks, as it is the one that reads them.
_KERNEL_OFFSET = WallOffset(time.perf_counter_ns, time.time_ns)

#: ``from_kernel_ns(realtime_ns, now)``: a kernel receive stamp (``SO_TIMESTAMPNS``,
#: CLOCK_REALTIME) as monotonic ns, ``now`` being :func:`now_ns` just read; a stamp
#: a wall-clock step makes implausible is ``now`` (``loadgen.netstamp.WallOffset``).
from_kernel_ns = _KERNEL_OFFSET.to_monotonic


def block_for(seconds: float) -> None:
    """Blocking pause, for set-up code outside any event loop (waiting for a child to start)."""
    time.sleep(seconds)


#: How early the coarse (event-loop timer) part of :func:`sleep_until` ends.
#: uvloop's timers have millisecond resolution, so it must end over 1 ms early.
SPIN_NS = 1_200_000


async def sleep_until(deadline_ns: int) -> None:
    """Sleep until the absolute monotonic ``deadline_ns`` (never a relative interval).

    The loop's timer gets within ``SPIN_NS`` of the deadline; the rest is
    spent yielding to other tasks until the clock says so.
    """
    remaining = deadline_ns - time.perf_counter_ns()
    if remaining > SPIN_NS:
        await asyncio.sleep((remaining - SPIN_NS) / NS_PER_S)
    while time.perf_counter_ns() < deadline_ns:  # noqa: ASYNC110 (a spin that lets others run)
        await asyncio.sleep(0)


async def pause(seconds: float) -> None:
    """A coarse relative wait, for periodic housekeeping only (never for a schedule)."""
    await asyncio.sleep(seconds)


class Lately:
    """How late the event loop has lately run what was due (ns): the worst of the loop
    monitor's recent samples, 0 until one runs. A stamp the loop takes as it reads (the
    user-space transports') may be up to this late: their reads' slack."""

    __slots__ = ("ns",)

    def __init__(self) -> None:
        self.ns = 0


#: the process's one :class:`Lately` (the loop monitor sets it, user-space transports read it)
LATELY = Lately()


async def yield_lag_ns() -> int:
    """How long one pass through the event loop's ready queue takes right now."""
    t0 = time.perf_counter_ns()
    await asyncio.sleep(0)
    return time.perf_counter_ns() - t0
