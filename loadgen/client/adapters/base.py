"""What every protocol adapter returns for one SSE event, and prompts as plain text.

``count``, ``MAX_COUNT``, ``MalformedEvent`` and ``MalformedUsage`` are the checks of
:mod:`loadgen.client.adapters.event_values`, named here too.

:class:`TypedEvents` is ``parse`` and ``parse_many`` for a protocol whose events
each name their own ``type`` (Responses, Messages).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol, TypeGuard

import orjson

from loadgen.client.adapters.event_values import (
    MAX_COUNT,
    MalformedEvent,
    MalformedUsage,
    count,
    json_values,
)

if TYPE_CHECKING:
    from loadgen.workload import Message, Prompt, RequestSpec

__all__ = [
    "EMPTY",
    "MAX_COUNT",
    "NO_HEADERS",
    "Adapter",
    "Delta",
    "MalformedEvent",
    "MalformedUsage",
    "RawBody",
    "TypedEvents",
    "as_text",
    "bearer",
    "count",
    "is_messages",
    "render_messages",
]


@dataclass(slots=True)
class Delta:
    """What one event meant.

    ``tokens`` is 1 when the event carries generated output (also when its
    text is empty: vLLM sends a partial UTF-8 byte as an empty-text event)
    and 0 for events that carry none (chat's role-only opener, usage).
    ``reasoning`` is True when that output was reasoning (chat's
    ``reasoning_content`` or ``reasoning`` without ``content``); ``text`` is
    answer output only.
    """

    tokens: int = 0
    text: str = ""
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    error: str | None = None
    final: bool = False  # the protocol's last event (TGI); OpenAI ends with [DONE]
    reasoning: bool = False
    reasoning_tokens: int | None = None  # usage.completion_tokens_details.reasoning_tokens
    #: why the event's usage block (TGI: ``details``) was not believed and ignored; its
    #: counts are then None and the request is measured from its stream
    usage_ignored: str | None = None
    # -- tool calls and structured output
    #: the tool-call fragments the event carries, each (the call's index in the answer, the
    #: function's name on the call's first fragment else None, a piece of its arguments'
    #: JSON text); empty for any other event. The event is a token event (``tokens``):
    #: output, neither answer text nor reasoning. Every API says it so (chat
    #: ``delta.tool_calls``, Responses ``function_call`` items and
    #: ``function_call_arguments.delta``, Messages ``tool_use`` blocks and ``input_json_delta``).
    tool_parts: tuple[tuple[int, str | None, str], ...] = ()
    # -- Responses and Messages APIs (openai-responses, anthropic-messages)
    #: the server's id of this answer (Responses: the next turn's ``previous_response_id``)
    response_id: str | None = None
    # -- pooling APIs (embeddings, rerank)
    #: embeddings: vectors in the answer; rerank: results in it (None: not a pooling answer)
    inputs: int | None = None
    vector_dim: int | None = None  # embeddings: every vector's dimension (one for all)
    # -- the server's prefix cache
    #: of ``prompt_tokens``, those the server served from its prefix cache (chat and
    #: completions ``usage.prompt_tokens_details.cached_tokens``, Responses
    #: ``usage.input_tokens_details.cached_tokens``, Messages ``cache_read_input_tokens``);
    #: None: not reported. Set only beside ``prompt_tokens``, from the same usage block
    cached_tokens: int | None = None


EMPTY = Delta()

#: an adapter that asks for no headers of its own
NO_HEADERS: Mapping[str, str] = MappingProxyType({})


def bearer(key: str) -> dict[str, str]:
    """The API key as OpenAI-style servers take it: ``Authorization: Bearer <key>``."""
    return {"Authorization": f"Bearer {key}"}


@dataclass(slots=True, frozen=True)
class RawBody:
    """A request body that is not JSON: its bytes and their ``Content-Type`` (a multipart
    upload). An adapter's ``body`` returns one in place of the JSON object it otherwise
    returns; the requester sends it as it is."""

    data: bytes
    content_type: str


class Adapter(Protocol):
    """A wire protocol: the path, the body, one event -> :class:`Delta`, a whole body too.

    ``parse``, ``parse_many`` and ``parse_body`` read every value through
    :mod:`loadgen.client.adapters.event_values`: they return a :class:`Delta` of checked
    values or raise ``orjson.JSONDecodeError`` or :class:`MalformedEvent` (both
    ``ValueError``), nothing else.
    """

    path: str
    #: the path of a non-streaming request
    path_no_stream: str
    #: whether a well-formed stream ends with ``data: [DONE]``
    ends_with_done: bool
    #: headers every request of this protocol carries (``anthropic-version``)
    headers: Mapping[str, str]

    def auth_headers(self, key: str) -> dict[str, str]:
        """The headers that carry the API key (never printed: outputs redact them)."""
        ...

    def body(
        self,
        spec: RequestSpec,
        model: str,
        extra: dict[str, Any],
        stream: bool = True,
    ) -> dict[str, Any] | RawBody:
        """The request body for ``spec`` (its prompt, ``max_tokens`` and any inputs
        beyond text), ``model`` (the target's, or the spec's own) and ``extra_body``:
        a JSON object, or :class:`RawBody` bytes with their own content type."""
        ...

    def parse(self, payload: bytes) -> Delta: ...

    def parse_many(self, payloads: list[bytes]) -> list[Delta]:
        """The events of one read, as ``parse`` would read each (raises if one is bad)."""
        ...

    def parse_body(self, body: bytes) -> Delta:
        """A non-streaming response: the whole answer and the server's counts."""
        ...


def is_messages(prompt: Prompt) -> TypeGuard[list[Message]]:
    """A chat message list (not text, not token ids)."""
    return isinstance(prompt, list) and bool(prompt) and isinstance(prompt[0], dict)


def render_messages(messages: list[Message]) -> str:
    """Messages as plain text for a text-only API: ``<role>: <content>`` lines, newline-joined."""
    return "\n".join(f"{m['role']}: {m['content']}" for m in messages)


def as_text(prompt: Prompt, api: str) -> str:
    """Text as is, messages rendered as text; token ids are refused (TypeError naming ``api``)."""
    if is_messages(prompt):
        return render_messages(prompt)
    if isinstance(prompt, str):
        return prompt
    raise TypeError(f"{api} takes text or chat messages, not token ids")


class TypedEvents:
    """``parse`` and ``parse_many`` from one :meth:`read_event` (a parsed event -> its
    :class:`Delta`), which a subclass sets: ``read_event = staticmethod(_event)``."""

    @staticmethod
    def read_event(value: Any) -> Delta:
        raise NotImplementedError

    def parse(self, payload: bytes) -> Delta:
        return self.read_event(orjson.loads(payload))

    def parse_many(self, payloads: list[bytes]) -> list[Delta]:
        """The events of one read (:func:`~loadgen.client.adapters.event_values.json_values`)."""
        return [self.read_event(v) for v in json_values(payloads)]
