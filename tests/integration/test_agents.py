"""Agent tasks (workload.agent) end to end against the built-in mock (real sockets, 127.0.0.1).

The mock counts one prompt token per word of every message, of every tool call's
arguments and of every tool result, so each call's prompt can be predicted
exactly from the calls before it: the previous prompt, its answer as it came
back, and the tool result (or the sub-agents' answers) after it.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from loadgen.records import Record
from loadgen.scenario import Scenario
from loadgen.summary import Summary

RunFixture = Callable[[Scenario], tuple[Summary, list[Record], Path]]
Make = Callable[..., Scenario]
FAST = ["--ttft-ms", "5", "--itl-ms", "8"]
RESULT, TASK, TOOL_S = 7, 9, 0.03


def _agent(**more: Any) -> dict[str, Any]:
    return {
        "calls": {"dist": "fixed", "value": 4},
        "tool_time_s": {"dist": "fixed", "value": TOOL_S},
        "tool_result_tokens": {"dist": "fixed", "value": RESULT},
        "fan_out": {
            "at": [1],
            "width": {"dist": "fixed", "value": 2},
            "calls": {"dist": "fixed", "value": 2},
            "task_tokens": {"dist": "fixed", "value": TASK},
        },
        **more,
    }


def _size(r: Record) -> int:
    """An answer's tokens as the next prompt carries them (text and its call's arguments)."""
    return len((r.answer_text or "").split()) + len((r.answer_tool_arguments or "").split())


def _carried(r: Record) -> int:
    """A sub-agent's last answer as its parent's tool result carries it."""
    return len((r.answer_text or r.answer_tool_arguments or "").split())


def _loops(records: list[Record]) -> dict[tuple[int, int], list[Record]]:
    loops: dict[tuple[int, int], list[Record]] = defaultdict(list)
    for r in records:
        assert r.session is not None and r.agent is not None and r.call is not None
        loops[(r.session, r.agent)].append(r)
    for calls in loops.values():
        calls.sort(key=lambda r: r.call or 0)
        assert [r.call for r in calls] == list(range(len(calls)))
    return loops


def _check_tasks(records: list[Record], tasks: int) -> None:
    """Every task's shape, prompt growth, sub-agent prefixes and waits."""
    assert all(r.ok for r in records), [r.error_detail for r in records if not r.ok]
    assert all(r.prompt_tokens_server == r.prompt_tokens_requested for r in records)
    loops = _loops(records)
    assert len({s for s, _ in loops}) == tasks
    for (session, agent), calls in loops.items():
        if agent:
            continue
        assert len(calls) == 4 and all(r.agent_depth == 0 and r.parent is None for r in calls)
        subs = [loops[(session, a)] for a in (1, 2)]
        assert (session, 3) not in loops
        for sub in subs:
            assert len(sub) == 2 and {r.parent for r in sub} == {calls[1].id}
            assert {r.agent_depth for r in sub} == {1}
            # the sub-agent's prompt: the parent's context, the answer that started it,
            # its own task message; then its own answer and tool result
            assert sub[0].prompt_tokens == calls[1].prompt_tokens + _size(calls[1]) + TASK
            assert sub[1].prompt_tokens == sub[0].prompt_tokens + _size(sub[0]) + RESULT
            assert sub[0].start_ns >= calls[1].end_ns
            assert sub[-1].end_ns <= calls[2].start_ns  # the parent waits for its children
        for k in (0, 2):  # an answer and a tool result after a tool time
            a, b = calls[k], calls[k + 1]
            assert b.prompt_tokens == a.prompt_tokens + _size(a) + RESULT
            assert b.start_ns - a.end_ns >= TOOL_S * 1e9
        carried = sum(_carried(sub[-1]) for sub in subs)
        assert calls[2].prompt_tokens == calls[1].prompt_tokens + _size(calls[1]) + carried


@pytest.mark.parametrize("api", ["openai-chat", "openai-responses", "anthropic-messages"])
def test_prompts_grow_by_the_answers_and_tool_results(
    run: RunFixture, scenario: Make, api: str
) -> None:
    sc = scenario(
        target={"api": api, "mock": {"args": FAST}},
        workload={
            "prompt_tokens": {"dist": "fixed", "value": 20},
            "output_tokens": {"dist": "fixed", "value": 6},
            "prefix": {"tokens": 10},
            "tools": {"count": 2},
            "agent": _agent(),
        },
        load={"concurrency": [2], "requests_per_step": 3},
    )
    summary, records, _ = run(sc)
    _check_tasks(records, 3)
    firsts = [r.prompt_tokens for r in records if r.call == 0 and r.agent == 0]
    assert firsts == [30, 30, 30]  # the system prompt (10) and the first message (20)
    assert any(r.answer_tool_name for r in records)  # real calls were carried forward
    assert summary.workload is not None and summary.workload.agent is not None


def test_closed_loop_with_two_workers(run: RunFixture, scenario: Make) -> None:
    sc = scenario(
        target={"mock": {"args": FAST}},
        workload={
            "prompt_tokens": {"dist": "fixed", "value": 12},
            "output_tokens": {"dist": "fixed", "value": 4},
            "agent": _agent(),
        },
        load={"concurrency": [4], "requests_per_step": 6, "workers": 2},
    )
    summary, records, _ = run(sc)
    assert summary.workers == 2
    _check_tasks(records, 6)
    assert len({r.id for r in records}) == len(records)  # ids unique across workers
    for _, calls in itertools.groupby(
        sorted(records, key=lambda r: r.session or 0), key=lambda r: r.session
    ):
        assert len({r.id % 2 for r in calls}) == 1  # a task's calls all from one worker


def test_open_loop_tasks_arrive(run: RunFixture, scenario: Make) -> None:
    sc = scenario(
        target={"mock": {"args": FAST}},
        workload={
            "prompt_tokens": {"dist": "fixed", "value": 12},
            "output_tokens": {"dist": "fixed", "value": 4},
            "agent": _agent(),
        },
        load={"mode": "rate", "rate": [10], "requests_per_step": 4},
    )
    _, records, _ = run(sc)
    _check_tasks(records, 4)
    firsts = sorted((r for r in records if r.call == 0 and r.agent == 0), key=lambda r: r.id)
    assert all(r.scheduled_ns is not None for r in firsts)


def test_truncation_keeps_the_context_within_the_limit(run: RunFixture, scenario: Make) -> None:
    sc = scenario(
        target={"mock": {"args": FAST}, "extra_body": {"ignore_eos": True}},
        workload={
            "prompt_tokens": {"dist": "fixed", "value": 20},
            "output_tokens": {"dist": "fixed", "value": 5},
            "agent": {
                "calls": {"dist": "fixed", "value": 8},
                "tool_result_tokens": {"dist": "fixed", "value": 30},
                "max_context_tokens": 100,
            },
        },
        load={"concurrency": [1], "requests_per_step": 1},
    )
    _, records, _ = run(sc)
    assert all(r.ok for r in records)
    calls = sorted(records, key=lambda r: r.call or 0)
    assert all(r.prompt_tokens_server == r.prompt_tokens_requested for r in calls)
    assert calls[0].truncated_tokens == 0 and calls[-1].truncated_tokens > 0
    for a, b in itertools.pairwise(calls):
        grown = a.prompt_tokens + _size(a) + 30
        # what was not dropped grew by the answer and the result; what was dropped is counted
        assert b.prompt_tokens + (b.truncated_tokens - a.truncated_tokens) == grown
        assert b.prompt_tokens <= 100
