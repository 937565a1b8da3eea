"""Which display a run gets, and what feeds the live view while a step runs.

:func:`make_display`: the live view (:class:`~loadgen.report.terminal.live.LiveView`)
on a terminal, unless ``--quiet``, ``--no-live`` or a CI environment
(``CI`` set to anything but ``0``/``false``); otherwise today's progress
line (:class:`~loadgen.report.terminal.progress.Progress`, itself silent off a
terminal). :func:`feed_view`: four times a second, on the run's event
loop, the executor's pulse (this process's monitor, or each worker's last
report) and the telemetry collector's newest samples go to the view, which
redraws. Records reach the view as they reach the summary: the step's
``on_record`` (worker records too, once they arrive at the parent).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Protocol

from loadgen.clock import now_ns, pause
from loadgen.report import GpuNow, HealthNow, LiveView, Progress, ServerNow
from loadgen.run.options import RunOptions
from loadgen.scenario import Scenario

if TYPE_CHECKING:
    from loadgen.execute import Pulse
    from loadgen.telemetry import TelemetryCollector

__all__ = ["TICK_S", "Display", "Pulsing", "feed_view", "in_ci", "make_display"]

#: how often the live view reads the counters and redraws
TICK_S = 0.25

Display = Progress | LiveView


class Pulsing(Protocol):
    """What the feed asks of an executor (:meth:`loadgen.execute.executor.Executor.pulse`)."""

    def pulse(self) -> Pulse | None: ...


def in_ci() -> bool:
    """Whether a CI service runs us (they set ``CI``): its log wants plain lines."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def make_display(scenario: Scenario, opts: RunOptions, steps_planned: int | None) -> Display:
    """The live view where a person watches a terminal; else the plain progress line."""
    live = opts.live
    if live is None:
        live = not opts.quiet and sys.stdout.isatty() and not in_ci()
    if live:
        return LiveView(now=now_ns, sla=scenario.sla, steps_planned=steps_planned)
    return Progress(now=now_ns, enabled=False if opts.quiet else opts.progress)


async def feed_view(
    view: LiveView, executor: Pulsing, telemetry: TelemetryCollector | None
) -> None:
    """Until cancelled: every TICK_S, loadgen's health and the latest telemetry, redrawn."""
    while True:
        await pause(TICK_S)
        pulse = executor.pulse()
        health = None
        if pulse is not None:
            health = HealthNow(
                in_flight=pulse.in_flight,
                cpu_util=pulse.cpu_util,
                loop_lag_p99_ms=pulse.loop_lag_p99_ms,
                warnings=pulse.warnings,
            )
        server: ServerNow | None = None
        gpus: tuple[GpuNow, ...] = ()
        if telemetry is not None:
            scrape, samples = telemetry.latest()
            if scrape is not None:
                server = ServerNow(scrape.running, scrape.waiting, scrape.kv_usage)
            gpus = tuple(
                GpuNow(label, g.util_pct, g.mem_used_bytes, g.power_w) for label, g in samples
            )
        view.tick(health, server, gpus)
