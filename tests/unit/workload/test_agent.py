"""The agent-task planner (workload.agent) and the context it grows: shapes, seeds, truncation."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from loadgen.errors import ScenarioError
from loadgen.scenario.models import Scenario
from loadgen.workload.agent import plan_tasks, planned_contexts
from loadgen.workload.agent_context import AgentContext, ToolUse, flatten
from loadgen.workload.prompts import PromptMaker
from loadgen.workload.source import Workload
from loadgen.workload.step import plan_step


def _scenario(agent: dict[str, Any], **workload: Any) -> Scenario:
    return Scenario.model_validate(
        {
            "target": {"url": "mock", "api": "openai-chat"},
            "workload": {
                "prompt_tokens": {"dist": "fixed", "value": 50},
                "output_tokens": {"dist": "fixed", "value": 10},
                "agent": agent,
                **workload,
            },
            "load": {"concurrency": [2], "requests_per_step": 6},
        }
    )


def _tasks(sc: Scenario, n: int = 20, seed: int = 0) -> list[Any]:
    w = sc.workload
    assert w.agent is not None
    rng = np.random.default_rng(seed)
    return plan_tasks(w.agent, w.prompt_tokens, w.output_tokens, rng, n)


def test_call_counts_and_per_call_draws() -> None:
    sc = _scenario(
        {
            "calls": {"dist": "uniform", "min": 2, "max": 9},
            "tool_time_s": {"dist": "fixed", "value": 0.25},
            "tool_result_tokens": {"dist": "uniform", "min": 5, "max": 40},
        }
    )
    tasks = _tasks(sc, 200)
    calls = [t.main.calls for t in tasks]
    assert min(calls) == 2 and max(calls) == 9  # the whole range is drawn
    for t in tasks:
        assert len(t.main.tool_ns) == len(t.main.result_tokens) == t.main.calls
        assert set(t.main.tool_ns) == {250_000_000}
        assert all(5 <= r <= 40 for r in t.main.result_tokens)
        assert t.user_tokens_first == 50 and set(t.main.max_tokens) == {10}
        assert t.fan_outs == () and t.calls == t.main.calls
    assert [t.index for t in tasks] == list(range(200))


def test_the_same_seed_gives_the_same_tasks() -> None:
    sc = _scenario(
        {
            "calls": {"dist": "uniform", "min": 2, "max": 9},
            "fan_out": {"at": {"dist": "uniform", "min": 1, "max": 5}},
        }
    )
    assert _tasks(sc, seed=7) == _tasks(sc, seed=7)
    assert _tasks(sc, seed=7) != _tasks(sc, seed=8)
    # a step's plan is the same planned twice (workers plan it themselves)
    w1, w2 = (Workload.prepare(sc.workload, chat=True) for _ in range(2))
    p1, p2 = (plan_step(w, sc.load, "concurrency", 2, 0) for w in (w1, w2))
    assert p1.sessions is not None and p2.sessions is not None
    assert [next(p1.sessions) for _ in range(8)] == [next(p2.sessions) for _ in range(8)]


def test_fan_out_shape_from_a_list() -> None:
    sc = _scenario(
        {
            "calls": {"dist": "fixed", "value": 5},
            "fan_out": {
                "at": [0, 2, 4, 9],  # 4 and 9 have no next call: left out
                "width": {"dist": "uniform", "min": 1, "max": 4},
                "calls": {"dist": "fixed", "value": 3},
                "task_tokens": {"dist": "fixed", "value": 12},
            },
        }
    )
    tasks = _tasks(sc, 100)
    widths = set()
    for t in tasks:
        assert [f.after for f in t.fan_outs] == [0, 2]
        for f in t.fan_outs:
            widths.add(f.width)
            assert all(a.loop.calls == 3 and a.task_tokens == 12 for a in f.agents)
        assert t.calls == 5 + 3 * sum(f.width for f in t.fan_outs)
    assert widths == {1, 2, 3, 4}


def test_a_drawn_fan_out_point_is_lowered_to_one_with_a_next_call() -> None:
    sc = _scenario(
        {"calls": {"dist": "fixed", "value": 3}, "fan_out": {"at": {"dist": "fixed", "value": 7}}}
    )
    assert {tuple(f.after for f in t.fan_outs) for t in _tasks(sc)} == {(1,)}
    one = _scenario(
        {"calls": {"dist": "fixed", "value": 1}, "fan_out": {"at": {"dist": "fixed", "value": 1}}}
    )
    assert all(t.fan_outs == () for t in _tasks(one))  # a single call: nothing to carry back


def test_planned_context_growth_and_truncation() -> None:
    sc = _scenario(
        {
            "calls": {"dist": "fixed", "value": 6},
            "tool_result_tokens": {"dist": "fixed", "value": 30},
            "fan_out": {"at": [1], "width": {"dist": "fixed", "value": 2}},
        }
    )
    t = _tasks(sc, 1)[0]
    c = planned_contexts(t, 20, None)
    # head 20 + 50; each round an answer (10) and a result (30); the fan-out round
    # carries the two sub-agents' last answers (10 each) as its result
    assert c.main == (70, 110, 140, 180, 220, 260)
    assert c.sub_first == (110 + 10 + 64,) * 2
    assert c.truncated == 0
    cut = planned_contexts(t, 20, 200)
    # call 4 (220) drops round 0 (40); call 5 (180 + 40) drops the fan-out round (30)
    assert cut.main == (70, 110, 140, 180, 180, 190)
    assert (cut.truncated, cut.truncations) == (70, 2)


def test_context_grows_by_the_answer_and_the_result_and_truncates_oldest_rounds() -> None:
    maker = PromptMaker(chat=True)
    head = [{"role": "system", "content": "s " * 5}, {"role": "user", "content": "u " * 10}]
    ctx = AgentContext(maker, head, limit=60)
    sent, n, cut = ctx.prompt()
    assert n == 15 and cut == 0 and sent == head
    ctx.add("a b c", None, "r " * 20)  # +3 +20
    ctx.add("d e", ToolUse("call_1", "f", '{"x":"y z"}'), "q " * 7)  # +2 +2 (args) +7
    assert ctx.prompt()[1] == 15 + 23 + 11
    ctx.add("g", None, "w " * 20)  # would be 70 > 60: the oldest round (23) goes
    sent, n, cut = ctx.prompt()
    assert (n, cut) == (70 - 23, 23)
    assert isinstance(sent, list) and sent[:2] == head and sent[2]["content"] == "d e"
    assert sent[3] == {"role": "tool", "content": "q " * 7, "call_id": "call_1", "call_name": "f"}
    # later calls keep it dropped; the newest round is never dropped
    ctx.add("h " * 40, None, "v")
    sent, n, cut = ctx.prompt()
    assert cut == 23 + 11 + 21 and n == 15 + 41


def test_a_sub_agent_starts_with_the_parent_context() -> None:
    maker = PromptMaker(chat=True)
    parent = AgentContext(maker, [{"role": "user", "content": "task"}])
    parent.add("first", None, "result one")
    fork = parent.fork("spawn", None, "sub task")
    sent, n, _ = fork.prompt()
    assert isinstance(sent, list) and sent[:3] == parent.messages()
    assert sent[3:] == [
        {"role": "assistant", "content": "spawn"},
        {"role": "user", "content": "sub task"},
    ]
    assert n == parent.prompt()[1] + 3


def test_a_text_api_gets_the_context_flattened() -> None:
    maker = PromptMaker(chat=False)
    ctx = AgentContext(maker, [{"role": "user", "content": "hello there"}])
    ctx.add("ok", ToolUse("call_0", "f", "{}"), "done")
    sent, n, _ = ctx.prompt()
    assert sent == "user: hello there\nassistant: ok f {}\ntool: done"
    assert n == len(str(sent).split()) == len(flatten(ctx.messages()).split())


def test_a_draw_beyond_the_call_limit_is_one_line() -> None:
    sc = _scenario({"calls": {"dist": "fixed", "value": 20_000}})
    with pytest.raises(ScenarioError, match=r"workload.agent.calls: a draw of 20000"):
        _tasks(sc, 1)


@pytest.mark.parametrize(
    ("agent", "extra", "expected"),
    [
        ({}, {"sessions": {}}, r"give `sessions` \(chats\) or `agent`"),
        ({"fan_out": {"at": [-1]}}, {}, "greater than or equal to 0"),
    ],
)
def test_bad_agent_sections(agent: dict[str, Any], extra: dict[str, Any], expected: str) -> None:
    with pytest.raises(ValueError, match=expected):
        _scenario(agent, **extra)


def test_agent_needs_a_text_generating_api() -> None:
    with pytest.raises(ValueError, match=r"workload\.agent needs target\.api"):
        Scenario.model_validate(
            {
                "target": {"url": "mock", "api": "openai-embeddings"},
                "workload": {"agent": {}},
                "load": {"concurrency": [1], "requests_per_step": 1},
            }
        )
