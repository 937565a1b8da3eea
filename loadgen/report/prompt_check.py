"""The prompt-length check: the planned prompt lengths against the server's counts.

Owns :func:`section`: the ``prompt tokens: planned vs server`` line, which
report.md always shows and the console only when a request is beyond tolerance
(its verdict ``off``) or the run's prompt lengths are a guess (a detail), and
steps.csv's ``prompt_len_*`` columns.
"""

from __future__ import annotations

from loadgen.report.section import Section
from loadgen.summary import StepSummary

__all__ = ["prompt_length_text", "section"]


def _pct(v: float) -> str:
    return f"{100 * v:+.1f}%"


def prompt_length_text(step: StepSummary) -> str | None:
    """``prompt tokens: planned vs server +3.1% mean (worst +7.9%), 4 of 40 beyond ±2%``.

    None when no request had a server prompt count.
    """
    c = step.prompt_lengths
    if not c.compared or c.mean_rel_diff is None or c.worst_rel_diff is None:
        return None
    text = (
        f"prompt tokens: planned vs server {_pct(c.mean_rel_diff)} mean "
        f"(worst {_pct(c.worst_rel_diff)})"
    )
    if c.beyond_tolerance:
        limit = f"beyond ±{100 * c.tolerance:g}%" if c.tolerance else "differ"
        text += f", {c.beyond_tolerance} of {c.compared} {limit}"
    return text


def section(step: StepSummary) -> Section:
    """The check's line (none when the server counted no prompt) and its columns."""
    pl = step.prompt_lengths
    text = prompt_length_text(step)
    fields = {
        "prompt_len_mean_rel_diff": pl.mean_rel_diff if pl.compared else None,
        "prompt_len_worst_rel_diff": pl.worst_rel_diff if pl.compared else None,
        "prompt_len_beyond_tolerance": pl.beyond_tolerance,
    }
    return Section(
        "prompt_lengths",
        () if text is None else (text,),
        fields=fields,
        detail=True,
        verdict="off" if pl.beyond_tolerance else "ok",
    )
