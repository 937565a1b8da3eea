"""The preview of agent tasks (``workload.agent``) for ``loadgen workload`` and the summary.

A task's shape is planned exactly (calls, fan-outs, widths, tool times and
result sizes); its context growth is the planner's model
(:func:`loadgen.workload.agent.planned_contexts`: every answer as long as its
``max_tokens``), since the real answers are known only when a run gets them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from loadgen.scenario import AgentSpec
from loadgen.workload.agent import AgentPlan, planned_contexts
from loadgen.workload.lengths import describe

__all__ = ["agent_lines", "describe_agent"]

_PCTS = (50, 90, 99)


def describe_agent(spec: AgentSpec) -> dict[str, Any]:
    """The ``agent`` entry of summary.json's workload: the distributions asked for."""
    fan = spec.fan_out
    out: dict[str, Any] = {
        "calls": describe(spec.calls),
        "tool_time_s": describe(spec.tool_time_s) if spec.tool_time_s else None,
        "tool_result_tokens": describe(spec.tool_result_tokens),
        "max_context_tokens": spec.max_context_tokens,
        "fan_out": None,
    }
    if fan is not None:
        at = ", ".join(map(str, fan.at)) if isinstance(fan.at, list) else describe(fan.at)
        out["fan_out"] = (
            f"after call {at}: {describe(fan.width)} sub-agents of {describe(fan.calls)} "
            f"calls, task message {describe(fan.task_tokens)} tokens"
        )
    return out


def agent_lines(
    tasks: Sequence[AgentPlan],
    system_tokens: Sequence[int],
    limit: int | None,
    picked: Callable[[list[str | None], str], list[str]],
) -> list[str]:
    """A step's tasks: calls per task, fan-out widths, context growth, truncations."""
    if not tasks:
        return ["  agent tasks: none"]
    calls = [t.calls for t in tasks]
    main = [t.main.calls for t in tasks]
    widths = [f.width for t in tasks for f in t.fan_outs]
    contexts = [
        planned_contexts(t, system_tokens[t.system] if t.system is not None else 0, limit)
        for t in tasks
    ]
    first = [c.main[0] for c in contexts]
    last = [c.main[-1] for c in contexts]
    most = [max(c.main + c.sub_first) for c in contexts]
    cut = [c for c in contexts if c.truncations]
    waits = [w / 1e9 for t in tasks for w in t.main.tool_ns[:-1]]
    lines = [
        f"  agent tasks: {len(tasks)}, {sum(calls):,} LLM calls "
        f"(per task {_stats(calls)}; main agent {_stats(main)})",
        f"  fan-outs: {len(widths)} in {sum(bool(t.fan_outs) for t in tasks)} tasks"
        + (f", width {_stats(widths)}" if widths else ""),
    ]
    if waits:
        lines.append(f"  tool time: mean {np.mean(waits):.2f} s, p90 {_pct(waits, 90):.2f} s")
    lines += picked([t.model for t in tasks], "tasks")
    lines += [
        "  context tokens (planned, answers at max_tokens):",
        f"    first call {_stats(first)}",
        f"    last call  {_stats(last)}",
        f"    largest    {_stats(most)}",
    ]
    if limit is not None:
        dropped = sum(c.truncated for c in cut)
        lines.append(
            f"  truncation at {limit:,} tokens: {len(cut)} of {len(tasks)} tasks, "
            f"{sum(c.truncations for c in cut):,} calls, {dropped:,} tokens dropped"
        )
    return lines


def _stats(values: Sequence[int]) -> str:
    pcts = ", ".join(f"p{p} {_pct(values, p):,.0f}" for p in _PCTS)
    return f"{pcts}, max {max(values):,}"


def _pct(values: Sequence[int] | Sequence[float], p: float) -> float:
    return float(np.percentile(values, p, method="lower"))
