"""Drives a run: the step loop, signals, the judged run and its repeats.

Owns :func:`run_scenario` (:mod:`~loadgen.run.runner`: set-up, then the steps
in order, then the reports), the step loop (:mod:`~loadgen.run.step_loop`),
SIGTERM and SIGHUP handled like Ctrl-C (:mod:`~loadgen.run.signals`), what ``loadgen run``
does with one run or ``--repeat N`` (:mod:`~loadgen.run.command`) and the
options a run takes beyond its scenario (:mod:`~loadgen.run.options`).

May import every stage below it: clock, errors, redact, records, scenario,
workload, client, metrics, summary, results, target, execute, scale,
telemetry, report. Never the CLI, ceiling, the mock's or the GPU agent's code.

Public names: RunOptions, run_scenario, Judging, run_judged, run_repeats.
"""

from loadgen.run.command import Judging, run_judged, run_repeats
from loadgen.run.options import RunOptions
from loadgen.run.runner import run_scenario

__all__ = ["Judging", "RunOptions", "run_judged", "run_repeats", "run_scenario"]
