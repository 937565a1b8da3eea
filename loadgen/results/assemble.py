"""The summary of a run, assembled the same way live and after the fact.

The live run (:mod:`loadgen.run.step_loop`) and the rebuild of a killed run
(:mod:`loadgen.results.rebuild`) both start the summary with
:func:`start_summary` and make each step's summary with :func:`step_summary`
from the step's :class:`~loadgen.results.tally.StepTally`: one assembly, so the
two cannot drift apart. :func:`step_summary` is the only writer of a step's
summary: what only the live run sees (client health, in-flight samples, the
server's counters around the step, the GPUs' telemetry) comes in typed as
:class:`StepExtras`, and is never patched in afterwards.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from loadgen._version import __version__
from loadgen.metrics import (
    PROFILES,
    frontier_point,
    split_growth,
    step_cost,
    summarize_step,
    with_gpus,
)
from loadgen.results.sweep import Point
from loadgen.results.tally import StepTally
from loadgen.scenario import OfflineLoad, RateLoad, Scenario, TraceLoad
from loadgen.summary import (
    ClientHealth,
    ClockAnchor,
    LoadPoint,
    PrefixCacheStats,
    SpecDecodeStats,
    StepSummary,
    StepTelemetry,
    Summary,
    TimeSplit,
)

__all__ = [
    "ServerCounters",
    "StepExtras",
    "TelemetrySource",
    "expects_full_output",
    "load_point",
    "start_summary",
    "step_summary",
]


class TelemetrySource(Protocol):
    """What the run's telemetry gives a step (loadgen.telemetry.TelemetryCollector)."""

    def step_stats(self, start_ns: int, end_ns: int, output_tokens: int) -> StepTelemetry: ...


@dataclass(frozen=True, slots=True)
class ServerCounters:
    """The server's own counters over the step: its ``/metrics`` read at both ends
    (loadgen.target.scrape), each figure None where the server exports none.

    ``spec_decode`` comes without its tokens per event and ``time_split`` without
    the client's E2E beside it: the step's summary fills them in from its records.
    """

    prefix_cache: PrefixCacheStats | None = None
    #: the workload means to share prompt prefixes: the hit rate is shown even at 0
    shares_prefixes: bool = False
    spec_decode: SpecDecodeStats | None = None
    time_split: TimeSplit | None = None


@dataclass(frozen=True, slots=True)
class StepExtras:
    """What only the live run saw of a step, beside its records (a rebuilt run has none)."""

    client: ClientHealth | None = None
    mean_in_flight: float | None = None
    server: ServerCounters = field(default_factory=ServerCounters)
    telemetry: TelemetrySource | None = None
    #: the run's steps before this one: a missed step's time split names what grew most
    earlier: Sequence[StepSummary] = ()


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
    tally: StepTally,
    *,
    metrics_profile: str,
    endpoints: Sequence[str],
    interrupted: bool = False,
    extras: StepExtras | None = None,
) -> StepSummary:
    """Step ``index`` at ``point`` summarised from its tally, with its role, cost and
    frontier point, and what the live run saw beside the records (``extras``)."""
    extras = extras or StepExtras()
    step = summarize_step(
        index,
        load_point(sc, point),
        tally.whole,
        sc.sla,
        client=extras.client,
        mean_in_flight=extras.mean_in_flight,
        interrupted=interrupted,
        profile=PROFILES[metrics_profile],
        ttft_of=sc.sla.ttft_of,
        expect_full_output=expects_full_output(sc),
        prompt_tolerance=sc.workload.prompt_tolerance,
        endpoints=list(endpoints),
        endpoint_columns=tally.endpoints,
        models=sc.target.mix,
        model_columns=list(tally.models.values()),
        api=sc.target.api,
    )
    step.role = point.role
    if sc.cost.usd_per_hour is not None:
        step.cost = step_cost(step, sc.cost.usd_per_hour)
    if step.pooling is None:  # a pooling API generates no tokens: no point on the frontier
        step.frontier = frontier_point(step, tally.whole, sc.cost.gpus)
    _server_side(step, extras.server, extras.earlier)
    start, end = tally.whole.span()
    if extras.telemetry is not None and end > start:
        step.telemetry = extras.telemetry.step_stats(start, end, step.tokens.output_total)
        if step.frontier is not None:  # the GPUs the telemetry saw, per GPU
            step.frontier = with_gpus(step, step.frontier, sc.cost.gpus)
    return step


def _server_side(step: StepSummary, server: ServerCounters, earlier: Sequence[StepSummary]) -> None:
    """The server's counters over the step, with the step's own figures beside them."""
    cache = server.prefix_cache
    if cache is not None and (server.shares_prefixes or (cache.hits_tokens or 0) > 0):
        step.prefix_cache = cache  # a run of unique prompts shows it only if something hit
    if server.spec_decode is not None:
        tk = step.tokens
        per_event = tk.output_total / tk.output_events_total if tk.output_events_total else None
        step.spec_decode = server.spec_decode.model_copy(update={"tokens_per_event": per_event})
    if server.time_split is not None:
        step.time_split = server.time_split.seen_by_client(step.e2e_ms.mean)
        step.time_split.grew_most = split_growth(step, list(earlier))


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
