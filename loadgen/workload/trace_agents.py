"""Agent traces: each LLM call linked to the call it waited for, its agent and its depth.

A reader that knows which agent made each call (:mod:`loadgen.workload.trace_otlp`)
hands :func:`link_calls` the calls and the agents; each call comes back as a raw
trace row whose :class:`Link` says:

- ``after``: the call it waits for. Within an agent, calls are taken by start
  time, and a call waits for the latest call of the same agent that had ended
  by its start (the previous call, in an agent that calls one at a time); a
  call that overlaps every earlier one waits for none. The first call of a
  sub-agent waits for the latest call of its parent agent that had ended by the
  sub-agent's start: the call whose answer started it (also its ``parent``).
- ``joins``: the parent's next call also waits for the sub-agents that call
  started: for each, its latest call that had ended by then (the parent goes on
  when its sub-agents have answered).
- ``gap_ns``: in the trace, from the end of that call to the start of this one
  (tool time, or the wait before a sub-agent's first call).
- ``agent``: per session, 0 the main agent, 1.. the sub-agents, numbered by
  depth and then by their first call's start; ``depth``: 0 the main agent, 1 its
  sub-agents, 2 theirs; ``call``: the index of the call in its agent's loop.

An agent with no LLM calls of its own (an orchestrator that only starts
sub-agents) is passed over: its sub-agents' parent is the nearest agent above
it that made calls. Calls outside every agent are the session's own loop
(agent id ``None``), the parent of a top-level agent when it made calls.
Links only point to earlier calls of the same agent or to calls of an agent
above, so they never form a cycle.

Pure: no clock, no I/O.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from dataclasses import dataclass

__all__ = ["AgentSpan", "Call", "Link", "link_calls"]


@dataclass(slots=True, frozen=True)
class Link:
    """Where an agent trace's call sits: what it waits for, its agent and its place."""

    key: int  # this call's id: its position among the trace's calls, by start time
    after: int | None  # key of the call it waits for; None: it starts at its offset
    gap_ns: int  # from that call's end to this call's start, in the trace
    agent: int  # 0 the session's main agent, 1.. its sub-agents
    call: int  # 0-based index of this call in its agent's loop
    depth: int  # 0 the main agent, 1 a sub-agent, ...
    parent: int | None  # a sub-agent's calls: key of the call whose answer started it
    #: (key, gap_ns) of sub-agents' calls this one also waits for: the last call of each
    #: sub-agent its ``after`` call started, and the time from that call's end to this start
    joins: tuple[tuple[int, int], ...] = ()


@dataclass(slots=True, frozen=True)
class Call:
    """One LLM call as a reader found it."""

    session: str
    agent: str | None  # the agent's id (its span); None: outside every agent
    start_ns: int
    end_ns: int
    input_tokens: int
    output_tokens: int


@dataclass(slots=True, frozen=True)
class AgentSpan:
    """An agent as a reader found it: when it started, and the agent above it."""

    start_ns: int
    parent: str | None  # the agent above; None: a top-level agent


#: A linked row: (start ns, input tokens, output tokens, hash ids, session, link); the
#: shape of :data:`loadgen.workload.trace_formats.Raw`.
LinkedRaw = tuple[int, int, int, tuple[int, ...], str | None, Link]
_Agent = tuple[str, str | None]  # (session, agent id)


def link_calls(calls: list[Call], agents: dict[_Agent, AgentSpan]) -> list[LinkedRaw]:
    """The calls as raw rows sorted by start (stably), each with its :class:`Link`."""
    calls = sorted(calls, key=lambda c: c.start_ns)
    by_agent: dict[_Agent, list[int]] = defaultdict(list)
    for key, c in enumerate(calls):
        by_agent[(c.session, c.agent)].append(key)
    after: list[int | None] = [None] * len(calls)
    for keys in by_agent.values():
        _within(calls, keys, after)
    parents = {a: _caller(a, agents, by_agent) for a in by_agent}
    depth: dict[_Agent, int] = {}
    for a in by_agent:
        _depth(a, parents, depth)
    parent_call = _sub_agent_starts(calls, by_agent, agents, parents, after)
    number = _numbers(calls, by_agent, depth)
    place = {key: i for keys in by_agent.values() for i, key in enumerate(keys)}
    spawned: dict[int, list[_Agent]] = defaultdict(list)  # a call -> the sub-agents it started
    for a, first in parent_call.items():
        if first is not None:
            spawned[first].append(a)
    out: list[LinkedRaw] = []
    for key, c in enumerate(calls):
        a = (c.session, c.agent)
        dep = after[key]
        gap = 0 if dep is None else c.start_ns - calls[dep].end_ns
        joins = () if dep is None else _joins(calls, by_agent, spawned, key, dep)
        link = Link(key, dep, gap, number[a], place[key], depth[a], parent_call[a], joins)
        out.append((c.start_ns, c.input_tokens, c.output_tokens, (), c.session, link))
    return out


def _sub_agent_starts(
    calls: list[Call],
    by_agent: dict[_Agent, list[int]],
    agents: dict[_Agent, AgentSpan],
    parents: dict[_Agent, _Agent | None],
    after: list[int | None],
) -> dict[_Agent, int | None]:
    """Each agent's parent call (None: a main agent, or none had ended); a sub-agent's
    first call waits for it."""
    parent_call: dict[_Agent, int | None] = {}
    for a, keys in by_agent.items():
        up = parents[a]
        if up is None:
            parent_call[a] = None
            continue
        span = agents.get(a)
        began = calls[keys[0]].start_ns if span is None else span.start_ns
        parent_call[a] = _latest_ended(calls, by_agent[up], began, before=keys[0])
        after[keys[0]] = parent_call[a]
    return parent_call


def _joins(
    calls: list[Call],
    by_agent: dict[_Agent, list[int]],
    spawned: dict[int, list[_Agent]],
    key: int,
    dep: int,
) -> tuple[tuple[int, int], ...]:
    """(key, gap) of the sub-agents' calls call ``key`` joins: when it follows ``dep`` of
    its own agent, for each sub-agent ``dep`` started, its latest call ended by then."""
    c, d = calls[key], calls[dep]
    if (d.session, d.agent) != (c.session, c.agent):
        return ()  # a sub-agent's first call: it waits for its parent's call only
    out = []
    for sub in spawned.get(dep, []):
        j = _latest_ended(calls, by_agent[sub], c.start_ns, before=key)
        if j is not None:
            out.append((j, c.start_ns - calls[j].end_ns))
    return tuple(out)


def _within(calls: list[Call], keys: list[int], after: list[int | None]) -> None:
    """Each call of one agent waits for the latest of its earlier calls ended by its start."""
    running: list[tuple[int, int]] = []  # (end, key) of earlier calls, soonest end first
    best: tuple[int, int] | None = None
    for key in keys:  # by start
        start = calls[key].start_ns
        while running and running[0][0] <= start:
            done = heapq.heappop(running)
            best = done if best is None or done > best else best
        after[key] = None if best is None else best[1]
        heapq.heappush(running, (calls[key].end_ns, key))


def _latest_ended(calls: list[Call], keys: list[int], at: int, *, before: int) -> int | None:
    """Of ``keys``, the call that ended last by ``at`` (and started before call ``before``)."""
    done = [k for k in keys if calls[k].end_ns <= at and k < before]
    return max(done, key=lambda k: (calls[k].end_ns, k)) if done else None


def _caller(
    a: _Agent, agents: dict[_Agent, AgentSpan], by_agent: dict[_Agent, list[int]]
) -> _Agent | None:
    """The nearest agent above ``a`` that made calls (the session's own loop last)."""
    session, agent = a
    if agent is None:
        return None
    seen = {agent}
    span = agents.get(a)
    up = None if span is None else span.parent
    while up is not None:
        if (session, up) in by_agent:
            return (session, up)
        if up in seen:  # the reader refuses cycles; stop rather than loop
            break
        seen.add(up)
        span = agents.get((session, up))
        up = None if span is None else span.parent
    return (session, None) if (session, None) in by_agent else None


def _depth(a: _Agent, parents: dict[_Agent, _Agent | None], depth: dict[_Agent, int]) -> int:
    chain = []
    node: _Agent | None = a
    while node is not None and node not in depth:
        chain.append(node)
        node = parents[node]
    d = -1 if node is None else depth[node]
    for n in reversed(chain):
        d += 1
        depth[n] = d
    return depth[a]


def _numbers(
    calls: list[Call], by_agent: dict[_Agent, list[int]], depth: dict[_Agent, int]
) -> dict[_Agent, int]:
    """Per session, agents numbered by (depth, first call's start): 0 the main one."""
    sessions: dict[str, list[_Agent]] = defaultdict(list)
    for a in by_agent:
        sessions[a[0]].append(a)
    number = {}
    for members in sessions.values():
        members.sort(key=lambda a: (depth[a], by_agent[a][0]))
        number.update({a: i for i, a in enumerate(members)})
    return number
