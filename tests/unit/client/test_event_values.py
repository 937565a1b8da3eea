"""Every value of an event is checked once, in ``adapters/event_values.py``: typed or malformed.

Probes of issue #20 (a raw-socket server each; the end-to-end cases are in
tests/integration/test_hostile_wire.py): ``delta.content`` as a list or a
number, ``choices`` as an object and ``finish_reason`` as an object got past
the adapters and raised later (a ``client_error: TypeError`` row, an
ExceptionGroup traceback when the text was joined for the next turn, rows the
reader then skipped). Here: any JSON value anywhere in an event gives a
:class:`Delta` of the declared types or a ``ValueError`` (a malformed event),
never anything else; an SSE ``event: error`` frame and a UTF-8 byte order mark
are read as the standard says.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loadgen.client import ADAPTERS, Requester, RequestTimeouts
from loadgen.client.adapters.base import Delta
from loadgen.client.adapters.event_values import MalformedEvent, error_message
from loadgen.client.sse import BOM, ErrorEvent, SseSplitter
from loadgen.records import Record
from loadgen.workload.plan import RequestSpec
from tests.unit.client.test_request_reasoning import ScriptedTransport

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=8,
)
KEYS = ["content", "reasoning_content", "reasoning", "role", "tool_calls", "text"]


def _typed(d: Delta) -> None:
    assert type(d.text) is str and type(d.tokens) is int
    assert d.finish_reason is None or type(d.finish_reason) is str
    assert d.error is None or type(d.error) is str
    assert d.usage_ignored is None or type(d.usage_ignored) is str
    for n in (d.prompt_tokens, d.completion_tokens, d.reasoning_tokens):
        assert n is None or type(n) is int


@st.composite
def events(draw: st.DrawFn) -> Any:
    """OpenAI and TGI event shapes with any JSON value in any field."""
    delta = {k: draw(JSON) for k in draw(st.lists(st.sampled_from(KEYS), max_size=3))}
    choice: dict[str, Any] = {"delta": delta, "finish_reason": draw(JSON)}
    choice.update(draw(st.dictionaries(st.sampled_from(["text", "message", "index"]), JSON)))
    event: dict[str, Any] = {
        "choices": draw(st.sampled_from([[choice], choice, [], draw(JSON)])),
        "usage": draw(JSON | st.dictionaries(st.sampled_from(["completion_tokens"]), JSON)),
        "token": draw(JSON | st.fixed_dictionaries({"text": JSON})),
        "generated_text": draw(JSON),
        "details": draw(JSON | st.fixed_dictionaries({"finish_reason": JSON})),
    }
    for key in draw(st.lists(st.sampled_from(sorted(event)), max_size=4, unique=True)):
        del event[key]
    if draw(st.booleans()):
        event["error"] = draw(JSON)
    return draw(st.sampled_from([event, draw(JSON)]))


@settings(max_examples=400, deadline=None)
@given(events())
def test_any_value_anywhere_is_a_typed_delta_or_a_malformed_event(event: Any) -> None:
    payload = json.dumps(event).encode()  # orjson cannot write 2**70; a server can
    for adapter in ADAPTERS.values():
        for parse in (adapter.parse, adapter.parse_body):
            try:
                d = parse(payload)
            except ValueError:
                continue
            _typed(d)


@pytest.mark.parametrize(
    ("api", "event"),
    [
        ("openai-chat", {"choices": [{"delta": {"content": ["a"]}}]}),
        ("openai-chat", {"choices": [{"delta": {"content": 5}}]}),
        ("openai-chat", {"choices": {"0": {"delta": {"content": "a"}}}}),
        ("openai-chat", {"choices": [{"delta": {"content": "a"}, "finish_reason": {"a": [1]}}]}),
        ("openai-chat", {"choices": [{"delta": "a"}]}),
        ("openai-chat", {"choices": ["a"]}),
        ("openai-completions", {"choices": [{"text": 5}]}),
        ("openai-completions", {"choices": [{"text": "a", "finish_reason": 1}]}),
        ("tgi", {"token": {"text": 5}}),
        ("tgi", {"token": "a"}),
        ("tgi", {"generated_text": "x", "details": {"finish_reason": ["eos"]}}),
    ],
)
def test_values_of_the_wrong_type_are_a_malformed_event(api: str, event: Any) -> None:
    with pytest.raises(MalformedEvent):
        ADAPTERS[api].parse(orjson.dumps(event))


def test_a_long_finish_reason_is_cut() -> None:
    event = {"choices": [{"text": "a", "finish_reason": "x" * 10_000}]}
    d = ADAPTERS["openai-completions"].parse(orjson.dumps(event))
    assert d.finish_reason == "x" * 64


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"error": {"message": "engine died", "code": 500}}, "engine died"),
        ({"message": "out of memory"}, "out of memory"),
        ("plain words", "plain words"),
        ({"code": 7}, '{"code":7}'),
        ("", "(no message)"),
    ],
)
def test_error_messages_are_read_whatever_their_shape(value: Any, message: str) -> None:
    assert error_message(value) == message


def test_an_error_frame_is_dispatched_as_an_error_event() -> None:
    splitter = SseSplitter()
    out = splitter.feed(b'data: {"a":1}\n\nevent: error\ndata: {"message":"boom"}\n\n')
    out += splitter.feed(b"event: ping\ndata: 2\n\ndata: 3\n\n")
    assert out == [b'{"a":1}', b'{"message":"boom"}', b"2", b"3"]
    assert [type(p) for p in out] == [bytes, ErrorEvent, bytes, bytes]
    assert splitter.errors


@pytest.mark.parametrize("cut", [0, 1, 2, 3, 4, 10])
def test_a_bom_that_opens_the_stream_is_stripped_however_it_is_cut(cut: int) -> None:
    stream = BOM + b"data: a\n\ndata: " + BOM + b"b\n\n"
    splitter = SseSplitter()
    out = splitter.feed(stream[:cut]) + splitter.feed(stream[cut:])
    assert out == [b"a", BOM + b"b"]  # only the stream's first BOM is not data


def send(chunks: list[bytes], api: str = "openai-completions") -> Record:
    transport = ScriptedTransport([(i, c) for i, c in enumerate(chunks)])
    requester = Requester(
        transport,
        ADAPTERS[api],
        base_url="http://x",
        model="m",
        extra_body={},
        headers={},
        timeouts=RequestTimeouts.from_seconds(30, 30, 60),
        run_id="t",
    )
    spec = RequestSpec(index=0, prompt="hi", prompt_tokens=1, max_tokens=8, keep_text=True)
    return asyncio.run(requester.send(spec, 0))


TOK = b'data: {"choices":[{"text":"a","finish_reason":null}]}\n\n'


@pytest.mark.parametrize("together", [False, True])
def test_an_error_frame_mid_stream_fails_the_request_with_the_servers_words(
    together: bool,
) -> None:
    frame = b'event: error\ndata: {"error": {"message": "engine died"}}\n\n'
    chunks = [TOK * 3 + frame + TOK + b"data: [DONE]\n\n"]
    if not together:
        chunks = [TOK, TOK, TOK, frame, TOK, b"data: [DONE]\n\n"]
    rec = send(chunks)
    assert (rec.ok, rec.error_kind, rec.error_detail) == (False, "stream_error", "engine died")
    assert rec.output_events == 3


def test_a_bom_before_the_first_event_keeps_the_first_token() -> None:
    rec = send([BOM + TOK, TOK, b"data: [DONE]\n\n"])
    assert rec.ok, rec.error_detail
    assert rec.output_events == 2 and rec.first_token_ns == rec.token_ns[0]


@pytest.mark.parametrize("content", [b'["a"]', b"5", b'{"a": 1}'])
def test_chat_content_of_the_wrong_type_is_a_malformed_event_row(content: bytes) -> None:
    event = b'data: {"choices":[{"delta":{"content":' + content + b"}}]}\n\n"
    rec = send([event, b"data: [DONE]\n\n"], api="openai-chat")
    assert (rec.ok, rec.error_kind) == (False, "malformed_event")
    assert rec.answer_text == ""  # the text kept for the next turn is text
