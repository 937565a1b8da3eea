"""Per-request latency formulas. Integers in, integers out: only subtraction of stamps.

Each formula is in its function's docstring and in docs/metrics.md.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise

from loadgen.records import Record

__all__ = [
    "FIRST_STAMP",
    "Stamp",
    "e2e_ns",
    "first_answer",
    "first_reasoning",
    "first_token",
    "itl_gaps_ns",
    "queue_wait_ns",
    "tpot_ns",
    "ttft_answer_ns",
    "ttft_from_scheduled_ns",
    "ttft_ns",
    "ttft_reasoning_ns",
]

#: which first-token stamp of a record a TTFT measures to
Stamp = Callable[[Record], int | None]


def first_token(r: Record) -> int | None:
    """The first token event of any kind (reasoning or answer)."""
    return r.first_token_ns


def first_answer(r: Record) -> int | None:
    """The first token event carrying answer output (reasoning before it not counted)."""
    return r.first_answer_ns


def first_reasoning(r: Record) -> int | None:
    """The first token event carrying reasoning."""
    return r.first_reasoning_ns


#: ``sla.ttft_of`` -> the stamp TTFT measures to
FIRST_STAMP: dict[str, Stamp] = {"any": first_token, "answer": first_answer}


def ttft_ns(r: Record) -> int | None:
    """TTFT = first-token time - send time."""
    if r.first_token_ns is None:
        return None
    return r.first_token_ns - r.sent_ns


def ttft_answer_ns(r: Record) -> int | None:
    """TTFT (answer) = first answer-token time - send time."""
    if r.first_answer_ns is None:
        return None
    return r.first_answer_ns - r.sent_ns


def ttft_reasoning_ns(r: Record) -> int | None:
    """TTFT (reasoning) = first reasoning-token time - send time."""
    if r.first_reasoning_ns is None:
        return None
    return r.first_reasoning_ns - r.sent_ns


def ttft_from_scheduled_ns(r: Record, first: Stamp = first_token) -> int | None:
    """TTFT (open loop, from schedule) = first-token time - scheduled send time.

    Includes any wait for a free slot under ``max_concurrency`` and any lag of
    the sender behind its schedule. ``first`` is :func:`first_answer` when
    ``sla.ttft_of`` is ``answer``.
    """
    t = first(r)
    if t is None or r.scheduled_ns is None:
        return None
    return t - r.scheduled_ns


def queue_wait_ns(r: Record) -> int | None:
    """Queue wait (open loop) = start time - scheduled send time.

    The wait for a free slot under ``max_concurrency`` (the server's
    backpressure: a slot frees when a response ends), plus any lateness of the
    sender, which ``client.send_lag_p99_ms`` reports on its own.
    """
    return None if r.scheduled_ns is None else r.start_ns - r.scheduled_ns


def itl_gaps_ns(r: Record) -> list[int]:
    """ITL = the gaps between consecutive token events of one request: t[i] - t[i-1].

    Events that arrived in the same read share one stamp, so their gap is 0.
    """
    t = r.token_ns
    return [b - a for a, b in pairwise(t)]


def tpot_ns(r: Record) -> float | None:
    """TPOT = (last-token time - first-token time) / (output tokens - 1).

    Output tokens are the server's usage count when sent, else the number of
    token events. Requests with fewer than two tokens, or fewer than two token
    events (a non-streaming answer, a stream the server sent in one event),
    have no TPOT.
    """
    n = r.output_tokens
    if n < 2 or len(r.token_ns) < 2 or r.first_token_ns is None or r.last_token_ns is None:
        return None
    return (r.last_token_ns - r.first_token_ns) / (n - 1)


def e2e_ns(r: Record) -> int:
    """E2E = end time - send time (end = the stream's last byte, or the failure)."""
    return r.end_ns - r.sent_ns
