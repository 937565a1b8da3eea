"""An agent trace's step plan: waits by request index, agent fields, grown prompts, dealing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from loadgen.scenario import LoadSpec, WorkloadSpec
from loadgen.workload import LinkedPlan, OpenPlan, Workload, plan_step
from loadgen.workload.deal import deal

MS = 1_000_000
T0 = 1_760_000_000_000_000_000


def span(trace: int, n: int, parent: int | None, op: str, start: int, end: int, *io: int) -> Any:
    attrs = [{"key": "gen_ai.operation.name", "value": {"stringValue": op}}]
    if io:
        attrs += [
            {"key": "gen_ai.usage.input_tokens", "value": {"intValue": str(io[0])}},
            {"key": "gen_ai.usage.output_tokens", "value": {"intValue": str(io[1])}},
        ]
    return {
        "traceId": f"{trace:032x}",
        "spanId": f"{n:016x}",
        "parentSpanId": "" if parent is None else f"{parent:016x}",
        "startTimeUnixNano": str(T0 + start * MS),
        "endTimeUnixNano": str(T0 + end * MS),
        "attributes": attrs,
    }


def agent_task(trace: int, at: int) -> list[Any]:
    """Main agent: calls 0, 1; call 1's answer starts a sub-agent (two calls); call 2
    joins it. Input grows within each agent; the sub-agent starts from call 1's context."""
    return [
        span(trace, 1, None, "invoke_agent", at, at + 900),
        span(trace, 2, 1, "chat", at + 0, at + 100, 20, 4),
        span(trace, 3, 1, "chat", at + 150, at + 200, 40, 4),
        span(trace, 4, 1, "execute_tool", at + 200, at + 600),
        span(trace, 5, 4, "invoke_agent", at + 210, at + 590),
        span(trace, 6, 5, "chat", at + 220, at + 320, 60, 4),
        span(trace, 7, 5, "chat", at + 340, at + 400, 30, 4),  # shrank: fresh text
        span(trace, 8, 1, "chat", at + 620, at + 700, 90, 8),
    ]


def write(tmp: Path, tasks: int) -> Path:
    spans = [s for t in range(tasks) for s in agent_task(t + 1, t * 50)]
    path = tmp / "agents.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}))
    return path


def plan_of(path: Path, chat: bool = False, **load: Any) -> Any:
    w = Workload.prepare(WorkloadSpec(), chat=chat)
    spec = TypeAdapter(LoadSpec).validate_python({"mode": "trace", "trace": str(path), **load})
    return w, spec, plan_step(w, spec, "trace", spec.time_scale[0], 0)  # type: ignore[union-attr]


def text(prompt: Any) -> str:
    return prompt if isinstance(prompt, str) else prompt[-1]["content"]


@pytest.mark.parametrize("chat", [False, True])
def test_one_agent_task_planned(tmp_path: Path, chat: bool) -> None:
    _, _, plan = plan_of(write(tmp_path, 1), chat)
    assert isinstance(plan, LinkedPlan)
    specs = plan.requests
    assert plan.offsets_ns == [o * MS for o in (0, 150, 220, 340, 620)]
    fields = [(s.index, s.session, s.agent, s.call, s.agent_depth, s.parent) for s in specs]
    assert fields == [
        (0, 0, 0, 0, 0, None),
        (1, 0, 0, 1, 0, None),
        (2, 0, 1, 0, 1, 1),
        (3, 0, 1, 1, 1, 1),
        (4, 0, 0, 2, 0, None),
    ]
    assert plan.waits == [
        (),
        ((0, 50 * MS),),
        ((1, 20 * MS),),
        ((2, 20 * MS),),
        ((1, 420 * MS), (3, 220 * MS)),
    ]
    assert [s.prompt_tokens for s in specs] == [20, 40, 60, 30, 90]
    assert [s.max_tokens for s in specs] == [4, 4, 4, 4, 8]
    texts = [text(s.prompt) for s in specs]
    assert texts[1].startswith(texts[0] + " ")  # the agent's context grows
    assert texts[2].startswith(texts[1] + " ")  # the sub-agent starts from its parent's
    assert not texts[3].startswith(texts[2][:50])  # its input shrank: fresh text
    assert texts[4].startswith(texts[1] + " ")  # the agent goes on from its own call


def test_dealt_by_session_with_every_wait_local(tmp_path: Path) -> None:
    _, spec, whole = plan_of(write(tmp_path, 5), max_concurrency=4)
    w = Workload.prepare(WorkloadSpec(), chat=False)
    merged = []
    for k in range(2):
        mine = deal(plan_step(w, spec, "trace", 1.0, 0), k, 2)
        held = {s.index for s in mine.requests}
        assert {s.session for s in mine.requests} == set(range(k, 5, 2))
        assert all(i in held for waits in mine.waits for i, _ in waits)
        assert mine.max_concurrency == 2
        merged += zip(mine.offsets_ns, [s.index for s in mine.requests], mine.waits, strict=True)
    intended = list(
        zip(whole.offsets_ns, [s.index for s in whole.requests], whole.waits, strict=True)
    )
    assert sorted(merged) == sorted(intended) and len(intended) == 25


def test_a_wait_on_a_row_left_out_is_dropped(tmp_path: Path) -> None:
    _, _, plan = plan_of(write(tmp_path, 1), window_s=[0.1, 1.0])
    assert plan.waits[0] == ()  # followed call 0, which the window left out
    assert plan.waits[1] == ((0, 20 * MS),)
    assert plan.requests[1].parent == 0  # the sub-agent's parent is the kept call 1


def test_a_trace_without_links_is_planned_as_before(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    rows = [{"timestamp": i * 10, "input_length": 8, "output_length": 2} for i in range(6)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    _, spec, plan = plan_of(path)
    assert isinstance(plan, OpenPlan)  # no waits: a plain open loop
    assert all(s.session is None and s.agent is None for s in plan.requests)
    w = Workload.prepare(WorkloadSpec(), chat=False)
    assert [s.index for s in deal(plan_step(w, spec, "trace", 1.0, 0), 1, 2).requests] == [
        1,
        3,
        5,
    ]
