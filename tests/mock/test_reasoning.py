"""Reasoning streams: --reasoning-tokens N sends a chat answer's first tokens as reasoning."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mockhttp import MockProc, chat_body, completion_body, fetch, fetch_sync, read_truth

CHAT = "/v1/chat/completions"
COMPLETIONS = "/v1/completions"
FAST = ("--ttft-ms", "0", "--itl-ms", "0")  # every token of a response in one write
PACED = ("--ttft-ms", "0", "--itl-ms", "1")  # one write per token


def deltas(reply: Any) -> list[dict[str, Any]]:
    """The delta of every token event (role and usage events left out)."""
    events = reply.json_events()
    assert events[0]["choices"][0]["delta"]["role"] == "assistant"
    return [e["choices"][0]["delta"] for e in events[1:] if e["choices"]]


def split(ds: list[dict[str, Any]], key: str = "reasoning_content") -> tuple[str, str, int]:
    """(reasoning text, answer text, reasoning events); reasoning must all come first."""
    kinds = ["reasoning" if key in d else "content" for d in ds]
    n = kinds.count("reasoning")
    assert kinds == ["reasoning"] * n + ["content"] * (len(ds) - n)
    assert all(set(d) == {key} for d in ds[:n])  # content absent, as vLLM's parser sends it
    assert all(set(d) == {"content"} for d in ds[n:])
    return "".join(d[key] for d in ds[:n]), "".join(d["content"] for d in ds[n:]), n


@pytest.mark.parametrize("mode", [FAST, PACED, ()], ids=["burst-like", "paced", "engine"])
def test_chat_stream_opens_with_reasoning(
    start_mock: Callable[..., MockProc], tmp_path: Path, mode: tuple[str, ...]
) -> None:
    truth = tmp_path / "truth.jsonl"
    mock = start_mock("--reasoning-tokens", "5", "--truth", str(truth), *mode)
    reply = fetch_sync(mock.port, "POST", CHAT, chat_body(max_tokens=8))
    assert reply.status == 200 and reply.events()[-1] == b"[DONE]"
    _, _, n = split(deltas(reply))
    assert n == 5
    usage = reply.json_events()[-1]["usage"]
    assert usage == {
        "prompt_tokens": 4,
        "total_tokens": 12,
        "completion_tokens": 8,  # reasoning tokens count as completion tokens too
        "prompt_tokens_details": {
            "cached_tokens": 0,  # 4 words: not one full 16-token block to cache
            "created_cache_tokens": 0,
        },
        "completion_tokens_details": {"reasoning_tokens": 5},
    }
    mock.stop()
    (record,) = read_truth(truth)
    assert record["reasoning_tokens"] == 5 and len(record["token_ns"]) == 8


def test_at_least_one_answer_token(start_mock: Callable[..., MockProc]) -> None:
    mock = start_mock("--reasoning-tokens", "100", *FAST)
    for max_tokens, reasoning in ((3, 2), (1, 0)):
        reply = fetch_sync(mock.port, "POST", CHAT, chat_body(max_tokens=max_tokens))
        _, _, n = split(deltas(reply))
        assert n == reasoning
        details = reply.json_events()[-1]["usage"]["completion_tokens_details"]
        assert details == {"reasoning_tokens": reasoning}


def test_non_streaming_message_carries_the_reasoning_text(
    start_mock: Callable[..., MockProc],
) -> None:
    mock = start_mock("--reasoning-tokens", "6", *FAST)
    headers = {"x-request-id": "same"}
    streamed = fetch_sync(mock.port, "POST", CHAT, chat_body(max_tokens=20), headers=headers)
    reasoning, answer, _ = split(deltas(streamed))
    body = chat_body(max_tokens=20, stream=False)
    del body["stream_options"]
    doc = fetch_sync(mock.port, "POST", CHAT, body, headers=headers).json()
    message = doc["choices"][0]["message"]
    assert message["reasoning_content"] == reasoning  # same id, same tokens
    assert message["content"] == answer
    assert message["reasoning"] is None
    assert doc["usage"]["completion_tokens"] == 20
    assert doc["usage"]["completion_tokens_details"] == {"reasoning_tokens": 6}


def test_reasoning_field_name_and_continuous_usage(start_mock: Callable[..., MockProc]) -> None:
    mock = start_mock("--reasoning-tokens", "3", "--reasoning-field", "reasoning", *PACED)
    options = {"include_usage": True, "continuous_usage_stats": True}
    reply = fetch_sync(mock.port, "POST", CHAT, chat_body(max_tokens=6, stream_options=options))
    _, _, n = split(deltas(reply), key="reasoning")
    assert n == 3
    events = reply.json_events()
    assert [e["usage"]["completion_tokens"] for e in events[1:-1]] == [1, 2, 3, 4, 5, 6]
    body = chat_body(max_tokens=6, stream=False)
    del body["stream_options"]
    message = fetch_sync(mock.port, "POST", CHAT, body).json()["choices"][0]["message"]
    assert isinstance(message["reasoning"], str) and "reasoning_content" not in message


def test_reasoning_survives_split_and_stall_faults(start_mock: Callable[..., MockProc]) -> None:
    mock = start_mock(
        "--reasoning-tokens", "4", "--fault", "split=every:2,stall=every:1", "--stall-s", "0.05",
        *PACED,
    )  # fmt: skip

    async def run() -> list[Any]:
        return [await fetch(mock.port, "POST", CHAT, chat_body(max_tokens=9)) for _ in range(2)]

    for reply in asyncio.run(run()):
        assert reply.complete
        _, _, n = split(deltas(reply))
        assert n == 4 and len(deltas(reply)) == 9


def test_completions_and_tgi_have_no_reasoning(start_mock: Callable[..., MockProc]) -> None:
    mock = start_mock("--reasoning-tokens", "5", *FAST)
    events = fetch_sync(mock.port, "POST", COMPLETIONS, completion_body(max_tokens=8)).json_events()
    assert len(events) == 8 and all("text" in e["choices"][0] for e in events)
    assert all("reasoning_content" not in e["choices"][0] for e in events)
    body = {"inputs": "a b", "parameters": {"max_new_tokens": 8, "ignore_eos": True}}
    reply = fetch_sync(mock.port, "POST", "/generate_stream", body)
    assert len(reply.json_events()) == 8 and b"reasoning" not in reply.body
