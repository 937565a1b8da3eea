"""``/v1/messages`` (Anthropic) events and bodies, byte for byte as vLLM 0.32 sends them.

vLLM turns its chat stream into Anthropic's: ``message_start`` (usage
``input_tokens``, ``output_tokens`` 0), a ``content_block_start`` per block
(``thinking`` for the leading reasoning tokens, then ``text``), one
``content_block_delta`` per token (``thinking_delta`` or ``text_delta``; a
thinking block ends with a ``signature_delta``), ``content_block_stop``,
``message_delta`` (``stop_reason``; usage ``input_tokens``, ``output_tokens`` and
``cache_creation_input_tokens`` and ``cache_read_input_tokens``: the prompt's
tokens its prefill wrote to the prefix cache and those the cache served, which
vLLM takes out of ``input_tokens``; it sends them with
``--enable-prompt-tokens-details``, the mock always) and ``message_stop``; every
event has an ``event:`` line, and no ``[DONE]`` follows. vLLM writes no delta
for a token that decodes to no text; the mock's Messages tokens all have text,
so its events equal its usage counts.

An answer token's event never changes within a request: it is pre-framed per
text variant, and the hot path writes a ready ``bytes`` object.
"""

from __future__ import annotations

from typing import Any

import orjson

from loadgen.mock.events import TEXTS, Events
from loadgen.mock.events_responses import token_text
from loadgen.mock.http_framing import CHUNK_END, chunk

__all__ = ["SIGNATURE", "STOP_REASONS", "MessagesEvents"]

#: the mock's finish reasons in Anthropic's words
STOP_REASONS = {"stop": "end_turn", "length": "max_tokens"}
#: a thinking block's signature (vLLM: a random uuid hex)
SIGNATURE = "0" * 32


def _sse(kind: bytes, data: bytes) -> bytes:
    return b"event: " + kind + b"\ndata: " + data + b"\n\n"


def _delta(index: int, kind: bytes, key: bytes, text: bytes) -> bytes:
    data = b'{"type":"content_block_delta","delta":{"type":"%s","%s":%s},"index":%d}' % (
        kind,
        key,
        text,
        index,
    )
    return _sse(b"content_block_delta", data)


def _start(index: int, block: bytes) -> bytes:
    data = b'{"type":"content_block_start","content_block":%s,"index":%d}' % (block, index)
    return _sse(b"content_block_start", data)


def _stop(index: int) -> bytes:
    return _sse(b"content_block_stop", b'{"type":"content_block_stop","index":%d}' % index)


def _thinking_end() -> bytes:
    """The thinking block's ``signature_delta`` and its ``content_block_stop``."""
    signature = b'{"type":"content_block_delta","delta":{"type":"signature_delta",'
    signature += b'"signature":"%s"},"index":0}' % SIGNATURE.encode()
    return _sse(b"content_block_delta", signature) + _stop(0)


class MessagesEvents(Events):
    """One request's ``/v1/messages`` stream (``n_reason`` leading thinking tokens)."""

    def __init__(self, rid: str, model: str, prompt_tokens: int, n_reason: int):
        self.rid = "chatcmpl-" + rid  # vLLM's Messages ids are its chat completion ids
        self.model = model
        self.prompt_tokens = prompt_tokens
        self.n_reason = n_reason
        self.index = 1 if n_reason else 0  # the text block's index
        texts = [orjson.dumps(token_text(v)) for v in range(len(TEXTS))]
        self.tframes = [chunk(_delta(self.index, b"text_delta", b"text", t)) for t in texts]
        self.rframes = [chunk(_delta(0, b"thinking_delta", b"thinking", t)) for t in texts]
        # a thinking block breaks the run of identical frames at the first answer token
        self.frames = None if n_reason else self.tframes

    def _message_start(self) -> bytes:
        """``message_start``: the message so far (no content, ``output_tokens`` 0)."""
        message = {
            "type": "message_start",
            "message": {
                "id": self.rid, "type": "message", "role": "assistant", "content": [],
                "model": self.model, "stop_reason": None, "stop_sequence": None,
                "usage": {"input_tokens": self.prompt_tokens, "output_tokens": 0},
            },
        }  # fmt: skip
        return _sse(b"message_start", orjson.dumps(message))

    def first(self) -> bytes:
        opening = self._message_start()
        if self.n_reason:
            opening += _start(0, b'{"type":"thinking","thinking":""}')
        else:
            opening += _start(0, b'{"type":"text","text":""}')
        return chunk(opening)

    def reasoning(self, k: int, v: int) -> bytes:
        return self.rframes[v]

    def _switch(self, k: int) -> bytes:
        """Before the first answer token after thinking: the signature, the block's end,
        the text block's start."""
        if not self.n_reason or k != self.n_reason:
            return b""
        return chunk(_thinking_end() + _start(1, b'{"type":"text","text":""}'))

    def token(self, k: int, v: int) -> bytes:
        if self.n_reason and k == self.n_reason:
            return self._switch(k) + self.tframes[v]
        return self.tframes[v]

    def last(self, k: int, v: int, finish: str, variants: bytes) -> bytes:
        return self.token(k, v) + self._ending(k, STOP_REASONS.get(finish, "end_turn").encode())

    def _ending(self, k: int, stop: bytes) -> bytes:
        """After answer token ``k``, the last: the block's end, ``message_delta`` (``stop``,
        the usage) and ``message_stop``."""
        cached, created = self.cached_tokens, self.created_tokens
        usage = (
            b'{"input_tokens":%d,"output_tokens":%d,"cache_creation_input_tokens":%d,'
            b'"cache_read_input_tokens":%d}'
            % (max(0, self.prompt_tokens - cached - created), k + 1, created, cached)
        )
        delta = b'{"type":"message_delta","delta":{"stop_reason":"%s","stop_sequence":null},' % stop
        return chunk(
            _stop(self.index)
            + _sse(b"message_delta", delta + b'"usage":' + usage + b"}")
            + _sse(b"message_stop", b'{"type":"message_stop"}')
        )

    def trailer(self, n: int, done: bool) -> bytes:
        return CHUNK_END  # message_stop was the last event: no [DONE]

    def malformed(self) -> bytes:
        return chunk(
            b'event: content_block_delta\ndata: {"type":"content_block_delta","delta":\n\n'
        )

    def error_event(self, message: str) -> bytes:
        """vLLM's Messages error event: ``{"type": "error", "error": {"type", "message"}}``."""
        body = {"type": "error", "error": {"type": "internal_error", "message": message}}
        return chunk(_sse(b"error", orjson.dumps(body)))

    def body(self, variants: bytes, finish: str) -> bytes:
        # model_dump(exclude_none=True): no stop_sequence, no transfer params
        r = self.n_reason
        content: list[dict[str, Any]] = []
        if r:
            thinking = "".join(token_text(x) for x in variants[:r])
            content.append({"type": "thinking", "thinking": thinking, "signature": SIGNATURE})
        content.append({"type": "text", "text": "".join(token_text(x) for x in variants[r:])})
        return orjson.dumps({
            "id": self.rid, "type": "message", "role": "assistant", "content": content,
            "model": self.model, "stop_reason": STOP_REASONS.get(finish, "end_turn"),
            "usage": self.usage(len(variants)),
        })  # fmt: skip

    def usage(self, n: int) -> dict[str, int]:
        """A whole answer's usage: the cached prompt tokens apart, as vLLM counts them."""
        cached, created = self.cached_tokens, self.created_tokens
        return {"input_tokens": max(0, self.prompt_tokens - cached - created), "output_tokens": n,
                "cache_creation_input_tokens": created,
                "cache_read_input_tokens": cached}  # fmt: skip
