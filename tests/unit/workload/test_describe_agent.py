"""`loadgen workload` previews agent tasks: calls, fan-outs, planned context growth, truncation."""

from __future__ import annotations

from loadgen.scenario.models import Scenario
from loadgen.workload.describe import describe_workload, workload_report
from loadgen.workload.source import Workload


def test_the_preview_shows_task_shapes_and_context_growth() -> None:
    sc = Scenario.model_validate(
        {
            "target": {"url": "mock", "api": "openai-chat"},
            "workload": {
                "prompt_tokens": {"dist": "fixed", "value": 50},
                "output_tokens": {"dist": "fixed", "value": 10},
                "prefix": {"tokens": 20},
                "agent": {
                    "calls": {"dist": "fixed", "value": 6},
                    "tool_result_tokens": {"dist": "fixed", "value": 30},
                    "fan_out": {"at": [1], "width": {"dist": "fixed", "value": 2}},
                    "max_context_tokens": 200,
                },
            },
            "load": {"concurrency": [2], "requests_per_step": 5},
        }
    )
    workload = Workload.prepare(sc.workload, chat=True)
    text = workload_report(sc, workload)
    # 5 tasks of 6 main calls and 2 sub-agents of 3 calls each
    assert "agent tasks: 5, 60 LLM calls (per task p50 12, p90 12, p99 12, max 12" in text
    assert "fan-outs: 5 in 5 tasks, width p50 2, p90 2, p99 2, max 2" in text
    # planned: 70, 110, 140, 180 then truncated to 180 and 190 (test_agent's arithmetic)
    assert "first call p50 70, p90 70, p99 70, max 70" in text
    assert "last call  p50 190," in text
    assert "truncation at 200 tokens: 5 of 5 tasks, 10 calls, 350 tokens dropped" in text
    info = describe_workload(sc, workload)["agent"]
    assert info["calls"] == "fixed 6" and info["max_context_tokens"] == 200
    assert info["fan_out"].startswith("after call 1: fixed 2 sub-agents of ")
