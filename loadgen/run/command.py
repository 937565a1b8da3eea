"""What ``loadgen run`` does: one judged run, or the whole sweep N times and its spread.

:func:`run_judged` runs the sweep once, prints the verdict and raises what the
run amounts to (:func:`loadgen.results.outcome.judge`), or
:class:`~loadgen.errors.Interrupted` (Ctrl-C),
:class:`~loadgen.errors.Terminated` (SIGTERM) or :class:`~loadgen.errors.HungUp`
(SIGHUP) when a signal cut it short. A results directory that already holds a
run is refused unless ``--replace``. With ``--repeat N``, :func:`run_repeats`: each
repeat writes a full results directory (``repeat-1`` ... ``repeat-N`` inside
the run's folder, :func:`loadgen.compare.repeats.repeat_dirs`); the repeats
that completed are compared step by step (``repeats.json``, ``repeats.md`` and
a console table). An interrupted repeat ends the loop: what completed is still
compared, then the interruption is raised. A repeat whose outcome is a failure
does not stop the others; the first such failure is raised at the end.
"""

from __future__ import annotations

import dataclasses
import signal
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from loadgen.compare import repeat_dirs, spread
from loadgen.errors import HungUp, Interrupted, LoadgenError, Terminated
from loadgen.report import format_verdict, render_console, write_spread
from loadgen.results import judge
from loadgen.run.options import RunOptions
from loadgen.run.runner import run_scenario
from loadgen.run.setup import refuse_used_dir
from loadgen.scenario import Scenario
from loadgen.summary import Summary

__all__ = ["Judging", "run_judged", "run_repeats"]


@dataclass(frozen=True, slots=True)
class Judging:
    """How ``loadgen run`` judges what it ran, and where its lines go."""

    fail_on_sla: bool = False
    strict: bool = False
    #: the first signal that stopped the run (SIGINT, SIGTERM, SIGHUP), asked once it stopped
    signum: Callable[[], int | None] = lambda: None
    say: Callable[[str], None] = print

    def judge(self, summary: Summary) -> LoadgenError | None:
        return judge(summary, fail_on_sla=self.fail_on_sla, strict=self.strict)

    def stopped(self, text: str) -> Interrupted:
        """The error of a run a signal stopped: its class carries the signal's exit code."""
        return STOPPED_BY.get(self.signum() or signal.SIGINT, Interrupted)(text)


#: the error (and so the exit code) of each signal a run handles; Ctrl-C: Interrupted
STOPPED_BY: dict[int, type[Interrupted]] = {signal.SIGTERM: Terminated, signal.SIGHUP: HungUp}


def _once(sc: Scenario, opts: RunOptions, how: Judging) -> Summary | None:
    """One sweep, its verdict said; None when a signal stopped it before a summary came back."""
    try:
        summary = run_scenario(sc, opts)
    except KeyboardInterrupt:
        if how.signum() is None:
            raise
        return None
    how.say(format_verdict(summary, opts.out_dir))
    return summary


def run_judged(sc: Scenario, opts: RunOptions, how: Judging) -> Summary:
    """Run the sweep once; say the verdict; raise what a failed or stopped run amounts to.

    A signal that came once the steps were done (while the reports were written)
    still ends the run as stopped: the files are whole, the exit code says it.
    """
    summary = _once(sc, opts, how)
    if summary is None:
        name = signal.Signals(how.signum() or signal.SIGINT).name
        raise how.stopped(f"stopped by {name}: partial results in {opts.out_dir}")
    if summary.interrupted or how.signum() is not None:
        raise how.stopped(f"interrupted: partial results in {opts.out_dir}")
    if (failure := how.judge(summary)) is not None:
        raise failure
    return summary


def run_repeats(sc: Scenario, opts: RunOptions, n: int, how: Judging) -> None:
    """Run ``n`` whole sweeps in repeat-k folders of ``opts.out_dir``, then their spread."""
    out_dir = opts.out_dir
    for folder in (out_dir, *repeat_dirs(out_dir, n)):  # before the first repeat runs
        refuse_used_dir(folder, opts.replace)
    done: list[Summary] = []
    failures: list[LoadgenError] = []
    for k, folder in enumerate(repeat_dirs(out_dir, n), start=1):
        if not opts.quiet:
            how.say(f"repeat {k} of {n} -> {folder}")
        one = dataclasses.replace(opts, out_dir=folder, run_id=uuid.uuid4().hex[:8])
        summary = _once(sc, one, how)
        if summary is None or summary.interrupted:
            break
        done.append(summary)
        if (failure := how.judge(summary)) is not None:
            failures.append(failure)
    if done:
        result = spread(done, [f"repeat-{k}" for k in range(1, len(done) + 1)])
        write_spread(result, out_dir)
        how.say(render_console(result))
        how.say(f"repeats: {out_dir} (repeats.json, repeats.md)")
    if len(done) < n or how.signum() is not None:
        raise how.stopped(f"interrupted: {len(done)} of {n} repeats complete in {out_dir}")
    if failures:
        raise failures[0]
