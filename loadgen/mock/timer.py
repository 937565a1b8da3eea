"""Wake the event loop at an absolute ``perf_counter_ns`` deadline, finely.

Owns the mock's only sleeping. Event-loop timers have millisecond resolution
(uvloop rounds to the nearest millisecond, asyncio's epoll rounds up), which
would shift every token by up to 1 ms. ``Timer`` instead lets a helper thread
wait on a condition variable (sub-millisecond) until ``LEAD_NS`` before the
deadline, hands the wake-up to the loop with ``call_soon_threadsafe``, and the
loop side spins the last few microseconds (at most ``SPIN_NS``). Deadlines are
absolute, so lateness never accumulates.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

__all__ = ["LEAD_NS", "SPIN_NS", "Timer", "spin_until"]

LEAD_NS = 100_000
SPIN_NS = 60_000
_NEVER = 1 << 62


def spin_until(deadline_ns: int) -> int:
    """Busy-wait (at most ``SPIN_NS`` by contract of the callers); return now."""
    now = time.perf_counter_ns()
    while now < deadline_ns:
        now = time.perf_counter_ns()
    return now


class Timer:
    """Calls ``callback()`` on ``loop`` near (never much before) an armed deadline.

    The callback must tolerate early or spurious calls: it checks the clock,
    spins when the deadline is within ``SPIN_NS`` and re-arms otherwise.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, callback: Callable[[], None]):
        self.loop = loop
        self.callback = callback
        self.armed_ns = _NEVER  # loop side: earliest deadline asked for
        self._deadline = _NEVER  # thread side, under _cv
        self._cv = threading.Condition()
        self._stop = False
        self._thread = threading.Thread(target=self._run, name="loadgen-mock-timer", daemon=True)
        self._thread.start()

    def arm(self, deadline_ns: int) -> None:
        """Ask for a call at ``deadline_ns``; an earlier pending request wins."""
        if deadline_ns >= self.armed_ns:
            return
        self.armed_ns = deadline_ns
        if deadline_ns - time.perf_counter_ns() <= LEAD_NS + SPIN_NS:
            self.loop.call_soon(self._fire)
            return
        with self._cv:
            self._deadline = deadline_ns - LEAD_NS
            self._cv.notify()

    def close(self) -> None:
        with self._cv:
            self._stop = True
            self._cv.notify()
        self._thread.join(timeout=1.0)

    def _fire(self) -> None:
        if self.armed_ns == _NEVER:
            return
        self.armed_ns = _NEVER
        self.callback()

    def _run(self) -> None:
        with self._cv:
            while not self._stop:
                remaining = self._deadline - time.perf_counter_ns()
                if self._deadline == _NEVER:
                    self._cv.wait()
                elif remaining > 0:
                    self._cv.wait(remaining / 1e9)
                else:
                    self._deadline = _NEVER
                    try:
                        self.loop.call_soon_threadsafe(self._fire)
                    except RuntimeError:  # loop closed during shutdown
                        return
