"""Production-shaped traffic against a real vLLM (0.32, CPU): the lengths vLLM counts.

With the served model's own tokenizer (``workload.tokenizer``: the model
folder the test server was built in) every prompt must be exactly as long as
vLLM's ``usage.prompt_tokens`` says, for completions (BOS added) and chat (the
chat template's tokens included), also when a multi-turn session carries the
model's real answers. Without a tokenizer, the ``/tokenize`` calibration
brings the word approximation close. Shared prefixes must show up in vLLM's
own prefix-cache counters.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from loadgen.records import Record, read_records
from loadgen.run import RunOptions, run_scenario
from loadgen.scenario import Scenario
from loadgen.summary import Summary

if TYPE_CHECKING:  # the fixture's type; conftest is not imported at run time
    from conftest import VllmServer

pytestmark = pytest.mark.vllm

Build = Callable[..., Scenario]


def run_in(out: Path, sc: Scenario) -> tuple[Summary, list[Record]]:
    summary = run_scenario(sc, RunOptions(out_dir=out, quiet=True, reports=False))
    return summary, list(read_records(out / "records.jsonl"))


def target(server: VllmServer, api: str) -> dict[str, Any]:
    return {
        "url": server.url,
        "api": api,
        "model": server.model,
        "extra_body": {"ignore_eos": True},
        "timeouts_s": {"first_token": 60, "idle": 30, "total": 120},
    }


@pytest.mark.parametrize("api", ["openai-completions", "openai-chat"])
def test_tokenizer_prompts_are_exactly_what_vllm_counts(
    api: str, vllm_server: VllmServer, scenario: Build, tmp_path: Path
) -> None:
    n = 24
    sc = scenario(
        target=target(vllm_server, api),
        workload={
            "tokenizer": str(vllm_server.model_dir),
            "prompt_tokens": {"dist": "lognormal", "mean": 200, "std": 150, "min": 12, "max": 1500},
            "output_tokens": {"dist": "fixed", "value": 4},
            "prompt_tolerance": 0,
        },
        load={"mode": "concurrency", "concurrency": [4], "requests_per_step": n},
    )
    summary, records = run_in(tmp_path, sc)
    assert summary.prompt_length_source == "tokenizer"
    assert len(records) == n and all(r.ok for r in records), [r.error_detail for r in records]
    assert len({r.prompt_tokens_requested for r in records}) > n // 2  # really varied lengths
    mismatched = [
        (r.prompt_tokens_requested, r.prompt_tokens_server)
        for r in records
        if r.prompt_tokens_server != r.prompt_tokens_requested
    ]
    assert not mismatched
    check = summary.steps[0].prompt_lengths
    assert check.compared == n and check.beyond_tolerance == 0 and check.worst_rel_diff == 0


def test_sessions_stay_exact_with_the_models_real_answers(
    vllm_server: VllmServer, scenario: Build, tmp_path: Path
) -> None:
    sc = scenario(
        target=target(vllm_server, "openai-chat"),
        workload={
            "tokenizer": str(vllm_server.model_dir),
            "prompt_tokens": {"dist": "uniform", "min": 20, "max": 60},
            "output_tokens": {"dist": "fixed", "value": 12},
            "sessions": {"turns": {"dist": "fixed", "value": 3}},
        },
        load={"mode": "concurrency", "concurrency": [2], "requests_per_step": 3},
    )
    summary, records = run_in(tmp_path, sc)
    assert len(records) == 9 and all(r.ok for r in records)
    assert all(r.prompt_tokens_server == r.prompt_tokens_requested for r in records)
    later = [r for r in records if (r.turn or 0) > 0]
    assert all((r.prompt_tokens_server or 0) > 12 + 20 for r in later)  # history is carried
    assert summary.steps[0].ttft_by_turn is not None
    assert sorted(summary.steps[0].ttft_by_turn) == ["0", "1", "2"]


@pytest.mark.parametrize("api", ["openai-completions", "openai-chat"])
def test_calibration_with_vllms_tokenize(
    api: str, vllm_server: VllmServer, scenario: Build, tmp_path: Path
) -> None:
    """No tokenizer: two /tokenize calls size the word prompts; far closer than words."""
    sc = scenario(
        target=target(vllm_server, api),
        workload={
            "prompt_tokens": {"dist": "fixed", "value": 256},
            "output_tokens": {"dist": "fixed", "value": 4},
        },
        load={"mode": "concurrency", "concurrency": [4], "requests_per_step": 16},
    )
    summary, records = run_in(tmp_path, sc)
    assert summary.prompt_length_source == "server"
    check = summary.steps[0].prompt_lengths
    assert check.compared == 16
    print("calibrated", api, check)
    assert check.mean_rel_diff is not None and abs(check.mean_rel_diff) < 0.05
    assert all(r.ok for r in records)


def test_shared_prefixes_show_in_vllms_prefix_cache_counters(
    vllm_server: VllmServer, scenario: Build, tmp_path: Path
) -> None:
    seed = int.from_bytes(os.urandom(4), "little")  # prompts the server has not cached yet
    sc = scenario(
        target=target(vllm_server, "openai-completions"),
        workload={
            "seed": seed,
            "tokenizer": str(vllm_server.model_dir),
            "prompt_tokens": {"dist": "fixed", "value": 400},
            "output_tokens": {"dist": "fixed", "value": 4},
            "prefix": {"tokens": 320, "groups": 2},
        },
        load={"mode": "concurrency", "concurrency": [1], "requests_per_step": 12},
    )
    summary, records = run_in(tmp_path, sc)
    assert all(r.ok for r in records)
    cache = summary.steps[0].prefix_cache
    assert cache is not None, "vLLM's prefix-cache counters were not found on /metrics"
    assert cache.source == "vllm:prefix_cache_hits_total"
    assert cache.queries_tokens is not None and cache.queries_tokens >= 12 * 400
    # All but the first request of each group find the 320-token prefix, in whole blocks:
    # vLLM-CPU's blocks are 128 tokens (measured: 10 x 256 hit tokens), so at least
    # 320 - 127 tokens each whatever the block size up to 128.
    assert cache.hits_tokens is not None and cache.hits_tokens >= 10 * (320 - 127)
    assert cache.hits_tokens <= 10 * 320
    print("vLLM prefix cache", cache)

    plain = scenario(
        target=target(vllm_server, "openai-completions"),
        workload={
            "seed": seed,
            "tokenizer": str(vllm_server.model_dir),
            "prompt_tokens": {"dist": "fixed", "value": 400},
            "output_tokens": {"dist": "fixed", "value": 4},
        },
        load={"mode": "concurrency", "concurrency": [1], "requests_per_step": 6},
    )
    summary, _ = run_in(tmp_path / "plain", plain)
    # unique prompts hit nothing in vLLM's cache, and a workload that shares no
    # prefix reports the hit rate only when something hit
    assert summary.steps[0].prefix_cache is None
