"""What ``loadgen run`` does: one judged run, or the whole sweep N times and its spread.

:func:`run_judged` runs the sweep once, prints the verdict and raises what the
run amounts to (:func:`loadgen.results.outcome.judge`), or
:class:`~loadgen.errors.Interrupted` / :class:`~loadgen.errors.Terminated`
when a signal cut it short. With ``--repeat N``, :func:`run_repeats`: each
repeat writes a full results directory (``repeat-1`` ... ``repeat-N`` inside
the run's folder, :func:`loadgen.report.repeats.repeat_dirs`); the repeats
that completed are compared step by step (``repeats.json``, ``repeats.md`` and
a console table). An interrupted repeat ends the loop: what completed is still
compared, then the interruption is raised. A repeat whose outcome is a failure
does not stop the others; the first such failure is raised at the end.

Imports: loadgen.errors, loadgen.report (console, repeats), loadgen.results.outcome,
loadgen.run (options, runner), loadgen.scenario, loadgen.summary.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable

from loadgen.errors import Interrupted, LoadgenError, Terminated
from loadgen.report.console import format_verdict
from loadgen.report.repeats import render_console, repeat_dirs, spread, write_spread
from loadgen.results.outcome import judge
from loadgen.run.options import RunOptions
from loadgen.run.runner import run_scenario
from loadgen.scenario.models import Scenario
from loadgen.summary import Summary

__all__ = ["run_judged", "run_repeats"]


def run_judged(
    sc: Scenario,
    opts: RunOptions,
    *,
    fail_on_sla: bool,
    strict: bool,
    terminated: Callable[[], bool],
    say: Callable[[str], None] = print,
) -> Summary:
    """Run the sweep once; say the verdict; raise what a failed or stopped run amounts to.

    ``terminated``: whether SIGTERM (not Ctrl-C) stopped the run, once it stops.
    """
    out_dir = opts.out_dir
    try:
        summary = run_scenario(sc, opts)
    except KeyboardInterrupt:
        if not terminated():
            raise
        raise Terminated(f"stopped by SIGTERM: partial results in {out_dir}") from None
    say(format_verdict(summary, out_dir))
    if summary.interrupted:
        error = Terminated if terminated() else Interrupted
        raise error(f"interrupted: partial results in {out_dir}")
    if (failure := judge(summary, fail_on_sla=fail_on_sla, strict=strict)) is not None:
        raise failure
    return summary


def run_repeats(
    sc: Scenario,
    opts: RunOptions,
    n: int,
    *,
    fail_on_sla: bool,
    strict: bool,
    terminated: Callable[[], bool],
    say: Callable[[str], None] = print,
) -> None:
    """Run ``n`` whole sweeps in repeat-k folders of ``opts.out_dir``, then their spread.

    ``terminated``: whether SIGTERM (not Ctrl-C) stopped the run, once it stops.
    """
    out_dir = opts.out_dir
    summaries: list[Summary] = []
    failures: list[LoadgenError] = []
    stopped = False
    for k, folder in enumerate(repeat_dirs(out_dir, n), start=1):
        if not opts.quiet:
            say(f"repeat {k} of {n} -> {folder}")
        one = dataclasses.replace(opts, out_dir=folder, run_id=uuid.uuid4().hex[:8])
        try:
            summary = run_scenario(sc, one)
        except KeyboardInterrupt:
            if not terminated():
                raise
            stopped = True
            break
        summaries.append(summary)
        say(format_verdict(summary, folder))
        if summary.interrupted:
            stopped = True
            break
        if (failure := judge(summary, fail_on_sla=fail_on_sla, strict=strict)) is not None:
            failures.append(failure)
    done = [s for s in summaries if not s.interrupted]
    if done:
        result = spread(done, [f"repeat-{k}" for k in range(1, len(done) + 1)])
        write_spread(result, out_dir)
        say(render_console(result))
        say(f"repeats: {out_dir} (repeats.json, repeats.md)")
    if stopped:
        error = Terminated if terminated() else Interrupted
        raise error(f"interrupted: {len(done)} of {n} repeats complete in {out_dir}")
    if failures:
        raise failures[0]
