"""One step's plan: which requests (or sessions), when, and how many count.

:func:`plan_step` is pure: the scenario's load, the step's load value and the
prepared workload in, a :data:`StepPlan` out; the runner only carries it out.
A plan is one of five kinds, each holding only its own fields:

- :class:`ClosedPlan` (``concurrency``): ``warmup`` requests first (at most
  the step's concurrency at once, drained before the rest), then
  ``concurrency`` users send ``requests`` one after another. With ``ramp_ns``
  user k starts at k/concurrency of the ramp and requests sent before the ramp
  ends are flagged ``ramp``; the step ends after ``measured`` unflagged sends
  or ``duration_ns``.
- :class:`OpenPlan` (``rate``, ``trace``, ``offline``): ``requests[i]`` goes
  at ``offsets_ns[i]``; arrivals before the ramp's end are flagged ``ramp``
  and the first ``warmup_requests`` warm-up (the flags are on the requests).
- :class:`LinkedPlan` (``trace`` rows with links, an agent trace): the same,
  and ``waits[i]`` lists the requests request ``i`` waits for, each with its
  gap: it starts at the later of its offset and each of those ends plus its
  gap (:mod:`loadgen.workload.trace_links`).
- :class:`ClosedSessionsPlan`, :class:`OpenSessionsPlan`: as the closed and
  open loops, with a session in place of a request (a closed-loop user runs
  sessions back to back; an open-loop arrival starts one, its (warm-up, ramp)
  flags in ``flags``), and ``requests_per_step`` and ``warmup_requests``
  count sessions. An agent task (``workload.agent``) is such a session: an
  :class:`AgentPlan` in place of a :class:`SessionPlan`.

The closed kinds share :class:`ClosedLoop`'s fields, the open ones
:class:`OpenLoop`'s.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from loadgen.scenario import CancelSpec, ConcurrencyLoad, LoadSpec, OfflineLoad, RateLoad, TraceLoad
from loadgen.workload.agent import AgentPlan
from loadgen.workload.arrivals import arrival_offsets_ns, ramped_offsets_ns
from loadgen.workload.cancel import CancelPicker
from loadgen.workload.model_mix import MODEL_STREAM, SESSION_STREAM, ModelPicker
from loadgen.workload.plan import RequestSpec, step_rng
from loadgen.workload.source import SessionPlan, Workload
from loadgen.workload.trace_links import Waits, has_links, linked_requests

__all__ = [
    "ClosedLoop",
    "ClosedPlan",
    "ClosedSessionsPlan",
    "LinkedPlan",
    "OpenLoop",
    "OpenPlan",
    "OpenSessionsPlan",
    "Session",
    "StepPlan",
    "plan_step",
    "with_own_media",
]

NS_PER_S = 1_000_000_000

#: A session job: a multi-turn chat or an agent task.
Session = SessionPlan | AgentPlan


@dataclass(slots=True, kw_only=True)
class ClosedLoop:
    """What a closed loop's two kinds share: users, when it ends, its ramp."""

    concurrency: int
    measured: int | None  # unflagged sends (session starts) that end the step
    duration_ns: int | None
    ramp_ns: int
    rng: np.random.Generator


@dataclass(slots=True, kw_only=True)
class ClosedPlan(ClosedLoop):
    """A closed loop of single requests: the warm-up, then an endless stream."""

    warmup: list[RequestSpec]
    requests: Iterator[RequestSpec]


@dataclass(slots=True, kw_only=True)
class ClosedSessionsPlan(ClosedLoop):
    """A closed loop of sessions (or agent tasks), each user's back to back."""

    warmup: list[Session]
    sessions: Iterator[Session]


@dataclass(slots=True, kw_only=True)
class OpenLoop:
    """What the open kinds share: one offset per job from the step's start, a cap."""

    offsets_ns: list[int]
    max_concurrency: int | None


@dataclass(slots=True, kw_only=True)
class OpenPlan(OpenLoop):
    """Requests at their offsets (a rate, a trace, offline), flagged warm-up or ramp."""

    requests: list[RequestSpec]
    duration_ns: int | None


@dataclass(slots=True, kw_only=True)
class OpenSessionsPlan(OpenLoop):
    """Sessions (or agent tasks) started at their offsets; ``flags``: (warm-up, ramp)."""

    sessions: list[Session]
    flags: list[tuple[bool, bool]]
    duration_ns: int | None
    rng: np.random.Generator


@dataclass(slots=True, kw_only=True)
class LinkedPlan(OpenLoop):
    """An agent trace: requests at their offsets, each after the calls in its ``waits``
    (per request, the (request index, gap ns) of each call it waits for)."""

    requests: list[RequestSpec]
    waits: list[Waits]


#: What one step sends, in its kind; see the module docstring.
StepPlan = ClosedPlan | ClosedSessionsPlan | OpenPlan | OpenSessionsPlan | LinkedPlan


def plan_step(
    workload: Workload,
    load: LoadSpec,
    mode: str,
    value: float,
    index: int,
    *,
    defer_media: bool = False,
) -> StepPlan:
    """The plan of step ``index`` at load ``value`` (users, requests/s, a time scale, or
    offline a cap on requests in flight: 0 for none); with a model mix
    (``workload.models``) each request, or session, names its model; with
    ``workload.cancel`` the requests (session turns) it picks say where to abort.

    ``defer_media``: an open loop's synthetic media are not made here, only named
    (``RequestSpec.media_due``): a worker process dealt a share makes its own with
    :func:`with_own_media`, not every request's."""
    plan = _plan(workload, load, mode, value, index, defer_media)
    if workload.models:
        _name_models(plan, workload.models, workload.spec.seed, index)
    if workload.spec.cancel is not None:
        _mark_cancels(plan, workload.spec.cancel, workload.spec.seed, index)
    return plan


def _mark_cancels(plan: StepPlan, cancel: CancelSpec, seed: int, step: int) -> None:
    """Where each picked request (session turn) is aborted (loadgen.workload.cancel)."""
    pick = CancelPicker(cancel, seed, step)

    def spec(s: RequestSpec) -> RequestSpec:
        stop = pick(s.index)
        if stop is None:
            return s
        return dataclasses.replace(s, cancel_after_tokens=stop[0], cancel_after_ns=stop[1])

    def session(s: Session) -> Session:
        if not isinstance(s, SessionPlan):  # an agent task: refused with cancel
            return s
        return dataclasses.replace(s, cancel=pick.turns(s.index, s.turns))

    _rewrite(plan, spec, session)


def _name_models(
    plan: StepPlan, models: tuple[tuple[str, float], ...], seed: int, step: int
) -> None:
    """Each request's (each session's) model, picked by its index (loadgen.workload.model_mix)."""
    pick = ModelPicker(models, seed, step, MODEL_STREAM)
    per_session = ModelPicker(models, seed, step, SESSION_STREAM)

    def spec(s: RequestSpec) -> RequestSpec:
        return dataclasses.replace(s, model=pick(s.index))

    def session(s: Session) -> Session:
        return dataclasses.replace(s, model=per_session(s.index))

    _rewrite(plan, spec, session)


def _rewrite(
    plan: StepPlan,
    spec: Callable[[RequestSpec], RequestSpec],
    session: Callable[[Session], Session],
) -> None:
    """Every request of ``plan`` through ``spec``, every session through ``session``
    (a closed loop's endless stream lazily)."""
    match plan:
        case ClosedPlan():
            plan.warmup = [spec(s) for s in plan.warmup]
            plan.requests = map(spec, plan.requests)
        case ClosedSessionsPlan():
            plan.warmup = [session(s) for s in plan.warmup]
            plan.sessions = map(session, plan.sessions)
        case OpenPlan() | LinkedPlan():
            plan.requests = [spec(s) for s in plan.requests]
        case OpenSessionsPlan():
            plan.sessions = [session(s) for s in plan.sessions]


def with_own_media(workload: Workload, plan: StepPlan) -> StepPlan:
    """``plan`` (a worker's share, planned with ``defer_media``) with the synthetic media
    of its open-loop requests made: the same bytes one process would have made."""
    if workload.media is not None and isinstance(plan, OpenPlan | LinkedPlan) and plan.requests:
        plan.requests = [workload.with_media(s) for s in plan.requests]
    return plan


def _plan(
    workload: Workload, load: LoadSpec, mode: str, value: float, index: int, defer: bool
) -> StepPlan:
    seed = workload.spec.seed
    rng = step_rng(seed, index, 0)
    if isinstance(load, TraceLoad):
        return _trace(workload, load, value, index, rng)
    if isinstance(load, OfflineLoad):
        batch = load.requests_per_step or 0
        return OpenPlan(
            offsets_ns=[0] * batch,  # all at once: MLPerf Offline
            requests=workload.requests(rng, batch, defer_media=defer),
            max_concurrency=int(value) or None,
            duration_ns=None,
        )
    ramp_ns = int(load.ramp_up_s * NS_PER_S)
    duration_ns = None if load.duration_s is None else int(load.duration_s * NS_PER_S)
    n, w = load.requests_per_step, load.warmup_requests
    if mode == "concurrency":
        c = int(value)
        if _has_sessions(workload):
            return ClosedSessionsPlan(
                concurrency=c,
                measured=n,
                duration_ns=duration_ns,
                ramp_ns=ramp_ns,
                rng=rng,
                warmup=_sessions(workload, rng, w) if w else [],
                sessions=_endless_sessions(workload, rng, w),
            )
        return ClosedPlan(
            concurrency=c,
            measured=n,
            duration_ns=duration_ns,
            ramp_ns=ramp_ns,
            rng=rng,
            warmup=workload.requests(rng, w, warmup=w) if w else [],
            requests=workload.endless(rng, start=w),
        )
    assert isinstance(load, RateLoad | ConcurrencyLoad)
    rate = value
    arng = step_rng(seed, index, 1)
    arrival = getattr(load, "arrival", "poisson")
    burst = getattr(load, "burstiness", 1.0)
    ramp_s = load.ramp_up_s
    # steady-state arrivals on the steady clock: the ramp's share is rate*ramp/2 of them
    ramp_expect = rate * ramp_s / 2.0
    if n is not None:
        count = w + n + _ramp_count(ramp_expect)
        offsets = arrival_offsets_ns(rate, arrival, arng, count=count, burstiness=burst)
    else:
        horizon = float(load.duration_s or 0.0) + w / rate + ramp_expect / rate
        offsets = arrival_offsets_ns(rate, arrival, arng, duration_s=horizon, burstiness=burst)
    offsets = ramped_offsets_ns(offsets, ramp_s)
    limit = getattr(load, "max_concurrency", None)
    flags = [(i < w, o < ramp_ns and i >= w) for i, o in enumerate(offsets)]
    if n is not None:
        flags, offsets = _trim_measured(flags, offsets, n)
    if _has_sessions(workload):
        return OpenSessionsPlan(
            offsets_ns=offsets,
            max_concurrency=limit,
            sessions=_sessions(workload, rng, len(offsets)),
            flags=flags,
            duration_ns=duration_ns,
            rng=rng,
        )
    specs = workload.requests(rng, len(offsets), defer_media=defer)
    return OpenPlan(
        offsets_ns=offsets,
        max_concurrency=limit,
        requests=[
            dataclasses.replace(s, warmup=wu, ramp=ra)
            for s, (wu, ra) in zip(specs, flags, strict=True)
        ],
        duration_ns=duration_ns,
    )


def _ramp_count(expected: float) -> int:
    """Arrivals to draw for the ramp: its mean plus room for chance (trimmed after)."""
    return int(expected + 6 * np.sqrt(expected) + 8) if expected > 0 else 0


def _trim_measured(
    flags: list[tuple[bool, bool]], offsets: list[int], n: int
) -> tuple[list[tuple[bool, bool]], list[int]]:
    """Cut the schedule after the ``n``-th measured (neither warm-up nor ramp) arrival."""
    seen = 0
    for i, (wu, ra) in enumerate(flags):
        if not wu and not ra:
            seen += 1
            if seen == n:
                return flags[: i + 1], offsets[: i + 1]
    return flags, offsets


def _has_sessions(workload: Workload) -> bool:
    return workload.spec.sessions is not None or workload.spec.agent is not None


def _sessions(
    workload: Workload, rng: np.random.Generator, n: int, start: int = 0
) -> list[Session]:
    """``n`` chat sessions, or agent tasks, numbered from ``start``."""
    if workload.spec.agent is not None:
        return list(workload.agent_tasks(rng, n, start=start))
    return list(workload.sessions(rng, n, start=start))


def _endless_sessions(
    workload: Workload, rng: np.random.Generator, first: int
) -> Iterator[Session]:
    for start in itertools.count(first, 16):
        yield from _sessions(workload, rng, 16, start)


def _trace(
    workload: Workload, load: TraceLoad, time_scale: float, index: int, rng: np.random.Generator
) -> StepPlan:
    rows = workload.trace_rows(load, time_scale)
    if load.duration_s is not None:
        rows = [r for r in rows if r.offset_ns < load.duration_s * NS_PER_S]
    if load.requests_per_step is not None:
        rows = rows[: load.requests_per_step]
    del index
    offsets = [r.offset_ns for r in rows]
    if has_links(rows):
        specs, waits = linked_requests(workload, rows, rng)
        return LinkedPlan(
            offsets_ns=offsets, max_concurrency=load.max_concurrency, requests=specs, waits=waits
        )
    specs = [workload.trace_request(row, i, rng) for i, row in enumerate(rows)]
    return OpenPlan(
        offsets_ns=offsets, max_concurrency=load.max_concurrency, requests=specs, duration_ns=None
    )
