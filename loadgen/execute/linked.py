"""Replaying an agent trace: calls that wait for the calls before them.

A plan with ``waits`` (:mod:`loadgen.workload.trace_links`) says, for each
request, which requests it waits for and the gap the trace had after each:
the tool time after the agent's previous call, or the wait before a
sub-agent's first call. A request is due at the later of its offset from the
step's start (already scaled by ``time_scale``) and, for each request it
waits for, that request's real end plus the gap; it is never sent before
every one of them has ended. Its ``scheduled_ns`` is that due time, so TTFT
from scheduled and the sender's lag count from when the call could go, not
from the trace's offset.

A request waited for that failed still ends (its record's ``end_ns``): the
requests after it go, at that end plus their gap. The trace recorded those
calls, and their prompts are made beforehand, so the load replayed is the
load recorded; the failure is counted where it happened.

Requests that wait for nothing go out from one sender, in offset order, as
in :func:`~loadgen.execute.drivers.open_loop`; a waiting request gets its own
task once the last of its waits ends. A wait on a request this process does
not hold is ignored (the plan is dealt by session, so none are).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from loadgen.clock import now_ns, sleep_until
from loadgen.execute.drivers import OnRecord, Send
from loadgen.workload import RequestSpec, Waits

__all__ = ["linked_loop"]


async def linked_loop(
    send: Send,
    on_record: OnRecord,
    specs: Sequence[RequestSpec],
    offsets_ns: Sequence[int],
    waits: Sequence[Waits],
    *,
    max_concurrency: int | None = None,
    send_lags_ns: list[int] | None = None,
    t0_ns: int | None = None,
) -> None:
    """Send ``specs[i]`` when due (see the module docstring); at most ``max_concurrency``
    in flight. ``send_lags_ns`` collects how late the sender woke for each due time."""
    slots = asyncio.Semaphore(max_concurrency) if max_concurrency else None
    here = {s.index: pos for pos, s in enumerate(specs)}
    after: list[list[tuple[int, int]]] = [[] for _ in specs]  # pos -> (dependent pos, gap)
    pending = [0] * len(specs)
    for pos, mine in enumerate(waits):
        for index, gap in mine:
            if index in here:
                after[here[index]].append((pos, gap))
                pending[pos] += 1
    t0 = now_ns() if t0_ns is None else t0_ns
    due = [t0 + o for o in offsets_ns]

    async with asyncio.TaskGroup() as tg:

        async def one(pos: int) -> None:
            try:
                rec = await send(specs[pos], due[pos])
            finally:
                if slots is not None:
                    slots.release()
            end = rec.end_ns or now_ns()
            on_record(rec)
            for d, gap in after[pos]:
                due[d] = max(due[d], end + gap)
                pending[d] -= 1
                if pending[d] == 0:
                    tg.create_task(waited(d))

        async def waited(pos: int) -> None:
            await sleep_until(due[pos])
            if send_lags_ns is not None:
                send_lags_ns.append(now_ns() - due[pos])
            if slots is not None:
                await slots.acquire()
            await one(pos)

        slot_at = t0  # when the sender last got a slot it had to wait for
        roots = sorted((p for p in range(len(specs)) if pending[p] == 0), key=lambda p: due[p])
        for pos in roots:
            await sleep_until(due[pos])
            if send_lags_ns is not None:
                send_lags_ns.append(now_ns() - max(due[pos], slot_at))
            if slots is not None:
                if slots.locked():
                    await slots.acquire()
                    slot_at = now_ns()
                else:
                    await slots.acquire()
            tg.create_task(one(pos))
