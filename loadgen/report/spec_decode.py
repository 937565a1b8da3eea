"""Speculative decoding as every output shows it: the server's draft counters over the step.

Owns :func:`section` (the ``speculative decoding:`` line and steps.csv's
:data:`SPEC_DECODE_COLUMNS`, empty without a draft model) and
:func:`spec_mismatch_text`, what explains usage tokens != token events when the
server accepted drafts.
"""

from __future__ import annotations

from loadgen.report.section import Section
from loadgen.summary import StepSummary

__all__ = ["SPEC_DECODE_COLUMNS", "section", "spec_decode_text", "spec_mismatch_text"]

#: StepSummary.spec_decode's fields in steps.csv, as ``spec_decode_<field>``
_FIELDS = (
    "acceptance_rate",
    "mean_accepted_length",
    "drafts",
    "draft_tokens",
    "accepted_tokens",
    "emitted_tokens",
    "tokens_per_event",
)
#: speculative decoding's columns, empty without a draft model
SPEC_DECODE_COLUMNS = tuple(f"spec_decode_{name}" for name in _FIELDS)


def spec_decode_text(step: StepSummary) -> str | None:
    """``speculative decoding: 70.2% of 1,200 draft tokens accepted, mean accepted length
    3.11; 2.85 tokens/event: ITL p50 21.3 ms per event, TPOT p50 7.5 ms per token``; None
    when the server exports no spec-decode counters or drafted nothing in the step."""
    sd = step.spec_decode
    if sd is None or sd.acceptance_rate is None or sd.mean_accepted_length is None:
        return None
    text = (
        f"speculative decoding: {100 * sd.acceptance_rate:.1f}% of {sd.draft_tokens:,.0f} "
        f"draft tokens accepted, mean accepted length {sd.mean_accepted_length:.2f}"
    )
    if sd.tokens_per_event is not None:
        text += f"; {sd.tokens_per_event:.2f} tokens/event"
    itl, tpot = step.itl_ms.p50, step.tpot_ms.p50
    if itl is not None and tpot is not None:
        text += f": ITL p50 {itl:.1f} ms per event, TPOT p50 {tpot:.1f} ms per token"
    return text


def spec_mismatch_text(step: StepSummary) -> str:
    """What explains usage tokens != token events when the server accepted drafts."""
    sd = step.spec_decode
    if sd is None or not sd.accepted_tokens:
        return ""
    return " (speculative decoding: an event carries its step's accepted drafts)"


def section(step: StepSummary) -> Section | None:
    """The step's draft counters; None when the server exports none."""
    sd = step.spec_decode
    if sd is None:
        return None
    text = spec_decode_text(step)
    fields = {f"spec_decode_{name}": getattr(sd, name) for name in _FIELDS}
    return Section("spec_decode", () if text is None else (text,), fields=fields)
