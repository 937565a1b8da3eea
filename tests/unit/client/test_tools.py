"""Tools and response formats: each API's wire form, synthetic tools, the chat adapter's
tool-call fragments, the requester's assembly and the validity check."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
import pytest

from loadgen.client import Requester, RequestTimeouts
from loadgen.client.adapters import ADAPTERS, make_adapter
from loadgen.client.adapters.tools import (
    chat_fields,
    messages_fields,
    messages_tool_choice,
    messages_tools,
    responses_fields,
    responses_tool_choice,
    responses_tools,
)
from loadgen.client.validity import OutputCheck, ToolCalls
from loadgen.errors import ScenarioError
from loadgen.records import Record
from loadgen.scenario.workload_spec import WorkloadSpec
from loadgen.workload.plan import RequestSpec
from loadgen.workload.tools import (
    OutputAsk,
    ResponseFormat,
    ToolDef,
    describe_output,
    output_ask,
    synthetic_tools,
)
from tests.unit.client.test_request_reasoning import ScriptedTransport, delta, sse

MS = 1_000_000
PARAMS = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city"],
    "additionalProperties": False,
}
WEATHER = ToolDef("get_weather", "The weather.", PARAMS)
SCHEMA = {"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]}


def test_chat_form() -> None:
    ask = OutputAsk(tools=(WEATHER,), tool_choice="get_weather")
    assert chat_fields(ask) == {
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "The weather.",
                    "parameters": PARAMS,
                },
            }
        ],
        "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
    }
    assert chat_fields(OutputAsk(tools=(WEATHER,), tool_choice="required"))["tool_choice"] == (
        "required"
    )
    fmt = ResponseFormat("json_schema", "answer", SCHEMA, True)
    assert chat_fields(OutputAsk(response_format=fmt)) == {
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "answer", "schema": SCHEMA, "strict": True},
        }
    }
    assert chat_fields(OutputAsk(response_format=ResponseFormat("json_object"))) == {
        "response_format": {"type": "json_object"}
    }


def test_responses_form() -> None:
    assert responses_tools((WEATHER,)) == [
        {
            "type": "function",
            "name": "get_weather",
            "description": "The weather.",
            "parameters": PARAMS,
        }
    ]
    assert responses_tool_choice("get_weather") == {"type": "function", "name": "get_weather"}
    assert responses_tool_choice("auto") == "auto"
    fmt = ResponseFormat("json_schema", "answer", SCHEMA, False)
    assert responses_fields(OutputAsk(response_format=fmt))["text"] == {
        "format": {"type": "json_schema", "name": "answer", "schema": SCHEMA, "strict": False}
    }


def test_messages_form() -> None:
    assert messages_tools((WEATHER,)) == [
        {"name": "get_weather", "description": "The weather.", "input_schema": PARAMS}
    ]
    assert messages_tool_choice("required") == {"type": "any"}
    assert messages_tool_choice("auto") == {"type": "auto"}
    assert messages_tool_choice("get_weather") == {"type": "tool", "name": "get_weather"}
    assert set(messages_fields(OutputAsk(tools=(WEATHER,), tool_choice="none"))) == {
        "tools",
        "tool_choice",
    }


def test_strict_is_sent_only_where_a_tool_gives_it(tmp_path: Path) -> None:
    """A file entry's ``strict`` travels to every API's form; ``tools.strict`` overrides it
    (and reaches synthetic tools); without either, no ``strict`` key is sent."""
    strict = ToolDef("get_weather", "The weather.", PARAMS, True)
    assert chat_fields(OutputAsk(tools=(strict,)))["tools"][0]["function"]["strict"] is True
    assert responses_tools((strict,))[0]["strict"] is True
    assert messages_tools((strict,))[0]["strict"] is True
    assert "strict" not in chat_fields(OutputAsk(tools=(WEATHER,)))["tools"][0]["function"]
    assert "strict" not in responses_tools((WEATHER,))[0]
    path = tmp_path / "tools.json"
    entries = [{"name": "a", "parameters": PARAMS, "strict": True}, {"name": "b"}]
    path.write_text(orjson.dumps(entries).decode())

    def tools_of(**spec: Any) -> tuple[ToolDef, ...]:
        ask = output_ask(WorkloadSpec.model_validate({"tools": spec}))
        assert ask is not None
        return ask.tools

    assert [t.strict for t in tools_of(file=str(path))] == [True, None]
    assert [t.strict for t in tools_of(file=str(path), strict=False)] == [False, False]
    assert [t.strict for t in tools_of(count=2, strict=True)] == [True, True]
    spec = WorkloadSpec.model_validate({"tools": {"count": 2, "strict": True}})
    ask = output_ask(spec)
    assert ask is not None
    assert describe_output(ask, spec)["tools"].startswith("2 synthetic (2 strict): tool_0(")
    assert [t.strict for t in tools_of(count=2)] == [None, None]
    path.write_text(orjson.dumps([{"name": "a", "strict": "yes"}]).decode())
    with pytest.raises(ScenarioError, match=r"tool 0 \(a\): strict must be true or false"):
        tools_of(file=str(path))


def test_synthetic_tools_are_seeded_and_typed() -> None:
    a, b, c = synthetic_tools(3, 5, 7), synthetic_tools(3, 5, 7), synthetic_tools(3, 5, 8)
    assert a == b and a != c
    assert [t.name for t in a] == ["tool_0", "tool_1", "tool_2"]
    props = a[0].parameters["properties"]
    kinds = [p.get("type") for p in props.values()]
    assert kinds == ["string", "integer", "number", "boolean", "string"]
    assert "enum" in list(props.values())[4]
    assert a[0].parameters["required"] == list(props)


def test_the_body_carries_the_tools_and_extra_body_wins() -> None:
    adapter = make_adapter("openai-chat", OutputAsk(tools=(WEATHER,), tool_choice="required"))
    body = adapter.body(RequestSpec(0, "hi", 1, 8), "m", {"tool_choice": "auto"}, True)
    assert body["tools"][0]["function"]["name"] == "get_weather"
    assert body["tool_choice"] == "auto"  # extra_body on top, as for every field
    assert "tools" not in ADAPTERS["openai-chat"].body(RequestSpec(0, "hi", 1, 8), "m", {}, True)
    with pytest.raises(ValueError, match="openai-completions"):
        make_adapter("openai-completions", OutputAsk(tools=(WEATHER,)))


def _event(calls: list[dict[str, Any]], **extra: Any) -> bytes:
    return orjson.dumps({"choices": [{"index": 0, "delta": {"tool_calls": calls, **extra}}]})


def test_the_chat_adapter_reads_tool_call_fragments() -> None:
    chat = ADAPTERS["openai-chat"]
    first = {"id": "c1", "type": "function", "index": 0, "function": {"name": "get_weather"}}
    d = chat.parse(_event([first]))
    assert d.tokens == 1 and d.tool_parts == ((0, "get_weather", ""),)
    d = chat.parse(_event([{"index": 0, "function": {"arguments": '{"ci'}}]))
    assert d.tool_parts == ((0, None, '{"ci'),)
    # OpenAI opens a call beside the role: still a token event
    d = chat.parse(_event([first], role="assistant", content=None))
    assert d.tokens == 1 and d.tool_parts[0][1] == "get_weather"
    for bad in ([{"index": "0"}], [{"index": 0, "function": {"arguments": 5}}], [7]):
        with pytest.raises(ValueError):
            chat.parse(_event(bad))
    body = orjson.dumps(
        {
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": None, "tool_calls": [
                        {"id": "c", "type": "function",
                         "function": {"name": "get_weather", "arguments": '{"city":"x"}'}}
                    ]},
                    "finish_reason": "tool_calls",
                }
            ]
        }
    )  # fmt: skip
    d = chat.parse_body(body)
    assert d.tool_parts == ((0, "get_weather", '{"city":"x"}'),) and d.tokens == 0


def _check(ask: OutputAsk, calls: list[tuple[int, str | None, str]], text: str = "") -> Any:
    assembled = ToolCalls()
    for index, name, args in calls:
        assembled.add(index, name, args)
    return OutputCheck(ask).check(assembled, text)


@pytest.mark.parametrize(
    ("calls", "why"),
    [
        ([(0, "get_weather", '{"city": 5}')], "5 is not of type 'string'"),
        ([(0, "get_weather", '{"days": 2}')], "'city' is a required property"),
        ([(0, "get_weather", '{"city": "x", "extra": 1}')], "Additional properties"),
        ([(0, "rm_rf", '{"city": "x"}')], "'rm_rf' is not a tool that was offered"),
        ([(0, "get_weather", '{"city": "x"')], "arguments are not JSON"),
        ([(0, None, '{"city": "x"}')], "no function name"),
        ([], "no tool call (tool_choice required)"),
    ],
)
def test_the_validator_catches(calls: list[tuple[int, str | None, str]], why: str) -> None:
    ask = OutputAsk(tools=(WEATHER,), tool_choice="required")
    valid, detail = _check(ask, calls)
    assert valid is False and why in detail


def test_valid_calls_and_nothing_to_check() -> None:
    ask = OutputAsk(tools=(WEATHER,))
    assert _check(ask, [(0, "get_weather", '{"city":'), (0, None, ' "x", "days": 3}')]) == (
        True,
        None,
    )
    assert _check(ask, []) == (None, None)  # auto: an answer without a call
    named = OutputAsk(tools=(WEATHER, ToolDef("other", "", PARAMS)), tool_choice="get_weather")
    valid, detail = _check(named, [(0, "other", '{"city": "x"}')])
    assert valid is False and "tool_choice named 'get_weather'" in detail


def test_structured_answers() -> None:
    schema = OutputAsk(response_format=ResponseFormat("json_schema", "a", SCHEMA))
    assert _check(schema, [], '{"n": 1.5}') == (True, None)
    assert _check(schema, [], '{"n": "x"}')[0] is False
    assert "not JSON" in _check(schema, [], "Sure! {")[1]
    obj = OutputAsk(response_format=ResponseFormat("json_object"))
    assert _check(obj, [], '{"any": [1]}') == (True, None)
    assert "not an object" in _check(obj, [], "[1, 2]")[1]


def _send(script: list[tuple[int, bytes]], ask: OutputAsk | None) -> Record:
    transport = ScriptedTransport(script)
    requester = Requester(
        transport,
        make_adapter("openai-chat", ask),
        base_url="http://x",
        model="m",
        extra_body={},
        headers={},
        timeouts=RequestTimeouts.from_seconds(30, 30, 60),
        run_id="t",
        output_check=OutputCheck(ask) if ask is not None else None,
    )
    return asyncio.run(requester.send(RequestSpec(0, "hi", 1, 16), 0))


def _tool_delta(call: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": finish}]}


TOOL_STREAM = [
    (1 * MS, sse(delta(role="assistant", content=""))),
    (10 * MS, sse(_tool_delta({"id": "c", "type": "function", "index": 0,
                               "function": {"name": "get_weather"}}))),
    (20 * MS, sse(_tool_delta({"index": 0, "function": {"arguments": '{"city": '}}))),
    (30 * MS, sse(_tool_delta({"index": 0, "function": {"arguments": '"Oslo"}'}}, "tool_calls"),
                  b"[DONE]")),
]  # fmt: skip


def test_a_streamed_call_is_timed_counted_and_validated() -> None:
    rec = _send(TOOL_STREAM, OutputAsk(tools=(WEATHER,), tool_choice="required"))
    assert rec.ok and rec.finish_reason == "tool_calls"
    assert rec.first_tool_ns is not None and rec.first_tool_ns - rec.token_ns[0] == 0
    assert rec.token_ns[-1] - rec.first_tool_ns == 20 * MS
    assert (rec.output_events, rec.tool_events, rec.tool_calls) == (3, 3, 1)
    assert (rec.valid_output, rec.invalid_detail) == (True, None)
    # without a check configured the call is still timed and counted, never validated
    rec = _send(TOOL_STREAM, None)
    assert rec.tool_calls == 1 and rec.valid_output is None


def test_a_wrong_call_is_invalid_with_its_reason() -> None:
    wrong = OutputAsk(tools=(ToolDef("get_weather", "", {**PARAMS, "required": ["days"]}),))
    rec = _send(TOOL_STREAM, wrong)
    assert rec.ok and rec.valid_output is False
    assert rec.invalid_detail == "tool call 0 get_weather: 'days' is a required property"
