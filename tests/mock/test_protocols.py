"""OpenAI (vLLM) and TGI wire formats, errors and small endpoints, over real sockets."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from mockhttp import Conn, MockProc, chat_body, completion_body, fetch, fetch_sync

CHAT = "/v1/chat/completions"
COMPLETIONS = "/v1/completions"


def test_chat_stream_is_shaped_like_vllm(fast_mock: MockProc) -> None:
    body = chat_body(words=3, max_tokens=7)
    body["messages"].append({"role": "assistant", "content": "two more"})
    reply = fetch_sync(fast_mock.port, "POST", CHAT, body, headers={"x-request-id": "r1"})
    assert reply.status == 200 and reply.complete
    assert reply.headers["content-type"] == "text/event-stream; charset=utf-8"
    assert reply.headers["transfer-encoding"] == "chunked"
    raw = reply.events()
    assert raw[-1] == b"[DONE]"
    events = reply.json_events()
    role, tokens, usage = events[0], events[1:-1], events[-1]
    assert role["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert role["object"] == "chat.completion.chunk" and role["id"] == "chatcmpl-r1"
    assert len(tokens) == 7
    assert all("content" in e["choices"][0]["delta"] for e in tokens)
    assert [e["choices"][0]["finish_reason"] for e in tokens] == [None] * 6 + ["length"]
    assert usage["choices"] == []
    # the cache's count as vLLM sends it with --enable-prompt-tokens-details (fixed mode: none)
    details = {"cached_tokens": 0, "created_cache_tokens": 0}
    assert usage["usage"] == {
        "prompt_tokens": 5,
        "total_tokens": 12,
        "completion_tokens": 7,
        "prompt_tokens_details": details,
    }
    assert reply.body.startswith(b"data: {") and b"\n\ndata: [DONE]\n\n" in reply.body


def test_completions_stream_exact_lengths_with_ignore_eos(fast_mock: MockProc) -> None:
    async def run() -> None:
        conn = await Conn.open(fast_mock.port)
        for n in (1, 2, 17, 64):
            reply = await conn.request("POST", COMPLETIONS, completion_body(max_tokens=n))
            events = reply.json_events()
            assert len(events) == n, n
            assert events[-1]["choices"][0]["finish_reason"] == "length"
            assert all(e["object"] == "text_completion" for e in events)
            assert reply.events()[-1] == b"[DONE]"
        conn.close()

    asyncio.run(run())


def test_natural_length_stays_within_bounds_and_is_seeded(fast_mock: MockProc) -> None:
    async def length(i: int, min_tokens: int = 0) -> tuple[int, str]:
        body = completion_body(max_tokens=40, ignore_eos=False, min_tokens=min_tokens)
        reply = await fetch(
            fast_mock.port, "POST", COMPLETIONS, body, headers={"x-request-id": f"n{i}"}
        )
        events = reply.json_events()
        return len(events), events[-1]["choices"][0]["finish_reason"]

    async def run() -> None:
        got = [await length(i) for i in range(30)]
        assert all(1 <= n <= 40 for n, _ in got)
        assert any(reason == "stop" and n < 40 for n, reason in got)
        assert all(reason == "length" for n, reason in got if n == 40)
        assert await length(7) == got[7]  # same id, same seed: same length
        floors = [await length(i, min_tokens=30) for i in range(10)]
        assert all(n >= 30 for n, _ in floors)

    asyncio.run(run())


def test_continuous_usage_and_empty_text_events(fast_mock: MockProc) -> None:
    options = {"include_usage": True, "continuous_usage_stats": True}
    body = completion_body(words=2, max_tokens=400, stream_options=options)
    reply = fetch_sync(fast_mock.port, "POST", COMPLETIONS, body)
    events = reply.json_events()
    tokens = events[:-1]
    assert [e["usage"]["completion_tokens"] for e in tokens] == list(range(1, 401))
    assert all(e["usage"]["prompt_tokens"] == 2 for e in tokens)
    empty = sum(1 for e in tokens if e["choices"][0]["text"] == "")
    assert 2 <= empty <= 40  # ~4 %, like vLLM's partial UTF-8 bytes


def test_non_streaming_bodies(fast_mock: MockProc) -> None:
    body = chat_body(max_tokens=5, stream=False)
    refused = fetch_sync(fast_mock.port, "POST", CHAT, body)
    assert refused.status == 400  # vLLM: stream_options only with stream=True
    del body["stream_options"]
    chat = fetch_sync(fast_mock.port, "POST", CHAT, body)
    assert chat.status == 200 and chat.headers["content-type"] == "application/json"
    doc = chat.json()
    assert doc["object"] == "chat.completion"
    assert doc["choices"][0]["message"]["role"] == "assistant"
    assert doc["choices"][0]["finish_reason"] == "length"
    assert doc["usage"]["completion_tokens"] == 5 and doc["usage"]["prompt_tokens"] == 4
    body = completion_body(max_tokens=3, stream=False, prompt=[1, 2, 3, 4, 5, 6])
    doc = fetch_sync(fast_mock.port, "POST", COMPLETIONS, body).json()
    assert doc["object"] == "text_completion"
    assert doc["usage"] == {
        "prompt_tokens": 6,
        "total_tokens": 9,
        "completion_tokens": 3,
        "prompt_tokens_details": {"cached_tokens": 0},
        "completion_tokens_details": None,
    }


def test_tgi_stream_and_generate(fast_mock: MockProc) -> None:
    body = {"inputs": "a b c d", "parameters": {"max_new_tokens": 5, "details": True}}
    reply = fetch_sync(fast_mock.port, "POST", "/generate_stream", body)
    assert reply.status == 200 and reply.body.startswith(b'data:{"index":1,"token":{')
    events = reply.json_events()
    assert [e["index"] for e in events] == [1, 2, 3, 4, 5]
    assert all(set(e["token"]) == {"id", "text", "logprob", "special"} for e in events)
    assert all(e["generated_text"] is None and e["details"] is None for e in events[:-1])
    final = events[-1]
    assert final["generated_text"] == "".join(e["token"]["text"] for e in events)
    assert final["details"] == {
        "finish_reason": "length",
        "generated_tokens": 5,
        "seed": None,
        "input_length": 4,
    }
    assert b"[DONE]" not in reply.body
    doc = fetch_sync(fast_mock.port, "POST", "/generate", body).json()
    assert doc["details"]["generated_tokens"] == 5 and len(doc["details"]["tokens"]) == 5
    plain = fetch_sync(fast_mock.port, "POST", "/generate", {"inputs": "x"}).json()
    assert set(plain) == {"generated_text"}


def test_tgi_reads_length_controls_from_parameters(fast_mock: MockProc) -> None:
    async def lengths(params: dict[str, Any], **top: Any) -> list[tuple[int, str]]:
        out = []
        for i in range(30):
            body = {"inputs": "a b", "parameters": {"max_new_tokens": 40, **params}, **top}
            reply = await fetch(
                fast_mock.port, "POST", "/generate_stream", body, headers={"x-request-id": f"t{i}"}
            )
            final = reply.json_events()[-1]
            out.append((final["details"]["generated_tokens"], final["details"]["finish_reason"]))
        return out

    async def run() -> None:
        natural = await lengths({"details": True})
        assert any(n < 40 and reason == "eos_token" for n, reason in natural)
        exact = await lengths({"details": True, "ignore_eos": True})
        assert exact == [(40, "length")] * 30
        floor = await lengths({"details": True, "min_tokens": 35})
        assert all(n >= 35 for n, _ in floor) and any(n < 40 for n, _ in floor)
        top_level = await lengths({"details": True}, ignore_eos=True, min_tokens=35)
        assert top_level == natural  # TGI reads only `parameters`; the rest is ignored

    asyncio.run(run())


@pytest.mark.parametrize(
    ("path", "raw", "status"),
    [
        (COMPLETIONS, b'{"prompt": "x"', 400),
        (COMPLETIONS, b"[1, 2]", 400),
        (CHAT, b'{"model": "m"}', 400),
        (CHAT, b'{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 0}', 400),
        (COMPLETIONS, b'{"prompt": "x", "max_tokens": 100000}', 400),
        (COMPLETIONS, b'{"prompt": "x", "max_tokens": "ten"}', 400),
        ("/generate", b'{"inputs": 3}', 422),
        ("/generate_stream", b'{"inputs": "x", "parameters": {"max_new_tokens": 0}}', 422),
        ("/generate", b'{"inputs": "x", "parameters": {"min_tokens": 200}}', 422),
        ("/generate", b'{"inputs": "x", "parameters": {"min_tokens": "3"}}', 422),
    ],
)
def test_bad_bodies(fast_mock: MockProc, path: str, raw: bytes, status: int) -> None:
    reply = fetch_sync(fast_mock.port, "POST", path, raw_body=raw)
    assert reply.status == status
    doc = reply.json()
    if status == 400:
        assert doc["error"]["code"] == 400 and doc["error"]["type"] == "BadRequestError"
    else:
        assert doc["error_type"] == "validation"


def test_paths_methods_models_health(fast_mock: MockProc) -> None:
    assert fetch_sync(fast_mock.port, "GET", "/health").status == 200
    assert fetch_sync(fast_mock.port, "GET", "/nope").json() == {"detail": "Not Found"}
    assert fetch_sync(fast_mock.port, "GET", COMPLETIONS).status == 405
    models = fetch_sync(fast_mock.port, "GET", "/v1/models").json()
    assert models["object"] == "list" and models["data"][0]["object"] == "model"


def test_served_model_name_gives_vllm_404(start_mock: Callable[..., MockProc]) -> None:
    mock = start_mock("--model", "tiny", "--ttft-ms", "0", "--itl-ms", "0")
    bad = fetch_sync(mock.port, "POST", COMPLETIONS, completion_body())
    assert bad.status == 404
    assert bad.json()["error"] == {
        "message": "The model `m` does not exist.",
        "type": "NotFoundError",
        "param": "model",
        "code": 404,
    }
    good = fetch_sync(mock.port, "POST", COMPLETIONS, completion_body(model="tiny"))
    assert good.status == 200 and len(good.json_events()) == 8
    assert fetch_sync(mock.port, "GET", "/v1/models").json()["data"][0]["id"] == "tiny"


def test_keep_alive_and_connection_close(fast_mock: MockProc) -> None:
    async def run() -> None:
        conn = await Conn.open(fast_mock.port)
        for _ in range(3):
            reply = await conn.request("POST", CHAT, chat_body(max_tokens=2))
            assert reply.complete and reply.status == 200
        reply = await conn.request("GET", "/health", headers={"connection": "close"})
        assert reply.headers["connection"] == "close"
        assert await conn.reader.read() == b""  # the server closed it
        conn.close()

    asyncio.run(run())
