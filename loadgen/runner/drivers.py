"""Load patterns: closed loop (N workers) and open loop (an arrival schedule).

Both hand each finished record to ``on_record`` at once, so records are
written as they come. Open loop sleeps until each absolute deadline
``t0 + offset`` (never a relative interval) and records both the scheduled and
the actual send time.

Imports: asyncio, loadgen.clock, loadgen.records, loadgen.workload.plan.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator, Sequence

from loadgen.clock import now_ns, sleep_until
from loadgen.records import Record
from loadgen.workload.plan import RequestSpec

__all__ = ["OnRecord", "Send", "closed_loop", "open_loop"]

Send = Callable[[RequestSpec, int | None], Awaitable[Record]]
OnRecord = Callable[[Record], None]


async def closed_loop(
    send: Send,
    specs: Iterator[RequestSpec],
    concurrency: int,
    on_record: OnRecord,
    *,
    duration_ns: int | None = None,
) -> None:
    """``concurrency`` workers; each sends its next request when its previous one ends.

    With ``duration_ns``, no measured request is sent once that long has passed
    since the first measured send (warm-up requests do not start the clock).
    """
    deadline: list[int] = []  # set by the first measured send

    async def worker() -> None:
        for spec in specs:
            if duration_ns is not None and not spec.warmup:
                if not deadline:
                    deadline.append(now_ns() + duration_ns)
                elif now_ns() >= deadline[0]:
                    return
            on_record(await send(spec, None))

    async with asyncio.TaskGroup() as tg:
        for _ in range(concurrency):
            tg.create_task(worker())


async def open_loop(
    send: Send,
    specs: Sequence[RequestSpec],
    offsets_ns: Sequence[int],
    on_record: OnRecord,
    *,
    max_concurrency: int | None = None,
    send_lags_ns: list[int] | None = None,
) -> None:
    """Send ``specs[i]`` at ``t0 + offsets_ns[i]``; at most ``max_concurrency`` in flight.

    ``send_lags_ns`` collects how late the sender woke for each deadline (its
    own lag, not the wait for a free slot under ``max_concurrency``).
    """
    slots = asyncio.Semaphore(max_concurrency) if max_concurrency else None

    async def one(spec: RequestSpec, scheduled: int) -> None:
        try:
            on_record(await send(spec, scheduled))
        finally:
            if slots is not None:
                slots.release()

    async with asyncio.TaskGroup() as tg:
        t0 = now_ns()
        for spec, offset in zip(specs, offsets_ns, strict=True):
            scheduled = t0 + offset
            await sleep_until(scheduled)
            if send_lags_ns is not None:
                send_lags_ns.append(now_ns() - scheduled)
            if slots is not None:
                await slots.acquire()
            tg.create_task(one(spec, scheduled))
