"""Each adapter turns one event (as vLLM and TGI send them) into the right delta."""

from __future__ import annotations

import orjson
import pytest

from loadgen.client.adapters import ADAPTERS

chat = ADAPTERS["openai-chat"]
completions = ADAPTERS["openai-completions"]
tgi = ADAPTERS["tgi"]


def ev(obj: object) -> bytes:
    return orjson.dumps(obj)


def test_chat_role_only_opener_is_not_a_token() -> None:
    d = chat.parse(ev({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}))
    assert d.tokens == 0


def test_chat_empty_text_event_is_still_one_token() -> None:
    d = chat.parse(ev({"choices": [{"index": 0, "delta": {"content": ""}}]}))
    assert d.tokens == 1 and d.text == ""


def test_chat_last_token_carries_finish_reason() -> None:
    d = chat.parse(ev({"choices": [{"delta": {"content": " end"}, "finish_reason": "length"}]}))
    assert (d.tokens, d.text, d.finish_reason) == (1, " end", "length")


def test_chat_finish_event_without_content_is_not_a_token() -> None:
    d = chat.parse(ev({"choices": [{"delta": {}, "finish_reason": "stop"}]}))
    assert d.tokens == 0 and d.finish_reason == "stop"


def test_usage_event() -> None:
    usage = {"prompt_tokens": 7, "completion_tokens": 9, "total_tokens": 16}
    for adapter in (chat, completions):
        d = adapter.parse(ev({"id": "x", "choices": [], "usage": usage}))
        assert (d.tokens, d.prompt_tokens, d.completion_tokens) == (0, 7, 9)


def test_continuous_usage_rides_on_token_events() -> None:
    usage = {"prompt_tokens": 7, "completion_tokens": 3}
    d = completions.parse(ev({"choices": [{"text": "a"}], "usage": usage}))
    assert d.tokens == 1 and d.completion_tokens == 3


def test_in_stream_error() -> None:
    d = completions.parse(ev({"error": {"message": "boom", "type": "x", "code": 500}}))
    assert d.error == "boom"


@pytest.mark.parametrize("bad", [b"{not json", b"[1, 2]", b'"text"'])
def test_malformed_events_raise(bad: bytes) -> None:
    with pytest.raises(ValueError):
        chat.parse(bad)


def test_tgi_token_and_final_events() -> None:
    token = {"index": 1, "token": {"id": 5, "text": " hi", "logprob": -0.1, "special": False}}
    d = tgi.parse(ev({**token, "generated_text": None, "details": None}))
    assert (d.tokens, d.text, d.final) == (1, " hi", False)
    last = {
        **token,
        "generated_text": "hi hi",
        "details": {"finish_reason": "length", "generated_tokens": 2, "seed": None},
    }
    d = tgi.parse(ev(last))
    assert d.final and d.tokens == 1 and d.completion_tokens == 2 and d.finish_reason == "length"


def test_non_streaming_bodies() -> None:
    body = {
        "choices": [
            {"message": {"role": "assistant", "content": "a b c"}, "finish_reason": "length"}
        ],
        "usage": {"prompt_tokens": 4, "completion_tokens": 3},
    }
    d = chat.parse_body(ev(body))
    assert (d.tokens, d.text, d.completion_tokens, d.finish_reason) == (0, "a b c", 3, "length")
    d = tgi.parse_body(ev([{"generated_text": "x", "details": {"generated_tokens": 1}}]))
    assert d.completion_tokens == 1 and d.text == "x"


def test_bodies_ask_for_usage_in_the_stream() -> None:
    b = completions.body("m", "p q", 8, {"ignore_eos": True})
    assert b == {
        "model": "m",
        "prompt": "p q",
        "max_tokens": 8,
        "stream": True,
        "stream_options": {"include_usage": True},
        "ignore_eos": True,
    }
    assert "stream_options" not in chat.body("m", "p", 8, {}, stream=False)
    t = tgi.body("m", "p", 8, {"parameters": {"temperature": 0.5}})
    assert t["parameters"] == {"max_new_tokens": 8, "details": True, "temperature": 0.5}
