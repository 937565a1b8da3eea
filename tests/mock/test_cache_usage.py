"""The prefix cache in the mock's usage and truth, and the cache sharing the KV budget."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from mockhttp import MockProc, chat_body, completion_body, fetch, read_truth

from loadgen.mock.cache import PrefixCache, block_hashes

COMPLETIONS = "/v1/completions"
CHAT = "/v1/chat/completions"
RESPONSES = "/v1/responses"
MESSAGES = "/v1/messages"
QUICK = ("--step-base-ms", "1", "--decode-ms-per-seq", "0", "--prefill-ms-per-token", "0")


def words(prefix: str, n: int) -> str:
    return " ".join(f"{prefix}{i}" for i in range(n))


def test_held_blocks_stay_and_free_ones_fit_in_what_running_requests_leave() -> None:
    cache = PrefixCache(capacity_tokens=1000, block_size=4)
    a = block_hashes(words("a", 16).split(), 4)  # four blocks
    b = block_hashes(words("b", 8).split(), 4)
    cache.acquire(a)
    cache.fit(0)  # no KV left: only free blocks could go, and a's are held
    assert cache.lookup(a, 100) == 16
    cache.release(a)
    cache.insert(b)
    cache.fit(12)  # three free blocks fit: the oldest freed go, a's tail first
    assert cache.lookup(b, 100) == 8 and cache.lookup(a, 100) == 4
    assert cache.evicted == 3
    cache.acquire(b)
    cache.acquire(b)  # two running requests share b's blocks
    cache.release(b)
    cache.fit(0)  # a's last block goes; b's stay, one request still holds them
    assert cache.lookup(a, 100) == 0 and cache.lookup(b, 100) == 8


async def _one_by_one(port: int, path: str, bodies: list[dict[str, Any]]) -> list[Any]:
    usages = []
    for body in bodies:
        reply = await fetch(port, "POST", path, body)
        assert reply.status == 200 and reply.complete
        usages.append(_events(reply.body) if body.get("stream") else reply.json())
    return usages


def _events(body: bytes) -> list[Any]:
    """The JSON of every SSE event's ``data:`` line (after any ``event:`` line)."""
    lines = (line for block in body.split(b"\n\n") for line in block.split(b"\n"))
    data = (line[5:].strip() for line in lines if line.startswith(b"data:"))
    return [orjson.loads(d) for d in data if d != b"[DONE]"]


def _bodies(api: str, prompt: str, stream: bool) -> dict[str, Any]:
    if api == COMPLETIONS:
        body = completion_body(max_tokens=2, prompt=prompt, stream=stream)
        if stream:
            body["stream_options"] = {"include_usage": True}
        return body
    if api == CHAT:
        body = chat_body(max_tokens=2, stream=stream)
        body["messages"] = [{"role": "user", "content": prompt}]
        if not stream:
            del body["stream_options"]
        return body
    if api == RESPONSES:
        return {"model": "m", "input": prompt, "max_output_tokens": 2, "stream": stream}
    return {
        "model": "m",
        "messages": [{"role": "user", "content": prompt}],
        "max_tokens": 2,
        "stream": stream,
    }


def _cached(api: str, answer: Any) -> tuple[int, int | None, int]:
    """(cached tokens, tokens newly written to the cache, prompt tokens) from one answer's
    usage, as each API says them (completions has no count of the new ones)."""
    if isinstance(answer, list):  # a stream's events: the one that carries the final usage
        if api in (COMPLETIONS, CHAT):
            answer = answer[-1]
        elif api == RESPONSES:
            answer = answer[-1]["response"]
        else:
            answer = next(e for e in answer if e["type"] == "message_delta")
    usage = answer["usage"]
    if api in (COMPLETIONS, CHAT):
        details = usage["prompt_tokens_details"]
        return details["cached_tokens"], details.get("created_cache_tokens"), usage["prompt_tokens"]
    if api == RESPONSES:
        details = usage["input_tokens_details"]
        return details["cached_tokens"], details["cache_write_tokens"], usage["input_tokens"]
    cached, created = usage["cache_read_input_tokens"], usage["cache_creation_input_tokens"]
    return cached, created, usage["input_tokens"] + cached + created


def test_every_api_reports_what_the_cache_served(
    start_mock: Callable[..., MockProc], tmp_path: Path
) -> None:
    truth = tmp_path / "truth.jsonl"
    mock = start_mock("--truth", str(truth), *QUICK)
    got: list[tuple[int, int | None, int]] = []
    for api in (COMPLETIONS, CHAT, RESPONSES, MESSAGES):
        for stream in (True, False):
            # 70 words: a miss, then a hit of its four full blocks (64 tokens)
            prompt = words(f"{api}{stream}w", 70)
            answers = asyncio.run(_one_by_one(mock.port, api, [_bodies(api, prompt, stream)] * 2))
            got += [_cached(api, a) for a in answers]
    mock.stop()
    # a miss writes its four full blocks to the cache; the repeat finds them
    assert got == [(0, None, 70), (64, None, 70)] * 2 + [(0, 64, 70), (64, 0, 70)] * 6
    assert [r["cached_tokens"] for r in read_truth(truth)] == [c for c, _, _ in got]


def test_a_long_running_context_evicts_cached_prefixes(
    start_mock: Callable[..., MockProc], tmp_path: Path
) -> None:
    truth = tmp_path / "truth.jsonl"
    # 256 tokens of KV in 16-token blocks: the cache and the running requests share them
    mock = start_mock("--kv-cache-tokens", "256", "--truth", str(truth), *QUICK)
    short = completion_body(max_tokens=1, prompt=words("a", 128))  # eight blocks
    long = completion_body(max_tokens=40, prompt=words("b", 200))  # grows to 240 tokens
    asyncio.run(_one_by_one(mock.port, COMPLETIONS, [short, short, long, short]))
    mock.stop()
    cached = [r["cached_tokens"] for r in read_truth(truth)]
    # the repeat hits seven blocks (the last token is always computed); while the long
    # request runs only 16 tokens of KV are left for cached blocks: of a's eight, the
    # first (freed last, most recent) stays. A cache apart from the KV would have kept
    # twelve blocks of a and b besides (16 blocks), a's first four of them: 64 tokens.
    assert cached == [0, 112, 0, 16]
