"""OpenAI ``/v1/completions``, streaming.

An event with ``choices[0].text`` (even empty) is one token; the usage event
(``choices: []``) carries the server's counts.

Imports: orjson, loadgen.client.adapters.base.
"""

from __future__ import annotations

from typing import Any

import orjson

from loadgen.client.adapters.base import EMPTY, Delta
from loadgen.client.adapters.usage import error_text, usage_counts

__all__ = ["OpenAICompletions"]


class OpenAICompletions:
    path = "/v1/completions"
    path_no_stream = "/v1/completions"
    ends_with_done = True

    def body(
        self,
        model: str,
        prompt: str | list[int],
        max_tokens: int,
        extra: dict[str, Any],
        stream: bool = True,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"model": model, "prompt": prompt, "max_tokens": max_tokens}
        body["stream"] = stream
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
            text = choice.get("text")
            delta = Delta(
                tokens=0 if text is None else 1,
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
        delta = Delta(text=choice.get("text") or "", finish_reason=choice.get("finish_reason"))
        if obj.get("usage"):
            delta.prompt_tokens, delta.completion_tokens = usage_counts(obj["usage"])
        return delta
