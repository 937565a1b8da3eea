"""What a completed run amounts to: usable or not, and, when asked, SLA met or not.

The judgement lives here, in the library; the CLI only raises what
:func:`judge` returns and maps its class to an exit code
(:mod:`loadgen.errors`). In order: a run in which no request succeeded is
:class:`~loadgen.errors.TargetUnusable`; with ``fail_on_sla`` (or
``strict``) a bound missed with confidence is
:class:`~loadgen.errors.SlaMissed`; with ``strict`` a step that loadgen
itself could not measure, or a bound its interval cannot decide, is
:class:`~loadgen.errors.Inconclusive`.

Imports: loadgen.errors, loadgen.results.hints, loadgen.summary.
"""

from __future__ import annotations

from loadgen.errors import Inconclusive, LoadgenError, SlaMissed, TargetUnusable
from loadgen.results.hints import unusable_reason
from loadgen.summary import Summary

__all__ = ["judge"]


def judge(summary: Summary, *, fail_on_sla: bool, strict: bool) -> LoadgenError | None:
    """What a completed run amounts to, as an error for the CLI to raise, or None."""
    if (reason := unusable_reason(summary)) is not None:
        return TargetUnusable(reason)
    if fail_on_sla or strict:
        # missed with confidence: the interval's lower end beyond the bound (or, with no
        # interval, the value; a step with no successful request misses every bound)
        missed = [
            f"step {s.index} {c.metric}.{c.stat} {_num(c.value)} > {c.bound:g}"
            for s in summary.steps
            for c in s.sla.checks
            if c.verdict == "missed" or (c.verdict is None and not c.passed)
        ]
        if missed:
            return SlaMissed("SLA missed: " + "; ".join(missed))
    if strict:
        shaky = [s.index for s in summary.steps if s.sla.inconclusive]
        if shaky:
            return Inconclusive(
                f"--strict: step(s) {', '.join(map(str, shaky))} inconclusive "
                "(loadgen itself was saturated; see the warnings)"
            )
        unsure = [
            f"step {s.index} {c.metric}.{c.stat}: {c.reason or 'not decided'}"
            for s in summary.steps
            for c in s.sla.checks
            if c.verdict == "inconclusive"
        ]
        if unsure:
            return Inconclusive("--strict: not decided with confidence: " + "; ".join(unsure))
    return None


def _num(v: float | None) -> str:
    return "-" if v is None else f"{v:.4g}"
