"""Which part of the time grew when a step missed the SLA: :func:`split_growth`.

A step that missed the SLA is set against a reference: the last step before it
(in run order) that met the SLA, else the first step before it; both need the
server's split (:class:`~loadgen.summary.TimeSplit`). The part whose mean grew
most, queue, prefill, decode, server frontend or network + client (ms), is named
with its growth. Pure: it reads the summaries only.
"""

from __future__ import annotations

from loadgen.summary import PART_WORDS, StepSummary

__all__ = ["split_growth"]


def _reference(step: StepSummary, earlier: list[StepSummary]) -> StepSummary | None:
    with_split = [s for s in earlier if s.time_split is not None and s.index != step.index]
    met = [s for s in with_split if s.meets_sla]
    if met:
        return met[-1]
    return with_split[0] if with_split else None


def split_growth(step: StepSummary, earlier: list[StepSummary]) -> str | None:
    """``queue grew most: +412 ms mean (38 -> 450) against step 2, which met the SLA``;
    None unless ``step`` missed the SLA and a reference step has a split to compare."""
    if step.sla.verdict != "missed" or step.time_split is None:
        return None
    ref = _reference(step, earlier)
    if ref is None or ref.time_split is None:
        return None
    now, then = step.time_split.part_means(), ref.time_split.part_means()
    growth = {part: now[part] - then[part] for part in now if part in then}
    if not growth:
        return None
    part = max(growth, key=lambda k: growth[k])
    how = "which met the SLA" if ref.meets_sla else "the first with a split"
    return (
        f"{PART_WORDS[part]} grew most: {round(growth[part]):+,} ms mean "
        f"({round(then[part]):,} -> {round(now[part]):,}) against step {ref.index}, {how}"
    )
