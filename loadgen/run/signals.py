"""SIGTERM handled like Ctrl-C for a run: the step in progress stops, its partial results are kept.

Imports: the standard library.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType

__all__ = ["SignalStop"]


class SignalStop:
    """SIGTERM handled like Ctrl-C: the step in progress is cancelled, its partial results kept.

    While the session's event loop runs, the first signal cancels its main
    task (as asyncio.Runner does for SIGINT); otherwise, and on a second
    signal, it raises KeyboardInterrupt.
    """

    def __init__(self, on_signal: Callable[[int], None] | None) -> None:
        self.on_signal = on_signal
        self.task: asyncio.Task[None] | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.count = 0

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        self.count += 1
        if self.on_signal is not None:
            self.on_signal(signum)
        task, loop = self.task, self.loop
        if self.count == 1 and task is not None and loop is not None and not task.done():
            loop.call_soon_threadsafe(task.cancel)
            return
        raise KeyboardInterrupt

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        """Handle SIGTERM while inside (main thread only: elsewhere signals cannot be handled)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = signal.signal(signal.SIGTERM, self)
        try:
            yield
        finally:
            signal.signal(signal.SIGTERM, previous)
