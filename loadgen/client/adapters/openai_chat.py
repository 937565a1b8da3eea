"""OpenAI ``/v1/chat/completions``, streaming.

The opener that only carries the role (``delta: {role, content: ""}``) is not
a token; every later event whose delta has ``content`` (even empty),
``reasoning_content`` or ``tool_calls`` is one token.

Imports: orjson, loadgen.client.adapters.
"""

from __future__ import annotations

from typing import Any

import orjson

from loadgen.client.adapters.base import EMPTY, Delta
from loadgen.client.adapters.usage import error_text, usage_counts

__all__ = ["OpenAIChat"]

_OUTPUT_KEYS = ("content", "reasoning_content", "reasoning", "tool_calls")


class OpenAIChat:
    path = "/v1/chat/completions"
    path_no_stream = "/v1/chat/completions"
    ends_with_done = True

    def body(
        self,
        model: str,
        prompt: str | list[int],
        max_tokens: int,
        extra: dict[str, Any],
        stream: bool = True,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": model,
            "messages": [{"role": "user", "content": prompt}],
            "max_tokens": max_tokens,
            "stream": stream,
        }
        if stream:
            body["stream_options"] = {"include_usage": True}
        return {**body, **extra}

    def parse(self, payload: bytes) -> Delta:
        obj = orjson.loads(payload)
        if not isinstance(obj, dict):
            raise ValueError("event is not a JSON object")
        choices = obj.get("choices")
        usage = obj.get("usage")
        if choices:
            choice = choices[0]
            d = choice.get("delta") or {}
            text = d.get("content")
            if "role" in d and not text:
                is_token = False  # the role-only opener
            else:
                is_token = any(d.get(k) is not None for k in _OUTPUT_KEYS)
            delta = Delta(
                tokens=1 if is_token else 0,
                text=text or "",
                finish_reason=choice.get("finish_reason"),
            )
        elif "error" in obj:
            return Delta(error=error_text(obj["error"]))
        elif usage is None:
            return EMPTY
        else:
            delta = Delta()
        if usage:
            delta.prompt_tokens, delta.completion_tokens = usage_counts(usage)
        return delta

    def parse_body(self, body: bytes) -> Delta:
        obj = orjson.loads(body)
        choice = (obj.get("choices") or [{}])[0]
        message = choice.get("message") or {}
        delta = Delta(text=message.get("content") or "", finish_reason=choice.get("finish_reason"))
        if obj.get("usage"):
            delta.prompt_tokens, delta.completion_tokens = usage_counts(obj["usage"])
        return delta
