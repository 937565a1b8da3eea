"""The ``workload.agent`` section: agent tasks, each a loop of LLM calls with tool results.

An agent task is a session (``workload.sessions``' sibling, not both): its
first call sends the system prompt (``workload.prefix``, when given) and a
first user message of ``workload.prompt_tokens``; after each answer (of
``workload.output_tokens`` at most) the agent waits ``tool_time_s``, appends
the answer and a tool result of ``tool_result_tokens`` and calls again, for
``calls`` calls. ``fan_out`` starts sub-agents after some calls; each is a
shorter loop whose prompt starts with the parent's context, and the parent's
next call carries their answers. ``max_context_tokens`` truncates as agents
do (the oldest tool rounds dropped). The planner is
:mod:`loadgen.workload.agent`; the runner :mod:`loadgen.execute.agents`.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Discriminator, Field, Tag, model_validator

from loadgen.scenario.dists import Distribution, FixedDist, FloatDistribution
from loadgen.scenario.limits import MAX_LIST, MAX_TOKENS
from loadgen.strict import Spec

__all__ = ["AgentSpec", "FanOutSpec"]

#: the most LLM calls one agent loop may make (a draw above is refused when planned)
MAX_AGENT_CALLS = 10_000
#: the most sub-agents one fan-out may start
MAX_FAN_OUT = 1_000

_CallIndex = Annotated[int, Field(ge=0, le=MAX_AGENT_CALLS)]


def _at_form(value: Any) -> str:
    return "calls" if isinstance(value, list) else "dist"


#: ``fan_out.at``: a list of call indices or a distribution (errors name the form given)
_At = Annotated[
    Annotated[list[_CallIndex], Tag("calls")] | Annotated[Distribution, Tag("dist")],
    Discriminator(_at_form),
]


def _fixed(value: int) -> FixedDist:
    return FixedDist(dist="fixed", value=value)


class FanOutSpec(Spec):
    at: _At = Field(
        description="After which of the main agent's calls sub-agents start: a list of "
        "0-based call indices (each that has a next call fans out), or a distribution "
        "drawing one such index per task (a draw past the second-to-last call is lowered "
        "to it)."
    )
    width: Distribution = Field(
        default_factory=lambda: _fixed(2), description="Sub-agents started at each fan-out."
    )
    calls: Distribution = Field(
        default_factory=lambda: _fixed(3), description="LLM calls of each sub-agent's loop."
    )
    task_tokens: Distribution = Field(
        default_factory=lambda: _fixed(64),
        description="The length of each sub-agent's own task message, appended to the "
        "parent's context it starts with.",
    )

    @model_validator(mode="after")
    def _short_list(self) -> FanOutSpec:
        if isinstance(self.at, list) and not 1 <= len(self.at) <= MAX_LIST:
            raise ValueError(f"`at`: give 1 to {MAX_LIST} call indices")
        return self


class AgentSpec(Spec):
    calls: Distribution = Field(
        default_factory=lambda: _fixed(8),
        description="LLM calls per agent task (the main agent's loop).",
    )
    tool_time_s: FloatDistribution | None = Field(
        None,
        description="Seconds the tool runs after each answer before the next call "
        "(from the answer's end, to an absolute deadline; None: 0).",
    )
    tool_result_tokens: Distribution = Field(
        default_factory=lambda: _fixed(256),
        description="Tokens of the tool result appended after each answer.",
    )
    fan_out: FanOutSpec | None = Field(
        None, description="Sub-agents started in parallel after some calls (None: none)."
    )
    max_context_tokens: int | None = Field(
        None,
        ge=1,
        le=MAX_TOKENS,
        description="A call's prompt that would be longer drops the oldest tool rounds "
        "(an answer and its tool result), keeping the system prompt and the first user "
        "message; records carry truncated_tokens (None: no limit).",
    )
