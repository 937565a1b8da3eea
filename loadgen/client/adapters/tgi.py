"""Hugging Face TGI native ``/generate_stream``.

Each event with a ``token`` is one token; the last event carries
``generated_text`` (and ``details`` with ``generated_tokens`` when asked
for), and TGI sends no ``[DONE]``: that event ends the stream.

TGI reads generation settings only inside ``parameters``: keys of
``extra_body`` that are TGI generation parameters go there (as does an
explicit ``parameters`` mapping, which wins); any other key stays top-level.
Chat messages are sent as plain text, one ``<role>: <content>`` line each.

Every value is read through :mod:`loadgen.client.adapters.event_values`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from loadgen.client.adapters.base import NO_HEADERS, Delta, as_text, bearer
from loadgen.client.adapters.event_values import (
    MalformedEvent,
    count,
    error_message,
    items,
    obj,
    reason,
    string,
)

if TYPE_CHECKING:
    from loadgen.workload import RequestSpec

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
    headers = NO_HEADERS
    auth_headers = staticmethod(bearer)

    def body(
        self,
        spec: RequestSpec,
        model: str,
        extra: dict[str, Any],
        stream: bool = True,
    ) -> dict[str, Any]:
        inputs = as_text(spec.prompt, "tgi")
        params: dict[str, Any] = {"max_new_tokens": spec.max_tokens, "details": True}
        top: dict[str, Any] = {}
        for key, value in extra.items():
            if key in TGI_PARAMETERS:
                params[key] = value
            elif key != "parameters":
                top[key] = value
        params.update(extra.get("parameters") or {})
        return {"inputs": inputs, "parameters": params, **top}

    def parse(self, payload: bytes) -> Delta:
        event = obj(orjson.loads(payload), "event")
        if "error" in event and "token" not in event:
            return Delta(error=error_message(event["error"]))
        token = event.get("token")
        if token:
            got = string(obj(token, "token").get("text"), "token.text")
            delta = Delta(tokens=1, text=got or "")
        else:
            delta = Delta()
        if string(event.get("generated_text"), "generated_text") is not None:
            delta.final = True
            _details(delta, event)
        return delta

    def parse_many(self, payloads: list[bytes]) -> list[Delta]:
        return [self.parse(p) for p in payloads]

    def parse_body(self, body: bytes) -> Delta:
        answer = orjson.loads(body)
        if type(answer) is list:  # TGI answers a single input with a list of one
            answer = answer[0] if answer else {}
        answer = obj(answer, "body")
        got = string(answer.get("generated_text"), "generated_text")
        delta = Delta(text=got or "", final=True)
        _details(delta, answer)
        return delta


def _details(delta: Delta, event: dict[str, Any]) -> None:
    """``details``: the finish reason (checked: a malformed event if not a string) and
    the counts, checked like OpenAI's usage (not believed: ignored, and said so)."""
    details = event.get("details") or {}
    if type(details) is dict:
        delta.finish_reason = reason(details.get("finish_reason"), "details.finish_reason")
    try:
        details = obj(details, "details")
        generated = count(details.get("generated_tokens"), "details.generated_tokens")
        prefill = details.get("prefill")
        prompt = len(items(prefill, "details.prefill")) if prefill else None
    except MalformedEvent as exc:
        delta.usage_ignored = str(exc)
        return
    delta.completion_tokens, delta.prompt_tokens = generated, prompt
