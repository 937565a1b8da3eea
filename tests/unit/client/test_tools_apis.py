"""Tools and images on the Responses and Messages adapters: the bodies they send, and their
tool-call events read as the same ``tool_parts`` chat's are (index, name on the call's first
fragment, argument text), so the requester's assembly and validity check serve all three."""

from __future__ import annotations

import numpy as np
import orjson
import pytest

from loadgen.client.adapters import ADAPTERS, WITH_OUTPUT, make_adapter
from loadgen.client.adapters.base import Delta
from loadgen.client.adapters.event_values import MalformedEvent
from loadgen.client.validity import OutputCheck, ToolCalls
from loadgen.workload.media import synthetic_image, synthetic_wav
from loadgen.workload.plan import Message, RequestSpec
from loadgen.workload.tools import OutputAsk, ResponseFormat, ToolDef

PARAMS = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
WEATHER = ToolDef("get_weather", "The weather.", PARAMS)
SCHEMA = {"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]}
IMG = synthetic_image(np.random.default_rng(0), 8, 4, "png")
SPEC = RequestSpec(0, "hello", 1, 8)
CONVERSATION: list[Message] = [
    {"role": "system", "content": "be brief"},
    {"role": "user", "content": "a"},
    {"role": "assistant", "content": "b"},
    {"role": "user", "content": "look"},
]


def ev(**event: object) -> bytes:
    return orjson.dumps(event)


def test_both_apis_send_tools_and_are_built_with_them() -> None:
    assert {"openai-chat", "openai-responses", "anthropic-messages"} <= set(WITH_OUTPUT)
    ask = OutputAsk(tools=(WEATHER,), tool_choice="required")
    body = make_adapter("openai-responses", ask).body(SPEC, "m", {"top_p": 1}, True)
    assert body["tools"] == [
        {"type": "function", "name": "get_weather", "description": "The weather.",
         "parameters": PARAMS}
    ]  # fmt: skip
    assert (body["tool_choice"], body["top_p"], body["input"]) == ("required", 1, "hello")
    body = make_adapter("anthropic-messages", ask).body(SPEC, "m", {}, True)
    assert body["tools"] == [
        {"name": "get_weather", "description": "The weather.", "input_schema": PARAMS}
    ]
    assert body["tool_choice"] == {"type": "any"}
    named = OutputAsk(tools=(WEATHER,), tool_choice="get_weather")
    assert make_adapter("anthropic-messages", named).body(SPEC, "m", {}, True)["tool_choice"] == {
        "type": "tool",
        "name": "get_weather",
    }
    assert make_adapter("openai-responses", named).body(SPEC, "m", {}, True)["tool_choice"] == {
        "type": "function",
        "name": "get_weather",
    }
    # the shared adapters send nothing of the kind
    assert "tools" not in ADAPTERS["openai-responses"].body(SPEC, "m", {}, True)
    assert "tools" not in ADAPTERS["anthropic-messages"].body(SPEC, "m", {}, True)


def test_responses_sends_a_json_schema_as_text_format() -> None:
    fmt = ResponseFormat("json_schema", "answer", SCHEMA, True)
    body = make_adapter("openai-responses", OutputAsk(response_format=fmt)).body(SPEC, "m", {})
    assert body["text"] == {
        "format": {"type": "json_schema", "name": "answer", "schema": SCHEMA, "strict": True}
    }
    assert "response_format" not in body and "tools" not in body


def test_messages_sends_a_json_schema_as_output_config_format() -> None:
    """Anthropic's structured outputs, as vLLM 0.32 reads them: ``output_config.format``
    ``{type: json_schema, schema}`` (no name, no strict), beside the prompt and max_tokens."""
    fmt = ResponseFormat("json_schema", "answer", SCHEMA, True)
    body = make_adapter("anthropic-messages", OutputAsk(response_format=fmt)).body(
        SPEC, "m", {"temperature": 0}, True
    )
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": SCHEMA}}
    assert body["messages"] == [{"role": "user", "content": "hello"}]
    assert (body["max_tokens"], body["stream"], body["temperature"]) == (8, True, 0)
    assert not {"response_format", "text", "tools", "tool_choice"} & set(body)
    # json_object has no Messages form (the scenario refuses it first)
    with pytest.raises(ValueError, match="json_schema response format only"):
        make_adapter("anthropic-messages", OutputAsk(response_format=ResponseFormat("json_object")))


def test_messages_json_answer_text_is_checked_against_the_schema() -> None:
    """The answer's text_delta pieces join to the text the validity check parses."""
    adapter = ADAPTERS["anthropic-messages"]
    check = OutputCheck(OutputAsk(response_format=ResponseFormat("json_schema", "a", SCHEMA)))
    pieces = ['{"n"', ":4", "2}"]
    text = "".join(
        adapter.read_event(
            {"type": "content_block_delta", "index": 0,
             "delta": {"type": "text_delta", "text": p}}
        ).text
        for p in pieces
    )  # fmt: skip
    assert check.needs_text and check.check(None, text) == (True, None)
    valid, why = check.check(None, '{"n": "x"}')
    assert valid is False and why is not None and "is not of type 'number'" in why


def test_images_go_as_input_image_parts_and_image_blocks() -> None:
    url = "data:image/png;base64," + IMG.b64
    spec = RequestSpec(0, "look", 1, 8, media=(IMG,))
    body = ADAPTERS["openai-responses"].body(spec, "m", {}, True)
    assert body["input"] == [
        {"role": "user", "content": [
            {"type": "input_image", "image_url": url}, {"type": "input_text", "text": "look"},
        ]},
    ]  # fmt: skip
    spec = RequestSpec(0, CONVERSATION, 3, 8, media=(IMG,))
    items = ADAPTERS["openai-responses"].body(spec, "m", {}, True)["input"]
    assert [i["content"] for i in items[:3]] == ["be brief", "a", "b"]  # only the last user's
    assert items[3]["content"][0]["type"] == "input_image"
    body = ADAPTERS["anthropic-messages"].body(spec, "m", {}, True)
    source = {"type": "base64", "media_type": "image/png", "data": IMG.b64}
    assert body["system"] == "be brief"
    assert body["messages"] == [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "b"},
        {"role": "user", "content": [
            {"type": "image", "source": source}, {"type": "text", "text": "look"},
        ]},
    ]  # fmt: skip
    assert CONVERSATION[3]["content"] == "look"  # the planned messages are not changed
    wav = synthetic_wav(np.random.default_rng(0), 0.1, 8000)
    with pytest.raises(ValueError, match="no audio"):
        ADAPTERS["openai-responses"].body(RequestSpec(0, "x", 1, 8, media=(wav,)), "m", {})


def _assembled(deltas: list[Delta]) -> ToolCalls:
    calls = ToolCalls()
    for d in deltas:
        assert d.tokens == (1 if d.tool_parts else 0)
        for part in d.tool_parts:
            calls.add(*part)
    return calls


def test_responses_call_events_are_tool_parts_and_validate() -> None:
    adapter = ADAPTERS["openai-responses"]
    item = {"arguments": "", "call_id": "call_1", "name": "get_weather", "type": "function_call"}
    stream = [
        ev(type="response.output_item.added", output_index=0,
           item={"type": "message", "id": "m", "content": []}),
        ev(type="response.output_item.added", output_index=1, item=item),
        ev(type="response.function_call_arguments.delta", output_index=1, delta='{"city"'),
        ev(type="response.function_call_arguments.delta", output_index=1, delta=':"Oslo"}'),
        ev(type="response.function_call_arguments.done", output_index=1, arguments="{}"),
    ]  # fmt: skip
    deltas = adapter.parse_many(stream)
    assert [d.tool_parts for d in deltas] == [
        (),
        ((1, "get_weather", ""),),
        ((1, None, '{"city"'),),
        ((1, None, ':"Oslo"}'),),
        (),
    ]
    calls = _assembled(deltas)
    check = OutputCheck(OutputAsk(tools=(WEATHER,), tool_choice="required"))
    assert check.check(calls, "") == (True, None)
    with pytest.raises(MalformedEvent, match="output_index"):
        adapter.parse(ev(type="response.function_call_arguments.delta", delta="x"))
    with pytest.raises(MalformedEvent, match="output_index"):
        adapter.parse(ev(type="response.output_item.added", output_index=-1, item=item))


def test_messages_tool_use_events_are_tool_parts_and_validate() -> None:
    adapter = ADAPTERS["anthropic-messages"]
    block = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}
    stream = [
        ev(type="content_block_start", index=0, content_block={"type": "text", "text": ""}),
        ev(type="content_block_start", index=1, content_block=block),
        ev(type="content_block_delta", index=1,
           delta={"type": "input_json_delta", "partial_json": '{"city":'}),
        ev(type="content_block_delta", index=1,
           delta={"type": "input_json_delta", "partial_json": "5}"}),
        ev(type="message_delta", delta={"stop_reason": "tool_use"}),
    ]  # fmt: skip
    deltas = adapter.parse_many(stream)
    assert [d.tool_parts for d in deltas[:4]] == [
        (),
        ((1, "get_weather", ""),),
        ((1, None, '{"city":'),),
        ((1, None, "5}"),),
    ]
    assert deltas[4].finish_reason == "tool_calls"  # as chat's, for the step's counts
    valid, why = OutputCheck(OutputAsk(tools=(WEATHER,))).check(_assembled(deltas), "")
    assert valid is False and why is not None and "is not of type 'string'" in why
    with pytest.raises(MalformedEvent, match="index"):
        adapter.parse(ev(type="content_block_start", content_block=block))


def test_whole_answers_carry_their_calls() -> None:
    call = {"type": "function_call", "name": "get_weather", "arguments": '{"city":"x"}'}
    message = {"type": "message", "content": [{"type": "output_text", "text": ""}]}
    body = {"id": "r", "status": "completed", "output": [message, call]}
    d = ADAPTERS["openai-responses"].parse_body(orjson.dumps(body))
    assert d.tool_parts == ((1, "get_weather", '{"city":"x"}'),)
    assert d.finish_reason == "tool_calls"
    tool_use = {"type": "tool_use", "id": "t", "name": "get_weather", "input": {"city": "x"}}
    body = {"id": "m", "stop_reason": "tool_use", "content": [tool_use]}
    d = ADAPTERS["anthropic-messages"].parse_body(orjson.dumps(body))
    assert d.tool_parts == ((0, "get_weather", '{"city":"x"}'),)
    assert d.finish_reason == "tool_calls"
    broken = {**tool_use, "input": '{"city":'}  # a server that could not parse what it made
    d = ADAPTERS["anthropic-messages"].parse_body(orjson.dumps({**body, "content": [broken]}))
    assert d.tool_parts == ((0, "get_weather", '{"city":'),)
