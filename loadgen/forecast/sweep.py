"""The forecast of a whole sweep: each step's shape, estimate and shortfalls, and its lines.

Every step is planned as ``loadgen run`` plans it (:func:`loadgen.workload.plan_step`);
its request count is the plan's where the plan fixes it (``requests_per_step``,
open-loop arrivals, a trace) and the estimate's where a duration bounds a
closed loop. :func:`forecast_report` is what ``loadgen workload`` prints: the
plan (:func:`loadgen.workload.describe.workload_report`) with, per step, the
bounds its requests cannot decide and its estimated length, then the run's.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from loadgen.forecast.decide import Shortfall, bound_label, fewest_to_confirm, shortfalls
from loadgen.forecast.timing import StepEstimate, StepShape, from_bounds, on_mock
from loadgen.scenario import ConcurrencyLoad, RateLoad, Scenario
from loadgen.vocab import PERCENTILE_OF, confidence_text
from loadgen.workload import (
    NS_PER_S,
    ClosedPlan,
    ClosedSessionsPlan,
    LinkedPlan,
    OpenLoop,
    OpenPlan,
    OpenSessionsPlan,
    Session,
    StepPlan,
    Workload,
    plan_step,
    workload_report,
)

if TYPE_CHECKING:
    from loadgen.mock import Settings

__all__ = ["Forecast", "StepForecast", "forecast", "forecast_report", "step_shape"]

#: Requests (or sessions) a step's mean lengths are taken over when it has more.
MEANS_OVER = 256
#: Columns the forecast's lines fit in (as the run's console lines do).
WIDTH = 80
#: The basis of an estimate that counts only the plan's own seconds.
_FIXED = "its duration or arrivals; the server's time not estimated"


@dataclass(frozen=True, slots=True)
class StepForecast:
    """One step: its shape, its estimate, and the bounds its requests cannot decide."""

    index: int
    shape: StepShape
    estimate: StepEstimate
    shortfalls: list[Shortfall]
    planned: bool  # the request count is the plan's own, not an estimate


@dataclass(slots=True)
class Forecast:
    """A sweep's forecast; ``basis`` says where the estimates come from."""

    steps: list[StepForecast] = field(default_factory=list)
    basis: str = ""
    on_mock: bool = False
    fewest: dict[str, int] = field(default_factory=dict)  # bound label -> requests it needs

    @property
    def seconds(self) -> float:
        return sum(s.estimate.seconds or 0.0 for s in self.steps)

    @property
    def complete(self) -> bool:
        """Every step's length is estimated (not unknown, not only its fixed part)."""
        return all(s.estimate.seconds is not None and not s.estimate.at_least for s in self.steps)


def forecast_report(sc: Scenario, workload: Workload) -> str:
    """``loadgen workload``'s text: the plan, each step's forecast, the run's estimate."""
    fc = forecast(sc, workload)
    notes = {s.index: step_lines(s, fc) for s in fc.steps}
    return workload_report(sc, workload, notes=notes, tail=total_lines(sc, fc))


def forecast(sc: Scenario, workload: Workload) -> Forecast:
    """Plan each listed step of ``sc`` and forecast it (none for ``sweep: auto``)."""
    settings = _mock_settings(sc)
    fc = Forecast(on_mock=settings is not None)
    if settings is not None:
        fc.basis = f"the mock's {settings.profile_name} engine model"
        if settings.fixed:
            fc.basis = "the mock's fixed TTFT and ITL"
    else:
        fc.basis = "if the server meets the SLA bounds"
    fc.fewest = {
        bound_label(metric, stat, bound): fewest_to_confirm(PERCENTILE_OF[stat], sc.sla.confidence)
        for metric in ("ttft_ms", "tpot_ms", "e2e_ms")
        for stat, bound in getattr(sc.sla, metric).items()
        if stat in PERCENTILE_OF
    }
    load = sc.load
    if isinstance(load, RateLoad) and load.sweep == "auto":
        return fc
    replicas = sc.target.mock.replicas
    for index, value in enumerate(load.points):
        plan = plan_step(workload, load, load.mode, value, index)
        shape = step_shape(plan, load.mode)
        if settings is not None:
            estimate = on_mock(shape, settings, replicas)
        else:
            estimate = from_bounds(shape, sc.sla)
        count = shape.requests if shape.requests is not None else estimate.requests
        short = []
        if count is not None:
            short = shortfalls(sc.sla, round(count), max(0.0, shape.output_tokens - 1))
        fc.steps.append(StepForecast(index, shape, estimate, short, shape.requests is not None))
    return fc


def step_shape(plan: StepPlan, mode: str) -> StepShape:
    """What ``plan`` fixes: its users, measured requests (turns), warm-up, lengths, arrivals."""
    match plan:
        case ClosedSessionsPlan():
            n = plan.measured
            sessions = list(itertools.islice(plan.sessions, n if n is not None else MEANS_OVER))
            prompt, output, think = _session_lengths(sessions)
            return StepShape(
                mode,
                plan.concurrency,
                sum(s.turns for s in sessions) if n is not None else None,
                sum(s.turns for s in plan.warmup),
                _seconds(plan.duration_ns),
                plan.ramp_ns / NS_PER_S,
                prompt_tokens=prompt,
                output_tokens=output,
                think_s=think,
            )
        case ClosedPlan():
            n = plan.measured
            specs = list(itertools.islice(plan.requests, min(n or MEANS_OVER, MEANS_OVER)))
            return StepShape(
                mode,
                plan.concurrency,
                n,
                len(plan.warmup),
                _seconds(plan.duration_ns),
                plan.ramp_ns / NS_PER_S,
                prompt_tokens=_mean([s.prompt_tokens for s in specs]),
                output_tokens=_mean([s.max_tokens for s in specs], 1.0),
            )
        case OpenSessionsPlan():
            return _open_sessions_shape(plan, mode)
        case OpenPlan() | LinkedPlan():
            specs = plan.requests
            span, users = _arrivals(plan, mode)
            measured = [s for s in specs if not s.warmup and not s.ramp]
            return StepShape(
                mode,
                users,
                len(measured),
                sum(s.warmup for s in specs),
                arrivals=len(specs),
                span_s=span,
                prompt_tokens=_mean([s.prompt_tokens for s in specs]),
                output_tokens=_mean([s.max_tokens for s in specs], 1.0),
            )


def _open_sessions_shape(plan: OpenSessionsPlan, mode: str) -> StepShape:
    """An open loop of sessions: its turns, measured and not, as arrivals."""
    span, users = _arrivals(plan, mode)
    all_turns = sum(s.turns for s in plan.sessions)
    counted = sum(
        s.turns for s, (wu, ra) in zip(plan.sessions, plan.flags, strict=True) if not wu | ra
    )
    prompt, output, think = _session_lengths(plan.sessions)
    return StepShape(
        mode,
        users,
        counted,
        all_turns - counted,
        arrivals=all_turns,
        span_s=span,
        prompt_tokens=prompt,
        output_tokens=output,
        think_s=think,
    )


def _arrivals(plan: OpenLoop, mode: str) -> tuple[float, int]:
    """An open loop's span of arrivals (s) and its users: offline's cap, else none."""
    span = plan.offsets_ns[-1] / NS_PER_S if plan.offsets_ns else 0.0
    return span, (plan.max_concurrency or 0) if mode == "offline" else 0


def _session_lengths(sessions: Sequence[Session]) -> tuple[float, float, float]:
    """Mean new user tokens and max tokens per turn, and think time per turn, in seconds."""
    users = [t for s in sessions for t in s.user_tokens]
    outs = [t for s in sessions for t in s.max_tokens]
    think = sum(t for s in sessions for t in s.think_ns[:-1]) / NS_PER_S
    return _mean(users), _mean(outs, 1.0), think / max(1, len(users))


def step_lines(step: StepForecast, fc: Forecast) -> list[str]:
    """A step's forecast, under its plan: its estimated length, then what it cannot decide."""
    est = step.estimate
    lines: list[str] = []
    about = "about" if fc.on_mock else "at least"
    if est.seconds is not None:
        held = ""
        if not step.planned and est.requests is not None:
            held = f"{about} {est.requests:,.0f} requests in "
        how = "at least" if est.at_least else "about" if fc.on_mock else "at most"
        basis = _FIXED if est.at_least else fc.basis
        lines += _fit([f"  estimate: {held}{how} {_duration(est.seconds)}", f"({basis})"])
    for s in step.shortfalls:
        conf = f"{confidence_text(s.confidence)}"
        if step.planned or fc.on_mock:
            count = f"{s.requests:,}" if step.planned else f"about {s.requests:,}"
            parts = [f"  too few: {count} requests cannot confirm {s.label} at {conf};"]
            parts += [f"at least {s.needed:,} could", "(fewer can still show it missed)"]
        else:  # a lower estimate: what a server within its bounds completes
            parts = [
                f"  maybe too few: a server within its bounds completes at least {s.requests:,}",
                f"requests; confirming {s.label} at {conf} takes at least {s.needed:,}",
            ]
        lines += _fit(parts)
    if step.shape.requests is None and est.requests is None and fc.fewest:
        needs = [f"{label}: at least {need:,}," for label, need in fc.fewest.items()]
        needs[-1] = needs[-1].rstrip(",")
        lines += _fit(["  requests: as many as the server completes in time; confirming", *needs])
    return lines


def total_lines(sc: Scenario, fc: Forecast) -> list[str]:
    """The run's estimate: the steps' lengths summed; set-up and reports not counted."""
    if not fc.steps:
        return []
    steps = f"the {len(fc.steps)} steps take" if len(fc.steps) > 1 else "the step takes"
    how = "about" if fc.complete and fc.on_mock else "at most" if fc.complete else "at least"
    lines = [""]
    if fc.complete:
        parts = [f"({fc.basis};", "set-up and reports not counted)"]
    else:
        parts = ["(their durations and arrivals only:", "no E2E bound, nor TTFT and TPOT bounds,"]
        parts += ["says how long a request takes)"]
    lines += _fit([f"estimate: {steps} {how} {_duration(fc.seconds)}", *parts])
    known = all(s.shape.requests is not None or s.estimate.requests is not None for s in fc.steps)
    if fc.fewest and known and not any(s.shortfalls for s in fc.steps):
        needs = [f"{label}: at least {need:,}," for label, need in fc.fewest.items()]
        lines += _fit(
            [
                f"decidable at {confidence_text(sc.sla.confidence)}: every step has the "
                "requests that confirm",
                "its bounds met",
                f"({' '.join(needs)}",
                "more when values come near a bound)",
            ]
        )
    load = sc.load
    if isinstance(load, ConcurrencyLoad | RateLoad) and load.sweep == "sla-search":
        lines.append(f"  (sla-search: its bisection runs up to {load.max_search_steps} steps)")
    return lines


def _fit(parts: list[str], width: int = WIDTH) -> list[str]:
    """``parts`` joined by spaces into lines of at most ``width`` columns where they allow;
    a line breaks only between parts, the next indented two more than the first."""
    indent = " " * (len(parts[0]) - len(parts[0].lstrip()) + 2)
    lines = [parts[0]]
    for part in parts[1:]:
        if len(lines[-1]) + 1 + len(part) > width:
            lines.append(indent + part)
        else:
            lines[-1] += " " + part
    return lines


def _mock_settings(sc: Scenario) -> Settings | None:
    """The built-in mock's resolved command line, for ``url: mock``; else None."""
    if sc.target.url != "mock" or sc.target.urls:
        return None
    from loadgen.mock import settings_from_argv
    from loadgen.target import mock_args

    return settings_from_argv(mock_args(sc.target))


def _seconds(ns: int | None) -> float | None:
    return None if ns is None else ns / NS_PER_S


def _mean(values: list[int], empty: float = 0.0) -> float:
    return float(np.mean(values)) if values else empty


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    if minutes < 90:
        return f"{minutes} min {rest:02d} s"
    return f"{minutes // 60} h {minutes % 60:02d} min"
