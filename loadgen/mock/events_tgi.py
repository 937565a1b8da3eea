"""TGI's ``/generate_stream`` events and ``/generate`` bodies, byte for byte as TGI sends them.

Owns :class:`TgiEvents`: ``data:{"index",..,"token",..}`` events (axum SSE:
``data:`` without a space), the last one with ``generated_text`` and, when asked,
``details``; the non-streaming body. The tokens are :mod:`loadgen.mock.events`'
vocabulary.
"""

from __future__ import annotations

from typing import Any

import orjson

from loadgen.mock.events import _LOGPROBS, _TEXT_JSON, _TOKEN_IDS, TEXTS, Events, _text
from loadgen.mock.http_framing import chunk

__all__ = ["TgiEvents"]


def _tgi_token(v: int) -> bytes:
    return b'{"id":%d,"text":%s,"logprob":%s,"special":false}' % (
        _TOKEN_IDS[v],
        _TEXT_JSON[v],
        _LOGPROBS[v],
    )


class TgiEvents(Events):
    """TGI ``/generate_stream`` events (axum SSE: ``data:`` without a space)."""

    needs_text = True

    def __init__(self, prompt_tokens: int, details: bool, seed: int | None):
        self.prompt_tokens = prompt_tokens
        self.details = details
        self.seed = seed
        self.tails = [
            b',"token":' + _tgi_token(v) + b',"generated_text":null,"details":null}\n\n'
            for v in range(len(TEXTS))
        ]

    def token(self, k: int, v: int) -> bytes:
        return chunk(b'data:{"index":%d%s' % (k + 1, self.tails[v]))

    def last(self, k: int, v: int, finish: str, variants: bytes) -> bytes:
        details = b"null"
        if self.details:
            details = orjson.dumps(
                {
                    "finish_reason": finish,
                    "generated_tokens": k + 1,
                    "seed": self.seed,
                    "input_length": self.prompt_tokens,
                }
            )
        return chunk(
            b'data:{"index":%d,"token":%s,"generated_text":%s,"details":%s}\n\n'
            % (k + 1, _tgi_token(v), orjson.dumps(_text(variants)), details)
        )

    def malformed(self) -> bytes:
        return chunk(b'data:{"index":1,"token":{"id":\n\n')

    def error_event(self, message: str) -> bytes:
        body = {"error": message, "error_type": "generation"}
        return chunk(b"event: error\ndata:" + orjson.dumps(body) + b"\n\n")

    def body(self, variants: bytes, finish: str) -> bytes:
        out: dict[str, Any] = {"generated_text": _text(variants)}
        if self.details:
            tokens = [
                {
                    "id": _TOKEN_IDS[v],
                    "text": TEXTS[v],
                    "logprob": float(_LOGPROBS[v]),
                    "special": False,
                }
                for v in variants
            ]
            out["details"] = {
                "finish_reason": finish,
                "generated_tokens": len(variants),
                "seed": self.seed,
                "prefill": [],
                "tokens": tokens,
            }
        return orjson.dumps(out)
