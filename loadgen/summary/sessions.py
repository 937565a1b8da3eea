"""A step's sessions in ``summary.json``: agent tasks and multi-turn chats as wholes.

Owns :class:`SessionStats` (the ``sessions`` block of a step; null when no
record of the step has a session). Times are milliseconds as every latency,
the session SLA (``sla.session_s``) is in seconds; rates are per second of the
step's whole window. The formulas are in :mod:`loadgen.metrics.sessions` and
docs/metrics.md ("Sessions").
"""

from __future__ import annotations

from pydantic import Field

from loadgen.strict import Strict
from loadgen.summary.latency import Distribution

__all__ = ["SessionStats"]


class SessionStats(Strict):
    """The step's sessions whose every call was measured (none warm-up, ramp-up or cut by
    an interrupt)."""

    measured: int = Field(0, description="Sessions whose every call was measured.")
    completed: int = Field(0, description="Measured sessions whose every call succeeded.")
    failed: int = Field(0, description="Measured sessions with a failed call.")
    left_out: int = Field(
        0,
        description="Sessions of the step with a warm-up, ramp-up or interrupted call: "
        "in no session figure.",
    )
    sessions_per_s: float = Field(
        0.0, description="Completed sessions / the step's whole window (duration_s)."
    )
    sessions_per_s_ci: list[float | None] | None = Field(
        None, description="sessions_per_s's confidence interval (the count as Poisson)."
    )
    good_sessions: int = Field(
        0,
        description="Completed sessions within sla.session_s's per-session bound with "
        "every call within the per-request bounds (all completed ones without bounds).",
    )
    goodput_sessions_per_s: float = Field(
        0.0, description="good_sessions / the step's whole window (duration_s)."
    )
    time_ms: Distribution = Field(
        default_factory=Distribution,
        description="Session time = last call's end - first call's start (any agent), "
        "of the completed sessions.",
    )
    llm_ms: Distribution = Field(
        default_factory=Distribution,
        description="The main agent's time in LLM calls: the sum of its calls' end - start.",
    )
    sub_agent_wait_ms: Distribution = Field(
        default_factory=Distribution,
        description="The main agent's wait for sub-agents: over its calls that started "
        "some, latest descendant end (capped at the next main call's start) - the call's end.",
    )
    tools_other_ms: Distribution = Field(
        default_factory=Distribution,
        description="The rest of the session time: tools, think time, the client's own "
        "time (time - llm - sub-agent wait, at least 0).",
    )
    llm_share: float | None = Field(
        None, description="sum(llm) / sum(time) over the completed sessions."
    )
    sub_agent_wait_share: float | None = Field(
        None, description="sum(sub-agent wait) / sum(time) over the completed sessions."
    )
    tools_other_share: float | None = Field(
        None, description="sum(tools and other) / sum(time) over the completed sessions."
    )
    calls_mean: float | None = Field(None, description="Mean LLM calls per completed session.")
    calls_p50: float | None = Field(None, description="Median LLM calls per completed session.")
    calls_max: int | None = Field(None, description="Most LLM calls of a completed session.")
    sub_agents_mean: float | None = Field(
        None, description="Mean sub-agents (agent >= 1) per completed session."
    )
    first_prompt_tokens_p50: float | None = Field(
        None,
        description="Median prompt tokens of the main agent's first call (lowest call "
        "index), over the completed sessions.",
    )
    last_prompt_tokens_p50: float | None = Field(
        None, description="Median prompt tokens of the main agent's last call."
    )
    growth_tokens_p50: float | None = Field(
        None, description="Median of (last - first) main-agent prompt tokens per session."
    )
    truncated_sessions: int = Field(
        0, description="Completed sessions with a call whose context was truncated."
    )
    cached_share: float | None = Field(
        None,
        description="sum(cached_tokens_server) / sum(prompt tokens) over the successful "
        "calls whose server reported cached tokens; null when none did.",
    )
    cached_reported: int = Field(
        0, description="Successful calls whose server reported cached prompt tokens."
    )
    ttft_by_call: dict[str, Distribution] = Field(
        default_factory=dict,
        description="TTFT (as ttft_ms) of the successful calls of the measured sessions by "
        "call index within its agent (turn for a chat): '0'..'9', then doubling buckets "
        "'10-19', '20-39', ...",
    )
    ttft_by_depth: dict[str, Distribution] = Field(
        default_factory=dict,
        description="The same TTFT by agent depth: '0' the main agent, '1' its sub-agents, ...",
    )
