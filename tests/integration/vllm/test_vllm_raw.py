"""What a real vLLM (0.32, CPU) server sends: the facts loadgen's client relies on.

These talk to the server directly with httpx, not through loadgen, so they pin
the server's behaviour on their own: the SSE event shapes of completions and
chat streaming, token counts (one event per token, some with empty text, usage
at the end), exact lengths with ``ignore_eos``, error status codes and the
``/metrics`` names.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import httpx
import pytest

if TYPE_CHECKING:  # the fixture's type; conftest is not imported at run time
    from conftest import VllmServer

pytestmark = pytest.mark.vllm

TIMEOUT = httpx.Timeout(60.0)
PROMPT = "def fibonacci(n):\n    "

# /metrics names loadgen scrapes under load.
METRIC_NAMES = (
    "vllm:num_requests_running",
    "vllm:num_requests_waiting",
    "vllm:kv_cache_usage_perc",
    "vllm:num_preemptions_total",
    "vllm:prompt_tokens_total",
    "vllm:generation_tokens_total",
    "vllm:request_success_total",
    "vllm:time_to_first_token_seconds",
    "vllm:inter_token_latency_seconds",
    "vllm:e2e_request_latency_seconds",
    "vllm:request_queue_time_seconds",
)


@pytest.fixture(scope="module")
def client(vllm_server: VllmServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=vllm_server.url, timeout=TIMEOUT) as c:
        yield c


def stream_events(client: httpx.Client, path: str, body: dict[str, Any]) -> list[Any]:
    """POST a streaming request; return the decoded `data:` payloads, "[DONE]" as a str."""
    events: list[Any] = []
    with client.stream("POST", path, json={**body, "stream": True}) as r:
        assert r.status_code == 200, r.read()
        assert r.headers["content-type"].startswith("text/event-stream")
        for line in r.iter_lines():
            if not line.startswith("data: "):
                assert line == "", line  # only blank separators between events
                continue
            payload = line.removeprefix("data: ")
            if payload == "[DONE]":
                events.append(payload)
                break  # some servers keep the stream open after [DONE]
            events.append(json.loads(payload))
    return events


def with_stream(body: dict[str, Any], stream: bool) -> dict[str, Any]:
    """Streaming bodies ask for the usage event; `stream_options` alone is a 400."""
    if stream:
        return {"stream": True, "stream_options": {"include_usage": True}, **body}
    return body


def completion_body(
    model: str, max_tokens: int, *, stream: bool = True, **extra: Any
) -> dict[str, Any]:
    body = {"model": model, "prompt": PROMPT, "max_tokens": max_tokens, "ignore_eos": True}
    return with_stream({**body, **extra}, stream)


def chat_body(model: str, max_tokens: int, *, stream: bool = True, **extra: Any) -> dict[str, Any]:
    body = {
        "model": model,
        "messages": [{"role": "user", "content": "Write a sorting function."}],
        "max_tokens": max_tokens,
        "ignore_eos": True,
    }
    return with_stream({**body, **extra}, stream)


def events_cover_tokens(events: int, tokens: int) -> bool:
    """One event per token, as a rule: vLLM may coalesce tokens into one event.

    When its API server falls behind the engine (a busy CPU), the tokens ready
    for a request go out as one event (seen: 1 in ~2,000 events at c=16 on 2
    cores). Exact token counts come from usage, not from counting events.
    """
    return tokens - max(2, tokens // 10) <= events <= tokens


def test_completions_stream_one_event_per_token(
    client: httpx.Client, vllm_server: VllmServer
) -> None:
    n = 64
    events = stream_events(client, "/v1/completions", completion_body(vllm_server.model, n))
    assert events[-1] == "[DONE]"
    *tokens, usage_event = events[:-1]
    # The usage event closes the stream: no choices, the counts.
    assert usage_event["choices"] == []
    usage = usage_event["usage"]
    assert usage["completion_tokens"] == n
    assert usage["total_tokens"] == usage["prompt_tokens"] + n
    # No role-only opening event for completions: every event carries token text.
    assert events_cover_tokens(len(tokens), n)
    assert all(len(e["choices"]) == 1 and "text" in e["choices"][0] for e in tokens)
    reasons = [e["choices"][0]["finish_reason"] for e in tokens]
    assert reasons == [None] * (len(tokens) - 1) + ["length"]
    assert len({e["id"] for e in tokens}) == 1
    assert all(e["object"] == "text_completion" for e in tokens)


def test_chat_stream_role_event_then_one_event_per_token(
    client: httpx.Client, vllm_server: VllmServer
) -> None:
    n = 48
    events = stream_events(client, "/v1/chat/completions", chat_body(vllm_server.model, n))
    assert events[-1] == "[DONE]"
    role, *tokens, usage_event = events[:-1]
    # Chat opens with a role-only event that carries no token.
    assert role["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert role["choices"][0]["finish_reason"] is None
    assert usage_event["choices"] == []
    assert usage_event["usage"]["completion_tokens"] == n
    assert events_cover_tokens(len(tokens), n)
    assert all("content" in e["choices"][0]["delta"] for e in tokens)
    reasons = [e["choices"][0]["finish_reason"] for e in tokens]
    assert reasons == [None] * (len(tokens) - 1) + ["length"]
    assert all(e["object"] == "chat.completion.chunk" for e in events[:-1])


def test_some_token_events_have_empty_text(client: httpx.Client, vllm_server: VllmServer) -> None:
    """Byte-level BPE: a token that ends inside a UTF-8 sequence streams as "".

    So a client must count events (or usage), never non-empty texts.
    """
    n, requests = 256, 4
    texts: list[str] = []
    for seed in range(requests):
        body = completion_body(vllm_server.model, n, seed=seed, temperature=1.0)
        events = stream_events(client, "/v1/completions", body)
        texts += [e["choices"][0]["text"] for e in events[:-1] if e["choices"]]
    assert events_cover_tokens(len(texts), n * requests)
    empty = sum(1 for t in texts if t == "")
    assert 0 < empty < 0.25 * len(texts), f"{empty} empty of {len(texts)}"


def test_continuous_usage_counts_every_token(client: httpx.Client, vllm_server: VllmServer) -> None:
    n = 16
    body = completion_body(
        vllm_server.model,
        n,
        stream_options={"include_usage": True, "continuous_usage_stats": True},
    )
    events = stream_events(client, "/v1/completions", body)[:-1]
    counts = [e["usage"]["completion_tokens"] for e in events if e["choices"]]
    # Each event adds its own tokens: 1 as a rule, more when vLLM coalesced some.
    steps = [b - a for a, b in zip([0, *counts], counts, strict=False)]
    assert counts[-1] == n and all(step >= 1 for step in steps)
    assert steps.count(1) >= 0.9 * len(steps)
    assert events[-1]["choices"] == [] and events[-1]["usage"]["completion_tokens"] == n


def test_ignore_eos_gives_exact_lengths(client: httpx.Client, vllm_server: VllmServer) -> None:
    # Bias the sampler hard towards EOS: without ignore_eos generation stops at once.
    eos = client.post(
        "/tokenize",
        json={"model": vllm_server.model, "prompt": "</s>", "add_special_tokens": False},
    ).json()["tokens"][-1]
    base = completion_body(vllm_server.model, 40, stream=False, ignore_eos=False)
    base["logit_bias"] = {str(eos): 100}

    def run(**extra: Any) -> tuple[int, str]:
        r = client.post("/v1/completions", json={**base, **extra})
        assert r.status_code == 200, r.text
        d = r.json()
        return d["usage"]["completion_tokens"], d["choices"][0]["finish_reason"]

    assert run() == (1, "stop")
    assert run(min_tokens=10) == (11, "stop")  # the EOS token itself is counted
    assert run(ignore_eos=True) == (40, "length")


def error_of(r: httpx.Response, status: int) -> str:
    """Errors come before any stream starts: a plain JSON body, never SSE."""
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/json")
    error = r.json()["error"]
    assert error["code"] == status
    return str(error["message"])


def test_unknown_model_is_404(client: httpx.Client) -> None:
    for path, body in [
        ("/v1/completions", completion_body("no-such-model", 8, stream=False)),
        ("/v1/completions", completion_body("no-such-model", 8)),
        ("/v1/chat/completions", chat_body("no-such-model", 8)),
    ]:
        assert "does not exist" in error_of(client.post(path, json=body), 404)


def test_too_long_is_400(client: httpx.Client, vllm_server: VllmServer) -> None:
    model = vllm_server.model
    too_long_prompt = "x = 1\n" * 3000  # far beyond --max-model-len 2048
    cases = [
        completion_body(model, 16, prompt=too_long_prompt, stream=False),
        completion_body(model, 16, prompt=too_long_prompt),
        completion_body(model, 100_000),
        chat_body(model, 100_000),
    ]
    for body in cases:
        path = "/v1/chat/completions" if "messages" in body else "/v1/completions"
        message = error_of(client.post(path, json=body), 400)
        assert "maximum context length" in message or "max_model_len" in message, message


def test_prompt_plus_max_tokens_beyond_context_is_cut_not_refused(
    client: httpx.Client, vllm_server: VllmServer
) -> None:
    """vLLM 0.32 accepts prompt + max_tokens > max_model_len and stops at the context end.

    So even with ignore_eos the output can be shorter than max_tokens: check usage.
    """
    body = completion_body(vllm_server.model, 200, stream=False, prompt="x = 1\n" * 500)
    r = client.post("/v1/completions", json=body)
    assert r.status_code == 200, r.text
    usage = r.json()["usage"]
    assert usage["prompt_tokens"] > 2048 - 200
    assert usage["total_tokens"] == 2048
    assert r.json()["choices"][0]["finish_reason"] == "length"


def test_stream_options_without_stream_is_400(
    client: httpx.Client, vllm_server: VllmServer
) -> None:
    body = completion_body(vllm_server.model, 8, stream=False)
    body["stream_options"] = {"include_usage": True}
    assert "stream_options" in error_of(client.post("/v1/completions", json=body), 400)


def test_models_lists_the_served_model(client: httpx.Client, vllm_server: VllmServer) -> None:
    data = client.get("/v1/models").json()["data"]
    assert [m["id"] for m in data] == [vllm_server.model]
    assert data[0]["max_model_len"] == 2048


def test_metrics_has_the_vllm_names(client: httpx.Client) -> None:
    r = client.get("/metrics")
    assert r.status_code == 200
    missing = [n for n in METRIC_NAMES if f"# TYPE {n} " not in r.text]
    assert not missing


async def _poll_waiting(url: str, model: str, concurrency: int) -> tuple[float, float]:
    """Send `concurrency` long requests at once; return max running and waiting seen."""
    body = completion_body(model, 256, stream=False)
    seen = {"running": 0.0, "waiting": 0.0}
    async with httpx.AsyncClient(base_url=url, timeout=TIMEOUT) as ac:

        async def poll() -> None:
            while True:
                for line in (await ac.get("/metrics")).text.splitlines():
                    for key in seen:
                        if line.startswith(f"vllm:num_requests_{key}{{"):
                            seen[key] = max(seen[key], float(line.rsplit(" ", 1)[1]))
                await asyncio.sleep(0.05)

        poller = asyncio.create_task(poll())
        replies = await asyncio.gather(
            *(ac.post("/v1/completions", json=body) for _ in range(concurrency))
        )
        poller.cancel()
    assert all(r.status_code == 200 for r in replies)
    return seen["running"], seen["waiting"]


@pytest.mark.slow  # starts a second server (~30 s)
def test_max_num_seqs_queues_the_rest(vllm_server_seqs4: VllmServer) -> None:
    running, waiting = asyncio.run(_poll_waiting(vllm_server_seqs4.url, vllm_server_seqs4.model, 8))
    assert running == 4
    assert waiting >= 1
