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
from loadgen.client import (
    ADAPTERS,
    Requester,
    RequestTimeouts,
    make_transport,
    transport_kind,
)
from loadgen.client.request import RequestLimits
from loadgen.clock import NS_PER_S, anchor, now_ns
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
from loadgen.runner.cache import prefix_cache_delta, scrape_prefix_cache
from loadgen.runner.drivers import (
    Budget,
    OnRecord,
    Send,
    closed_loop,
    open_loop,
    run_jobs,
    send_each,
)
from loadgen.runner.hints import TargetFacts, error_lines
from loadgen.runner.monitor import LoopMonitor
from loadgen.runner.preflight import pick_model
from loadgen.runner.sessions import SessionRunner
from loadgen.runner.setup import (
    calibrate_prompts,
    loop_factory,
    preflight,
    prepare_out_dir,
    quiet_gc,
    start_telemetry,
    target_headers,
    tls_options,
    warn,
)
from loadgen.runner.signals import SignalStop
from loadgen.runner.sweep import Point, make_sweep, verdict
from loadgen.runner.target import MockServer, mock_args
from loadgen.scenario.models import ConcurrencyLoad, LoadSpec, RateLoad, Scenario, TraceLoad
from loadgen.summary import ClockAnchor, LoadPoint, StepSummary, Summary

if TYPE_CHECKING:
    from loadgen.telemetry import TelemetryCollector

from loadgen.workload.describe import describe_workload
from loadgen.workload.plan import RequestSpec
from loadgen.workload.source import Workload
from loadgen.workload.step import StepPlan, plan_step

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
    with contextlib.ExitStack() as stack:
        url = scenario.target.url
        if url == "mock":
            if "url" not in scenario.target.model_fields_set:
                warn("warning: the scenario gives no target.url: the built-in mock is the target")
            args = mock_args(scenario.target)
            url = stack.enter_context(MockServer(args, opts.out_dir / "mock.log"))
        a = anchor()
        summary = Summary(
            loadgen_version=__version__,
            name=scenario.name,
            run_id=opts.run_id,
            target_url=scenario.target.url,
            api=scenario.target.api,
            model=scenario.target.model,
            clock_anchor=ClockAnchor(monotonic_ns=a.monotonic_ns, wall_ns=a.wall_ns),
            metrics_profile=opts.metrics_profile,
            sla={k: v for k, v in scenario.sla.model_dump(exclude_none=True).items() if v != {}},
        )
        writer = stack.enter_context(contextlib.closing(RecordWriter(records_path)))
        progress = Progress(enabled=False if opts.quiet else opts.progress)
        summary.target_check = preflight(scenario, url)
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
        session = _Session(scenario, workload, url, opts, summary, writer, progress, telemetry)
        with quiet_gc(), asyncio.Runner(loop_factory=loop_factory()) as runner:
            runner.run(session.run(stop))
    return summary


class _Session:
    def __init__(
        self,
        scenario: Scenario,
        workload: Workload,
        url: str,
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
        self.url = url
        self.opts = opts
        self.summary = summary
        self.writer = writer
        self.progress = progress
        self.telemetry = telemetry
        self.facts = TargetFacts(
            url=url if scenario.target.url == "mock" else scenario.target.url,
            model=scenario.target.model,
            models=summary.target_check.models if summary.target_check else None,
        )
        self.step_errors: list[str] = []  # the last step's error lines (hints.error_lines)
        self._flush_timer: asyncio.TimerHandle | None = None
        self._protocol_checked = False
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
        limit = _pool_limit(load)
        kind = transport_kind(sc.target.transport, url=self.url, http2=sc.target.http2)
        transport = make_transport(
            kind,
            http2=sc.target.http2,
            limit=limit,
            connect_timeout_s=sc.target.timeouts_s.connect,
            tls=tls_options(sc),
        )
        t = sc.target.timeouts_s
        requester = Requester(
            transport,
            ADAPTERS[sc.target.api],
            base_url=self.url,
            model=sc.target.model,
            extra_body=dict(sc.target.extra_body),
            headers=target_headers(sc),
            timeouts=RequestTimeouts.from_seconds(t.first_token, t.idle, t.total),
            run_id=self.opts.run_id,
            stream=sc.target.stream,
            limits=RequestLimits(**sc.target.limits.model_dump()),
        )
        sweep = make_sweep(load)
        if not self.opts.quiet:
            self.progress.print(format_run_header(self.summary))
        try:
            index = 0
            while (point := sweep.next_point()) is not None:
                step = await self.run_step(requester, index, point)
                index += 1
                sweep.observe(point, step)
                self.summary.steps.append(step)
                self.summary.verdict = verdict(sweep)
                write_summary(self.summary, self.opts.out_dir / "summary.json")
                self._print_step(step)
                self._check_protocol(transport)
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
            await transport.aclose()

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

    def _check_protocol(self, transport: object) -> None:
        """``target.http2``: record the HTTP versions the server answered in; warn on HTTP/1.1.

        Once, after the first step in which a response came back.
        """
        versions = getattr(transport, "http_versions", None)
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

    async def run_step(self, requester: Requester, index: int, at: Point) -> StepSummary:
        sc = self.scenario
        plan = plan_step(self.workload, sc.load, at.mode, at.value, index)
        columns = StepColumns()  # what the summary needs of each record; the record is dropped
        monitor = LoopMonitor()
        send_lags: list[int] = []

        async def send(spec: RequestSpec, scheduled: int | None) -> Record:
            monitor.in_flight += 1
            try:
                return await requester.send(spec, index, scheduled)
            finally:
                monitor.in_flight -= 1

        def on_record(rec: Record) -> None:
            self.writer.write(rec)
            self._flush_soon()
            columns.add(rec)
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
        read_lag = requester.transport.read_lag
        if read_lag is not None:
            read_lag.take()  # what came before this step is not its own
        cache_before = self._scrape_cache()
        monitor.start()
        interrupted = False
        try:
            await self._carry_out(plan, send, on_record, send_lags)
        except asyncio.CancelledError:
            interrupted = True
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            for rec in requester.cancelled:
                on_record(rec)
            requester.cancelled.clear()
        self.writer.flush()
        await monitor.stop()
        health = monitor.health(send_lags, read_lag.take() if read_lag is not None else None)
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
            mean_in_flight=monitor.mean_in_flight(start, end),
            interrupted=interrupted,
            profile=PROFILES[self.opts.metrics_profile],
            ttft_of=sc.sla.ttft_of,
            expect_full_output=expects_full_output(sc),
            prompt_tolerance=sc.workload.prompt_tolerance,
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

    async def _carry_out(
        self, plan: StepPlan, send: Send, on_record: OnRecord, send_lags: list[int]
    ) -> None:
        """Send what ``plan`` says, in its mode."""
        budget = Budget(plan.measured, plan.duration_ns)
        if plan.sessions is not None or plan.open_sessions:
            sessions = SessionRunner(
                self.workload, send, on_record, plan.rng, stop=lambda: budget.over(now_ns())
            )
            if plan.closed:
                if plan.warmup_sessions:
                    w = plan.warmup_sessions
                    await run_jobs(sessions.run_warmup, iter(w), min(plan.concurrency, len(w)))
                assert plan.sessions is not None
                await closed_loop(
                    sessions.run,
                    plan.sessions,
                    plan.concurrency,
                    budget=budget,
                    ramp_ns=plan.ramp_ns,
                )
            else:
                jobs = [
                    (s, wu, ra)
                    for s, (wu, ra) in zip(plan.open_sessions, plan.open_session_flags, strict=True)
                ]
                await open_loop(
                    sessions.run_job,
                    jobs,
                    plan.offsets_ns,
                    max_concurrency=plan.max_concurrency,
                    send_lags_ns=send_lags,
                )
            return
        run = send_each(send, on_record)
        if plan.closed:
            if plan.warmup:  # warm up, then drain: the measured window holds measured requests only
                await run_jobs(run, iter(plan.warmup), min(plan.concurrency, len(plan.warmup)))
            await closed_loop(
                run, plan.requests, plan.concurrency, budget=budget, ramp_ns=plan.ramp_ns
            )
        else:
            await open_loop(
                run,
                plan.open_requests,
                plan.offsets_ns,
                max_concurrency=plan.max_concurrency,
                send_lags_ns=send_lags,
            )

    def _scrape_cache(self) -> dict[str, float] | None:
        return scrape_prefix_cache(
            self.url, target_headers(self.scenario), tls_options(self.scenario)
        )


def expects_full_output(sc: Scenario) -> bool:
    """Whether the request asks the server for exactly ``max_tokens`` (ignore_eos and the like)."""
    extra = sc.target.extra_body
    params = extra.get("parameters") if isinstance(extra.get("parameters"), dict) else {}
    return bool(extra.get("ignore_eos") or (params or {}).get("ignore_eos"))


def _pool_limit(load: LoadSpec) -> int:
    """Connections the run may need at once (0 = no limit): never a cap on the load."""
    if isinstance(load, ConcurrencyLoad):
        return int(max(load.points))
    return load.max_concurrency or 0


def load_point(sc: Scenario, at: Point) -> LoadPoint:
    load = sc.load
    if at.mode == "concurrency":
        return LoadPoint(mode="concurrency", concurrency=int(at.value))
    if isinstance(load, TraceLoad):
        return LoadPoint(mode="trace", time_scale=at.value, max_concurrency=load.max_concurrency)
    if not isinstance(load, RateLoad):  # pragma: no cover - the sweep only makes rate points here
        raise TypeError(f"a rate point for a {load.mode} load")
    return LoadPoint(
        mode="rate",
        rate=at.value,
        arrival=load.arrival,
        burstiness=load.burstiness,
        max_concurrency=load.max_concurrency,
    )
