"""The mock's tool calls, JSON answers and images on /v1/responses and /v1/messages.

Each stream is read as loadgen reads it (the SSE splitter and the API's adapter): a
call's name and arguments assemble into JSON valid for the tool's schema, one token
one event, in vLLM 0.32's shapes (the items' keys as in the event files vLLM's own
builders wrote, tests/unit/client/data/). Images count by their pixels.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import orjson
import pytest
from mockhttp import MockProc, fetch_sync

from loadgen.client.adapters import ADAPTERS
from loadgen.client.adapters.media_parts import messages_parts, responses_parts
from loadgen.client.sse import SseSplitter
from loadgen.client.validity import ToolCalls
from loadgen.workload.media import synthetic_image

DATA = Path(__file__).parents[1] / "unit" / "client" / "data"
PARAMS = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city", "days"],
}
SCHEMA = {"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]}


def _vllm_event(name: str, kind: str) -> dict[str, Any]:
    """The first event of ``kind`` in one of the files vLLM's builders wrote."""
    for line in (DATA / name).read_text().splitlines():
        if line.startswith("data: ") and f'"{kind}"' in line:
            return orjson.loads(line[6:])  # type: ignore[no-any-return]
    raise AssertionError(kind)


def _read(api: str, body: bytes) -> tuple[list[Any], ToolCalls, list[dict[str, Any]]]:
    payloads = SseSplitter().feed(body)
    deltas = [ADAPTERS[api].parse(p) for p in payloads]
    calls = ToolCalls()
    for d in deltas:
        for part in d.tool_parts:
            calls.add(*part)
    return deltas, calls, [orjson.loads(p) for p in payloads]


def _responses(max_tokens: int = 9, **extra: Any) -> dict[str, Any]:
    return {"model": "m", "input": "one two three", "max_output_tokens": max_tokens,
            "stream": True, "ignore_eos": True, **extra}  # fmt: skip


def _messages(**extra: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": "one two"}],
            "max_tokens": 9, "stream": True, **extra}  # fmt: skip


TOOL_R = {"type": "function", "name": "get_weather", "description": "d", "parameters": PARAMS}
TOOL_M = {"name": "get_weather", "description": "d", "input_schema": PARAMS}


@pytest.mark.parametrize("reasoning", [0, 2])
def test_responses_required_streams_one_valid_call_like_vllm(
    start_mock: Callable[..., MockProc], reasoning: int
) -> None:
    mock = start_mock("--ttft-ms", "0", "--itl-ms", "0", "--reasoning-tokens", str(reasoning))
    body = _responses(tools=[TOOL_R], tool_choice="required")
    reply = fetch_sync(mock.port, "POST", "/v1/responses", body)
    assert reply.status == 200 and reply.complete
    deltas, calls, events = _read("openai-responses", reply.body)
    token_events = [d for d in deltas if d.tokens]
    assert len(token_events) == 9 and sum(d.reasoning for d in deltas) == reasoning
    assert all(d.tool_parts for d in token_events if not d.reasoning)
    index = 1 if reasoning else 0  # the call's output_index: after the reasoning item
    assert calls.names == {index: "get_weather"}
    jsonschema.validate(orjson.loads("".join(calls.args[index])), PARAMS)
    added = [e for e in events if e["type"] == "response.output_item.added"]
    vllm = _vllm_event("vllm_responses_stream.txt", "function_call")
    assert list(added[-1]["item"]) == list(vllm["item"]) and list(added[-1]) == list(vllm)
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert deltas[-1].final and deltas[-1].finish_reason == "tool_calls"
    assert deltas[-1].completion_tokens == 9
    output = events[-1]["response"]["output"]
    assert [o["type"] for o in output] == ["reasoning"] * bool(reasoning) + ["function_call"]
    assert output[-1]["arguments"] == "".join(calls.args[index])


def test_responses_json_schema_answer_is_valid_text(fast_mock: MockProc) -> None:
    fmt = {"type": "json_schema", "name": "answer", "schema": SCHEMA, "strict": True}
    reply = fetch_sync(fast_mock.port, "POST", "/v1/responses", _responses(text={"format": fmt}))
    deltas, calls, _ = _read("openai-responses", reply.body)
    assert not calls.args and sum(d.tokens for d in deltas) == 9
    jsonschema.validate(orjson.loads("".join(d.text for d in deltas)), SCHEMA)
    assert deltas[-1].finish_reason == "stop"  # the whole JSON text was sent


def test_messages_any_streams_a_tool_use_block_like_vllm(
    start_mock: Callable[..., MockProc],
) -> None:
    mock = start_mock("--ttft-ms", "0", "--itl-ms", "0", "--reasoning-tokens", "2")
    reply = fetch_sync(mock.port, "POST", "/v1/messages",
                       _messages(tools=[TOOL_M], tool_choice={"type": "any"}))  # fmt: skip
    assert reply.status == 200
    deltas, calls, events = _read("anthropic-messages", reply.body)
    assert calls.names == {1: "get_weather"}  # after the thinking block
    jsonschema.validate(orjson.loads("".join(calls.args[1])), PARAMS)
    start = next(e for e in events if e.get("content_block", {}).get("type") == "tool_use")
    vllm = _vllm_event("vllm_messages_stream.txt", "tool_use")
    assert list(start) == list(vllm) and list(start["content_block"]) == list(vllm["content_block"])
    n = sum(d.tokens for d in deltas)
    assert n == next(d.completion_tokens for d in deltas if d.completion_tokens is not None)
    assert (
        sum(d.reasoning for d in deltas) == 2 and sum(bool(d.tool_parts) for d in deltas) == n - 2
    )
    assert [d.finish_reason for d in deltas if d.finish_reason] == ["tool_calls"]
    body = _messages(stream=False, tools=[TOOL_M], tool_choice={"type": "any"})
    whole = fetch_sync(mock.port, "POST", "/v1/messages", body)
    d = ADAPTERS["anthropic-messages"].parse_body(whole.body)
    assert d.tool_parts[0][1] == "get_weather" and d.finish_reason == "tool_calls"
    jsonschema.validate(orjson.loads(d.tool_parts[0][2]), PARAMS)


def test_invalid_json_fault_breaks_the_calls(start_mock: Callable[..., MockProc]) -> None:
    mock = start_mock("--ttft-ms", "0", "--itl-ms", "0", "--fault", "invalid_json=1")
    any_ = {"type": "any"}
    for path, api, body in (
        ("/v1/responses", "openai-responses", _responses(tools=[TOOL_R], tool_choice="required")),
        ("/v1/messages", "anthropic-messages", _messages(tools=[TOOL_M], tool_choice=any_)),
    ):
        _, calls, _ = _read(api, fetch_sync(mock.port, "POST", path, body).body)
        (args,) = calls.args.values()
        with pytest.raises((orjson.JSONDecodeError, jsonschema.ValidationError)):
            jsonschema.validate(orjson.loads("".join(args)), PARAMS)


def test_images_count_as_prompt_tokens(start_mock: Callable[..., MockProc]) -> None:
    mock = start_mock("--ttft-ms", "0", "--itl-ms", "0", "--image-tokens-per-megapixel", "1000")
    img = synthetic_image(np.random.default_rng(0), 200, 100, "jpeg")
    per_image = math.ceil(200 * 100 / 1e6 * 1000)
    content = responses_parts("two words", (img, img))
    body = _responses(input=[{"role": "user", "content": content}], stream=False)
    d = ADAPTERS["openai-responses"].parse_body(
        fetch_sync(mock.port, "POST", "/v1/responses", body).body
    )
    assert d.prompt_tokens == 2 + 2 * per_image
    body = _messages(messages=[{"role": "user", "content": messages_parts("two words", (img,))}])
    deltas, _, _ = _read(
        "anthropic-messages", fetch_sync(mock.port, "POST", "/v1/messages", body).body
    )
    assert deltas[0].prompt_tokens == 2 + per_image


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/responses", _responses(tool_choice="required")),
        (
            "/v1/responses",
            _responses(tools=[TOOL_R], tool_choice={"type": "function", "name": "x"}),
        ),
        ("/v1/messages", _messages(tools=[TOOL_M], tool_choice={"type": "tool", "name": "x"})),
        ("/v1/messages", _messages(tools=[TOOL_M], tool_choice={"type": "sometimes"})),
    ],
)
def test_bad_tool_choices_are_400(fast_mock: MockProc, path: str, body: dict[str, Any]) -> None:
    reply = fetch_sync(fast_mock.port, "POST", path, body)
    assert reply.status == 400
    if path == "/v1/messages":
        assert orjson.loads(reply.body)["type"] == "error"  # Anthropic's shape


@pytest.mark.parametrize("api", ["openai-responses", "anthropic-messages"])
def test_a_natural_length_call_has_as_many_events_as_tokens(fast_mock: MockProc, api: str) -> None:
    """Probe: under CI's load one Messages call of 60 came back with usage 1 and 2 token
    events: a natural answer one token long was streamed as a call's opening plus its
    arguments. A call now takes at least two tokens (as vLLM's opening and arguments do),
    so events equal usage for every length the mock draws (about 1 in 128 is 1 token)."""
    path = "/v1/responses" if api == "openai-responses" else "/v1/messages"
    tools = [TOOL_R] if api == "openai-responses" else [TOOL_M]
    choice: Any = "required" if api == "openai-responses" else {"type": "any"}
    shortest = 99
    for _ in range(1000):
        body = {
            "model": "m",
            "input" if api == "openai-responses" else "messages": (
                "hi" if api == "openai-responses" else [{"role": "user", "content": "hi"}]
            ),
            "stream": True,
            "tools": tools,
            "tool_choice": choice,
        }
        body["max_output_tokens" if api == "openai-responses" else "max_tokens"] = 4
        reply = fetch_sync(fast_mock.port, "POST", path, body)
        assert reply.status == 200
        deltas, calls, _ = _read(api, reply.body)
        n = sum(d.tokens for d in deltas)
        assert n == next(d.completion_tokens for d in deltas if d.completion_tokens is not None)
        assert len(calls.names) == 1
        shortest = min(shortest, n)
    assert shortest == 2  # the shortest answers were drawn, and streamed in two events
