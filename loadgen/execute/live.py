"""What an executor can say while a step runs: requests in flight and the send lags so far.

Read off the load path (a scrape of loadgen's own metrics, or the end of a
step) by :meth:`~loadgen.execute.executor.LocalExecutor.live` and the worker
pool's; nothing is added to the send path but what was already counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Live"]


@dataclass(slots=True)
class Live:
    """``in_flight``: requests sent and not finished; ``send_lags_ns``: how late the sender
    woke for each deadline of the running (or last) step, open loop only. The list is the
    step's own and only grows; the next step has a new one."""

    in_flight: int = 0
    send_lags_ns: list[int] = field(default_factory=list)
