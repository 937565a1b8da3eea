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
    path_no_stream = "/generate"
    ends_with_done = False

    def body(
        self,
        model: str,
        prompt: str | list[int],
        max_tokens: int,
        extra: dict[str, Any],
        stream: bool = True,
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
            _details(delta, obj)
        return delta

    def parse_body(self, body: bytes) -> Delta:
        obj = orjson.loads(body)
        if isinstance(obj, list):  # TGI answers a single input with a list of one
            obj = obj[0] if obj else {}
        delta = Delta(text=obj.get("generated_text") or "", final=True)
        _details(delta, obj)
        return delta


def _details(delta: Delta, obj: dict[str, Any]) -> None:
    details = obj.get("details") or {}
    delta.finish_reason = details.get("finish_reason")
    delta.completion_tokens = details.get("generated_tokens")
    prefill = details.get("prefill")
    if prefill:
        delta.prompt_tokens = len(prefill)
