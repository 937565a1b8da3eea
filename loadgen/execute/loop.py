"""The event loop a process measures in, and quiet garbage collection while it does.

Every process that sends load (the run, a worker, ``loadgen calibrate``)
uses both.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import Callable, Iterator

__all__ = ["loop_factory", "quiet_gc"]


@contextlib.contextmanager
def quiet_gc() -> Iterator[None]:
    """Fewer, cheaper garbage collections while measuring.

    A full collection walks every live object and stalls the event loop, and
    with it every timestamp, for milliseconds. Objects alive at the start are
    frozen out of collections, and the youngest generation is collected
    rarely; the hot path creates little cyclic garbage.
    """
    old = gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 50, 100)
    try:
        yield
    finally:
        gc.set_threshold(*old)
        gc.unfreeze()


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop
