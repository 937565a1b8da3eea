"""The steady part of a step: where throughput is the server's rate, not the ramp or the drain.

A step's whole window (first measured send to last measured end) includes the
fill, while in-flight requests climb to the load, and the drain, while they fall
back to 0 after the last send. At high concurrency the drain is a large part of
it, so requests/s over the whole window is partly the drain. The steady window:

- closed loop at concurrency c: from the first measured send at or after
  both the c-th measured send (every slot has started a measured request)
  and the first measured completion (a slot sends again as its request
  ends: this is that send), to the last measured send (after it, slots go
  idle for good one by one);
- open loop (rate, trace): from the first measured completion (the pipeline
  is full: in flight has climbed to rate x latency) to the last measured send
  (arrivals stop).

Neither starts before a completion because the fill is not over when in
flight reaches the load: until the first request ends, the server works but
nothing completes. At concurrency 64 on the mock that is the first ~0.6 s of
a 3.4 s window: counted from the c-th send, the demo's c>=16 steps gave
810-837 output tokens/s where the server emitted 962-976 inside the window.
The closed-loop window runs from a send to a send, so that it counts as many
completions as sends (one per send, in a steady loop) whatever the phase.

Throughput over it counts the requests that *completed* inside it, divided by
its length. Pure functions of records.
"""

from __future__ import annotations

from collections.abc import Sequence

from loadgen.records import Record

__all__ = ["MIN_STEADY_COMPLETIONS", "completed_in", "steady_window"]

#: Fewer completions than this inside the steady window: it is too short to rate,
#: and the whole window is used.
MIN_STEADY_COMPLETIONS = 2


def steady_window(measured: Sequence[Record], concurrency: int | None) -> tuple[int, int] | None:
    """``(start_ns, end_ns)`` of the steady window, or None when the step has none.

    ``concurrency``: the closed loop's c; None for open loop.
    """
    if not measured:
        return None
    sends = sorted(r.sent_ns for r in measured)
    end = sends[-1]
    if concurrency is not None:
        if len(sends) <= concurrency:
            return None  # never ran at its concurrency with measured requests
        after = max(sends[concurrency - 1], min(r.end_ns for r in measured))
        start = next((t for t in sends if t >= after), end)
    else:
        start = min(r.end_ns for r in measured)
    if end <= start:
        return None
    if len(completed_in(measured, start, end)) < MIN_STEADY_COMPLETIONS:
        return None
    return start, end


def completed_in(records: Sequence[Record], start_ns: int, end_ns: int) -> list[Record]:
    """The records that ended in ``(start_ns, end_ns]``."""
    return [r for r in records if start_ns < r.end_ns <= end_ns]
