"""OpenAI ``/v1/chat/completions``.

The opener that only carries the role (``delta: {role, content: ""}``) is not
a token; every later event whose delta has ``content`` (even empty),
``reasoning_content`` or ``tool_calls`` is one token. A non-streaming answer
has ``message`` where a stream has ``delta``.

Imports: loadgen.client.adapters.
"""

from __future__ import annotations

from typing import Any

from loadgen.client.adapters.base import Delta
from loadgen.client.adapters.openai_common import openai_body, parse_body, parse_event

__all__ = ["OpenAIChat"]

_OUTPUT_KEYS = ("content", "reasoning_content", "reasoning", "tool_calls")


def _choice(choice: dict[str, Any]) -> Delta:
    d = choice.get("delta") or choice.get("message") or {}
    text = d.get("content")
    if text:  # the common case, first
        return Delta(1, text, choice.get("finish_reason"))
    # the role-only opener is not a token; an empty content or other output is
    is_token = "role" not in d and any(d.get(k) is not None for k in _OUTPUT_KEYS)
    return Delta(1 if is_token else 0, "", choice.get("finish_reason"))


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
        messages = [{"role": "user", "content": prompt}]
        fields = {"model": model, "messages": messages, "max_tokens": max_tokens}
        return openai_body(fields, extra, stream)

    def parse(self, payload: bytes) -> Delta:
        return parse_event(payload, _choice)

    def parse_body(self, body: bytes) -> Delta:
        return parse_body(body, _choice)
