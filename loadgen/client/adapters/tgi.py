"""Hugging Face TGI native ``/generate_stream``.

Each event with a ``token`` is one token; the last event carries
``generated_text`` (and ``details`` with ``generated_tokens`` when asked
for), and TGI sends no ``[DONE]``: that event ends the stream.

Imports: orjson, loadgen.client.adapters.base.
"""

from __future__ import annotations

from typing import Any

import orjson

from loadgen.client.adapters.base import Delta

__all__ = ["Tgi"]


class Tgi:
    path = "/generate_stream"
    ends_with_done = False

    def body(
        self, model: str, prompt: str | list[int], max_tokens: int, extra: dict[str, Any]
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"max_new_tokens": max_tokens, "details": True}
        extra = dict(extra)
        params.update(extra.pop("parameters", {}))
        return {"inputs": prompt, "parameters": params, **extra}

    def parse(self, payload: bytes) -> Delta:
        obj = orjson.loads(payload)
        if not isinstance(obj, dict):
            raise ValueError("event is not a JSON object")
        if "error" in obj and "token" not in obj:
            return Delta(error=str(obj["error"])[:200])
        token = obj.get("token")
        delta = Delta(tokens=1 if token else 0, text=(token or {}).get("text") or "")
        if obj.get("generated_text") is not None:
            delta.final = True
            details = obj.get("details") or {}
            delta.finish_reason = details.get("finish_reason")
            delta.completion_tokens = details.get("generated_tokens")
            prefill = details.get("prefill")
            if prefill:
                delta.prompt_tokens = len(prefill)
        return delta
