"""What a completed run amounts to: usable or not, and, when asked, SLA met or not.

The judgement lives here, in the library; the CLI only raises what
:func:`judge` returns and maps its class to an exit code
(:mod:`loadgen.errors`). In order: a run in which no request succeeded is
:class:`~loadgen.errors.TargetUnusable`; with ``fail_on_sla`` (or
``strict``) a step whose verdict is *missed* is
:class:`~loadgen.errors.SlaMissed`; with ``strict`` an *inconclusive* step
(too few requests, a bound within loadgen's own error or inside its interval) is
:class:`~loadgen.errors.Inconclusive`. Both name each step's ``sla.reason``.
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
        missed = [s for s in summary.steps if s.sla.verdict == "missed"]
        if missed:
            return SlaMissed(
                "SLA missed: " + "; ".join(f"step {s.index}: {s.sla.reason}" for s in missed)
            )
    if strict:
        unsure = [s for s in summary.steps if s.sla.verdict == "inconclusive"]
        if unsure:
            return Inconclusive(
                "--strict: not decided with confidence: "
                + "; ".join(f"step {s.index}: {s.sla.reason}" for s in unsure)
            )
    return None
