"""How a step's tool calls and structured answers read: console lines, CSV fields, report items.

From the step's :class:`~loadgen.summary.OutputValidity` (nothing when the
step has none): the validity rate with its interval and the first failure as
the example; the tool calls per answer, fragments and time to the first
fragment. Also how the ``valid_output_rate`` SLA check is written (a floor,
``>=``, where the other bounds are ceilings).
"""

from __future__ import annotations

from loadgen.report.blocks import pct, verdict_cell
from loadgen.report.wrap import fit, phrases
from loadgen.summary import OutputValidity, SlaCheck, StepSummary
from loadgen.vocab import confidence_text

__all__ = ["METRIC", "check_cells", "check_text", "console_lines", "csv_fields", "items"]

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


def items(step: StepSummary) -> tuple[str, ...]:
    """The report's lines about the step's outputs (report.md / report.html facts)."""
    v = step.output_validity
    if v is None:
        return ()
    out = [f"valid output: {_rate(v)}"]
    if v.example is not None:
        out.append(f"first invalid answer ({v.example_request}): {v.example}")
    if (tools := _tools(v)) is not None:
        out.append(tools)
    return tuple(out)


def console_lines(step: StepSummary) -> list[str]:
    """Under the step's table: the validity line, the example, the tool-call line, each
    wrapped at 80 columns between its phrases."""
    out: list[str] = []
    for line in items(step):
        chunks = line.split(" · ")
        parts = [p for i, c in enumerate(chunks) for p in phrases(c + " ·" * (i < len(chunks) - 1))]
        out += fit("  ", parts, " ")
    return out


def csv_fields(step: StepSummary) -> dict[str, object]:
    """steps.csv's columns of the step's outputs (none when the step has none)."""
    v = step.output_validity
    if v is None:
        return {}
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
