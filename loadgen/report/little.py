"""Little's law as a step fact: in flight sampled against throughput x latency.

report.md says the check when it holds; when it is off it is a warning in every
output (the writers' warnings), and its ``little_*`` columns are the step
table's fixed ones.
"""

from __future__ import annotations

from loadgen.report.section import Section
from loadgen.summary import StepSummary

__all__ = ["section"]


def section(step: StepSummary) -> Section | None:
    """``Little's law: 3.9 in flight sampled vs 4.0 predicted`` for report.md (the console
    says nothing when it holds); None without a check or when it is off."""
    little = step.little
    if little is None or little.flagged:
        return None
    text = (
        f"Little's law: {little.mean_in_flight:.1f} in flight sampled vs "
        f"{little.predicted:.1f} predicted"
    )
    return Section("little", (text,), console=())
