"""Anthropic ``/v1/messages`` (the Messages API), as vLLM 0.32 and Anthropic stream it.

Every event names itself in its ``type`` field (and on an ``event:`` line):

- ``message_start``: no token; ``message.usage.input_tokens`` (plus
  ``cache_read_input_tokens`` and ``cache_creation_input_tokens`` where sent:
  Anthropic counts cached input apart, so the prompt is their sum;
  ``cache_read_input_tokens`` is the prompt's cached tokens, ``Delta.cached_tokens``);
- ``content_block_start`` of a ``tool_use`` block: a tool call opens (its
  ``name``; the call's index is the block's ``index``): one token event with
  ``tool_parts`` ``(index, name, "")``, as chat's first tool-call chunk;
  other blocks' starts are nothing;
- ``content_block_delta``: by ``delta.type``, ``text_delta`` is one answer
  token, ``thinking_delta`` one reasoning token, ``input_json_delta`` one
  tool-call fragment (``tool_parts`` ``(index, None, partial_json)``);
  ``signature_delta`` is none. vLLM sends no delta for a token that decodes
  to no text;
- ``message_delta``: ``usage.output_tokens`` (the whole answer's; vLLM also sends the
  input counts here, the cache's only with ``--enable-prompt-tokens-details``) and
  ``delta.stop_reason`` (``end_turn``/``stop_sequence`` -> ``stop``,
  ``max_tokens`` -> ``length``, ``tool_use`` -> ``tool_calls``);
- ``message_stop``: the final event; no ``[DONE]`` (vLLM sends none either);
- ``error``: the request failed (``stream_error``);
- ``ping``, ``content_block_stop``: nothing.

System messages go to the top-level ``system`` field; a request's images are
base64 ``image`` blocks of its last user message
(:func:`~loadgen.client.adapters.media_parts.messages_parts`). With an
:class:`~loadgen.workload.tools.OutputAsk` every body carries ``tools``
(``input_schema``) and ``tool_choice`` (``{"type": "auto" | "any" | "none" |
"tool", "name"}``), or a JSON schema the answer's text must meet, as
``output_config: {"format": {"type": "json_schema", "schema": ...}}``
(:func:`~loadgen.client.adapters.tools.messages_fields`). A whole
answer's ``tool_use`` blocks are its tool calls (``input`` as JSON text). The key goes in
``x-api-key`` (Anthropic's header) and as ``Authorization: Bearer`` too:
vLLM's ``--api-key`` reads only the latter. Every value is read through
:mod:`loadgen.client.adapters.event_values`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import orjson

from loadgen.client.adapters.agent_messages import has_calls, messages_blocks
from loadgen.client.adapters.base import EMPTY, Delta, TypedEvents, is_messages
from loadgen.client.adapters.event_values import (
    MAX_TOOL_INDEX,
    MalformedEvent,
    count,
    error_message,
    items,
    obj,
    reason,
    string,
    tool_index,
)
from loadgen.client.adapters.media_parts import messages_parts, with_media
from loadgen.client.adapters.tools import messages_fields

if TYPE_CHECKING:
    from loadgen.workload import Media, Message, OutputAsk, Prompt, RequestSpec

__all__ = ["ANTHROPIC_VERSION", "STOP_REASONS", "AnthropicMessages", "message_content"]

#: the API version every request names (the one vLLM and Anthropic document)
ANTHROPIC_VERSION = "2023-06-01"
#: Anthropic's stop reasons in the words the other APIs use
STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
}


def message_content(message: Message) -> Any:
    """One message's ``content`` as the Messages API takes it: the text (a message
    with images would be a list of ``text`` / ``image`` blocks, made here)."""
    return message["content"]


def split_system(
    prompt: Prompt, media: tuple[Media, ...] = ()
) -> tuple[str | None, list[dict[str, Any]]]:
    """(the ``system`` text or None, the ``messages``): system messages go to the top;
    ``media`` become ``image`` blocks of the last user message."""
    if isinstance(prompt, str):
        system, messages = None, [{"role": "user", "content": prompt}]
    elif not is_messages(prompt):
        raise TypeError("anthropic-messages takes text or chat messages, not token ids")
    else:
        texts = [m["content"] for m in prompt if m["role"] == "system"]
        system = "\n".join(texts) if texts else None
        rest = [m for m in prompt if m["role"] != "system"]
        if has_calls(rest):  # an agent's tool rounds (no media: agents send none)
            return system, messages_blocks(rest)
        messages = [{"role": m["role"], "content": message_content(m)} for m in rest]
    return system, with_media(messages, media, messages_parts) if media else messages


def _block_start(event: dict[str, Any]) -> Delta:
    """``content_block_start``: a ``tool_use`` block's start is a token event naming it."""
    block = obj(event.get("content_block"), "content_block")
    if block.get("type") != "tool_use":
        return EMPTY
    name = string(block.get("name"), "content_block.name") or ""
    return Delta(1, "", tool_parts=((tool_index(event.get("index"), "index"), name, ""),))


def _input_tokens(usage: Any, name: str) -> tuple[int | None, int | None]:
    """(``input_tokens`` plus the cached input Anthropic counts apart, of them the
    ``cache_read_input_tokens``: those served from the cache)."""
    block = obj(usage, name)
    total = count(block.get("input_tokens"), f"{name}.input_tokens")
    read = count(block.get("cache_read_input_tokens"), f"{name}.cache_read_input_tokens")
    made = count(block.get("cache_creation_input_tokens"), f"{name}.cache_creation_input_tokens")
    for more in (read, made):
        if more is not None:
            total = (total or 0) + more
    return total, read


def _usage(delta: Delta, usage: Any, name: str) -> None:
    """A usage block's counts, checked; one that cannot be believed is ignored whole."""
    try:
        prompt, cached = _input_tokens(usage, name)
        output = count(obj(usage, name).get("output_tokens"), f"{name}.output_tokens")
    except MalformedEvent as exc:
        delta.usage_ignored = str(exc)
        return
    delta.prompt_tokens = prompt
    delta.completion_tokens = output
    if prompt is not None:
        delta.cached_tokens = cached


def _stop(value: Any, name: str) -> str | None:
    got = reason(value, name)
    return None if got is None else STOP_REASONS.get(got, got)


def _block_delta(event: dict[str, Any]) -> Delta:
    d = obj(event.get("delta"), "delta")
    kind = d.get("type")
    if kind == "text_delta":
        text = d.get("text")
        if type(text) is str:  # the common case, checked inline
            return Delta(1, text)
        return Delta(1, string(text, "delta.text") or "")
    if kind == "thinking_delta":
        string(d.get("thinking"), "delta.thinking")
        return Delta(1, "", reasoning=True)
    if kind == "input_json_delta":
        args = string(d.get("partial_json"), "delta.partial_json") or ""
        return Delta(1, "", tool_parts=((tool_index(event.get("index"), "index"), None, args),))
    string(kind, "delta.type")
    return EMPTY


def _event(value: Any) -> Delta:
    event = obj(value, "event")
    kind = event.get("type")
    if kind == "content_block_delta":
        return _block_delta(event)
    if kind == "message_start":
        message = obj(event.get("message"), "message")
        delta = Delta(response_id=string(message.get("id"), "message.id"))
        if (usage := message.get("usage")) is not None:
            _usage(delta, usage, "message.usage")
            delta.completion_tokens = None  # 0 or 1 so far: the count comes in message_delta
        return delta
    if kind == "message_delta":
        delta = Delta(
            finish_reason=_stop(
                obj(event.get("delta"), "delta").get("stop_reason"), "delta.stop_reason"
            )
        )
        if (usage := event.get("usage")) is not None:
            _usage(delta, usage, "usage")
        return delta
    if kind == "message_stop":
        return Delta(final=True)
    if kind == "content_block_start":
        return _block_start(event)
    if kind == "error":
        return Delta(error=error_message(event.get("error") or "error"))
    if type(kind) is not str:
        raise MalformedEvent("type: expected a string naming the event")
    return EMPTY


class AnthropicMessages(TypedEvents):
    path = "/v1/messages"
    path_no_stream = "/v1/messages"
    ends_with_done = False
    read_event = staticmethod(_event)
    headers: Mapping[str, str] = MappingProxyType({"anthropic-version": ANTHROPIC_VERSION})

    def __init__(self, output: OutputAsk | None = None) -> None:
        """``output``: tools and a tool choice, or a response format, to send with every
        request."""
        self.output_fields = messages_fields(output) if output is not None else {}

    @staticmethod
    def auth_headers(key: str) -> dict[str, str]:
        return {"x-api-key": key, "Authorization": f"Bearer {key}"}

    def body(
        self,
        spec: RequestSpec,
        model: str,
        extra: dict[str, Any],
        stream: bool = True,
    ) -> dict[str, Any]:
        system, messages = split_system(spec.prompt, spec.media)
        fields: dict[str, Any] = {"model": model, "messages": messages}
        if system is not None:
            fields["system"] = system
        fields["max_tokens"] = spec.max_tokens
        fields["stream"] = stream
        return {**fields, **self.output_fields, **extra}

    def parse_body(self, body: bytes) -> Delta:
        message = obj(orjson.loads(body), "body")
        delta = Delta(
            response_id=string(message.get("id"), "id"),
            finish_reason=_stop(message.get("stop_reason"), "stop_reason"),
            final=True,
        )
        if (usage := message.get("usage")) is not None:
            _usage(delta, usage, "usage")
        text: list[str] = []
        calls: list[tuple[int, str | None, str]] = []
        for i, block in enumerate(items(message.get("content") or [], "content")):
            block = obj(block, "content[]")
            kind = block.get("type")
            if kind == "text":
                text.append(string(block.get("text"), "content[].text") or "")
            elif kind == "tool_use":
                name = string(block.get("name"), "content[].name")
                value = block.get("input")
                args = value if type(value) is str else orjson.dumps(value).decode()
                calls.append((min(i, MAX_TOOL_INDEX), name, args))
        delta.text = "".join(text)
        delta.tool_parts = tuple(calls)
        return delta
