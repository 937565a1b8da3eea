"""A whole run: the scenario's steps in order, records and summary on disk as they come.

scenario -> workload -> client -> records -> metrics -> report. The summary
is rewritten after every step, and Ctrl-C still leaves a valid partial
summary (the interrupted step is marked and its cut-short requests kept);
SIGTERM does the same. Records reach the file at most 100 ms after their
request ends, and at every step end, so even kill -9 loses little.

Imports: loadgen.* (the orchestrator sits on top of the measuring side).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import gc
import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from loadgen import __version__
from loadgen.clock import NS_PER_MS, NS_PER_S, anchor
from loadgen.errors import OutputError
from loadgen.metrics import StepColumns, step_cost, summarize_step
from loadgen.metrics.profiles import PROFILES
from loadgen.records import Record, RecordWriter
from loadgen.report.console import (
    format_run_header,
    format_step,
    load_label,
    step_warning_lines,
)
from loadgen.report.files import write_resolved_scenario, write_summary
from loadgen.report.progress import Progress
from loadgen.runner.cache import prefix_cache_delta
from loadgen.runner.endpoints import open_endpoints, preflight_all, scrape_cache_all
from loadgen.runner.execute import Executor, LocalExecutor
from loadgen.runner.hints import TargetFacts, error_lines
from loadgen.runner.preflight import pick_model
from loadgen.runner.setup import (
    calibrate_prompts,
    loop_factory,
    make_requester,
    pool_limit,
    prepare_out_dir,
    quiet_gc,
    resolve_workers,
    start_telemetry,
    warn,
)
from loadgen.runner.signals import SignalStop
from loadgen.runner.sweep import Point, make_sweep, verdict
from loadgen.scenario.checks import load_warnings
from loadgen.scenario.models import OfflineLoad, RateLoad, Scenario, TraceLoad
from loadgen.summary import ClockAnchor, LoadPoint, StepSummary, Summary

if TYPE_CHECKING:
    from loadgen.telemetry import TelemetryCollector

from loadgen.workload.describe import describe_workload
from loadgen.workload.source import Workload
from loadgen.workload.step import plan_step

__all__ = ["RunOptions", "run_scenario"]


@dataclass(slots=True)
class RunOptions:
    out_dir: Path
    quiet: bool = False
    progress: bool | None = None  # None: only on a terminal
    reports: bool = True  # steps.csv, report.md, report.html and plots at the end
    metrics_profile: str = "loadgen"  # whose metric definitions (loadgen.metrics.profiles)
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    #: called with the signal number when SIGTERM stops the run (the CLI's exit code 143)
    on_signal: Callable[[int], None] | None = None
    #: workers as Ray actors: ``local``, ``auto`` or a cluster address (loadgen.runner.ray_pool)
    ray: str | None = None


#: how long a finished request's row may wait in the write buffer
FLUSH_AFTER_S = 0.1


def run_scenario(scenario: Scenario, opts: RunOptions) -> Summary:
    """Run every step; return the summary (also written to ``out_dir``).

    Warnings and each step's errors (with hints) go to stderr; the step
    tables to stdout unless ``quiet``. SIGTERM stops it as Ctrl-C does.
    """
    stop = SignalStop(opts.on_signal)
    with stop.installed(), _disk_errors(opts.out_dir):
        summary = _run(scenario, opts, stop)
        if opts.reports:
            from loadgen.report.writer import write_reports

            write_reports(opts.out_dir)
    return summary


@contextlib.contextmanager
def _disk_errors(out_dir: Path) -> Iterator[None]:
    """A write the disk refuses ends the run as one OutputError line (exit 2).

    The records writer raises its own OutputError, which reaches here from
    inside a step's task group wrapped in an exception group; any other
    refused write (summary, reports, telemetry) arrives as a bare OSError.
    """
    try:
        yield
    except BaseExceptionGroup as group:
        match = group.subgroup(lambda e: _disk_error(e, out_dir) is not None)
        if match is None:
            raise
        e: BaseException = match
        while isinstance(e, BaseExceptionGroup):
            e = e.exceptions[0]
        error = _disk_error(e, out_dir)
        assert error is not None  # the subgroup holds only such leaves
        raise error from None
    except OSError as exc:
        if (error := _disk_error(exc, out_dir)) is None:
            raise
        raise error from None


#: errno values that can only mean the disk (whatever the file)
_DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EROFS, errno.EDQUOT, errno.EFBIG, errno.EIO})


def _disk_error(exc: BaseException, out_dir: Path) -> OutputError | None:
    """``exc`` as the one line a refused write deserves; None when it is not one."""
    if isinstance(exc, OutputError):
        return exc
    if not isinstance(exc, OSError):
        return None
    name = exc.filename
    ours = name is not None and Path(os.path.abspath(os.fsdecode(name))).is_relative_to(
        os.path.abspath(out_dir)
    )
    if not ours and exc.errno not in _DISK_ERRNOS:
        return None
    return OutputError(f"{name or out_dir}: cannot write: {exc.strerror or exc}")


def _run(scenario: Scenario, opts: RunOptions, stop: SignalStop) -> Summary:
    prepare_out_dir(opts.out_dir)
    write_resolved_scenario(scenario, opts.out_dir / "scenario.yaml")
    records_path = opts.out_dir / "records.jsonl"
    records_path.unlink(missing_ok=True)
    trace = scenario.load if isinstance(scenario.load, TraceLoad) else None
    chat = scenario.target.api == "openai-chat"
    workload = Workload.prepare(scenario.workload, chat=chat, trace=trace)  # bad files: stop here
    for line in load_warnings(scenario):
        warn(line)
    with contextlib.ExitStack() as stack:
        urls = open_endpoints(scenario, opts.out_dir, stack)  # starts the mock(s)
        url = urls[0]
        several = len(urls) > 1
        a = anchor()
        summary = Summary(
            loadgen_version=__version__,
            name=scenario.name,
            run_id=opts.run_id,
            target_url=scenario.target.endpoints[0],
            endpoints=urls if several else None,
            routing=scenario.target.routing if several else None,
            api=scenario.target.api,
            model=scenario.target.model,
            clock_anchor=ClockAnchor(monotonic_ns=a.monotonic_ns, wall_ns=a.wall_ns),
            metrics_profile=opts.metrics_profile,
            sla={k: v for k, v in scenario.sla.model_dump(exclude_none=True).items() if v != {}},
        )
        writer = stack.enter_context(contextlib.closing(RecordWriter(records_path)))
        progress = Progress(enabled=False if opts.quiet else opts.progress)
        summary.target_check = preflight_all(scenario, urls)
        if scenario.target.model == "auto":
            model = pick_model(summary.target_check.models, url)
            target = scenario.target.model_copy(update={"model": model})
            scenario = scenario.model_copy(update={"target": target})
            summary.model = model
        calibration = calibrate_prompts(scenario, url)
        if calibration is not None:
            workload = Workload.prepare(
                scenario.workload, chat=chat, trace=trace, calibration=calibration
            )
        summary.prompt_length_source = workload.prompt_length_source
        summary.workload = describe_workload(scenario, workload)
        stack.callback(progress.stop)
        telemetry = start_telemetry(scenario, url, opts.out_dir)
        if telemetry is not None:
            stack.callback(telemetry.stop)
        session = _Session(scenario, workload, urls, opts, summary, writer, progress, telemetry)
        with quiet_gc(), asyncio.Runner(loop_factory=loop_factory()) as runner:
            runner.run(session.run(stop))
    return summary


class _Session:
    def __init__(
        self,
        scenario: Scenario,
        workload: Workload,
        urls: list[str],
        opts: RunOptions,
        summary: Summary,
        writer: RecordWriter,
        progress: Progress,
        telemetry: TelemetryCollector | None,
    ) -> None:
        self.scenario = scenario
        self.workload = workload
        w = scenario.workload
        #: whether the workload means to share prompt prefixes (the hit rate is then reported)
        self._shares_prefixes = (
            w.prefix is not None or w.sessions is not None or isinstance(scenario.load, TraceLoad)
        )
        self.urls = urls
        self.url = url = urls[0]
        self.opts = opts
        self.summary = summary
        self.writer = writer
        self.progress = progress
        self.telemetry = telemetry
        self.facts = TargetFacts(
            url=url if scenario.target.url == "mock" else scenario.target.url,
            model=scenario.target.model,
            models=summary.target_check.models if summary.target_check else None,
            urls=tuple(urls) if len(urls) > 1 else (),
        )
        self.step_errors: list[str] = []  # the last step's error lines (hints.error_lines)
        self._flush_timer: asyncio.TimerHandle | None = None
        self._protocol_checked = False
        self._http_versions: set[str] = set()
        self.workers = resolve_workers(scenario, ray=opts.ray is not None)
        summary.workers = self.workers
        #: a list sweep knows its number of steps; auto and sla-search do not
        self.steps_planned = (
            len(scenario.load.points) if getattr(scenario.load, "sweep", "list") == "list" else None
        )

    async def run(self, stop: SignalStop) -> None:
        stop.task, stop.loop = asyncio.current_task(), asyncio.get_running_loop()
        try:
            await self._run()
        finally:
            stop.task = stop.loop = None
            if self._flush_timer is not None:
                self._flush_timer.cancel()

    def _flush_soon(self) -> None:
        """Flush the records within FLUSH_AFTER_S: one timer at a time, none when all is out."""
        if self._flush_timer is None and self.writer.pending:
            self._flush_timer = asyncio.get_running_loop().call_later(
                FLUSH_AFTER_S, self._flush_now
            )

    def _flush_now(self) -> None:
        self._flush_timer = None
        # A refused write stays in writer.failure: the next write or the step's
        # last flush raises it inside the run (a timer callback cannot).
        with contextlib.suppress(OutputError):
            self.writer.flush()

    async def _run(self) -> None:
        sc = self.scenario
        load = sc.load
        executor = await self._executor()
        sweep = make_sweep(load)
        if not self.opts.quiet:
            self.progress.print(format_run_header(self.summary))
        try:
            index = 0
            while (point := sweep.next_point()) is not None:
                step = await self.run_step(executor, index, point)
                index += 1
                sweep.observe(point, step)
                self.summary.steps.append(step)
                self.summary.verdict = verdict(sweep)
                write_summary(self.summary, self.opts.out_dir / "summary.json")
                self._print_step(step)
                self._check_protocol(self._http_versions)
                # Between steps, outside any measurement: a full collection. While a
                # step runs collections are rare (setup.quiet_gc), so cycles (failed
                # requests' tracebacks, finished tasks) would otherwise pile up in the
                # oldest generation over a long run.
                gc.collect()
                if step.interrupted:
                    self.summary.interrupted = True
                    write_summary(self.summary, self.opts.out_dir / "summary.json")
                    break
        finally:
            self.writer.flush()
            await executor.aclose()

    def _print_step(self, step: StepSummary) -> None:
        """The step's table on stdout; its warnings and errors (with hints) on stderr."""
        quiet = self.opts.quiet
        if not quiet:
            self.progress.print(
                format_step(step, self.summary.prompt_length_source, warnings=False)
            )
        problems = [*step_warning_lines(step), *self.step_errors]
        if problems and quiet:
            problems.insert(0, f"step {step.index} · {load_label(step)}")
        for line in problems:
            self.progress.warn(line)

    def _check_protocol(self, versions: set[str]) -> None:
        """``target.http2``: record the HTTP versions the server answered in; warn on HTTP/1.1.

        Once, after the first step in which a response came back.
        """
        if not self.scenario.target.http2 or not versions or self._protocol_checked:
            return
        self._protocol_checked = True
        if self.summary.target_check is not None:
            self.summary.target_check.http_versions = sorted(versions)
        if "HTTP/2" not in versions:
            self.progress.warn(
                "warning: target.http2 is set but the server answered in "
                f"{', '.join(sorted(versions))}: the numbers are HTTP/1.1's"
            )

    async def _executor(self) -> Executor:
        """This process, or a pool of worker processes (``load.workers``) or Ray actors."""
        sc = self.scenario
        n = self.workers
        if self.opts.ray is not None:
            from loadgen.runner.ray_pool import RayPool

            pool = await RayPool.start_ray(
                sc, self.urls, self.opts.run_id, self.workload, n, self.opts.ray
            )
            self.summary.workers_clock_uncertainty_ms = pool.clock_uncertainty_ns / NS_PER_MS
            self.workers = self.summary.workers = pool.size
            return pool
        if n == 1:
            requester = make_requester(sc, self.urls, self.opts.run_id, pool_limit(sc.load))
            return LocalExecutor(requester, self.workload)
        from loadgen.runner.workers import WorkerPool

        return WorkerPool.start(sc, self.urls, self.opts.run_id, self.workload, n)

    async def run_step(self, executor: Executor, index: int, at: Point) -> StepSummary:
        sc = self.scenario
        plan = plan_step(self.workload, sc.load, at.mode, at.value, index)
        columns = StepColumns()  # what the summary needs of each record; the record is dropped
        # several endpoints: each one's own columns too, for its breakdown
        parts = [StepColumns() for _ in self.urls] if len(self.urls) > 1 else []

        def on_record(rec: Record) -> None:
            self.writer.write(rec)
            self._flush_soon()
            columns.add(rec)
            if parts and rec.endpoint is not None and 0 <= rec.endpoint < len(parts):
                parts[rec.endpoint].add(rec)
            self.progress.record(rec)

        lp = load_point(sc, at)
        n: int | None = None  # progress counts requests: unknown ahead for sessions
        if plan.sessions is None and not plan.open_sessions:
            n = (
                plan.measured
                if plan.closed
                else sum(1 for s in plan.open_requests if not (s.warmup or s.ramp))
            )
        of = f"/{self.steps_planned}" if self.steps_planned else ""
        duration = plan.duration_ns / NS_PER_S if plan.duration_ns else None
        self.progress.start_step(f"[{index + 1}{of}] {lp.mode} {at.value:g}", n, duration)
        cache_before = self._scrape_cache()
        outcome = await executor.step(plan, index, at.mode, at.value, on_record)
        self.writer.flush()
        self._http_versions |= outcome.http_versions
        health, interrupted = outcome.health, outcome.interrupted
        if plan.closed and plan.measured is not None and plan.measured < plan.concurrency:
            what = "sessions" if plan.sessions is not None else "requests"
            health.warnings.append(
                f"only {plan.measured} measured {what} for concurrency {at.value:g}: "
                "the step never ran at its concurrency (raise requests_per_step)"
            )
        start, end = columns.span()
        step = summarize_step(
            index,
            lp,
            columns,
            sc.sla,
            client=health,
            mean_in_flight=outcome.mean_in_flight(start, end),
            interrupted=interrupted,
            profile=PROFILES[self.opts.metrics_profile],
            ttft_of=sc.sla.ttft_of,
            expect_full_output=expects_full_output(sc),
            prompt_tolerance=sc.workload.prompt_tolerance,
            endpoints=self.urls,
            endpoint_columns=parts,
        )
        step.role = at.role
        self.step_errors = error_lines(columns.failures, self.facts)
        cache = prefix_cache_delta(cache_before, self._scrape_cache())
        if cache is not None and (self._shares_prefixes or (cache.hits_tokens or 0) > 0):
            step.prefix_cache = cache  # a run of unique prompts shows it only if something hit
        if sc.cost.usd_per_hour is not None:
            step.cost = step_cost(step, sc.cost.usd_per_hour)
        if self.telemetry is not None and end > start:
            step.telemetry = self.telemetry.step_stats(start, end, step.tokens.output_total)
        return step

    def _scrape_cache(self) -> dict[str, float] | None:
        return scrape_cache_all(self.scenario, self.urls)


def expects_full_output(sc: Scenario) -> bool:
    """Whether the request asks the server for exactly ``max_tokens`` (ignore_eos and the like)."""
    extra = sc.target.extra_body
    params = extra.get("parameters") if isinstance(extra.get("parameters"), dict) else {}
    return bool(extra.get("ignore_eos") or (params or {}).get("ignore_eos"))


def load_point(sc: Scenario, at: Point) -> LoadPoint:
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
