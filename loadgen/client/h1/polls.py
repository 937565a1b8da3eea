"""When the event loop last polled its sockets, and what that says of a read's bytes.

Owns :class:`Polls`, which wraps the loop's selector (asyncio's selector loops)
and notes, at each return of ``select``, the earliest moment the bytes any
callback of this pass reads can have come (:attr:`Polls.floor_ns`):

- the thread slept in the poll (nothing was ready when it began): it woke with
  the first bytes to come on any socket, so every socket's bytes came at or
  after that wake, which is the poll's return less the time the thread then
  waited for a core (``/proc/thread-self/schedstat``'s run delay) and
  :data:`WAKE_NS` for the kernel's wake-up and the return;
- it did not sleep (a socket was ready at once): the bytes came after the
  previous pass's poll began, when that socket was not ready (or was read).

Whether it slept: the poll's time less what the thread ran and what it waited
for a core meanwhile (two reads of the schedstat file), past :data:`SLEPT_NS`,
with no other thread of the process on a core meanwhile (the process's CPU
time less the thread's: one that ran may have taken the GIL when the poll let
go of it, and the wait for it would look like sleep: then the second rule).
A reader takes the later of this floor and its own (its connection's previous
read, the request's send):
a read's slack is then how long its bytes may have waited, which on an idle
loop is about :data:`WAKE_NS` and on a busy one the busy stretch. A loop
without a selector to wrap (uvloop), or a system without the schedstat file,
has a floor of 0 (the connection's own stands). Costs four clock reads and
two ``pread`` a pass.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import Callable
from typing import Any

from loadgen.clock import cpu_ns, now_ns

__all__ = ["SLEPT_NS", "WAKE_NS", "Polls"]

#: from the first bytes' arrival to the poll's return, the thread's wait for a core aside:
#: the kernel's wake-up and the syscall's return (tens of microseconds), with room to spare
WAKE_NS = 200_000
#: off a core this long, and not waiting for one, between two returns: the thread slept
SLEPT_NS = 50_000


#: one per loop, installed once, for as long as the loop lives
_OF_LOOP: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Polls] = weakref.WeakKeyDictionary()


class Polls:
    """A loop's polls: :meth:`of` gives the loop's one (installed on first use)."""

    @classmethod
    def of(cls, loop: asyncio.AbstractEventLoop) -> Polls:
        polls = _OF_LOOP.get(loop)
        if polls is None:
            polls = _OF_LOOP[loop] = cls()
            polls.install(loop)
        return polls

    __slots__ = ("_began", "_fd", "_select", "_selector", "floor_ns")

    def __init__(self) -> None:
        self.floor_ns = 0  # the earliest this pass's reads' bytes can have come; 0: unknown
        self._selector: Any = None
        self._select: Callable[..., Any] | None = None
        self._fd: int | None = None
        self._began = 0  # the previous poll began

    def install(self, loop: asyncio.AbstractEventLoop) -> None:
        """Wrap ``loop``'s selector, if it has one and the thread's schedstat can be read."""
        selector = getattr(loop, "_selector", None)
        if selector is None or self._select is not None:
            return
        try:
            self._fd = os.open("/proc/thread-self/schedstat", os.O_RDONLY)
            self._sched()
        except (OSError, ValueError, IndexError):
            self.close()
            return
        self._selector, self._select = selector, selector.select
        selector.select = self.select

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _sched(self) -> tuple[int, int]:
        """(ns on a core, ns waiting for one) of the loop's thread so far."""
        assert self._fd is not None
        fields = os.pread(self._fd, 128, 0).split()
        return int(fields[0]), int(fields[1])

    def select(self, timeout: float | None = None) -> Any:
        assert self._select is not None
        try:
            cpu0, delay0 = self._sched()
        except (OSError, ValueError, IndexError):
            self.floor_ns = 0
            return self._select(timeout)
        process0 = cpu_ns()
        began = now_ns()
        ready = self._select(timeout)
        woke = now_ns()
        process = cpu_ns()
        try:
            cpu, delay = self._sched()
        except (OSError, ValueError, IndexError):
            self.floor_ns = 0
            return ready
        mine = cpu - cpu0
        waited = delay - delay0
        asleep = (woke - began) - mine - waited
        # the thread can have slept after the poll too, waiting for the GIL, but only if
        # another thread ran meanwhile (it took the GIL when the poll let go of it)
        others = (process - process0) - mine
        if asleep > SLEPT_NS and others <= 0:  # it slept in the poll: all came after it woke
            self.floor_ns = woke - waited - WAKE_NS
        else:  # a socket was ready at once: its bytes came after the previous poll began
            self.floor_ns = self._began
        self._began = began
        return ready
