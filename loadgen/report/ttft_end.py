"""Where TTFT ends, when it is not at the first token: the step's note.

A run with ``sla.ttft_of: answer`` measures TTFT to the first answer token (a
reasoning model's thinking left out); every output says so under the step.
The ``ttft_of`` column is the step table's own (it names every step's end point).
"""

from __future__ import annotations

from loadgen.report.section import Section
from loadgen.summary import StepSummary

__all__ = ["section", "ttft_of_text"]


def ttft_of_text(step: StepSummary) -> str | None:
    """A note when TTFT is measured to the first answer token rather than any token."""
    if step.ttft_of != "answer":
        return None
    return "TTFT to the first answer token (sla.ttft_of: answer)"


def section(step: StepSummary) -> Section | None:
    """The note; None when TTFT ends at the first token of any kind."""
    text = ttft_of_text(step)
    return None if text is None else Section("ttft_of", (text,))
