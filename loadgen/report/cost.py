"""What the step cost (``cost.usd_per_hour``): report.md's line and steps.csv's ``cost_*``.

A figure the step has no throughput for is left out; the console says nothing.
"""

from __future__ import annotations

from loadgen.report.section import Section
from loadgen.summary import StepSummary

__all__ = ["section"]


def _cost(key: str, value: float) -> str:
    label = key.removeprefix("usd_").replace("_", " ")
    return f"{value:,.4g} USD {label}"


def section(step: StepSummary) -> Section | None:
    """``cost: 2.5 USD per hour; 2.528 USD per million output tokens``; None without cost."""
    if step.cost is None:
        return None
    costs = step.cost.model_dump(exclude_none=True)
    text = "cost: " + "; ".join(_cost(k, v) for k, v in costs.items())
    return Section("cost", (text,), console=(), fields={f"cost_{k}": v for k, v in costs.items()})
