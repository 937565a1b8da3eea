"""Each adapter turns one event (as vLLM and TGI send them) into the right delta."""

from __future__ import annotations

import orjson
import pytest

from loadgen.client.adapters import ADAPTERS
from loadgen.workload.plan import Prompt, RequestSpec

chat = ADAPTERS["openai-chat"]
completions = ADAPTERS["openai-completions"]
tgi = ADAPTERS["tgi"]


def _spec(prompt: Prompt, max_tokens: int = 8) -> RequestSpec:
    return RequestSpec(0, prompt, 1, max_tokens)


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
    b = completions.body(_spec("p q"), "m", {"ignore_eos": True})
    assert b == {
        "model": "m",
        "prompt": "p q",
        "max_tokens": 8,
        "stream": True,
        "stream_options": {"include_usage": True},
        "ignore_eos": True,
    }
    assert "stream_options" not in chat.body(_spec("p"), "m", {}, stream=False)
    t = tgi.body(_spec("p"), "m", {"parameters": {"temperature": 0.5}})
    assert t["parameters"] == {"max_new_tokens": 8, "details": True, "temperature": 0.5}


def test_chat_reasoning_events_are_reasoning_tokens() -> None:
    for key in ("reasoning_content", "reasoning"):
        d = chat.parse(ev({"choices": [{"index": 0, "delta": {key: "Let me think"}}]}))
        assert (d.tokens, d.reasoning, d.text) == (1, True, "")
        # a partial UTF-8 byte of reasoning: empty, still one reasoning token
        d = chat.parse(ev({"choices": [{"delta": {key: "", "content": None}}]}))
        assert (d.tokens, d.reasoning) == (1, True)


def test_chat_content_next_to_reasoning_is_answer() -> None:
    d = chat.parse(ev({"choices": [{"delta": {"reasoning_content": "x", "content": "Hi"}}]}))
    assert (d.tokens, d.reasoning, d.text) == (1, False, "Hi")
    d = chat.parse(ev({"choices": [{"delta": {"content": ""}}]}))
    assert (d.tokens, d.reasoning) == (1, False)
    d = chat.parse(ev({"choices": [{"delta": {"tool_calls": [{"index": 0}]}}]}))
    assert (d.tokens, d.reasoning) == (1, False)


def test_chat_opener_with_reasoning_text_is_a_token() -> None:
    opener = {"role": "assistant", "content": "", "reasoning_content": ""}
    assert chat.parse(ev({"choices": [{"delta": opener}]})).tokens == 0
    opener = {"role": "assistant", "reasoning_content": "Hmm"}
    d = chat.parse(ev({"choices": [{"delta": opener}]}))
    assert (d.tokens, d.reasoning) == (1, True)


def test_usage_reasoning_tokens() -> None:
    usage = {
        "prompt_tokens": 7,
        "completion_tokens": 30,
        "completion_tokens_details": {"reasoning_tokens": 12},
    }
    for adapter in (chat, completions):
        d = adapter.parse(ev({"choices": [], "usage": usage}))
        assert (d.completion_tokens, d.reasoning_tokens) == (30, 12)
    d = chat.parse(ev({"choices": [], "usage": {**usage, "completion_tokens_details": None}}))
    assert d.completion_tokens == 30 and d.reasoning_tokens is None
    body = {"choices": [{"message": {"content": "a"}}], "usage": usage}
    assert chat.parse_body(ev(body)).reasoning_tokens == 12


MESSAGES = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Hi"},
    {"role": "assistant", "content": "Hello."},
    {"role": "user", "content": "Bye"},
]


def test_chat_sends_a_message_list_as_is() -> None:
    assert chat.body(_spec(MESSAGES), "m", {})["messages"] == MESSAGES
    assert chat.body(_spec("p"), "m", {})["messages"] == [{"role": "user", "content": "p"}]
    with pytest.raises(TypeError):
        chat.body(_spec([1, 2, 3]), "m", {})


def test_text_apis_render_messages_as_role_lines() -> None:
    text = "system: Be brief.\nuser: Hi\nassistant: Hello.\nuser: Bye"
    assert completions.body(_spec(MESSAGES), "m", {})["prompt"] == text
    assert tgi.body(_spec(MESSAGES), "m", {})["inputs"] == text
    assert completions.body(_spec([5, 6, 7]), "m", {})["prompt"] == [5, 6, 7]
    with pytest.raises(TypeError):
        tgi.body(_spec([5, 6, 7]), "m", {})


def test_tgi_generation_keys_go_inside_parameters() -> None:
    extra = {
        "max_new_tokens": 64,
        "do_sample": True,
        "temperature": 0.7,
        "seed": 0,
        "stop": ["\n"],
        "ignore_eos": True,  # not a TGI parameter: left top-level (TGI ignores it)
        "parameters": {"top_k": 5, "temperature": 0.2},
    }
    b = tgi.body(_spec("p"), "m", extra)
    assert b["parameters"] == {
        "max_new_tokens": 64,
        "details": True,
        "do_sample": True,
        "temperature": 0.2,  # an explicit parameters mapping wins
        "seed": 0,
        "stop": ["\n"],
        "top_k": 5,
    }
    assert {k for k in b if k != "parameters"} == {"inputs", "ignore_eos"}
    assert tgi.body(_spec("p"), "m", {})["parameters"] == {"max_new_tokens": 8, "details": True}
