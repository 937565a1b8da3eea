"""Tool calls and structured answers in ``summary.json``: how often they were valid.

Owns :class:`OutputValidity`: a step's checked answers, the share valid (with
its Wilson interval) and the first failure as an example, and the timing and
counts of its tool calls.
"""

from __future__ import annotations

from pydantic import Field

from loadgen.strict import Strict
from loadgen.summary.latency import Distribution

__all__ = ["OutputValidity"]


class OutputValidity(Strict):
    """The step's answers against their schemas (tools' parameters, the response format)."""

    checked: int = Field(
        0,
        description="Successful answers with something to check (a tool call, or any answer "
        "under a response format or tool_choice required / NAME).",
    )
    valid: int = Field(0, description="Of `checked`, the valid ones.")
    rate: float | None = Field(None, description="valid / checked; null when none was checked.")
    rate_ci: list[float] | None = Field(
        None, description="The rate's Wilson score interval at sla.confidence."
    )
    confidence: float | None = None
    example: str | None = Field(
        None, description="Why the first invalid answer was invalid (its record's invalid_detail)."
    )
    example_request: str | None = Field(None, description="That answer's request id.")
    answers: int = Field(0, description="Successful measured answers.")
    answers_with_calls: int = Field(0, description="Of `answers`, those with a tool call.")
    tool_calls: int = Field(0, description="Tool calls over the successful answers.")
    calls_per_answer: float | None = Field(
        None, description="tool_calls / answers_with_calls; null without a call."
    )
    tool_events: int = Field(0, description="Tool-call fragments (each also a token event).")
    finish_tool_calls: int = Field(
        0, description="Answers that ended with finish_reason tool_calls."
    )
    first_tool_ms: Distribution | None = Field(
        None,
        description="Time to the first tool-call fragment: first_tool_ns - sent_ns, over "
        "the answers with a call.",
    )
