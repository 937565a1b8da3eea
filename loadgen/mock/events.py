"""Token events and response bodies, byte for byte as vLLM 0.32 sends them.

Owns the token vocabulary every format draws from (``TEXTS``, their ids and
logprobs, the seeded variant sequence), the :class:`Events` interface, and the
OpenAI chat/completions SSE chunks (vLLM's field order and nulls; chat's leading
reasoning tokens as a reasoning parser's deltas) and non-streaming JSON bodies.
TGI's events are :mod:`loadgen.mock.events_tgi`'s; the other APIs' are in the
other ``events_*`` modules. Per request the constant parts are encoded once; the
per-token events of the common case are pre-framed (chunked encoding included)
so the hot path writes a ready ``bytes`` object.
"""

from __future__ import annotations

import random
from typing import Any

import orjson

from loadgen.mock.http_framing import CHUNK_END, chunk

__all__ = [
    "EMPTY_SHARE",
    "TEXTS",
    "ChatEvents",
    "CompletionEvents",
    "Events",
    "variant_sequence",
    "variants_of",
]

# Variant 0 is the empty text vLLM sends for a partial UTF-8 byte.
TEXTS = ("", " tok", " the", " a", " of", " and", " to", " in")
_TEXT_JSON = tuple(orjson.dumps(t) for t in TEXTS)
_TOKEN_IDS = (239, 11497, 279, 264, 315, 323, 311, 304)
_LOGPROBS = (b"-1.5", b"-0.25", b"-0.5", b"-0.75", b"-1.0", b"-0.125", b"-0.375", b"-2.0")
EMPTY_SHARE = 0.04
SEQ_LEN = 4096
SEQ_MASK = SEQ_LEN - 1
DONE = chunk(b"data: [DONE]\n\n")


def variant_sequence(seed: int) -> bytes:
    """A seeded cyclic sequence of text variants, ~4 % of them empty."""
    rng = random.Random(seed)
    return bytes(
        0 if rng.random() < EMPTY_SHARE else rng.randrange(1, len(TEXTS)) for _ in range(SEQ_LEN)
    )


def variants_of(seq: bytes, offset: int, n: int) -> bytes:
    """The variants of ``n`` tokens starting at ``offset`` in the cyclic ``seq``."""
    start = offset & SEQ_MASK
    out = seq[start : start + n]
    while len(out) < n:
        out += seq[: n - len(out)]
    return out


def _text(variants: bytes) -> str:
    return "".join(TEXTS[v] for v in variants)


class Events:
    """Encoder of one request's stream; subclasses fill in the formats.

    ``frames[v]`` is the chunk-framed event of a middle token of variant ``v``,
    or ``None`` when events differ per token (TGI index, continuous usage).
    """

    frames: list[bytes] | None = None
    needs_text = False
    n_reason = 0  # the first n_reason tokens are reasoning (chat only)
    #: of the prompt, the tokens the engine's prefix cache served (set on admission,
    #: ``Gen.cache_hit``); the usage reports them where the API has a field for it
    cached_tokens = 0
    #: the prompt's other full blocks, which its prefill writes to the cache (vLLM's
    #: ``created_cache_tokens``)
    created_tokens = 0

    def first(self) -> bytes:
        """Bytes written just before the first token event (chat's role event)."""
        return b""

    def token(self, k: int, v: int) -> bytes:
        """Chunk-framed event of middle token ``k`` (0-based), variant ``v``."""
        raise NotImplementedError

    def reasoning(self, k: int, v: int) -> bytes:
        """Chunk-framed event of reasoning token ``k`` (``k < n_reason``), variant ``v``."""
        raise NotImplementedError

    def last(self, k: int, v: int, finish: str, variants: bytes) -> bytes:
        """Chunk-framed event of the final token.

        ``variants`` holds the variant of every token when ``needs_text`` is set.
        """
        raise NotImplementedError

    def trailer(self, n: int, done: bool) -> bytes:
        """What follows the last token: usage event, ``[DONE]``, end of body."""
        return CHUNK_END

    def malformed(self) -> bytes:
        """A chunk-framed event whose JSON is cut short."""
        return chunk(b'data: {"id":"cmpl-x","choices":[{"delta":{"content":" tok"\n\n')

    def error_event(self, message: str) -> bytes:
        """A chunk-framed SSE ``event: error`` frame, as a server sends when its engine fails
        mid-stream (vLLM's error JSON; TGI: its own)."""
        body = {"error": {"message": message, "type": "InternalServerError", "code": 500}}
        return chunk(b"event: error\ndata: " + orjson.dumps(body) + b"\n\n")

    def body(self, variants: bytes, finish: str) -> bytes:
        """The non-streaming JSON response; ``variants`` of every token."""
        raise NotImplementedError

    def merged(self, k: int, variants: bytes, finish: str | None) -> bytes | None:
        """One chunk-framed event carrying the answer tokens ``variants``, the last of them
        token ``k`` (a speculative step's); None where the format has one event a token."""
        return None


class _OpenAIEvents(Events):
    object_name = b""
    id_prefix = ""

    def __init__(
        self, rid: str, model: str, created: int, prompt_tokens: int, spec_usage: tuple[bool, bool]
    ):
        self.rid = self.id_prefix + rid
        self.model = model
        self.created = created
        self.prompt_tokens = prompt_tokens
        self.include_usage, self.continuous = spec_usage
        self.pre = b'data: {"id":%s,"object":"%s","created":%d,"model":%s,"choices":[' % (
            orjson.dumps(self.rid),
            self.object_name,
            created,
            orjson.dumps(model),
        )
        if not self.continuous:
            self.frames = [self._event(self._choice(v, None), 0) for v in range(len(TEXTS))]

    # vLLM's chat server passes completion_tokens_details=None explicitly in the
    # per-chunk usage, so it shows up as null there (not in the final usage).
    usage_extra = b""
    # Reasoning on: the final usage says how many of the completion tokens were reasoning.
    details: dict[str, int] | None = None

    def _usage(self, completion: int, extra: bytes = b"") -> bytes:
        return b'{"prompt_tokens":%d,"total_tokens":%d,"completion_tokens":%d%s}' % (
            self.prompt_tokens,
            self.prompt_tokens + completion,
            completion,
            extra,
        )

    def _event(self, choice: bytes, completion: int, suffix: bytes = b"") -> bytes:
        usage = b""
        if self.continuous:
            usage = b',"usage":' + self._usage(completion, self.usage_extra)
        return chunk(self.pre + choice + b"]" + usage + suffix + b"}\n\n")

    def _choice(self, v: int, finish: str | None) -> bytes:
        return self._choice_text(_TEXT_JSON[v], finish)

    def _choice_text(self, text: bytes, finish: str | None) -> bytes:
        raise NotImplementedError

    def merged(self, k: int, variants: bytes, finish: str | None) -> bytes | None:
        if type(self) not in (ChatEvents, CompletionEvents):  # tool calls, JSON, transcripts
            return None
        return self._event(self._choice_text(orjson.dumps(_text(variants)), finish), k + 1)

    def token(self, k: int, v: int) -> bytes:
        if self.frames is not None:
            return self.frames[v]
        return self._event(self._choice(v, None), k + 1)

    def last(self, k: int, v: int, finish: str, variants: bytes) -> bytes:
        return self._event(self._choice(v, finish), k + 1)

    def prompt_details(self) -> bytes:
        """The final usage's ``prompt_tokens_details`` (after ``completion_tokens``), as
        vLLM sends it with ``--enable-prompt-tokens-details``: completions' holds only
        ``cached_tokens``. The mock always sends it (docs/mock.md)."""
        return b',"prompt_tokens_details":{"cached_tokens":%d}' % self.cached_tokens

    def prompt_details_obj(self) -> dict[str, Any] | None:
        """``prompt_tokens_details`` of a non-streaming answer's usage."""
        return {"cached_tokens": self.cached_tokens}

    def trailer(self, n: int, done: bool) -> bytes:
        out = b""
        if self.include_usage:
            extra = self.prompt_details()
            if self.details is not None:
                extra += b',"completion_tokens_details":' + orjson.dumps(self.details)
            out = chunk(self.pre + b'],"usage":' + self._usage(n, extra) + b"}\n\n")
        return out + DONE + CHUNK_END if done else out + CHUNK_END

    def _usage_obj(self, n: int) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "total_tokens": self.prompt_tokens + n,
            "completion_tokens": n,
            "prompt_tokens_details": self.prompt_details_obj(),
            "completion_tokens_details": self.details,
        }


class ChatEvents(_OpenAIEvents):
    """vLLM ``/v1/chat/completions`` chunks (``chat.completion.chunk``)."""

    object_name = b"chat.completion.chunk"
    id_prefix = "chatcmpl-"
    usage_extra = b',"completion_tokens_details":null'

    def __init__(
        self,
        rid: str,
        model: str,
        created: int,
        prompt_tokens: int,
        spec_usage: tuple[bool, bool],
        reasoning: tuple[int, str] | None = None,
    ):
        """``reasoning``: (how many leading tokens are reasoning, the key they go under)."""
        super().__init__(rid, model, created, prompt_tokens, spec_usage)
        self.field = "reasoning_content"
        self.rframes: list[bytes] | None = None
        if reasoning is None:
            return
        self.n_reason, self.field = reasoning
        self.details = {"reasoning_tokens": self.n_reason}
        if self.n_reason and not self.continuous:
            self.rframes = [self._event(self._reasoning(v), 0) for v in range(len(TEXTS))]

    def prompt_details(self) -> bytes:
        """Chat's: vLLM names the tokens its prefill wrote to the cache too (and the media
        tokens, absent without media)."""
        return b',"prompt_tokens_details":{"cached_tokens":%d,"created_cache_tokens":%d}' % (
            self.cached_tokens,
            self.created_tokens,
        )

    def prompt_details_obj(self) -> dict[str, Any] | None:
        return {"cached_tokens": self.cached_tokens, "created_cache_tokens": self.created_tokens,
                "multimodal_tokens": None}  # fmt: skip

    def _reasoning(self, v: int) -> bytes:
        # vLLM's reasoning parser: a DeltaMessage with the reasoning text only (exclude_unset)
        key = b'{"index":0,"delta":{"' + self.field.encode() + b'":'
        return key + _TEXT_JSON[v] + b'},"logprobs":null,"finish_reason":null,"token_ids":null}'

    def reasoning(self, k: int, v: int) -> bytes:
        if self.rframes is not None:
            return self.rframes[v]
        return self._event(self._reasoning(v), k + 1)

    def first(self) -> bytes:
        role = b'{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,'
        role += b'"finish_reason":null}'
        return self._event(role, 0, b',"prompt_token_ids":null,"prompt_text":null')

    def _choice_text(self, text: bytes, finish: str | None) -> bytes:
        head = b'{"index":0,"delta":{"content":' + text + b'},"logprobs":null,'
        if finish is None:
            return head + b'"finish_reason":null,"token_ids":null}'
        return head + b'"finish_reason":"%s","stop_reason":null,"token_ids":null}' % finish.encode()

    def body(self, variants: bytes, finish: str) -> bytes:
        # vLLM returns model_dump() of its pydantic model: every field, nulls included
        # (ChatMessage drops an empty tool_calls list).
        k = self.n_reason
        message: dict[str, Any] = {
            "role": "assistant",
            "content": _text(variants[k:]),
            "refusal": None,
            "annotations": None,
            "audio": None,
            "function_call": None,
            "reasoning": None,
        }
        if self.details is not None:
            message[self.field] = _text(variants[:k])
        choice = {
            "index": 0,
            "message": message,
            "logprobs": None,
            "finish_reason": finish,
            "stop_reason": None,
            "token_ids": None,
            "routed_experts": None,
        }
        return orjson.dumps({
            "id": self.rid, "object": "chat.completion", "created": self.created,
            "model": self.model, "choices": [choice], "service_tier": None,
            "system_fingerprint": None, "usage": self._usage_obj(len(variants)),
            "prompt_logprobs": None, "prompt_token_ids": None, "prompt_text": None,
            "kv_transfer_params": None, "ec_transfer_params": None, "metrics": None,
        })  # fmt: skip


class CompletionEvents(_OpenAIEvents):
    """vLLM ``/v1/completions`` chunks (``text_completion``)."""

    object_name = b"text_completion"
    id_prefix = "cmpl-"

    def _choice_text(self, text: bytes, finish: str | None) -> bytes:
        reason = b"null" if finish is None else b'"%s"' % finish.encode()
        return (
            b'{"index":0,"text":%s,"logprobs":null,"finish_reason":%s,"stop_reason":null,'
            b'"prompt_token_ids":null,"token_ids":null}' % (text, reason)
        )

    def body(self, variants: bytes, finish: str) -> bytes:
        choice = {
            "index": 0,
            "text": _text(variants),
            "logprobs": None,
            "finish_reason": finish,
            "stop_reason": None,
            "token_ids": None,
            "prompt_logprobs": None,
            "prompt_token_ids": None,
            "routed_experts": None,
        }
        return orjson.dumps({
            "id": self.rid, "object": "text_completion", "created": self.created,
            "model": self.model, "choices": [choice], "service_tier": None,
            "system_fingerprint": None, "usage": self._usage_obj(len(variants)),
            "kv_transfer_params": None, "ec_transfer_params": None, "metrics": None,
        })  # fmt: skip
