"""Ctrl-C, SIGTERM and SIGHUP for a run: the step in progress stops, its partial results kept."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType

__all__ = ["FORCE_AFTER", "HANDLED", "SignalStop"]

#: the signals a run handles: Ctrl-C, ``kill``, a closed terminal or dropped SSH session
HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

#: the signal that stops at once, keeping the records but not the summary
FORCE_AFTER = 3


class SignalStop:
    """SIGINT, SIGTERM and SIGHUP handled alike: the step in progress is cancelled,
    its partial results kept, and the summary and reports still written.

    Before the steps begin (set-up: the mock, pre-flight, calibration) a signal
    raises KeyboardInterrupt: nothing is measured yet. Once they have begun, the
    first signal cancels the session's main task (as asyncio.Runner does for
    SIGINT), and later ones are noted but not obeyed: the wind-down (cutting the
    requests in flight short, the step's summary, summary.json, the reports) is
    short and bounded, and a second Ctrl-C pressed out of impatience must not cost
    the run its summary. The :data:`FORCE_AFTER`-th signal raises KeyboardInterrupt
    wherever the run is (records kept, summary maybe not).
    """

    def __init__(self, on_signal: Callable[[int], None] | None) -> None:
        self.on_signal = on_signal
        self.task: asyncio.Task[None] | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.count = 0
        self.first: int | None = None  # the first signal's number
        #: the steps have begun: from here on a signal leaves a summary
        self.started = False

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        self.count += 1
        if self.first is None:
            self.first = signum
        if self.on_signal is not None:
            self.on_signal(signum)
        if self.count >= FORCE_AFTER:
            raise KeyboardInterrupt
        task, loop = self.task, self.loop
        if self.count == 1 and task is not None and loop is not None and not task.done():
            loop.call_soon_threadsafe(task.cancel)
            return
        if self.started:
            return  # the wind-down goes on; the files of what ran are written
        raise KeyboardInterrupt

    def begin(self, task: asyncio.Task[None], loop: asyncio.AbstractEventLoop) -> None:
        """The session's main task runs the steps: a signal now cancels it."""
        self.task, self.loop, self.started = task, loop, True

    def end(self) -> None:
        self.task = self.loop = None

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        """Handle :data:`HANDLED` while inside (main thread only: elsewhere signals cannot
        be handled). With our SIGINT handler in place asyncio.Runner installs none."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {sig: signal.signal(sig, self) for sig in HANDLED}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
