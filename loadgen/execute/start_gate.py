"""Starts let through a few per turn of the event loop, so reads come between them.

Owns :class:`StartGate`. A closed loop turns over in waves: when many
requests end at once, each user's task, woken in the same turn of the loop,
builds and sends its next request before the loop polls its sockets again.
At 512 streams on one core a turn of 200-400 such starts kept the loop busy
40-130 ms of its own CPU (``benchmarks/many_streams.py``; docs/performance.md,
"Many streams on one core") without a read: a stream whose next token came
meanwhile was read with it, and its first token took the second's stamp, one
ITL late. Behind the gate each start waits its turn: at most ``per_turn``
starts run per turn of the loop, and the loop polls (and reads, and stamps)
between turns. A start waits one turn at least (microseconds), and its TTFT
counts from its send, after the wait.

Invariant: starts pass in the order they asked, ``per_turn`` a turn at most,
and none waits while fewer than ``per_turn`` asked in a turn.
"""

from __future__ import annotations

import asyncio
from collections import deque

__all__ = ["STARTS_PER_TURN", "StartGate"]

#: Starts let through per turn of the event loop: at ~0.2 ms of the loop's own work
#: each (finishing the last record, building and sending the next), a turn stays
#: within a few ms, well inside a 20 ms inter-token gap.
STARTS_PER_TURN = 16


class StartGate:
    """Lets ``per_turn`` waiting starts through per turn of the running loop."""

    def __init__(self, per_turn: int = STARTS_PER_TURN) -> None:
        if per_turn < 1:
            msg = f"per_turn {per_turn}; expected 1 or more"
            raise ValueError(msg)
        self.per_turn = per_turn
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._scheduled = False

    async def turn(self) -> None:
        """Wait until this start's turn (the next turn of the loop, or a later one)."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        self._waiting.append(fut)
        if not self._scheduled:
            self._scheduled = True
            loop.call_soon(self._release)
        await fut

    def _release(self) -> None:
        """Let the next ``per_turn`` through; come back next turn if more wait."""
        n = 0
        while self._waiting and n < self.per_turn:
            fut = self._waiting.popleft()
            if not fut.done():  # a cancelled waiter gives its place up
                fut.set_result(None)
                n += 1
        if self._waiting:
            asyncio.get_running_loop().call_soon(self._release)
        else:
            self._scheduled = False
