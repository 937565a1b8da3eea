"""An agent trace's rows as requests that wait for each other: what the linked replay sends.

For rows that carry a :class:`~loadgen.workload.trace_agents.Link` (an ``otlp``
trace): each request names its session (the trace's sessions numbered 0, 1, ...
in order of their first call), agent, call, agent depth and parent (a request
index), and comes with its waits: ``(request index, gap ns)`` of the call it
follows and of the sub-agents' calls it joins. A wait on a row left out (by
``window_s``, ``duration_s`` or ``requests_per_step``) is dropped: that request
starts at its offset.

Prompts keep the trace's sharing: a call's prompt starts with the prompt of
the call it follows (the previous call of its agent; for a sub-agent's first
call, the parent's call) when its input is longer, so a prefix cache sees
what the agent's growing context would give it; a call whose input shrank
(its agent dropped context) gets fresh text.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from loadgen.workload.plan import RequestSpec
from loadgen.workload.source import Workload
from loadgen.workload.traces import TraceRow

__all__ = ["Waits", "has_links", "linked_requests"]

#: (request index, gap ns) of the calls a request waits for; () starts at its offset.
Waits = tuple[tuple[int, int], ...]


def has_links(rows: list[TraceRow]) -> bool:
    """Whether the rows come from an agent trace (replayed with their waits)."""
    return any(r.link is not None for r in rows)


def linked_requests(
    workload: Workload, rows: list[TraceRow], rng: np.random.Generator
) -> tuple[list[RequestSpec], list[Waits]]:
    """The rows' requests (request ``i`` is row ``i``) and each one's waits."""
    index = {r.link.key: i for i, r in enumerate(rows) if r.link is not None}
    sessions: dict[str | None, int] = {}
    specs: list[RequestSpec] = []
    waits: list[Waits] = []
    texts: list[str] = []
    for i, row in enumerate(rows):
        link = row.link
        session = sessions.setdefault(row.session, len(sessions))
        if link is None:
            specs.append(dataclasses.replace(workload.trace_request(row, i, rng), session=session))
            waits.append(())
            texts.append(_text(specs[-1]))
            continue
        after = index.get(link.after) if link.after is not None else None
        context = ""
        if after is not None and after < i and specs[after].prompt_tokens < row.input_tokens:
            context = texts[after]
        spec = workload.trace_request(row, i, rng, context)
        parent = index.get(link.parent) if link.parent is not None else None
        specs.append(
            dataclasses.replace(
                spec,
                session=session,
                call=link.call,
                agent=link.agent,
                parent=parent,
                agent_depth=link.depth,
            )
        )
        texts.append(_text(spec))
        mine = [] if after is None else [(after, link.gap_ns)]
        mine += [(index[k], gap) for k, gap in link.joins if k in index]
        waits.append(tuple(mine))
    return specs, waits


def _text(spec: RequestSpec) -> str:
    """The prompt's text, for the next call to start with (a chat prompt: its message)."""
    prompt = spec.prompt
    if isinstance(prompt, str):
        return prompt
    if prompt and isinstance(prompt[-1], dict):
        return prompt[-1].get("content", "")
    return ""
