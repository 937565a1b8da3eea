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

A window too short to rate is not rated: it must last at least
:data:`MIN_STEADY_SHARE` of a request's duration (the measured requests' median
E2E, send to end) and hold :data:`MIN_STEADY_COMPLETIONS` completions. A
closed loop's slot completes about once per request duration; a window much
shorter than one may hold a single wave of slots turning over and none of the
flow between waves: at c=8 with 2 x c requests, the window from the send after
the first completion to the last send spanned just that turnover (0.012 of a
request duration) and rated 6,010 req/s where the loop ran at c / E2E = 80/s.
A floor of one or more durations would refuse good windows: at c=64 on the
mock engine, where requests queue, the median request (3.8 s) outlasts the
3 s of sending, and its window of 0.63 of a duration rates the tokens/s the
server emitted inside it within 2% (tests/integration/test_steady_window.py).
Half a duration lies between. It does not make a lockstep loop exact (its
completions come in waves, and a window counts whole waves); it keeps a
turnover from being rated as a flow. Open loop is held to the same floor.
Where a step falls short, or has no window at all, :func:`steady_or_why` says
why (``StepSummary.steady_unrated``) and throughput stays over the whole window.
"""

from __future__ import annotations

from collections.abc import Sequence

from loadgen.records import Record

__all__ = [
    "MIN_STEADY_COMPLETIONS",
    "MIN_STEADY_SHARE",
    "completed_in",
    "steady_or_why",
    "steady_window",
    "too_short",
]

#: Fewer completions than this inside the steady window: it is too short to rate,
#: and the whole window is used.
MIN_STEADY_COMPLETIONS = 2
#: A steady window shorter than this share of a request's duration (median E2E) is not rated.
MIN_STEADY_SHARE = 0.5


def steady_window(measured: Sequence[Record], concurrency: int | None) -> tuple[int, int] | None:
    """``(start_ns, end_ns)`` of the steady window, or None when the step has none to rate.

    ``concurrency``: the closed loop's c; None for open loop.
    """
    got = steady_or_why(measured, concurrency)
    return got if isinstance(got, tuple) else None


def steady_or_why(measured: Sequence[Record], concurrency: int | None) -> tuple[int, int] | str:
    """The steady window, or why the step has none to rate (throughput: the whole window)."""
    if not measured:
        return "no measured requests"
    sends = sorted(r.sent_ns for r in measured)
    end = sends[-1]
    if concurrency is not None:
        if len(sends) <= concurrency:
            return f"no more measured requests than the concurrency ({concurrency})"
        after = max(sends[concurrency - 1], min(r.end_ns for r in measured))
        start = next((t for t in sends if t >= after), end)
    else:
        start = min(r.end_ns for r in measured)
    if end <= start:
        return "no send after the first completion"
    e2e = sorted(r.end_ns - r.sent_ns for r in measured if r.ok)
    request_ns = e2e[len(e2e) // 2] if e2e else 0
    why = too_short(start, end, len(completed_in(measured, start, end)), request_ns)
    return why if why is not None else (start, end)


def too_short(start_ns: int, end_ns: int, completions: int, request_ns: int) -> str | None:
    """Why a window of ``completions`` is too short to rate, or None when it is not.

    ``request_ns``: a request's duration (the measured requests' median E2E).
    """
    if completions < MIN_STEADY_COMPLETIONS:
        return (
            f"{completions} completions in the steady window, fewer than {MIN_STEADY_COMPLETIONS}"
        )
    if end_ns - start_ns < MIN_STEADY_SHARE * request_ns:
        return (
            f"steady window {(end_ns - start_ns) / 1e6:.3g} ms, shorter than half a "
            f"request's duration (median E2E {request_ns / 1e6:.3g} ms)"
        )
    return None


def completed_in(records: Sequence[Record], start_ns: int, end_ns: int) -> list[Record]:
    """The records that ended in ``(start_ns, end_ns]``."""
    return [r for r in records if start_ns < r.end_ns <= end_ns]
