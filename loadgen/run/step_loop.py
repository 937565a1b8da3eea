"""The step loop of one run: each sweep point planned, carried out, summarised and shown.

:class:`StepLoop` owns what lives for the run's steps: the executor (this
process, worker processes or Ray actors), the records writer's flush timer,
the sweep, the summary it appends to and rewrites after every step, and the
console lines of each step.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import Callable
from typing import TYPE_CHECKING

from loadgen.clock import NS_PER_MS, NS_PER_S
from loadgen.errors import OutputError
from loadgen.execute import Executor, LocalExecutor, make_requester, pool_limit
from loadgen.records import Record, RecordWriter
from loadgen.redact import redact_text
from loadgen.report import LiveView, format_run_header, format_step, step_warning_lines
from loadgen.results import (
    Point,
    ServerCounters,
    StepExtras,
    StepTally,
    TargetFacts,
    error_lines,
    load_label,
    load_point,
    make_sweep,
    step_summary,
    verdict,
    write_summary,
)
from loadgen.run.dead_target import DeadTargetWatch
from loadgen.run.live_feed import Display, feed_view
from loadgen.run.options import RunOptions
from loadgen.run.signals import SignalStop
from loadgen.scale import resolve_workers
from loadgen.scenario import Scenario, TraceLoad
from loadgen.summary import StepSummary, Summary
from loadgen.target import prefix_cache_delta, scrape_boundary, spec_decode_delta, time_split
from loadgen.workload import (
    ClosedLoop,
    ClosedPlan,
    ClosedSessionsPlan,
    LinkedPlan,
    OpenPlan,
    Workload,
    plan_step,
)

if TYPE_CHECKING:
    from loadgen.prom_endpoint import Exporter
    from loadgen.telemetry import TelemetryCollector

__all__ = ["FLUSH_AFTER_S", "StepLoop", "scrub"]

#: how long a finished request's row may wait in the write buffer
FLUSH_AFTER_S = 0.1


def scrub(rec: Record) -> None:
    """Redact what the server sent back in ``rec`` (its error, finish reason, kept answer).

    A server may echo the API key it was sent (a 401 body, an error event): every
    record passes here before it is written, counted or shown, so records.jsonl,
    the summary's error examples and the console's error lines hold none of the
    scenario's secrets (:func:`loadgen.redact.redact_text`).
    """
    if rec.error_detail is not None:
        rec.error_detail = redact_text(rec.error_detail)
    if rec.finish_reason is not None:
        rec.finish_reason = redact_text(rec.finish_reason)
    if rec.answer_text is not None:
        rec.answer_text = redact_text(rec.answer_text)


class StepLoop:
    def __init__(
        self,
        scenario: Scenario,
        workload: Workload,
        urls: list[str],
        opts: RunOptions,
        summary: Summary,
        writer: RecordWriter,
        progress: Display,
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
        #: loadgen's own metrics (telemetry.serve_metrics): each record, each load point
        self.exporter: Exporter | None = None
        self.facts = TargetFacts(
            url=url if scenario.target.url == "mock" else scenario.target.url,
            model=scenario.target.model,
            models=summary.target_check.models if summary.target_check else None,
            urls=tuple(urls) if len(urls) > 1 else (),
            api_key_env=scenario.target.api_key_env,
        )
        self.step_errors: list[str] = []  # the last step's error lines (hints.error_lines)
        #: load.stop_on_errors: a target down from the start stops the run
        self.dead = DeadTargetWatch(scenario.load.stop_on_errors)
        self._task: asyncio.Task[None] | None = None
        self._flush_timer: asyncio.TimerHandle | None = None
        self._protocol_checked = False
        self._finished = False  # the sweep ended by itself (or stopped on errors)
        self._http_versions: set[str] = set()
        self.workers = resolve_workers(scenario, ray=opts.ray is not None)
        summary.workers = self.workers
        self.steps_planned = self.steps_planned_of(scenario)

    @staticmethod
    def steps_planned_of(scenario: Scenario) -> int | None:
        """A list sweep knows its number of steps; auto and sla-search do not."""
        load = scenario.load
        return len(load.points) if getattr(load, "sweep", "list") == "list" else None

    async def run(self, stop: SignalStop) -> None:
        task = asyncio.current_task()
        assert task is not None
        stop.begin(task, asyncio.get_running_loop())
        self._task = task
        try:
            await self._run()
        except asyncio.CancelledError:
            # A signal that landed outside a step (workers starting, or closing after
            # the last step): the run stops there, what it ran is summarised.
            if not stop.count:
                raise
            task.uncancel()
            if not self._finished:
                self.summary.interrupted = True
            write_summary(self.summary, self.opts.out_dir / "summary.json")
        finally:
            stop.end()
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
        if self.exporter is not None:
            self.exporter.metrics.set_live_source(executor.live)
        sweep = make_sweep(load)
        if not self.opts.quiet:
            self.progress.print(format_run_header(self.summary))
        try:
            index = 0
            while (point := sweep.next_point()) is not None:
                step = await self.run_step(executor, index, point)
                index += 1
                sweep.observe(point, step)
                if self.dead.reason is not None:
                    sweep.stopped = self.dead.reason
                self.summary.steps.append(step)
                self.summary.verdict = verdict(sweep)
                self._check_protocol(self._http_versions)  # before the write: it is in the file
                write_summary(self.summary, self.opts.out_dir / "summary.json")
                self._print_step(step)
                # Between steps, outside any measurement: a full collection. While a
                # step runs collections are rare (execute.loop.quiet_gc), so cycles (failed
                # requests' tracebacks, finished tasks) would otherwise pile up in the
                # oldest generation over a long run.
                gc.collect()
                if self.dead.reason is not None:  # not the user's stop: no interrupted run
                    break
                if step.interrupted:
                    self.summary.interrupted = True
                    write_summary(self.summary, self.opts.out_dir / "summary.json")
                    break
            self._finished = True
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
            from loadgen.scale import RayPool

            pool = await RayPool.start_ray(
                sc, self.urls, self.opts.run_id, self.workload, n, self.opts.ray
            )
            self.summary.workers_clock_uncertainty_ms = pool.clock_uncertainty_ns / NS_PER_MS
            self.workers = self.summary.workers = pool.size
            return pool
        if n == 1:
            requester = make_requester(sc, self.urls, self.opts.run_id, pool_limit(sc.load))
            return LocalExecutor(requester, self.workload)
        from loadgen.scale import WorkerPool

        return WorkerPool.start(sc, self.urls, self.opts.run_id, self.workload, n)

    async def run_step(self, executor: Executor, index: int, at: Point) -> StepSummary:
        sc = self.scenario
        plan = plan_step(self.workload, sc.load, at.mode, at.value, index)
        # what the summary needs of each record (the step's, each endpoint's, each model's)
        tally = StepTally.of(len(self.urls), [name for name, _ in sc.target.mix])
        # every record, as it finishes, to each of these in turn; then it is dropped
        sinks: list[Callable[[Record], None]] = [
            scrub,  # first: nothing below sees what the server echoed of a secret
            self._write,
            tally.add,
            self.progress.record,
        ]
        if self.exporter is not None:
            sinks.append(self.exporter.metrics.record)
        sinks.append(self._watch_errors)

        def on_record(rec: Record) -> None:
            for sink in sinks:
                sink(rec)

        lp = load_point(sc, at)
        n: int | None = None  # progress counts requests: unknown ahead for sessions
        if isinstance(plan, ClosedPlan):
            n = plan.measured
        elif isinstance(plan, OpenPlan | LinkedPlan):
            n = sum(1 for s in plan.requests if not (s.warmup or s.ramp))
        of = f"/{self.steps_planned}" if self.steps_planned else ""
        duration_ns = None if isinstance(plan, LinkedPlan) else plan.duration_ns
        duration = duration_ns / NS_PER_S if duration_ns else None
        self.progress.start_step(f"[{index + 1}{of}] {lp.mode} {at.value:g}", n, duration)
        before = scrape_boundary(sc, self.urls)  # one GET /metrics per endpoint
        exporter = self.exporter
        if exporter is not None:
            exporter.metrics.start_step(index, lp.mode, at.value, self.steps_planned)
        view = self.progress
        feed = None
        if isinstance(view, LiveView):  # 4 Hz on this loop, beside the load
            feed = asyncio.get_running_loop().create_task(feed_view(view, executor, self.telemetry))
        try:
            outcome = await executor.step(plan, index, at.mode, at.value, on_record)
        finally:
            if feed is not None:
                feed.cancel()
        self.writer.flush()
        if exporter is not None:
            exporter.metrics.poll()  # the step's last send lags, before the next step's list
        self._http_versions |= outcome.http_versions
        health, interrupted = outcome.health, outcome.interrupted
        if (
            isinstance(plan, ClosedLoop)
            and plan.measured is not None
            and plan.measured < plan.concurrency
        ):
            what = "sessions" if isinstance(plan, ClosedSessionsPlan) else "requests"
            health.warnings.append(
                f"only {plan.measured} measured {what} for concurrency {at.value:g}: "
                "the step never ran at its concurrency (raise requests_per_step)"
            )
        start, end = tally.whole.span()
        if self.dead.reason is not None:
            self.summary.stopped_on_errors = self.dead.reason
        after = scrape_boundary(sc, self.urls)
        server = ServerCounters(
            prefix_cache=prefix_cache_delta(before.prefix_cache, after.prefix_cache),
            shares_prefixes=self._shares_prefixes,
            spec_decode=spec_decode_delta(before.spec_decode, after.spec_decode),
            time_split=time_split(before.phases, after.phases, None),
        )
        step = step_summary(
            sc,
            index,
            at,
            tally,
            metrics_profile=self.opts.metrics_profile,
            endpoints=self.urls,
            # loadgen's own stop on a dead target is no interrupt: that step is judged
            interrupted=interrupted and self.dead.reason is None,
            extras=StepExtras(
                client=health,
                mean_in_flight=outcome.mean_in_flight(start, end),
                server=server,
                telemetry=self.telemetry,
                earlier=self.summary.steps,
            ),
        )
        self.step_errors = error_lines(tally.whole.failures, self.facts)
        return step

    def _write(self, rec: Record) -> None:
        """The record into records.jsonl's buffer, flushed within FLUSH_AFTER_S."""
        self.writer.write(rec)
        self._flush_soon()

    def _watch_errors(self, rec: Record) -> None:
        """load.stop_on_errors: a target down from the start ends the step, as Ctrl-C does
        (its records are kept)."""
        if self.dead.observe(rec) and self._task is not None:
            self._task.cancel()
