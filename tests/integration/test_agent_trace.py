"""Agent trace replay (OTLP GenAI spans) end to end against the built-in mock on 127.0.0.1.

The trace's calls are 1 ms long; the mock takes ~50 ms a call. A replay that
sent at the trace's offsets would send each call long before the one it
follows answered; the linked replay holds it until that end plus the trace's
gap, and the roots (each task's first call) still go at their offsets.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from loadgen.records import Record
from loadgen.scenario import Scenario
from loadgen.summary import Summary

RunFixture = Callable[[Scenario], tuple[Summary, list[Record], Path]]
Make = Callable[..., Scenario]
MS = 1_000_000
T0 = 1_760_000_000_000_000_000
TASKS, STAGGER_MS = 6, 30
MOCK = {"args": ["--ttft-ms", "10", "--itl-ms", "8"]}

#: (agent, call) -> the (agent, call)s it waits for, each with the trace's gap in ms
WAITS = {
    (0, 0): [],
    (0, 1): [((0, 0), 10)],
    (1, 0): [((0, 1), 3)],  # the sub-agent's first call follows its parent's call
    (1, 1): [((1, 0), 10)],
    (0, 2): [((0, 1), 73), ((1, 1), 58)],  # the agent's next call joins the sub-agent
}
INPUT = {(0, 0): 20, (0, 1): 40, (1, 0): 60, (1, 1): 70, (0, 2): 80}
START_MS = {(0, 0): 0, (0, 1): 11, (1, 0): 15, (1, 1): 26, (0, 2): 85}  # in the task


def span(trace: int, n: int, parent: int | None, op: str, start: int, end: int, *io: int) -> Any:
    attrs = [{"key": "gen_ai.operation.name", "value": {"stringValue": op}}]
    if io:
        attrs += [
            {"key": "gen_ai.usage.input_tokens", "value": {"intValue": str(io[0])}},
            {"key": "gen_ai.usage.output_tokens", "value": {"intValue": str(io[1])}},
        ]
    return {
        "traceId": f"{trace:032x}",
        "spanId": f"{trace:08x}{n:08x}",
        "parentSpanId": "" if parent is None else f"{trace:08x}{parent:08x}",
        "startTimeUnixNano": str(T0 + start * MS),
        "endTimeUnixNano": str(T0 + end * MS),
        "attributes": attrs,
    }


def task(t: int) -> list[Any]:
    b = t * STAGGER_MS
    return [
        span(t, 1, None, "invoke_agent", b, b + 100),
        span(t, 2, 1, "chat", b, b + 1, INPUT[(0, 0)], 6),
        span(t, 3, 1, "execute_tool", b + 1, b + 11),
        span(t, 4, 1, "chat", b + 11, b + 12, INPUT[(0, 1)], 6),
        span(t, 5, 1, "execute_tool", b + 12, b + 80),
        span(t, 6, 5, "invoke_agent", b + 13, b + 70),
        span(t, 7, 6, "chat", b + 15, b + 16, INPUT[(1, 0)], 6),
        span(t, 8, 6, "chat", b + 26, b + 27, INPUT[(1, 1)], 6),
        span(t, 9, 1, "chat", b + 85, b + 86, INPUT[(0, 2)], 6),
    ]


@pytest.mark.parametrize("workers", [1, 2])
def test_an_agent_trace_replays_its_links(
    run: RunFixture, scenario: Make, tmp_path: Path, workers: int
) -> None:
    path = tmp_path / "agents.json"
    spans = [s for t in range(TASKS) for s in task(t)]
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}))
    sc = scenario(
        target={"extra_body": {"ignore_eos": True}, "mock": MOCK},
        load={"mode": "trace", "trace": str(path), "workers": workers},
    )
    summary, records, _ = run(sc)
    assert len(records) == TASKS * 5 and all(r.ok for r in records)
    assert summary.steps[0].requests.ok == TASKS * 5
    at = {(r.session, r.agent, r.call): r for r in records}
    assert len(at) == len(records) and {r.session for r in records} == set(range(TASKS))
    t0 = at[(0, 0, 0)].scheduled_ns
    assert t0 is not None
    held = 0
    for (s, agent, call), r in at.items():
        assert r.agent_depth == agent  # the sub-agent is one level down
        assert r.parent == (at[(s, 0, 1)].id if agent == 1 else None)
        assert r.prompt_tokens_server == r.prompt_tokens_requested == INPUT[(agent, call)]
        assert r.output_tokens == 6
        offset = t0 + (s * STAGGER_MS + START_MS[(agent, call)]) * MS
        ends = [at[(s, *dep)].end_ns + gap * MS for dep, gap in WAITS[(agent, call)]]
        # due at the later of its offset and what it waits for's end plus the gap, exactly
        assert r.scheduled_ns == max([offset, *ends])
        assert r.start_ns >= r.scheduled_ns  # so never before what it waits for ended
        held += bool(ends) and max(ends) > offset
    assert held == TASKS * 4  # the trace's offsets were all too early: each call was held
