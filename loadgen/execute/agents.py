"""Agent tasks (``workload.agent``): each agent's LLM calls in order, sub-agents in parallel.

A task runs its main agent's loop: call ``k`` sends the context so far
(:class:`~loadgen.workload.agent_context.AgentContext`: the answers that really
came back and the tool results after them), then the tool time after its
answer is waited to an absolute deadline (the answer's end plus
``tool_ns[k]``) and the next call goes. At a fan-out the parent's answer
starts its sub-agents at once, each an asyncio task running its own loop
from a fork of the parent's context; the parent's next call waits until
every one of them has ended and carries their last answers, joined, as its
tool result (no tool time is waited there: the sub-agents were the tool).

A failed call ends its agent's loop. A failed sub-agent is a tool that
failed: the parent still goes on once all have ended, carrying the last
answer each sub-agent got (nothing from one whose first call failed). A
failed main-agent call ends the task. The step's budget (its duration)
stops a loop before its next call, as for sessions.

Records: ``session`` is the task, ``agent`` 0 the main agent and 1.. its
sub-agents in the order started, ``call`` the index in its agent's loop,
``parent`` (sub-agents) the request id of the call whose answer started them,
``agent_depth``, ``truncated_tokens``. Request ids are taken from ``ids`` in
the order calls are sent (worker k of n: k, k + n, ...). Text of tool results
and task messages comes from the task's own seed (per agent), so a task
sends the same text however its calls interleave with others.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from loadgen.clock import now_ns, sleep_until
from loadgen.execute.drivers import OnRecord, Send
from loadgen.records import Record
from loadgen.workload import (
    AgentContext,
    AgentPlan,
    FanOut,
    LoopPlan,
    Message,
    RequestSpec,
    Session,
    ToolUse,
    Workload,
)

__all__ = ["AgentRunner"]

#: An open-loop task: the plan and whether it is warm-up or ramp-up.
AgentJob = tuple[Session, bool, bool]


@dataclass(slots=True, frozen=True)
class _Answer:
    text: str
    tool: ToolUse | None


@dataclass(slots=True)
class _Task:
    """One running task: its plan, flags and the next sub-agent number."""

    plan: AgentPlan
    warmup: bool
    ramp: bool
    agents: int = 0  # sub-agents started so far


class AgentRunner:
    """Runs agent tasks for one step."""

    def __init__(
        self,
        workload: Workload,
        send: Send,
        on_record: OnRecord,
        *,
        stop: Callable[[], bool] = lambda: False,
        ids: Iterator[int] | None = None,
    ) -> None:
        """``ids``: the request ids to number calls with (worker k of n: k, k+n, ...)."""
        self._workload = workload
        self._send = send
        self._on_record = on_record
        self._stop = stop
        self._ids = ids if ids is not None else itertools.count()
        agent = workload.spec.agent
        self._limit = None if agent is None else agent.max_context_tokens

    async def run(
        self, plan: Session, ramping: bool, scheduled: int | None, *, warmup: bool = False
    ) -> None:
        assert isinstance(plan, AgentPlan)
        maker = self._workload.maker
        rng = np.random.default_rng([plan.text_seed, 0])
        head: list[Message] = []
        if plan.system is not None:
            head.append({"role": "system", "content": self._workload.prefixes[plan.system]})
        head.append({"role": "user", "content": maker.fragment(plan.user_tokens_first, rng)})
        task = _Task(plan, warmup, ramping)
        context = AgentContext(maker, head, self._limit)
        await self._loop(task, context, plan.main, 0, None, scheduled, rng)

    async def run_warmup(self, plan: Session, ramping: bool, scheduled: int | None) -> None:
        await self.run(plan, ramping, scheduled, warmup=True)

    async def run_job(self, job: AgentJob, ramping: bool, scheduled: int | None) -> None:
        plan, warmup, ramp = job
        await self.run(plan, ramping or ramp, scheduled, warmup=warmup)

    async def _loop(
        self,
        task: _Task,
        context: AgentContext,
        loop: LoopPlan,
        agent: int,
        parent: int | None,
        scheduled: int | None,
        rng: np.random.Generator,
    ) -> _Answer | None:
        """One agent's calls; its last good answer (None: its first call failed)."""
        last: _Answer | None = None
        for k in range(loop.calls):
            if k and self._stop():
                return last
            rec = await self._call(task, context, loop, k, agent, parent, scheduled)
            if not rec.ok:
                return last
            last = _answer(rec)
            if k + 1 == loop.calls:
                return last
            fan = task.plan.fan_out_after(k) if agent == 0 else None
            if fan is not None:
                result = await self._fan_out(task, context, fan, last, rec, scheduled)
                context.add(last.text, last.tool, result)
                wake = now_ns()
            else:
                context.add(last.text, last.tool, self._maker_text(loop.result_tokens[k], rng))
                wake = rec.end_ns + loop.tool_ns[k]
                if loop.tool_ns[k]:
                    await sleep_until(wake)
            if scheduled is not None:
                scheduled = wake
        return last

    async def _call(
        self,
        task: _Task,
        context: AgentContext,
        loop: LoopPlan,
        k: int,
        agent: int,
        parent: int | None,
        scheduled: int | None,
    ) -> Record:
        prompt, planned, cut = context.prompt()
        spec = RequestSpec(
            next(self._ids),
            prompt,
            planned,
            loop.max_tokens[k],
            warmup=task.warmup,
            ramp=task.ramp,
            session=task.plan.index,
            keep_text=True,
            model=task.plan.model,
            call=k,
            agent=agent,
            parent=parent,
            agent_depth=0 if agent == 0 else 1,
            truncated_tokens=cut,
        )
        rec = await self._send(spec, scheduled)
        self._on_record(rec)
        return rec

    async def _fan_out(
        self,
        task: _Task,
        context: AgentContext,
        fan: FanOut,
        answer: _Answer,
        rec: Record,
        scheduled: int | None,
    ) -> str:
        """Start the fan-out's sub-agents after ``rec``'s answer; when all have ended, their
        last answers joined (the parent's tool result)."""
        runs = []
        start = None if scheduled is None else now_ns()  # open loop: scheduled when started
        for sub in fan.agents:
            task.agents += 1
            number = task.agents
            rng = np.random.default_rng([task.plan.text_seed, number])
            brief = self._maker_text(sub.task_tokens, rng)
            fork = context.fork(answer.text, answer.tool, brief)
            runs.append(self._loop(task, fork, sub.loop, number, rec.id, start, rng))
        done = await asyncio.gather(*runs)
        return "\n\n".join(a.text or (a.tool.arguments if a.tool else "") for a in done if a)

    def _maker_text(self, tokens: int, rng: np.random.Generator) -> str:
        return self._workload.maker.fragment(tokens, rng)


def _answer(rec: Record) -> _Answer:
    tool = None
    if rec.answer_tool_name is not None:
        tool = ToolUse(f"call_{rec.id}", rec.answer_tool_name, rec.answer_tool_arguments or "")
    return _Answer(rec.answer_text or "", tool)
