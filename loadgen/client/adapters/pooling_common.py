"""What the pooling adapters (embeddings, rerank) share: never streamed, usage, checks.

A pooling API answers with one JSON body (``parse_body``); there is no stream
to parse, so ``parse`` and ``parse_many`` refuse (the requester never calls
them: ``TargetSpec.streams`` is False for these APIs). Every value is read
through :mod:`loadgen.client.adapters.event_values`.
"""

from __future__ import annotations

from typing import Any

import orjson

from loadgen.client.adapters.base import NO_HEADERS, Delta, bearer
from loadgen.client.adapters.event_values import MalformedEvent, count, error_message, obj

__all__ = ["PoolingAdapter", "answer_of", "index_of", "read_usage"]


def answer_of(body: bytes, key: str) -> tuple[dict[str, Any], Delta | None]:
    """The answer object, and a delta with the server's error when the body is an error
    (an ``error`` or ``detail`` and no ``key``) rather than an answer."""
    answer = obj(orjson.loads(body), "body")
    if key not in answer and ("error" in answer or "detail" in answer):
        return answer, Delta(error=error_message(answer.get("error") or answer.get("detail")))
    return answer, None


def index_of(value: Any, name: str, seen: set[int]) -> int:
    """An item's ``index``: an int not seen before in the answer."""
    if type(value) is not int or value < 0:
        raise MalformedEvent(f"{name}: expected a non-negative integer index")
    if value in seen:
        raise MalformedEvent(f"{name}: index {value} repeats")
    seen.add(value)
    return value


def read_usage(delta: Delta, usage: Any) -> None:
    """``usage.prompt_tokens`` (else ``total_tokens``: no output, so the same), checked; a
    block that cannot be believed is ignored and said so (``delta.usage_ignored``)."""
    if usage is None:
        return
    try:
        block = obj(usage, "usage")
        prompt = count(block.get("prompt_tokens"), "usage.prompt_tokens")
        if prompt is None:
            prompt = count(block.get("total_tokens"), "usage.total_tokens")
    except MalformedEvent as exc:
        delta.usage_ignored = str(exc)
        return
    delta.prompt_tokens = prompt


class PoolingAdapter:
    """The skeleton: one path, no ``[DONE]``, no stream events."""

    path: str
    path_no_stream: str
    ends_with_done = False
    headers = NO_HEADERS
    auth_headers = staticmethod(bearer)

    def parse(self, payload: bytes) -> Delta:
        raise MalformedEvent("a pooling API answers with one JSON body, not a stream")

    def parse_many(self, payloads: list[bytes]) -> list[Delta]:
        raise MalformedEvent("a pooling API answers with one JSON body, not a stream")
