"""Load patterns: closed loop (N users) and open loop (an arrival schedule).

Both hand each finished record to ``on_record`` at once, so records are
written as they come. Open loop sleeps until each absolute deadline
``t0 + offset`` (never a relative interval) and records both the scheduled and
the actual send time. A "job" is one request, or one multi-turn session whose
turns the runner sends in order.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

from loadgen.clock import now_ns, sleep_until
from loadgen.execute.start_gate import STARTS_PER_TURN, StartGate
from loadgen.records import Record
from loadgen.workload import RequestSpec

__all__ = ["Budget", "OnRecord", "Send", "closed_loop", "open_loop", "run_jobs", "send_each"]

Send = Callable[[RequestSpec, int | None], Awaitable[Record]]
OnRecord = Callable[[Record], None]
J = TypeVar("J")
#: Runs one job; the flag says whether it started during the ramp-up; the int is
#: its scheduled start (open loop) or None.
RunJob = Callable[[J, bool, int | None], Awaitable[None]]


@dataclass(slots=True)
class Budget:
    """When a closed loop stops: after ``measured`` unflagged starts or ``duration_ns``.

    The duration counts from the first measured start, so warm-up and ramp-up
    do not eat into it.
    """

    measured: int | None = None
    duration_ns: int | None = None
    started: int = 0
    deadline: int | None = None

    def take(self, now: int) -> bool:
        """Whether one more measured job may start at ``now`` (and count it if so)."""
        if self.measured is not None and self.started >= self.measured:
            return False
        if self.duration_ns is not None:
            if self.deadline is None:
                self.deadline = now + self.duration_ns
            elif now >= self.deadline:
                return False
        self.started += 1
        return True

    def over(self, now: int) -> bool:
        return self.deadline is not None and now >= self.deadline


async def closed_loop(
    run: RunJob[J],
    jobs: Iterator[J],
    concurrency: int,
    *,
    budget: Budget | None = None,
    ramp_ns: int = 0,
    flagged: Callable[[J], bool] = lambda _: False,
    t0_ns: int | None = None,
    starts_per_turn: int | None = STARTS_PER_TURN,
) -> None:
    """``concurrency`` users; each starts its next job when its previous one ends.

    Each start waits its turn at a :class:`StartGate` (``starts_per_turn`` a turn
    of the loop; None: no gate), so that a wave of ends does not start its
    whole next wave before the loop reads its sockets again.

    With ``ramp_ns``, user k starts at ``k/concurrency`` of the ramp, and jobs
    started before the ramp ends are flagged (out of the metrics and of the
    budget). Jobs for which ``flagged`` is true (warm-up) never count either.
    ``t0_ns``: the ramp's start when it is not now (workers share one).
    """
    budget = budget or Budget()
    gate = StartGate(starts_per_turn) if starts_per_turn else None
    t0 = now_ns() if t0_ns is None else t0_ns
    ramp_end = t0 + ramp_ns

    async def user(k: int) -> None:
        if ramp_ns:
            await sleep_until(t0 + ramp_ns * k // concurrency)
        for job in jobs:
            if gate is not None:
                await gate.turn()
            now = now_ns()
            ramping = ramp_ns > 0 and now < ramp_end
            if not ramping and not flagged(job) and not budget.take(now):
                return
            await run(job, ramping, None)

    async with asyncio.TaskGroup() as tg:
        for k in range(concurrency):
            tg.create_task(user(k))


async def open_loop(
    run: RunJob[J],
    jobs: Sequence[J],
    offsets_ns: Sequence[int],
    *,
    max_concurrency: int | None = None,
    send_lags_ns: list[int] | None = None,
    t0_ns: int | None = None,
) -> None:
    """Start ``jobs[i]`` at ``t0 + offsets_ns[i]``; at most ``max_concurrency`` in flight.

    ``t0`` is now, or ``t0_ns`` when given (workers dealt one schedule share one).

    ``send_lags_ns`` collects how late the sender woke for each deadline: its
    own lag, measured from the deadline or, when the sender was still waiting
    for a free slot under ``max_concurrency`` at the deadline, from the moment
    it got one. The slot wait itself is the server's backpressure, not the
    client's lag; the records show it (``start_ns - scheduled_ns``, reported as
    the step's queue wait).
    """
    slots = asyncio.Semaphore(max_concurrency) if max_concurrency else None

    async def one(job: J, scheduled: int) -> None:
        try:
            await run(job, False, scheduled)
        finally:
            if slots is not None:
                slots.release()

    async with asyncio.TaskGroup() as tg:
        t0 = now_ns() if t0_ns is None else t0_ns
        slot_at = t0  # when the sender last got a slot it had to wait for
        for job, offset in zip(jobs, offsets_ns, strict=True):
            scheduled = t0 + offset
            await sleep_until(scheduled)
            if send_lags_ns is not None:
                # held by a full pool past this deadline: late only from when a slot freed
                send_lags_ns.append(now_ns() - max(scheduled, slot_at))
            if slots is not None:
                if slots.locked():
                    await slots.acquire()
                    slot_at = now_ns()
                else:
                    await slots.acquire()
            tg.create_task(one(job, scheduled))


def send_each(send: Send, on_record: OnRecord) -> RunJob[RequestSpec]:
    """A job runner for single requests: send, flag ramp-up, hand the record on."""

    async def run(spec: RequestSpec, ramping: bool, scheduled: int | None) -> None:
        if ramping and not spec.ramp:
            spec = dataclasses.replace(spec, ramp=True)
        on_record(await send(spec, scheduled))

    return run


async def run_jobs(run: RunJob[J], jobs: Iterator[J], concurrency: int) -> None:
    """Warm-up: every job, ``concurrency`` at a time, none of them counted."""
    await closed_loop(run, jobs, concurrency, flagged=lambda _: True)
