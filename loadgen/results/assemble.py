"""The summary of a run, assembled the same way live and after the fact.

The live run (:mod:`loadgen.run.step_loop`) and the rebuild of a killed run
(:mod:`loadgen.results.rebuild`) both start the summary with
:func:`start_summary` and make each step's summary with :func:`step_summary`
from the step's columns: one assembly, so the two cannot drift apart. What only
the live run sees (client health, in-flight samples, prefix-cache counters,
telemetry) it passes in or adds afterwards.
"""

from __future__ import annotations

from collections.abc import Sequence

from loadgen._version import __version__
from loadgen.metrics import StepColumns, frontier_point, step_cost, summarize_step
from loadgen.metrics.profiles import PROFILES
from loadgen.results.sweep import Point
from loadgen.scenario import OfflineLoad, RateLoad, Scenario, TraceLoad
from loadgen.summary import ClientHealth, ClockAnchor, LoadPoint, StepSummary, Summary

__all__ = ["expects_full_output", "load_point", "start_summary", "step_summary"]


def start_summary(
    sc: Scenario,
    *,
    run_id: str,
    endpoints: Sequence[str],
    anchor: ClockAnchor,
    metrics_profile: str,
    interrupted: bool = False,
) -> Summary:
    """The run's summary before any step: what the scenario and the start say."""
    several = len(endpoints) > 1
    return Summary(
        loadgen_version=__version__,
        name=sc.name,
        run_id=run_id,
        target_url=sc.target.endpoints[0],
        endpoints=list(endpoints) if several else None,
        routing=sc.target.routing if several else None,
        api=sc.target.api,
        model=sc.target.model,
        clock_anchor=anchor,
        metrics_profile=metrics_profile,
        sla={k: v for k, v in sc.sla.model_dump(exclude_none=True).items() if v != {}},
        interrupted=interrupted,
        models=sc.target.model_names if sc.target.models is not None else None,
    )


def step_summary(
    sc: Scenario,
    index: int,
    point: Point,
    columns: StepColumns,
    *,
    metrics_profile: str,
    endpoints: Sequence[str],
    endpoint_columns: Sequence[StepColumns] = (),
    model_columns: Sequence[StepColumns] = (),
    client: ClientHealth | None = None,
    mean_in_flight: float | None = None,
    interrupted: bool = False,
) -> StepSummary:
    """Step ``index`` at ``point`` summarised from its columns, with its role, cost and
    frontier point.

    ``model_columns``: with a model mix, each model's columns in target.models' order.
    """
    step = summarize_step(
        index,
        load_point(sc, point),
        columns,
        sc.sla,
        client=client,
        mean_in_flight=mean_in_flight,
        interrupted=interrupted,
        profile=PROFILES[metrics_profile],
        ttft_of=sc.sla.ttft_of,
        expect_full_output=expects_full_output(sc),
        prompt_tolerance=sc.workload.prompt_tolerance,
        endpoints=list(endpoints),
        endpoint_columns=endpoint_columns,
        models=sc.target.mix,
        model_columns=model_columns,
        api=sc.target.api,
    )
    step.role = point.role
    if sc.cost.usd_per_hour is not None:
        step.cost = step_cost(step, sc.cost.usd_per_hour)
    if step.pooling is None:  # a pooling API generates no tokens: no point on the frontier
        step.frontier = frontier_point(step, columns, sc.cost.gpus)
    return step


def expects_full_output(sc: Scenario) -> bool:
    """Whether the request asks the server for exactly ``max_tokens`` (ignore_eos and the like)."""
    extra = sc.target.extra_body
    params = extra.get("parameters") if isinstance(extra.get("parameters"), dict) else {}
    return bool(extra.get("ignore_eos") or (params or {}).get("ignore_eos"))


def load_point(sc: Scenario, at: Point) -> LoadPoint:
    """The load a sweep point means, as the summary names it."""
    load = sc.load
    if at.mode == "concurrency":
        return LoadPoint(mode="concurrency", concurrency=int(at.value))
    if isinstance(load, TraceLoad):
        return LoadPoint(mode="trace", time_scale=at.value, max_concurrency=load.max_concurrency)
    if isinstance(load, OfflineLoad):
        return LoadPoint(mode="offline", max_concurrency=int(at.value) or None)
    if not isinstance(load, RateLoad):  # pragma: no cover - the sweep only makes rate points here
        raise TypeError(f"a rate point for a {load.mode} load")
    return LoadPoint(
        mode="rate",
        rate=at.value,
        arrival=load.arrival,
        burstiness=load.burstiness,
        max_concurrency=load.max_concurrency,
    )
