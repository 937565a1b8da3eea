"""Where the time went, by the server's histograms: the step's time-split line.

The split's figures are :mod:`loadgen.metrics`'; its bars are
:mod:`loadgen.report.plots.split_figure`'s. No steps.csv columns.
"""

from __future__ import annotations

from loadgen.report.section import Section
from loadgen.summary import PART_WORDS, PHASES, StepSummary

__all__ = ["section", "time_split_text"]


def time_split_text(step: StepSummary) -> str | None:
    """``where the time went (server, means): queue 38 ms, prefill 61 ms, decode 812 ms,
    server frontend 20 ms, network + client 9 ms; queue grew most: ...``; None without
    the server's split."""
    ts = step.time_split
    if ts is None:
        return None
    means = ts.part_means()
    # round() first: a mean of -0.3 ms reads "0 ms", not "-0 ms"
    parts = [f"{PART_WORDS[part]} {round(means[part]):,} ms" for part in PHASES if part in means]
    if not parts:
        return None
    text = f"where the time went ({ts.engine} histograms, means): " + ", ".join(parts)
    return text + (f"; {ts.grew_most}" if ts.grew_most else "")


def section(step: StepSummary) -> Section | None:
    """The line; None without the server's split."""
    text = time_split_text(step)
    return None if text is None else Section("time_split", (text,))
