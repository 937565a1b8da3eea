"""Carrying out one step's plan in this process: the same code in the run and in a worker.

:class:`LocalExecutor` sends a plan (or one worker's share of it) through a
requester, watching this process (:class:`~loadgen.execute.monitor.LoopMonitor`)
and handing each finished record on; :class:`StepOutcome` is what a step's
summary needs from whoever carried it out, one process or several.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from loadgen.client import Requester
from loadgen.clock import now_ns
from loadgen.execute.agents import AgentRunner
from loadgen.execute.drivers import (
    Budget,
    OnRecord,
    RunJob,
    Send,
    closed_loop,
    open_loop,
    run_jobs,
    send_each,
)
from loadgen.execute.linked import linked_loop
from loadgen.execute.live import Live
from loadgen.execute.media_feed import MediaFeed, MediaHelper
from loadgen.execute.monitor import LoopMonitor, Pulse
from loadgen.execute.sessions import SessionRunner
from loadgen.records import Record
from loadgen.summary import ClientHealth
from loadgen.workload import (
    ClosedLoop,
    ClosedPlan,
    ClosedSessionsPlan,
    LinkedPlan,
    OpenLoop,
    OpenPlan,
    OpenSessionsPlan,
    RequestSpec,
    StepPlan,
    Workload,
)

__all__ = ["Executor", "LocalExecutor", "StepOutcome", "carry_out"]

J = TypeVar("J")
K = TypeVar("K")


@dataclass(slots=True)
class StepOutcome:
    """How carrying out a step went, beside its records."""

    health: ClientHealth
    interrupted: bool = False
    #: per process: (time, requests in flight) samples, for Little's law
    in_flight: list[list[tuple[int, int]]] = field(default_factory=list)
    http_versions: set[str] = field(default_factory=set)

    def mean_in_flight(self, start_ns: int, end_ns: int) -> float | None:
        """Requests in flight over ``[start_ns, end_ns]``: every process's mean, summed."""
        means = []
        for samples in self.in_flight:
            window = [n for t, n in samples if start_ns <= t <= end_ns]
            if window:
                means.append(sum(window) / len(window))
        return sum(means) if means else None


class Executor(Protocol):
    """Whoever carries out the run's steps: this process, or a pool of workers."""

    async def step(
        self, plan: StepPlan, index: int, mode: str, value: float, on_record: OnRecord
    ) -> StepOutcome:
        """Carry out step ``index`` (planned as ``plan`` at load ``mode``/``value``)."""
        ...

    async def aclose(self) -> None: ...

    def live(self) -> Live:
        """Requests in flight now and the running (or last) step's send lags (off the load
        path: read by a scrape or at a step's end)."""
        ...

    def pulse(self) -> Pulse | None:
        """Loadgen's health right now (the live view); None between steps."""
        ...


class LocalExecutor:
    """Carries out steps in this process's event loop."""

    def __init__(self, requester: Requester, workload: Workload) -> None:
        self.requester = requester
        self.workload = workload
        #: where a closed loop's synthetic media are made (started before the first step)
        self.media = None if workload.media is None else MediaHelper(workload.media)
        self._monitor: LoopMonitor | None = None  # the step in progress's
        self._send_lags: list[int] = []  # the running (or last) step's

    def pulse(self) -> Pulse | None:
        return None if self._monitor is None else self._monitor.pulse()

    async def step(
        self, plan: StepPlan, index: int, mode: str, value: float, on_record: OnRecord
    ) -> StepOutcome:
        return await self.run(plan, index, on_record)

    async def aclose(self) -> None:
        await self.requester.aclose()
        if self.media is not None:
            await self.media.aclose()

    def live(self) -> Live:
        monitor = self._monitor
        return Live(monitor.in_flight if monitor is not None else 0, self._send_lags)

    async def run(
        self,
        plan: StepPlan,
        index: int,
        on_record: OnRecord,
        *,
        t0_ns: int | None = None,
        worker: int = 0,
        workers: int = 1,
    ) -> StepOutcome:
        """Send ``plan``; a cancellation ends it early (``interrupted``), keeping every record.

        Requests cut short are handed to ``on_record`` as ``cancelled`` rows.
        """
        requester = self.requester
        monitor = self._monitor = LoopMonitor()
        send_lags: list[int] = []
        self._send_lags = send_lags
        media_waits: list[int] = []
        media = self.media if isinstance(plan, ClosedPlan) else None
        if media is not None:
            await media.start()  # before the step: a process takes ~1 s to start

        async def send(spec: RequestSpec, scheduled: int | None) -> Record:
            monitor.in_flight += 1
            try:
                return await requester.send(spec, index, scheduled)
            finally:
                monitor.in_flight -= 1

        requester.take_read_lag()  # what came before this step is not its own
        monitor.start()
        self._monitor = monitor
        interrupted = False
        try:
            await carry_out(
                plan,
                self.workload,
                send,
                on_record,
                send_lags,
                t0_ns=t0_ns,
                worker=worker,
                workers=workers,
                media=media,
                media_waits=media_waits,
            )
        except asyncio.CancelledError:
            interrupted = True
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            for rec in requester.cancelled:
                on_record(rec)
            requester.cancelled.clear()
        await monitor.stop()
        self._monitor = None
        health = monitor.health(send_lags, requester.take_read_lag(), media_waits)
        return StepOutcome(health, interrupted, [monitor.samples], requester.http_versions())


async def carry_out(
    plan: StepPlan,
    workload: Workload,
    send: Send,
    on_record: OnRecord,
    send_lags: list[int],
    *,
    t0_ns: int | None = None,
    worker: int = 0,
    workers: int = 1,
    media: MediaHelper | None = None,
    media_waits: list[int] | None = None,
) -> None:
    """Send what ``plan`` says, in its kind.

    ``t0_ns``: the common start of workers dealt one plan (the arrival
    schedule's zero, the ramp's start); now when None. ``worker`` of
    ``workers`` numbers session turns k, k+n, ... so ids stay unique.
    ``media``: where a closed loop's synthetic media are made, ahead of its
    requests (:mod:`loadgen.execute.media_feed`), started; each request's wait
    for them goes to ``media_waits``.
    """
    match plan:
        case ClosedSessionsPlan() | OpenSessionsPlan():
            ids = itertools.count(worker, workers)
            await _run_sessions(plan, workload, send, on_record, send_lags, t0_ns, ids)
        case ClosedPlan() if media is not None:
            feed = MediaFeed(plan.requests, media, plan.concurrency)
            budget = Budget(plan.measured, plan.duration_ns)
            try:
                await _closed_with_media(plan, send, on_record, budget, t0_ns, feed)
            finally:
                feed.close()
                if media_waits is not None:
                    media_waits.extend(feed.waits_ns)
        case ClosedPlan():  # warm up, then drain: the measured window holds measured requests only
            run = send_each(send, on_record)
            budget = Budget(plan.measured, plan.duration_ns)
            await _closed(plan, run, plan.requests, _Warmup(run, plan.warmup), budget, t0_ns)
        case LinkedPlan():  # an agent trace: each call waits for the calls it followed
            await linked_loop(
                send,
                on_record,
                plan.requests,
                plan.offsets_ns,
                plan.waits,
                max_concurrency=plan.max_concurrency,
                send_lags_ns=send_lags,
                t0_ns=t0_ns,
            )
        case OpenPlan():
            await _open(plan, send_each(send, on_record), plan.requests, send_lags, t0_ns)


async def _run_sessions(
    plan: ClosedSessionsPlan | OpenSessionsPlan,
    workload: Workload,
    send: Send,
    on_record: OnRecord,
    send_lags: list[int],
    t0_ns: int | None,
    ids: Iterator[int],
) -> None:
    """Sessions (agent tasks) in a closed loop, or each started at its arrival."""
    measured = plan.measured if isinstance(plan, ClosedSessionsPlan) else None
    budget = Budget(measured, plan.duration_ns)
    stop = lambda: budget.over(now_ns())  # noqa: E731
    sessions: SessionRunner | AgentRunner
    if workload.spec.agent is not None:
        sessions = AgentRunner(workload, send, on_record, stop=stop, ids=ids)
    else:
        sessions = SessionRunner(workload, send, on_record, plan.rng, stop=stop, ids=ids)
    if isinstance(plan, ClosedSessionsPlan):
        warmup = _Warmup(sessions.run_warmup, plan.warmup)
        await _closed(plan, sessions.run, plan.sessions, warmup, budget, t0_ns)
    else:
        jobs = [(s, wu, ra) for s, (wu, ra) in zip(plan.sessions, plan.flags, strict=True)]
        await _open(plan, sessions.run_job, jobs, send_lags, t0_ns)


async def _closed_with_media(
    plan: ClosedPlan,
    send: Send,
    on_record: OnRecord,
    budget: Budget,
    t0_ns: int | None,
    feed: MediaFeed,
) -> None:
    """A closed loop whose requests' media are made ahead of them (``feed``): the first
    are made before the loop starts, while the warm-up (made with the plan) runs."""

    async def send_made(spec: RequestSpec, scheduled: int | None) -> Record:
        return await send(await feed.made(spec), scheduled)

    filling = asyncio.ensure_future(feed.fill())
    try:
        if plan.warmup:
            warmup = send_each(send, on_record)
            await run_jobs(warmup, iter(plan.warmup), min(plan.concurrency, len(plan.warmup)))
        await filling
    finally:
        filling.cancel()
    await closed_loop(
        send_each(send_made, on_record),
        feed,
        plan.concurrency,
        budget=budget,
        ramp_ns=plan.ramp_ns,
        t0_ns=t0_ns if not plan.warmup else None,
    )


@dataclass(slots=True, frozen=True)
class _Warmup(Generic[K]):
    """Jobs run (and drained) before a closed-loop step's measured ones."""

    run: RunJob[K]
    jobs: Sequence[K]


async def _closed(
    plan: ClosedLoop,
    run: RunJob[J],
    jobs: Iterator[J],
    warmup: _Warmup[K],
    budget: Budget,
    t0_ns: int | None,
) -> None:
    """The warm-up at the step's concurrency, then the measured jobs in a closed loop."""
    if warmup.jobs:
        w = warmup.jobs
        await run_jobs(warmup.run, iter(w), min(plan.concurrency, len(w)))
    await closed_loop(
        run,
        jobs,
        plan.concurrency,
        budget=budget,
        ramp_ns=plan.ramp_ns,
        t0_ns=t0_ns if not warmup.jobs else None,
    )


async def _open(
    plan: OpenLoop, run: RunJob[J], jobs: Sequence[J], send_lags: list[int], t0_ns: int | None
) -> None:
    """Each job at its planned offset from the step's start."""
    await open_loop(
        run,
        jobs,
        plan.offsets_ns,
        max_concurrency=plan.max_concurrency,
        send_lags_ns=send_lags,
        t0_ns=t0_ns,
    )
