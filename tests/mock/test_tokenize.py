"""POST /tokenize as vLLM serves it, counting what usage.prompt_tokens counts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mockhttp import MockProc, chat_body, completion_body, fetch_sync

CHAT = "/v1/chat/completions"
COMPLETIONS = "/v1/completions"
MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "be  brief"},
    {"role": "user", "content": [{"type": "text", "text": "what is\ta cache"}]},
    {"role": "assistant", "content": None},
]


def usage_prompt_tokens(port: int, path: str, body: dict[str, Any]) -> int:
    return int(fetch_sync(port, "POST", path, body).json_events()[-1]["usage"]["prompt_tokens"])


def test_prompt_is_counted_as_completions_count_it(fast_mock: MockProc) -> None:
    prompt = " one two  three\nfour two "
    reply = fetch_sync(fast_mock.port, "POST", "/tokenize", {"model": "m", "prompt": prompt})
    assert reply.status == 200 and reply.headers["content-type"] == "application/json"
    doc = reply.json()
    assert list(doc) == ["count", "max_model_len", "tokens", "token_strs"]  # vLLM's order
    assert doc["count"] == 5 and doc["max_model_len"] == 8192 and doc["token_strs"] is None
    ids = doc["tokens"]
    assert len(ids) == 5 and ids[1] == ids[4] and len(set(ids)) == 4
    assert all(isinstance(i, int) and 0 <= i < 32_000 for i in ids)
    body = completion_body(prompt=prompt, stream_options={"include_usage": True})
    assert usage_prompt_tokens(fast_mock.port, COMPLETIONS, body) == doc["count"]
    again = fetch_sync(fast_mock.port, "POST", "/tokenize", {"prompt": "two", "model": "x"})
    assert again.json()["tokens"] == [ids[1]]  # a word has one id, whatever the request


def test_messages_are_counted_as_chat_counts_them(fast_mock: MockProc) -> None:
    body = {"model": "m", "messages": MESSAGES, "return_token_strs": True}
    doc = fetch_sync(fast_mock.port, "POST", "/tokenize", body).json()
    assert doc["count"] == 6  # words of the contents; roles and the template count nothing
    assert doc["token_strs"] == ["be", "brief", "what", "is", "a", "cache"]
    chat = chat_body(messages=MESSAGES)
    assert usage_prompt_tokens(fast_mock.port, CHAT, chat) == doc["count"]


def test_unknown_model_gets_the_completions_404(start_mock: Callable[..., MockProc]) -> None:
    mock = start_mock("--model", "tiny", "--max-model-len", "4096", "--ttft-ms", "0")
    bad = fetch_sync(mock.port, "POST", "/tokenize", {"model": "m", "prompt": "a b"})
    completions = fetch_sync(mock.port, "POST", COMPLETIONS, completion_body(model="m"))
    assert bad.status == completions.status == 404
    assert bad.body == completions.body
    good = fetch_sync(mock.port, "POST", "/tokenize", {"model": "tiny", "prompt": "a b"})
    assert good.json()["count"] == 2 and good.json()["max_model_len"] == 4096
    unnamed = fetch_sync(mock.port, "POST", "/tokenize", {"prompt": "a b c"})
    assert unnamed.json()["count"] == 3


def test_bad_tokenize_bodies(fast_mock: MockProc) -> None:
    for raw in (b"{", b"[]", b'{"model": "m"}', b'{"prompt": [1, 2]}', b'{"messages": []}'):
        reply = fetch_sync(fast_mock.port, "POST", "/tokenize", raw_body=raw)
        assert reply.status == 400, raw
        assert reply.json()["error"]["type"] == "BadRequestError"
    assert fetch_sync(fast_mock.port, "GET", "/tokenize").status == 405
