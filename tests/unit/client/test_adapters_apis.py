"""The Responses and Messages adapters read streams byte for byte as vLLM 0.32 writes them.

The files under ``data/`` were written by vLLM's own event models and builders
(``data/README.md`` says how): each stream goes through the SSE splitter and
the adapter as a real response would.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from loadgen.client.adapters import ADAPTERS, Adapter
from loadgen.client.adapters.base import Delta
from loadgen.client.adapters.event_values import MalformedEvent
from loadgen.client.sse import ErrorEvent, SseSplitter
from loadgen.workload.plan import Message, RequestSpec

DATA = Path(__file__).parent / "data"
responses = ADAPTERS["openai-responses"]
messages = ADAPTERS["anthropic-messages"]

CONVERSATION: list[Message] = [
    {"role": "system", "content": "be brief"},
    {"role": "user", "content": "hello"},
    {"role": "assistant", "content": "hi"},
    {"role": "user", "content": "again"},
]


def deltas(adapter: Adapter, name: str) -> list[Delta | bytes]:
    """The stream file's events as the requester sees them (an error frame as itself)."""
    payloads = SseSplitter().feed((DATA / name).read_bytes())
    return [p if type(p) is ErrorEvent else adapter.parse(p) for p in payloads]


def test_responses_stream_from_vllm() -> None:
    got = deltas(responses, "vllm_responses_stream.txt")
    assert all(isinstance(d, Delta) for d in got)
    ds = [d for d in got if isinstance(d, Delta)]
    tokens = [(d.tokens, d.text, d.reasoning, d.tool_parts) for d in ds if d.tokens]
    assert tokens == [
        (1, "", True, ()),
        (1, " tok", False, ()),
        (1, "", False, ((2, "get_weather", ""),)),  # output_item.added of the function_call
        (1, "", False, ((2, None, '{"city"'),)),  # its function_call_arguments.delta
    ]
    assert [d.final for d in ds] == [False] * 16 + [True]  # completed is the last, no [DONE]
    last = ds[-1]
    assert (last.prompt_tokens, last.completion_tokens, last.reasoning_tokens) == (2, 3, 1)
    assert (last.response_id, last.finish_reason) == ("resp_abc", "stop")
    assert all(d.response_id is None for d in ds[:-1])  # created is not taken: no token, no end
    assert responses.ends_with_done is False


def test_responses_parse_many_equals_parse() -> None:
    payloads = SseSplitter().feed((DATA / "vllm_responses_stream.txt").read_bytes())
    assert responses.parse_many(payloads) == [responses.parse(p) for p in payloads]


def test_responses_body_from_vllm() -> None:
    d = responses.parse_body((DATA / "vllm_responses_body.json").read_bytes())
    assert (d.text, d.prompt_tokens, d.completion_tokens, d.reasoning_tokens) == (" tok", 2, 3, 1)
    assert (d.response_id, d.finish_reason, d.tokens) == ("resp_abc", "stop", 0)


def completed(**response: object) -> bytes:
    return orjson.dumps({"type": "response.completed", "response": response})


def test_responses_incomplete_is_length_and_a_function_call_is_tool_calls() -> None:
    assert responses.parse(completed(status="incomplete")).finish_reason == "length"
    call = {"type": "function_call", "arguments": "{}"}
    assert responses.parse(completed(status="completed", output=[call])).finish_reason == (
        "tool_calls"
    )


def test_responses_summary_deltas_are_reasoning() -> None:
    d = responses.parse(b'{"type":"response.reasoning_summary_text.delta","delta":"x"}')
    assert (d.tokens, d.reasoning, d.text) == (1, True, "")


@pytest.mark.parametrize(
    "event",
    [
        b'{"type":"error","code":"server_error","message":"engine died","sequence_number":3}',
        b'{"type":"response.failed","response":{"status":"failed",'
        b'"error":{"code":"server_error","message":"engine died"}}}',
    ],
)
def test_responses_failures_are_stream_errors(event: bytes) -> None:
    assert responses.parse(event).error == "engine died"


def test_responses_usage_that_cannot_be_believed_is_ignored() -> None:
    d = responses.parse(completed(status="completed", usage={"input_tokens": "9"}))
    assert d.final and d.prompt_tokens is None and d.usage_ignored is not None
    assert "usage.input_tokens" in d.usage_ignored


@pytest.mark.parametrize(
    "event",
    [
        b'{"type":"response.output_text.delta","delta":7}',
        b'{"type":5}',
        b'{"type":"response.completed","response":[]}',
        b"[]",
    ],
)
def test_responses_malformed_events_raise(event: bytes) -> None:
    with pytest.raises(MalformedEvent):
        responses.parse(event)


def test_responses_body_fields() -> None:
    spec = RequestSpec(0, CONVERSATION, 5, 16)
    body = responses.body(spec, "m", {"ignore_eos": True}, True)
    assert body["input"] == [{"role": m["role"], "content": m["content"]} for m in CONVERSATION]
    assert (body["model"], body["max_output_tokens"], body["stream"]) == ("m", 16, True)
    assert body["store"] is False and "previous_response_id" not in body
    assert body["ignore_eos"] is True and "max_tokens" not in body
    assert responses.body(RequestSpec(0, "plain", 1, 4), "m", {}, False)["input"] == "plain"
    chained = RequestSpec(0, CONVERSATION[-1:], 5, 4, server_state=True, previous_response_id="r1")
    body = responses.body(chained, "m", {}, True)
    assert (body["store"], body["previous_response_id"]) == (True, "r1")
    assert body["input"] == [{"role": "user", "content": "again"}]
    with pytest.raises(TypeError):
        responses.body(RequestSpec(0, [1, 2], 2, 4), "m", {}, True)


def test_messages_stream_from_vllm() -> None:
    got = deltas(messages, "vllm_messages_stream.txt")
    *ds, err = got
    assert type(err) is ErrorEvent  # vLLM's `event: error` frame: the splitter's stream_error
    assert all(isinstance(d, Delta) for d in ds)
    ds = [d for d in ds if isinstance(d, Delta)]
    tokens = [(d.tokens, d.text, d.reasoning, d.tool_parts) for d in ds if d.tokens]
    assert tokens == [
        (1, "", True, ()),
        (1, " tok", False, ()),
        (1, "", False, ((2, "get_weather", ""),)),  # content_block_start of the tool_use
        (1, "", False, ((2, None, '{"city"'),)),  # its input_json_delta
    ]
    start, stop_delta, stop = ds[0], ds[-2], ds[-1]
    assert (start.prompt_tokens, start.completion_tokens, start.response_id) == (
        5,
        None,
        "chatcmpl-abc",
    )
    assert (stop_delta.finish_reason, stop_delta.completion_tokens) == ("length", 3)
    assert stop.final and not any(d.final for d in ds[:-1])
    assert messages.parse(bytes(err)).error == "boom"  # the same frame's data, read as data


def test_messages_body_from_vllm() -> None:
    d = messages.parse_body((DATA / "vllm_messages_body.json").read_bytes())
    assert (d.text, d.prompt_tokens, d.completion_tokens, d.finish_reason) == (
        " tok tok",
        5,
        3,
        "stop",
    )


def test_messages_cached_input_counts_in_the_prompt() -> None:
    usage = {"input_tokens": 3, "cache_read_input_tokens": 40, "output_tokens": 1}
    d = messages.parse(orjson.dumps({"type": "message_start", "message": {"usage": usage}}))
    assert d.prompt_tokens == 43


def test_messages_ping_and_signature_are_no_tokens() -> None:
    assert messages.parse(b'{"type":"ping"}').tokens == 0
    sig = b'{"type":"content_block_delta","delta":{"type":"signature_delta","signature":"x"}}'
    assert messages.parse(sig).tokens == 0


@pytest.mark.parametrize(
    "event",
    [
        b'{"type":"content_block_delta","delta":{"type":"text_delta","text":[]}}',
        b'{"type":"content_block_delta","delta":"x"}',
        b'{"type":"message_delta","delta":{"stop_reason":{}}}',
        b'{"type":null}',
    ],
)
def test_messages_malformed_events_raise(event: bytes) -> None:
    with pytest.raises(MalformedEvent):
        messages.parse(event)


def test_messages_body_fields_and_headers() -> None:
    body = messages.body(RequestSpec(0, CONVERSATION, 5, 16), "m", {}, True)
    assert body["system"] == "be brief"
    assert body["messages"] == [m for m in CONVERSATION if m["role"] != "system"]
    assert (body["max_tokens"], body["stream"], body["model"]) == (16, True, "m")
    assert "system" not in messages.body(RequestSpec(0, "hi", 1, 4), "m", {}, False)
    assert dict(messages.headers) == {"anthropic-version": "2023-06-01"}
    assert messages.auth_headers("k") == {"x-api-key": "k", "Authorization": "Bearer k"}
    assert ADAPTERS["openai-chat"].auth_headers("k") == {"Authorization": "Bearer k"}
