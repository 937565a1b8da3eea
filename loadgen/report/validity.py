"""How a step's tool calls and structured answers read: the validity section, the SLA row.

From the step's :class:`~loadgen.summary.OutputValidity` (nothing when the
step has none): the validity rate with its interval and the first failure as
the example; the tool calls per answer, fragments and time to the first
fragment (:func:`section`: its lines, a list of their own in report.md, and
its steps.csv columns). Also how the ``valid_output_rate`` SLA check is written
(a floor, ``>=``, where the other bounds are ceilings).
"""

from __future__ import annotations

from loadgen.report.blocks import pct, verdict_cell
from loadgen.report.section import Section
from loadgen.summary import OutputValidity, SlaCheck, StepSummary
from loadgen.vocab import confidence_text

__all__ = ["METRIC", "check_cells", "check_text", "section"]

#: the SLA check's metric (loadgen.metrics.validity.METRIC)
METRIC = "valid_output_rate"


def _rate(v: OutputValidity) -> str:
    if v.rate is None:
        return "nothing checked"
    ci = ""
    if v.rate_ci is not None and v.confidence is not None:
        low, high = v.rate_ci
        ci = f", {confidence_text(v.confidence)} CI {100 * low:.1f}-{100 * high:.1f}%"
    return f"{v.valid:,} of {v.checked:,} valid ({100 * v.rate:.2f}%{ci})"


def _tools(v: OutputValidity) -> str | None:
    if not v.tool_calls and not v.tool_events:
        return None
    per = f"{v.calls_per_answer:.2f}" if v.calls_per_answer is not None else "-"
    text = (
        f"tool calls {v.tool_calls:,} in {v.answers_with_calls:,} of {v.answers:,} answers "
        f"({per} per answer with one) · {v.tool_events:,} fragments · "
        f"finish tool_calls {v.finish_tool_calls:,}"
    )
    d = v.first_tool_ms
    if d is not None and d.p50 is not None and d.p99 is not None:
        text += f" · first fragment p50 {d.p50:.2f} ms, p99 {d.p99:.2f} ms"
    return text


def _lines(v: OutputValidity) -> tuple[str, ...]:
    """The validity line, the first invalid answer, the tool-call line."""
    out = [f"valid output: {_rate(v)}"]
    if v.example is not None:
        out.append(f"first invalid answer ({v.example_request}): {v.example}")
    if (tools := _tools(v)) is not None:
        out.append(tools)
    return tuple(out)


def _csv_fields(v: OutputValidity) -> dict[str, object]:
    d = v.first_tool_ms
    return {
        "valid_output_checked": v.checked,
        "valid_output_valid": v.valid,
        "valid_output_rate": v.rate,
        "valid_output_example": v.example or "",
        "tool_calls": v.tool_calls,
        "tool_calls_per_answer": v.calls_per_answer,
        "tool_events": v.tool_events,
        "first_tool_ms_p50": None if d is None else d.p50,
        "first_tool_ms_p99": None if d is None else d.p99,
    }


def section(step: StepSummary) -> Section | None:
    """The step's outputs: in report.md a list apart from the step's facts; None when
    nothing was checked or counted."""
    v = step.output_validity
    if v is None:
        return None
    return Section("validity", _lines(v), fields=_csv_fields(v), apart=True)


def check_text(c: SlaCheck, word: str) -> str:
    """The console's ``valid_output_rate 63.33% >= 99% MISSED``."""
    if c.value is None:
        return f"{METRIC} >= {100 * c.bound:g}% {word} (no answer checked)"
    return f"{METRIC} {100 * c.value:.2f}% >= {100 * c.bound:g}% {word}"


def check_cells(c: SlaCheck) -> tuple[str, ...]:
    """The report's SLA table row: name, limit, measured, margin, verdict, why."""
    value = "no answer checked" if c.value is None else pct(c.value)
    margin = "–" if c.margin is None else f"{100 * c.margin:+.2f} pp"
    return (
        "valid output rate",
        f"≥ {pct(c.bound)}",
        value,
        margin,
        verdict_cell(c.verdict),
        c.reason or "",
    )
