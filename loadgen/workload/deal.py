"""Dealing one step's plan out to worker processes.

Every worker plans the step itself (:func:`loadgen.workload.step.plan_step`
is deterministic for a seed and step index) and keeps its share, so the
union of what the workers send is exactly the plan one process would carry
out:

- closed loop: the concurrency is split as evenly as it goes (shares differ
  by at most one user); the measured count and the warm-up list are split in
  proportion to the shares; the endless request (or session) stream is dealt
  round robin, every worker taking every n-th one from its own offset.
- open loop (rate, trace): arrival i goes to worker ``i mod n`` with its own
  offset from the common start, so the merged arrival times are the planned
  ones; a ``max_concurrency`` is split like a concurrency.
- an agent trace (a :class:`~loadgen.workload.step.LinkedPlan`): session s
  goes to worker ``s mod n`` with all its calls, so every wait is on a
  request of the same worker.

Duration and ramp-up are the same for every worker (each ramps its own
users over the same ramp). Pure: no clock, no I/O.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from typing import TypeVar

from loadgen.workload.step import (
    ClosedLoop,
    ClosedPlan,
    ClosedSessionsPlan,
    LinkedPlan,
    OpenLoop,
    OpenPlan,
    OpenSessionsPlan,
    StepPlan,
)

__all__ = ["deal", "shares", "workers_for"]

T = TypeVar("T")


def shares(total: int, n: int) -> list[int]:
    """``total`` split into ``n`` parts as evenly as it goes (the first ones larger)."""
    base, extra = divmod(total, n)
    return [base + (1 if i < extra else 0) for i in range(n)]


def _proportional(total: int, weights: Sequence[int]) -> list[int]:
    """``total`` split in proportion to ``weights``, summing exactly to ``total``."""
    whole = sum(weights)
    if whole == 0:
        return [0] * len(weights)
    cuts = [total * c // whole for c in itertools.accumulate(weights)]
    return [b - a for a, b in zip([0, *cuts], cuts, strict=False)]


def _chunks(items: Sequence[T], sizes: Sequence[int]) -> list[list[T]]:
    bounds = list(itertools.accumulate(sizes))
    return [list(items[a:b]) for a, b in zip([0, *bounds], bounds, strict=False)]


def workers_for(plan: StepPlan, n: int) -> int:
    """How many of ``n`` workers the step can use: never more than its users or slots."""
    if isinstance(plan, ClosedLoop):
        return max(1, min(n, plan.concurrency))
    if plan.max_concurrency:
        return max(1, min(n, plan.max_concurrency))
    return n


def deal(plan: StepPlan, worker: int, n: int) -> StepPlan:
    """Worker ``worker``'s share (0-based) of ``plan`` among ``n`` workers.

    ``n`` must not exceed :func:`workers_for`; with ``n == 1`` the plan itself.
    """
    if n == 1:
        return plan
    if not 0 <= worker < n:
        raise ValueError(f"worker {worker} of {n}")
    mine = slice(worker, None, n)
    match plan:
        case ClosedPlan():
            users, measured, warmup = _users(plan, plan.warmup, worker, n)
            return dataclasses.replace(
                plan,
                concurrency=users,
                measured=measured,
                warmup=warmup,
                requests=itertools.islice(plan.requests, worker, None, n),
            )
        case ClosedSessionsPlan():
            users, measured, first = _users(plan, plan.warmup, worker, n)
            return dataclasses.replace(
                plan,
                concurrency=users,
                measured=measured,
                warmup=first,
                sessions=itertools.islice(plan.sessions, worker, None, n),
            )
        case LinkedPlan():
            keep = [
                i for i, s in enumerate(plan.requests) if _session_of(s.session, i) % n == worker
            ]
            return dataclasses.replace(
                plan,
                offsets_ns=[plan.offsets_ns[i] for i in keep],
                requests=[plan.requests[i] for i in keep],
                waits=[plan.waits[i] for i in keep],
                max_concurrency=_slots(plan, worker, n),
            )
        case OpenPlan():
            return dataclasses.replace(
                plan,
                offsets_ns=plan.offsets_ns[mine],
                requests=plan.requests[mine],
                max_concurrency=_slots(plan, worker, n),
            )
        case OpenSessionsPlan():
            return dataclasses.replace(
                plan,
                offsets_ns=plan.offsets_ns[mine],
                sessions=plan.sessions[mine],
                flags=plan.flags[mine],
                max_concurrency=_slots(plan, worker, n),
            )


def _users(
    plan: ClosedLoop, warmup: Sequence[T], worker: int, n: int
) -> tuple[int, int | None, list[T]]:
    """A closed loop's share: its users, its measured count and its warm-up, in proportion."""
    users = shares(plan.concurrency, n)
    measured = None if plan.measured is None else _proportional(plan.measured, users)[worker]
    return users[worker], measured, _chunks(warmup, _proportional(len(warmup), users))[worker]


def _slots(plan: OpenLoop, worker: int, n: int) -> int | None:
    """An open loop's share of its cap on requests in flight (none: none)."""
    limit = plan.max_concurrency
    return None if limit is None else shares(limit, n)[worker]


def _session_of(session: int | None, index: int) -> int:
    """What deals a linked request: its session (a request outside one: its index)."""
    return index if session is None else session
