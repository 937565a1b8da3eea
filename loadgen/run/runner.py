"""A whole run: the scenario's steps in order, records and summary on disk as they come.

scenario -> workload -> client -> records -> metrics -> summary -> report.
:func:`run_scenario` prepares the results directory, the endpoints (the
mock is started here), the pre-flight check, calibration and telemetry, then
hands the steps to :class:`~loadgen.run.step_loop.StepLoop`. First of all, the
open-file limit must fit the planned concurrency
(:func:`~loadgen.execute.open_files.ensure_open_files`). The summary is
rewritten after every step, and Ctrl-C still leaves a valid partial summary
(the interrupted step is marked and its cut-short requests kept); SIGTERM
and SIGHUP do the same (:mod:`~loadgen.run.signals`). A write the disk
refuses ends the run as one line (exit 2); so does any LoadgenError a step's
task group raises (a dead media helper: exit 1), unwrapped from its group.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

from loadgen.clock import anchor
from loadgen.errors import LoadgenError, OutputError
from loadgen.execute import ensure_open_files, loop_factory, quiet_gc
from loadgen.records import RecordWriter
from loadgen.redact import warn
from loadgen.results import start_summary, write_resolved_scenario
from loadgen.run.live_feed import make_display
from loadgen.run.options import RunOptions
from loadgen.run.setup import prepare_out_dir, start_exporter, start_telemetry
from loadgen.run.signals import SignalStop
from loadgen.run.step_loop import StepLoop
from loadgen.scale import resolve_workers
from loadgen.scenario import Scenario, TraceLoad, load_warnings
from loadgen.summary import ClockAnchor, PromptCalibration, Summary, WorkloadInfo
from loadgen.target import (
    calibrate_prompts,
    environment_of,
    open_endpoints,
    pick_model,
    preflight_all,
)
from loadgen.workload import Workload, describe_workload

__all__ = ["RunOptions", "run_scenario"]


def run_scenario(scenario: Scenario, opts: RunOptions) -> Summary:
    """Run every step; return the summary (also written to ``out_dir``).

    Warnings and each step's errors (with hints) go to stderr; the step
    tables to stdout unless ``quiet``. SIGTERM and SIGHUP stop it as Ctrl-C does;
    a signal while the reports are written is noted, and they are written.
    """
    stop = SignalStop(opts.on_signal)
    with stop.installed(), _disk_errors(opts.out_dir):
        summary = _run(scenario, opts, stop)
        if opts.reports:
            from loadgen.report import write_reports

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
    if opts.ray is None:  # Ray actors hold their connections on their own hosts
        ensure_open_files(scenario, resolve_workers(scenario))  # before the mock starts
    prepare_out_dir(opts.out_dir, opts.replace)
    write_resolved_scenario(scenario, opts.out_dir / "scenario.yaml")
    records_path = opts.out_dir / "records.jsonl"
    records_path.unlink(missing_ok=True)
    trace = scenario.load if isinstance(scenario.load, TraceLoad) else None
    chat = scenario.target.chat
    mix = scenario.target.mix
    # bad files: stop here
    api = scenario.target.api
    workload = Workload.prepare(scenario.workload, chat=chat, trace=trace, models=mix, api=api)
    for line in load_warnings(scenario):
        warn(line)
    with contextlib.ExitStack() as stack:
        urls = open_endpoints(scenario, opts.out_dir, stack)  # starts the mock(s)
        url = urls[0]
        a = anchor()
        summary = start_summary(
            scenario,
            run_id=opts.run_id,
            endpoints=urls,
            anchor=ClockAnchor(monotonic_ns=a.monotonic_ns, wall_ns=a.wall_ns),
            metrics_profile=opts.metrics_profile,
        )
        writer = stack.enter_context(contextlib.closing(RecordWriter(records_path)))
        progress = make_display(scenario, opts, StepLoop.steps_planned_of(scenario))
        summary.target_check = preflight_all(scenario, urls)
        if scenario.target.model == "auto":
            model = pick_model(summary.target_check.models, url)
            target = scenario.target.model_copy(update={"model": model})
            scenario = scenario.model_copy(update={"target": target})
            summary.model = model
        summary.environment = environment_of(scenario, url, healthy=summary.target_check.healthy)
        calibration = calibrate_prompts(scenario, url)
        if calibration is not None:
            summary.calibration = PromptCalibration(
                engine=calibration.engine,
                endpoint=calibration.endpoint,
                chat_template=calibration.chat_template,
                per_word=calibration.per_word,
                overhead=calibration.overhead,
            )
            workload = Workload.prepare(
                scenario.workload,
                chat=chat,
                trace=trace,
                calibration=calibration,
                models=mix,
                api=api,
            )
        summary.prompt_length_source = workload.prompt_length_source
        summary.workload = WorkloadInfo.model_validate(describe_workload(scenario, workload))
        stack.callback(progress.stop)
        telemetry = start_telemetry(scenario, url, opts.out_dir)
        if telemetry is not None:
            stack.callback(telemetry.stop)
        exporter = start_exporter(scenario, opts.run_id)
        if exporter is not None:
            stack.callback(lambda: exporter.close(linger=not summary.interrupted))
            progress.warn(f"serving loadgen's metrics on {exporter.server.url}")  # -q too
        step_loop = StepLoop(scenario, workload, urls, opts, summary, writer, progress, telemetry)
        step_loop.exporter = exporter
        with quiet_gc(), asyncio.Runner(loop_factory=loop_factory()) as runner:
            try:
                runner.run(step_loop.run(stop))
            except BaseExceptionGroup as group:
                raise _first_loadgen_error(group) from None
    return summary


def _first_loadgen_error(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The first LoadgenError among ``group``'s leaves (the one line the CLI prints), else
    the group itself."""
    match = group.subgroup(lambda e: isinstance(e, LoadgenError))
    if match is None:
        return group
    e: BaseException = match
    while isinstance(e, BaseExceptionGroup):
        e = e.exceptions[0]
    return e
