"""Hugging Face TGI native ``/generate_stream``.

Each event with a ``token`` is one token; the last event carries
``generated_text`` (and ``details`` with ``generated_tokens`` when asked
for), and TGI sends no ``[DONE]``: that event ends the stream.

TGI reads generation settings only inside ``parameters``: keys of
``extra_body`` that are TGI generation parameters go there (as does an
explicit ``parameters`` mapping, which wins); any other key stays top-level.
Chat messages are sent as plain text, one ``<role>: <content>`` line each.

Imports: orjson, loadgen.client.adapters.base.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from loadgen.client.adapters.base import Delta, MalformedUsage, as_text, count

if TYPE_CHECKING:
    from loadgen.workload.plan import Prompt

__all__ = ["TGI_PARAMETERS", "Tgi"]

#: The fields of TGI's ``GenerateParameters`` (router/src/lib.rs). TGI has no
#: ``ignore_eos`` and no minimum length: only ``max_new_tokens`` bounds the output.
TGI_PARAMETERS = frozenset(
    {
        "adapter_id",
        "best_of",
        "decoder_input_details",
        "details",
        "do_sample",
        "frequency_penalty",
        "grammar",
        "max_new_tokens",
        "repetition_penalty",
        "return_full_text",
        "seed",
        "stop",
        "temperature",
        "top_k",
        "top_n_tokens",
        "top_p",
        "truncate",
        "typical_p",
        "watermark",
    }
)


class Tgi:
    path = "/generate_stream"
    path_no_stream = "/generate"
    ends_with_done = False

    def body(
        self,
        model: str,
        prompt: Prompt,
        max_tokens: int,
        extra: dict[str, Any],
        stream: bool = True,
    ) -> dict[str, Any]:
        inputs = as_text(prompt, "tgi")
        params: dict[str, Any] = {"max_new_tokens": max_tokens, "details": True}
        top: dict[str, Any] = {}
        for key, value in extra.items():
            if key in TGI_PARAMETERS:
                params[key] = value
            elif key != "parameters":
                top[key] = value
        params.update(extra.get("parameters") or {})
        return {"inputs": inputs, "parameters": params, **top}

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

    def parse_many(self, payloads: list[bytes]) -> list[Delta]:
        return [self.parse(p) for p in payloads]

    def parse_body(self, body: bytes) -> Delta:
        obj = orjson.loads(body)
        if isinstance(obj, list):  # TGI answers a single input with a list of one
            obj = obj[0] if obj else {}
        delta = Delta(text=obj.get("generated_text") or "", final=True)
        _details(delta, obj)
        return delta


def _details(delta: Delta, obj: dict[str, Any]) -> None:
    """``details``: the finish reason and the counts, checked like OpenAI's usage."""
    details = obj.get("details") or {}
    if not isinstance(details, dict):
        raise MalformedUsage(f"details: expected an object, got {type(details).__name__}")
    delta.finish_reason = details.get("finish_reason")
    delta.completion_tokens = count(details.get("generated_tokens"), "details.generated_tokens")
    prefill = details.get("prefill")
    if prefill:
        if not isinstance(prefill, list):
            raise MalformedUsage(f"details.prefill: expected a list, got {type(prefill).__name__}")
        delta.prompt_tokens = len(prefill)
