"""The prompt's cached tokens from each API's usage into ``Record.cached_tokens_server``.

Parsing through the adapters, and through ``Requester.send`` with a scripted
transport (streams and whole bodies), so the record is what a run keeps.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from loadgen.client import ADAPTERS, Requester, RequestTimeouts
from loadgen.client.sse import SseSplitter
from loadgen.records import Record
from loadgen.workload.plan import RequestSpec
from tests.unit.client.test_request_reasoning import ScriptedTransport
from tests.unit.client.test_wire_values import HOSTILE

DATA = Path(__file__).parent / "data"


def chat_usage(details: Any) -> dict[str, Any]:
    """vLLM's final usage event; ``details`` its ``prompt_tokens_details`` (``...``: absent)."""
    usage: dict[str, Any] = {"prompt_tokens": 40, "total_tokens": 42, "completion_tokens": 2}
    if details is not ...:
        usage["prompt_tokens_details"] = details
    return {"id": "x", "choices": [], "usage": usage}


@pytest.mark.parametrize("api", ["openai-chat", "openai-completions"])
@pytest.mark.parametrize(
    ("details", "cached"),
    [
        ({"cached_tokens": 32, "created_cache_tokens": 0, "multimodal_tokens": None}, 32),
        ({"cached_tokens": 0}, 0),
        ({"cached_tokens": None}, None),
        (None, None),  # vLLM without --enable-prompt-tokens-details
        (..., None),
    ],
)
def test_openai_prompt_tokens_details(api: str, details: Any, cached: int | None) -> None:
    d = ADAPTERS[api].parse(orjson.dumps(chat_usage(details)))
    assert (d.prompt_tokens, d.cached_tokens, d.usage_ignored) == (40, cached, None)


@pytest.mark.parametrize("value", HOSTILE)
def test_a_cached_count_that_cannot_be_believed_ignores_the_usage(value: Any) -> None:
    event = json.dumps(chat_usage({"cached_tokens": value})).encode()  # orjson: no 2**70
    d = ADAPTERS["openai-chat"].parse(event)
    assert (d.prompt_tokens, d.completion_tokens, d.cached_tokens) == (None, None, None)
    assert d.usage_ignored is not None
    assert "usage.prompt_tokens_details.cached_tokens" in d.usage_ignored


def test_details_of_the_wrong_shape_ignore_the_usage() -> None:
    d = ADAPTERS["openai-chat"].parse(orjson.dumps(chat_usage([3])))
    assert d.usage_ignored is not None and d.cached_tokens is None


def test_responses_input_tokens_details() -> None:
    adapter = ADAPTERS["openai-responses"]
    payloads = SseSplitter().feed((DATA / "vllm_responses_stream.txt").read_bytes())
    last = adapter.parse(bytes(payloads[-1]))  # vLLM's response.completed: cached 0
    assert (last.prompt_tokens, last.cached_tokens) == (2, 0)
    body = orjson.loads((DATA / "vllm_responses_body.json").read_bytes())
    body["usage"]["input_tokens_details"]["cached_tokens"] = 2
    assert adapter.parse_body(orjson.dumps(body)).cached_tokens == 2
    del body["usage"]["input_tokens_details"]
    assert adapter.parse_body(orjson.dumps(body)).cached_tokens is None


def test_messages_cache_read_input_tokens() -> None:
    adapter = ADAPTERS["anthropic-messages"]
    usage = {"input_tokens": 8, "output_tokens": 3, "cache_read_input_tokens": 32}
    end = {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": usage}
    d = adapter.parse(orjson.dumps(end))
    assert (d.prompt_tokens, d.cached_tokens) == (40, 32)
    start = {"type": "message_start", "message": {"usage": {"input_tokens": 40}}}
    assert adapter.parse(orjson.dumps(start)).cached_tokens is None  # vLLM's: no cache yet
    body = (DATA / "vllm_messages_body.json").read_bytes()
    assert adapter.parse_body(body).cached_tokens is None  # sent without the cache's fields
    with_cache = orjson.loads(body)
    with_cache["usage"] = usage
    assert adapter.parse_body(orjson.dumps(with_cache)).cached_tokens == 32


def test_tgi_reports_none() -> None:
    final = {"token": None, "generated_text": "x", "details": {"generated_tokens": 1}}
    assert ADAPTERS["tgi"].parse(orjson.dumps(final)).cached_tokens is None


def send(api: str, chunks: list[bytes], stream: bool = True) -> Record:
    requester = Requester(
        ScriptedTransport([(i, c) for i, c in enumerate(chunks)]),
        ADAPTERS[api],
        base_url="http://x",
        model="m",
        extra_body={},
        headers={},
        timeouts=RequestTimeouts.from_seconds(30, 30, 60),
        run_id="t",
        stream=stream,
    )
    return asyncio.run(requester.send(RequestSpec(0, "hi", 40, 2), 0))


def sse(obj: Any, event: bytes | None = None) -> bytes:
    head = b"event: " + event + b"\n" if event else b""
    return head + b"data: " + orjson.dumps(obj) + b"\n\n"


def test_the_record_keeps_the_chat_stream_count() -> None:
    token = {"id": "x", "choices": [{"index": 0, "delta": {"content": "a"}}]}
    usage = chat_usage({"cached_tokens": 16})
    rec = send("openai-chat", [sse(token), sse(token) + sse(usage), b"data: [DONE]\n\n"])
    assert rec.ok, rec.error_detail
    assert (rec.prompt_tokens_server, rec.cached_tokens_server) == (40, 16)
    rec = send("openai-chat", [sse(token), sse(chat_usage(None)), b"data: [DONE]\n\n"])
    assert rec.ok and rec.cached_tokens_server is None


def test_the_record_keeps_the_messages_count_from_message_delta() -> None:
    start = {"type": "message_start", "message": {"id": "m1", "usage": {"input_tokens": 40}}}
    text = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "a"}}
    usage = {"input_tokens": 24, "output_tokens": 1, "cache_read_input_tokens": 16}
    end = {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": usage}
    chunks = [
        sse(start, b"message_start"),
        sse(text, b"content_block_delta"),
        sse(end, b"message_delta") + sse({"type": "message_stop"}, b"message_stop"),
    ]
    rec = send("anthropic-messages", chunks)
    assert rec.ok, rec.error_detail
    assert (rec.prompt_tokens_server, rec.cached_tokens_server) == (40, 16)


def test_the_record_keeps_a_whole_body_count() -> None:
    body = chat_usage({"cached_tokens": 8})
    body["choices"] = [{"index": 0, "message": {"content": "ab"}, "finish_reason": "stop"}]
    rec = send("openai-chat", [orjson.dumps(body)], stream=False)
    assert rec.ok, rec.error_detail
    assert (rec.prompt_tokens_server, rec.cached_tokens_server) == (40, 8)
