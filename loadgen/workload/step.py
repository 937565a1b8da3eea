"""One step's plan: which requests (or sessions), when, and how many count.

:func:`plan_step` is pure: the scenario's load, the step's load value and the
prepared workload in, a :class:`StepPlan` out; the runner only carries it out.

- closed loop (``concurrency``): ``warmup`` requests first (at most the
  step's concurrency at once, drained before the rest), then ``concurrency``
  users send ``requests`` one after another. With ``ramp_ns`` user k starts at
  k/concurrency of the ramp and requests sent before the ramp ends are flagged
  ``ramp``; the step ends after ``measured`` unflagged sends or ``duration_ns``.
- open loop (``rate``, ``trace``): ``requests[i]`` goes at ``offsets_ns[i]``;
  arrivals before ``ramp_ns`` are flagged ``ramp`` and the first
  ``warmup_requests`` warm-up.
- agent traces (``trace`` rows with links): the same, and ``waits[i]`` lists
  the requests request ``i`` waits for, each with its gap: it starts at the
  later of its offset and each of those ends plus its gap
  (:mod:`loadgen.workload.trace_links`).
- sessions: the same, with a session in place of a request (a closed-loop
  user runs sessions back to back; an open-loop arrival starts one), and
  ``requests_per_step`` and ``warmup_requests`` count sessions.
- agent tasks (``workload.agent``): as sessions, an :class:`AgentPlan` in
  place of a :class:`SessionPlan` (a task is a session of LLM calls).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from loadgen.scenario import ConcurrencyLoad, LoadSpec, OfflineLoad, RateLoad, TraceLoad
from loadgen.scenario.cancel_spec import CancelSpec
from loadgen.workload.agent import AgentPlan
from loadgen.workload.arrivals import arrival_offsets_ns, ramped_offsets_ns
from loadgen.workload.cancel import CancelPicker
from loadgen.workload.model_mix import MODEL_STREAM, SESSION_STREAM, ModelPicker
from loadgen.workload.plan import RequestSpec, step_rng
from loadgen.workload.source import SessionPlan, Workload
from loadgen.workload.trace_links import Waits, has_links, linked_requests

__all__ = ["Session", "StepPlan", "plan_step", "with_own_media"]

NS_PER_S = 1_000_000_000

#: A session job: a multi-turn chat or an agent task.
Session = SessionPlan | AgentPlan


@dataclass(slots=True)
class StepPlan:
    """What one step sends; see the module docstring for how each mode uses it."""

    closed: bool
    concurrency: int = 0
    warmup: list[RequestSpec] = field(default_factory=list)
    requests: Iterator[RequestSpec] = field(default_factory=lambda: iter(()))
    measured: int | None = None  # closed loop: unflagged sends that end the step
    offsets_ns: list[int] = field(default_factory=list)  # open loop, one per request/session
    open_requests: list[RequestSpec] = field(default_factory=list)
    duration_ns: int | None = None
    ramp_ns: int = 0
    max_concurrency: int | None = None
    sessions: Iterator[Session] | None = None  # closed loop with sessions (or agent tasks)
    warmup_sessions: list[Session] = field(default_factory=list)
    open_sessions: list[Session] = field(default_factory=list)
    open_session_flags: list[tuple[bool, bool]] = field(default_factory=list)  # (warmup, ramp)
    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(0))
    # -- agent traces: per open request, (request index, gap ns) of the calls it waits for
    waits: list[Waits] = field(default_factory=list)  # empty: no links (a plain open loop)


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

    plan.warmup = [spec(s) for s in plan.warmup]
    plan.open_requests = [spec(s) for s in plan.open_requests]
    plan.requests = map(spec, plan.requests)
    plan.warmup_sessions = [session(s) for s in plan.warmup_sessions]
    plan.open_sessions = [session(s) for s in plan.open_sessions]
    if plan.sessions is not None:
        plan.sessions = map(session, plan.sessions)


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

    plan.warmup = [spec(s) for s in plan.warmup]
    plan.open_requests = [spec(s) for s in plan.open_requests]
    plan.requests = map(spec, plan.requests)
    plan.warmup_sessions = [session(s) for s in plan.warmup_sessions]
    plan.open_sessions = [session(s) for s in plan.open_sessions]
    if plan.sessions is not None:
        plan.sessions = map(session, plan.sessions)


def with_own_media(workload: Workload, plan: StepPlan) -> StepPlan:
    """``plan`` (a worker's share, planned with ``defer_media``) with the synthetic media
    of its open-loop requests made: the same bytes one process would have made."""
    if workload.media is not None and plan.open_requests:
        plan.open_requests = [workload.with_media(s) for s in plan.open_requests]
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
        return StepPlan(
            False,
            offsets_ns=[0] * batch,  # all at once: MLPerf Offline
            open_requests=workload.requests(rng, batch, defer_media=defer),
            max_concurrency=int(value) or None,
            rng=rng,
        )
    ramp_ns = int(load.ramp_up_s * NS_PER_S)
    duration_ns = None if load.duration_s is None else int(load.duration_s * NS_PER_S)
    n, w = load.requests_per_step, load.warmup_requests
    if mode == "concurrency":
        c = int(value)
        plan = StepPlan(True, c, duration_ns=duration_ns, ramp_ns=ramp_ns, measured=n, rng=rng)
        if _has_sessions(workload):
            plan.warmup_sessions = _sessions(workload, rng, w) if w else []
            plan.sessions = _endless_sessions(workload, rng, w)
        else:
            plan.warmup = workload.requests(rng, w, warmup=w) if w else []
            plan.requests = workload.endless(rng, start=w)
        return plan
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
    plan = StepPlan(
        False,
        offsets_ns=offsets,
        ramp_ns=ramp_ns,
        duration_ns=duration_ns,
        max_concurrency=getattr(load, "max_concurrency", None),
        rng=rng,
    )
    flags = [(i < w, o < ramp_ns and i >= w) for i, o in enumerate(offsets)]
    if n is not None:
        flags, offsets = _trim_measured(flags, offsets, n)
        plan.offsets_ns = offsets
    if _has_sessions(workload):
        plan.open_sessions = _sessions(workload, rng, len(offsets))
        plan.open_session_flags = flags
        return plan
    specs = workload.requests(rng, len(offsets), defer_media=defer)
    plan.open_requests = [
        dataclasses.replace(s, warmup=wu, ramp=ra) for s, (wu, ra) in zip(specs, flags, strict=True)
    ]
    return plan


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
    waits: list[Waits] = []
    if has_links(rows):
        specs, waits = linked_requests(workload, rows, rng)
    else:
        specs = [workload.trace_request(row, i, rng) for i, row in enumerate(rows)]
    del index
    return StepPlan(
        False,
        offsets_ns=[r.offset_ns for r in rows],
        open_requests=specs,
        max_concurrency=load.max_concurrency,
        rng=rng,
        waits=waits,
    )
