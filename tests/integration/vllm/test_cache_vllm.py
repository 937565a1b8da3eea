"""A real vLLM's prefix cache, per request: the answers' cached-token counts against its
own counter.

The server runs with ``--enable-prompt-tokens-details`` (conftest's
``BASE_SERVE_ARGS``) and V1's prefix caching on. Requests share a prefix; each
answer's usage says how many of its prompt tokens came from the cache
(``Record.cached_tokens_server``). Summed over a step's requests (warm-up
included: the counters see them too) that equals the growth of
``vllm:prefix_cache_hits_total`` over the step, which loadgen scrapes just
before and after it (``step.prefix_cache``), and the one this test scrapes
itself around the whole run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from loadgen.records import read_records
from loadgen.run import RunOptions, run_scenario
from loadgen.scenario import Scenario

if TYPE_CHECKING:  # the fixture's type; conftest is not imported at run time
    from conftest import VllmServer

pytestmark = pytest.mark.vllm

HITS = "vllm:prefix_cache_hits_total"
BLOCK = 128  # vLLM-CPU's KV block size (vllm/platforms/cpu.py; 16 on GPUs)


def hits_total(url: str) -> float:
    """The server's prefix-cache hit counter, summed over its label sets."""
    text = httpx.get(f"{url}/metrics", timeout=30).text
    found = re.findall(rf"^{re.escape(HITS)}(?:{{[^}}]*}})? (\S+)$", text, re.M)
    assert found, f"{HITS} not in /metrics"
    return sum(float(v) for v in found)


def final_usage(url: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
    """The usage of a stream's last event that has one (chat/completions' usage event,
    Messages' ``message_delta``)."""
    usage: dict[str, Any] = {}
    with httpx.stream("POST", f"{url}{path}", json=body, timeout=60) as r:
        assert r.status_code == 200, r.read()
        for line in r.iter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                event = json.loads(line.removeprefix("data: "))
                usage = event.get("usage") or usage
    return usage


def test_the_usage_shapes_the_mock_copies(vllm_server: VllmServer) -> None:
    """What ``--enable-prompt-tokens-details`` adds to each API's final usage, as the
    mock sends it (docs/mock.md, "Prefix cache"): asked twice, the second hits."""
    prompt = " ".join(f"w{i}" for i in range(200))
    model, url = vllm_server.model, vllm_server.url
    stream = {"stream": True, "stream_options": {"include_usage": True}, "max_tokens": 2}
    for path, body, keys in (
        ("/v1/completions", {"prompt": prompt}, {"cached_tokens"}),
        (
            "/v1/chat/completions",
            {"messages": [{"role": "user", "content": prompt}]},
            {"cached_tokens", "created_cache_tokens"},  # multimodal_tokens: only with media
        ),
    ):
        for _ in range(2):
            usage = final_usage(url, path, {"model": model, **stream, **body})
        details = usage["prompt_tokens_details"]
        assert set(details) == keys, details
        assert details["cached_tokens"] > 0 and details["cached_tokens"] % BLOCK == 0
        print(f"{path}: {usage}")
    messages = {"model": model, "max_tokens": 2, "stream": True}
    messages["messages"] = [{"role": "user", "content": prompt + " again"}]
    for _ in range(2):
        usage = final_usage(url, "/v1/messages", messages)
    assert usage["cache_read_input_tokens"] > 0
    assert set(usage) == {
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    }, usage
    print(f"/v1/messages message_delta: {usage}")


@pytest.mark.parametrize("api", ["openai-chat", "openai-completions", "anthropic-messages"])
def test_cached_tokens_add_up_to_the_servers_hits(
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
            "prompt_tokens": {"dist": "fixed", "value": 420},
            "output_tokens": {"dist": "fixed", "value": 4},
            # about 320 tokens: two full 128-token blocks at least, whatever the
            # words-per-token guess makes of it
            "prefix": {"tokens": 320, "groups": 1},
        },
        # one at a time: each request finds the prefix its predecessors left
        load={"concurrency": [1], "requests_per_step": 6, "warmup_requests": 1},
    )
    before = hits_total(vllm_server.url)
    out = tmp_path / "run"
    summary = run_scenario(sc, RunOptions(out_dir=out, quiet=True, reports=False))
    after = hits_total(vllm_server.url)
    records = list(read_records(out / "records.jsonl"))
    step = summary.steps[0]
    assert step.requests.failed == 0 and len(records) == 7
    assert all(r.cached_tokens_server is not None for r in records)  # every answer counted
    served = sum(r.cached_tokens_server or 0 for r in records)
    assert step.prefix_cache is not None and step.prefix_cache.source == HITS
    assert step.prefix_cache.hits_tokens == served
    assert after - before == served
    # every measured request hits at least the prefix's full blocks, in whole blocks
    measured = [r for r in records if not r.warmup]
    assert all((r.cached_tokens_server or 0) >= 2 * BLOCK for r in measured), [
        r.cached_tokens_server for r in measured
    ]
    assert all((r.cached_tokens_server or 0) % BLOCK == 0 for r in records)
    cache = step.cache
    assert cache is not None and cache.requests_with_hits == 1.0
    assert cache.cached_tokens == sum(r.cached_tokens_server or 0 for r in measured)
    print(
        f"{api}: cached per request {[r.cached_tokens_server for r in records]}, "
        f"hits counter +{after - before:.0f}, step hit rate {cache.hit_rate:.3f}"
    )
