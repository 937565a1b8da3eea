"""How long a planned step takes, and how many requests a duration holds: estimates.

Two sources, both labelled estimates wherever they are printed:

- ``url: mock``: the mock's own timing model (:func:`loadgen.mock.model.closed_loop`,
  the formulas its engine runs by), per replica. A closed-loop step of N
  requests takes ``N / throughput`` (at ``min(users, N)``), one of
  ``duration_s`` D takes ``D + E2E`` (its in-flight requests then finish) and
  holds ``throughput * D + users`` sends; an open-loop step takes its arrivals'
  span or, past the engine's capacity, ``arrivals / capacity``, plus one E2E.
- any other server: the scenario's SLA bounds, read as what a server that
  meets them does at worst. A request's E2E is at most the largest E2E bound,
  or the largest TTFT bound plus the largest TPOT (else ITL) bound per
  further output token; N requests over ``users`` take ``N / users * E2E``
  and a duration D holds at least ``users * D / E2E`` of them. Without such
  bounds the length of a step bounded by its requests is unknown.

Warm-up requests go first, at most ``users`` at once, and are drained; a
ramp-up adds its seconds. Sessions' think time lengthens each user's cycle.
Set-up (starting the mock, calibrating prompts) and writing the reports are
not counted.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from loadgen.scenario import PercentileBounds, SlaSpec

if TYPE_CHECKING:
    from loadgen.mock import Settings

__all__ = ["StepEstimate", "StepShape", "bound_e2e_s", "from_bounds", "on_mock"]

#: users that stand for "as many as the engine takes" when its capacity is wanted
_FLOOD = 1_000_000


@dataclass(frozen=True, slots=True)
class StepShape:
    """What a step's plan says, in the terms its timing depends on."""

    mode: str  # concurrency | rate | trace | offline
    users: int  # closed loop: concurrency; offline: the cap on requests in flight (0: none)
    requests: int | None  # measured requests (turns); None: as many as duration_s holds
    warmup: int = 0
    duration_s: float | None = None
    ramp_s: float = 0.0
    arrivals: int = 0  # open loop: every arrival, warm-up and ramp-up included
    span_s: float = 0.0  # open loop: the last arrival's offset
    prompt_tokens: float = 0.0  # means over the step's (first) requests
    output_tokens: float = 1.0
    think_s: float = 0.0  # sessions: mean think time per turn


@dataclass(frozen=True, slots=True)
class StepEstimate:
    """Seconds the step takes and the measured requests it holds; None: not known.

    ``at_least``: the seconds count only what the plan fixes (its duration or
    arrivals), the server's own time unknown.
    """

    seconds: float | None
    requests: float | None
    at_least: bool = False


#: users -> (requests/s, E2E seconds) of one closed loop
Steady = Callable[[int], tuple[float, float]]


def on_mock(shape: StepShape, settings: Settings, replicas: int = 1) -> StepEstimate:
    """The step on the built-in mock (``settings``: its resolved command line)."""
    from loadgen.mock import closed_loop

    def steady(users: int) -> tuple[float, float]:
        per = math.ceil(max(1, users) / replicas)
        st = closed_loop(settings, per, shape.prompt_tokens, shape.output_tokens)
        rate = st.throughput_rps * min(replicas, max(1, users))
        if shape.think_s:
            rate *= st.e2e_s / (st.e2e_s + shape.think_s)
        return rate, st.e2e_s

    return _estimate(shape, steady)


def bound_e2e_s(sla: SlaSpec, output_tokens: float) -> float | None:
    """The longest a request takes on a server within every bound; None: no bound says."""
    e2e = _largest(sla.e2e_ms)
    if e2e is not None:
        return e2e / 1e3
    ttft = _largest(sla.ttft_ms)
    per_token = _largest(sla.tpot_ms)
    if per_token is None:
        per_token = _largest(sla.itl_ms)
    if ttft is None or per_token is None:
        return None
    return (ttft + per_token * max(0.0, output_tokens - 1)) / 1e3


def from_bounds(shape: StepShape, sla: SlaSpec) -> StepEstimate:
    """The step on a server that meets ``sla``'s bounds, at their worst (an upper estimate)."""
    e2e = bound_e2e_s(sla, shape.output_tokens)
    if e2e is None:
        if shape.mode in ("rate", "trace"):
            return StepEstimate(shape.span_s, shape.requests, at_least=True)
        if shape.duration_s is not None:
            return StepEstimate(shape.duration_s + shape.ramp_s, None, at_least=True)
        return StepEstimate(None, shape.requests)

    def steady(users: int) -> tuple[float, float]:
        users = max(1, users)
        return users / (e2e + shape.think_s), e2e

    return _estimate(shape, steady)


def _estimate(shape: StepShape, steady: Steady) -> StepEstimate:
    if shape.mode in ("rate", "trace"):
        capacity, _ = steady(_FLOOD)
        offered = shape.arrivals / shape.span_s if shape.span_s > 0 else capacity
        _, e2e = steady(max(1, round(offered * steady(1)[1])))
        busy = shape.arrivals / capacity if capacity > 0 else 0.0
        return StepEstimate(max(shape.span_s, busy) + e2e, shape.requests)
    n = shape.requests
    if shape.mode == "offline":
        n = n or 0
        users = min(shape.users or n, n)
        rate, _ = steady(users)
        return StepEstimate(n / rate if n else 0.0, n)
    users = max(1, shape.users)
    seconds = shape.ramp_s
    if shape.warmup:
        first = min(shape.warmup, users)
        seconds += math.ceil(shape.warmup / first) * steady(first)[1]
    if n is not None:
        rate, _ = steady(min(users, n))
        return StepEstimate(seconds + n / rate, n)
    duration = shape.duration_s or 0.0
    rate, e2e = steady(users)
    return StepEstimate(seconds + duration + e2e, rate * duration + users)


def _largest(bounds: PercentileBounds) -> float | None:
    return max((v for _, v in bounds.items()), default=None)
