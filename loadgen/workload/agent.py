"""Agent tasks planned (``workload.agent``): each task's loops, tool times, result sizes, fan-outs.

:func:`plan_tasks` is pure and seeded: ``n`` :class:`AgentPlan` drawn from the
step's random stream in task order, so the same seed gives the same tasks,
whatever ran before. A plan holds only numbers; the prompts are made as the
task runs (:mod:`loadgen.workload.agent_context`), since each carries the
answers that really came back.

A task's main agent makes ``calls`` LLM calls; after call ``k``'s answer it
waits ``tool_ns[k]`` and appends a tool result of ``result_tokens[k]``. At a
fan-out after call ``k`` (``fan_out.at``; only calls with a next call) it
starts ``width`` sub-agents instead, each a loop of its own ``calls`` whose
first prompt is the parent's context plus a task message of ``task_tokens``;
the parent's call ``k + 1`` carries their last answers as its tool result.
The tool time after a fan-out call is not waited (the sub-agents are the
tool). Sub-agents do not fan out.

:func:`planned_contexts` is the preview's model of a plan (every answer
assumed ``max_tokens`` long, the prefix and messages counted as drawn); the
runner counts the real prompts instead.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from loadgen.errors import ScenarioError
from loadgen.scenario import MAX_AGENT_CALLS, MAX_FAN_OUT, AgentSpec, Distribution, FanOutSpec
from loadgen.workload.lengths import sample_lengths, sample_seconds

__all__ = ["AgentPlan", "FanOut", "LoopPlan", "SubAgent", "plan_tasks", "planned_contexts"]


@dataclass(slots=True, frozen=True)
class LoopPlan:
    """One agent's loop: per call its max tokens, then the tool time and result after it."""

    max_tokens: tuple[int, ...]
    tool_ns: tuple[int, ...]  # after call k's answer, before call k + 1
    result_tokens: tuple[int, ...]  # the tool result appended after call k's answer

    @property
    def calls(self) -> int:
        return len(self.max_tokens)


@dataclass(slots=True, frozen=True)
class SubAgent:
    """A sub-agent: its loop and the length of its own task message."""

    loop: LoopPlan
    task_tokens: int


@dataclass(slots=True, frozen=True)
class FanOut:
    """Sub-agents started after the main agent's call ``after`` (0-based)."""

    after: int
    agents: tuple[SubAgent, ...]

    @property
    def width(self) -> int:
        return len(self.agents)


@dataclass(slots=True, frozen=True)
class AgentPlan:
    """One agent task (a session): its first message, main loop and fan-outs."""

    index: int  # the task's session number
    user_tokens_first: int  # the first user message
    system: int | None  # which shared prefix (workload.prefix) is its system prompt; None: none
    main: LoopPlan
    fan_outs: tuple[FanOut, ...] = ()
    text_seed: int = 0  # seeds the task's tool-result text (the same text however it is timed)
    model: str | None = None  # target.models: the one model of every call; None: target.model

    @property
    def calls(self) -> int:
        """LLM calls of the whole task, sub-agents' included."""
        return self.main.calls + sum(a.loop.calls for f in self.fan_outs for a in f.agents)

    # -- as a chat session's plan reads, for the forecast (loadgen.forecast.sweep)
    @property
    def turns(self) -> int:
        return self.calls

    @property
    def user_tokens(self) -> tuple[int, ...]:
        """New tokens each call adds besides the answers: the first message, tool results,
        the sub-agents' task messages and results."""
        subs = [a for f in self.fan_outs for a in f.agents]
        out = [self.user_tokens_first, *self.main.result_tokens[:-1]]
        for a in subs:
            out += [a.task_tokens, *a.loop.result_tokens[:-1]]
        return tuple(out)

    @property
    def max_tokens(self) -> tuple[int, ...]:
        subs = [a.loop.max_tokens for f in self.fan_outs for a in f.agents]
        return self.main.max_tokens + tuple(t for m in subs for t in m)

    @property
    def think_ns(self) -> tuple[int, ...]:
        """The main agent's tool times (the sub-agents' run beside other calls)."""
        return self.main.tool_ns

    def fan_out_after(self, call: int) -> FanOut | None:
        return next((f for f in self.fan_outs if f.after == call), None)


def plan_tasks(
    spec: AgentSpec,
    prompt_tokens: Distribution,
    output_tokens: Distribution,
    rng: np.random.Generator,
    n: int,
    *,
    start: int = 0,
    prefixes: int = 0,
) -> list[AgentPlan]:
    """``n`` task plans numbered from ``start``. ``prompt_tokens``/``output_tokens``: the
    workload's distributions (first messages, answers); ``prefixes``: shared system prompts
    to draw from (0: none)."""
    calls = _counts(spec.calls, n, rng, "workload.agent.calls")
    out = []
    for i, c in enumerate(calls):
        user = sample_lengths(prompt_tokens, 1, rng)[0]
        system = int(rng.integers(0, prefixes)) if prefixes else None
        main = _loop(spec, output_tokens, c, rng)
        fans = _fan_outs(spec, spec.fan_out, output_tokens, c, rng) if spec.fan_out else ()
        seed = int(rng.integers(0, 2**63 - 1))
        out.append(AgentPlan(start + i, user, system, main, fans, seed))
    return out


def _counts(dist: Distribution, n: int, rng: np.random.Generator, name: str) -> list[int]:
    drawn = sample_lengths(dist, n, rng)
    limit = MAX_FAN_OUT if name.endswith("width") else MAX_AGENT_CALLS
    for v in drawn:
        if v > limit:
            msg = f"{name}: a draw of {v} is more than {limit}: lower the distribution's max"
            raise ScenarioError(msg)
    return drawn


def _loop(
    spec: AgentSpec, output_tokens: Distribution, calls: int, rng: np.random.Generator
) -> LoopPlan:
    outs = sample_lengths(output_tokens, calls, rng)
    waits = sample_seconds(spec.tool_time_s, calls, rng) if spec.tool_time_s else [0.0] * calls
    results = sample_lengths(spec.tool_result_tokens, calls, rng)
    return LoopPlan(tuple(outs), tuple(int(s * 1e9) for s in waits), tuple(results))


def _fan_outs(
    spec: AgentSpec,
    fan: FanOutSpec,
    output_tokens: Distribution,
    calls: int,
    rng: np.random.Generator,
) -> tuple[FanOut, ...]:
    if calls < 2:
        return ()  # no call after the first to carry the sub-agents' answers
    if isinstance(fan.at, list):
        points = sorted({k for k in fan.at if k < calls - 1})
    else:
        points = [min(sample_lengths(fan.at, 1, rng)[0], calls - 2)]
    out = []
    for k in points:
        width = _counts(fan.width, 1, rng, "workload.agent.fan_out.width")[0]
        loops = _counts(fan.calls, width, rng, "workload.agent.fan_out.calls")
        tasks = sample_lengths(fan.task_tokens, width, rng)
        agents = tuple(
            SubAgent(_loop(spec, output_tokens, c, rng), t)
            for c, t in zip(loops, tasks, strict=True)
        )
        out.append(FanOut(k, agents))
    return tuple(out)


@dataclass(slots=True, frozen=True)
class PlannedContext:
    """A task's context lengths as planned: the main agent's prompt tokens per call, the
    sub-agents' first prompts, and the tokens truncation dropped."""

    main: tuple[int, ...]
    sub_first: tuple[int, ...]
    truncated: int
    truncations: int  # calls whose prompt was truncated


def planned_contexts(plan: AgentPlan, system_tokens: int, limit: int | None) -> PlannedContext:
    """The task's prompt lengths if every answer were ``max_tokens`` long (the preview)."""
    head = system_tokens + plan.user_tokens_first
    rounds: list[int] = []
    dropped = 0
    main: list[int] = []
    subs: list[int] = []
    cut_calls = 0
    for k in range(plan.main.calls):
        size = head + sum(rounds)
        cut = 0
        while limit is not None and size > limit and len(rounds) > 1:
            cut += rounds.pop(0)
            size = head + sum(rounds)
        if cut:
            cut_calls += 1
        dropped += cut
        main.append(size)
        answer = plan.main.max_tokens[k]
        fan = plan.fan_out_after(k)
        if fan is None:
            rounds.append(answer + plan.main.result_tokens[k])
            continue
        subs.extend(size + answer + a.task_tokens for a in fan.agents)
        rounds.append(answer + sum(a.loop.max_tokens[-1] for a in fan.agents))
    return PlannedContext(tuple(main), tuple(subs), dropped, cut_calls)
