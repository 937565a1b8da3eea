"""Validity of tool calls and structured answers: a step's rate, its example, its SLA check.

:class:`OutputTally` keeps, per step, what the summary needs of each
successful measured answer's ``valid_output`` and tool-call fields (added by
:class:`~loadgen.metrics.columns.StepColumns` as records finish, merged across
workers). :func:`output_validity` makes the step's
:class:`~loadgen.summary.OutputValidity`:

- rate = valid / checked, over the answers with something to check
  (``Record.valid_output`` not None), with Wilson's score interval
  (:func:`loadgen.metrics.confidence.proportion_interval`);
- the first invalid answer's ``invalid_detail`` as the example;
- calls per answer = tool calls / answers with a call; time to the first
  tool-call fragment = ``first_tool_ns - sent_ns``.

:func:`validity_check` judges ``sla.valid_output_rate`` with confidence: met
when the interval's lower end reaches the bound, missed when its upper end is
below it, else inconclusive, with how many answers would decide it at the
share seen (:func:`loadgen.metrics.confidence.floor_needed`).
"""

from __future__ import annotations

from array import array

import numpy as np

from loadgen.metrics.confidence import floor_needed, floor_verdict, proportion_interval
from loadgen.metrics.stats import distribution_ms
from loadgen.records import Record
from loadgen.summary import OutputValidity, SlaCheck
from loadgen.vocab import confidence_text

__all__ = ["METRIC", "OutputTally", "output_validity", "validity_check"]

#: the SLA check's metric name
METRIC = "valid_output_rate"


class OutputTally:
    """A step's successful measured answers: validity and tool-call counts and timing."""

    __slots__ = (
        "answers",
        "checked",
        "example",
        "example_request",
        "finish_tool",
        "first_tool",
        "tool_calls",
        "tool_events",
        "valid",
        "with_calls",
    )

    def __init__(self) -> None:
        self.answers = self.checked = self.valid = 0
        self.tool_calls = self.tool_events = self.with_calls = self.finish_tool = 0
        self.example: str | None = None
        self.example_request: str | None = None
        self.first_tool = array("q")  # first_tool_ns - sent_ns of each answer with a call

    def add(self, r: Record) -> None:
        """One successful measured answer."""
        self.answers += 1
        if r.valid_output is None and not r.tool_events:
            return  # nothing of ours in it: a text answer
        if r.valid_output is not None:
            self.checked += 1
            if r.valid_output:
                self.valid += 1
            elif self.example is None:
                self.example, self.example_request = r.invalid_detail or "", r.request_id
        self.tool_events += r.tool_events
        self.tool_calls += r.tool_calls
        if r.tool_calls:
            self.with_calls += 1
        if r.finish_reason == "tool_calls":
            self.finish_tool += 1
        if r.first_tool_ns is not None:
            self.first_tool.append(r.first_tool_ns - r.sent_ns)

    def merge(self, other: OutputTally) -> None:
        for name in ("answers", "checked", "valid", "tool_calls", "tool_events", "with_calls"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.finish_tool += other.finish_tool
        if self.example is None and other.example is not None:
            self.example, self.example_request = other.example, other.example_request
        self.first_tool.extend(other.first_tool)

    @property
    def empty(self) -> bool:
        """No answer had anything to check or a tool call."""
        return self.checked == 0 and self.tool_events == 0


def output_validity(tally: OutputTally, confidence: float) -> OutputValidity | None:
    """The step's validity summary; None when no answer had anything of it."""
    if tally.empty:
        return None
    out = OutputValidity(
        checked=tally.checked,
        valid=tally.valid,
        example=tally.example,
        example_request=tally.example_request,
        answers=tally.answers,
        answers_with_calls=tally.with_calls,
        tool_calls=tally.tool_calls,
        tool_events=tally.tool_events,
        finish_tool_calls=tally.finish_tool,
    )
    if tally.checked:
        out.rate = tally.valid / tally.checked
        ci = proportion_interval(tally.valid, tally.checked, confidence)
        if ci.low is not None and ci.high is not None:
            out.rate_ci, out.confidence = [ci.low, ci.high], confidence
    if tally.with_calls:
        out.calls_per_answer = tally.tool_calls / tally.with_calls
    if tally.first_tool:
        values = np.frombuffer(tally.first_tool, dtype=np.int64)
        out.first_tool_ms = distribution_ms(values, confidence)
    return out


def validity_check(validity: OutputValidity | None, bound: float, confidence: float) -> SlaCheck:
    """``sla.valid_output_rate`` against the step: decided on the rate's Wilson interval."""
    if validity is None or not validity.checked:
        return SlaCheck(
            metric=METRIC,
            stat="value",
            bound=bound,
            value=None,
            margin=None,
            passed=False,
            verdict="missed",
            reason="no answer was checked",
        )
    n, k = validity.checked, validity.valid
    rate = k / n
    ci = proportion_interval(k, n, confidence)
    check = SlaCheck(
        metric=METRIC,
        stat="value",
        bound=bound,
        value=rate,
        margin=rate - bound,  # positive: headroom
        passed=rate >= bound,
        verdict=floor_verdict(ci, bound),
        interval=[ci.low, ci.high],
    )
    if check.verdict == "inconclusive":
        needed = floor_needed(n, k, bound, confidence)
        check.requests_needed = needed
        if needed is not None and needed > n:
            check.reason = (
                f"{n:,} checked answers cannot decide a {100 * bound:g}% rate at "
                f"{confidence_text(confidence)}; about {needed:,} would"
            )
        else:
            check.reason = (
                f"{100 * rate:.2f}% is within its {confidence_text(confidence)} interval of "
                "the bound "
                f"{100 * bound:g}%: too close to call"
            )
    return check
