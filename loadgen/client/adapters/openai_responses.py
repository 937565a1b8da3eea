"""OpenAI ``/v1/responses`` (the Responses API), as vLLM 0.32 streams it.

Every event names itself in its ``type`` field (vLLM also writes it on an
``event:`` line, which the SSE splitter reads past):

- ``response.output_text.delta``: one answer token (vLLM sends none for a
  token that decodes to no text, a partial UTF-8 character: events can then
  be fewer than the usage count);
- ``response.reasoning_text.delta``, ``response.reasoning_summary_text.delta``:
  one reasoning token;
- ``response.output_item.added`` of a ``function_call`` item: a tool call
  opens (its ``name``; the call's index is the item's ``output_index``): one
  token event with ``tool_parts`` ``(index, name, "")``, as chat's first
  tool-call chunk, which names the function and carries no arguments;
- ``response.function_call_arguments.delta``: one tool-call fragment,
  ``tool_parts`` ``(output_index, None, delta)`` (vLLM writes its first one
  with the ``output_item.added``, or one token later);
- ``response.completed`` (and OpenAI's ``response.incomplete``): the final
  event, no ``[DONE]`` after it; its ``response`` holds the id (the next
  turn's ``previous_response_id``), ``status`` (``incomplete``: cut at
  ``max_output_tokens``, finish reason ``length``) and ``usage``
  (``input_tokens``, ``output_tokens``, ``output_tokens_details.reasoning_tokens``);
- ``response.failed`` and ``error``: the request failed (``stream_error``);
- any other type (``response.created``, an ``output_item.added`` of a
  message or reasoning item, ``content_part.done``, ...): no token.

A non-streaming answer is the ``response`` object itself (its
``function_call`` items are the answer's tool calls). With an
:class:`~loadgen.workload.tools.OutputAsk` every body carries flat ``tools``,
``tool_choice`` and ``text.format`` (:func:`~loadgen.client.adapters.tools.responses_fields`);
a request's images are ``input_image`` parts of its last user message
(:func:`~loadgen.client.adapters.media_parts.responses_parts`). Every value is
read through :mod:`loadgen.client.adapters.event_values`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from loadgen.client.adapters.agent_messages import has_calls, responses_items
from loadgen.client.adapters.base import EMPTY, NO_HEADERS, Delta, TypedEvents, bearer, is_messages
from loadgen.client.adapters.event_values import (
    MAX_TOOL_INDEX,
    MalformedEvent,
    error_message,
    items,
    obj,
    string,
    tool_index,
)
from loadgen.client.adapters.media_parts import responses_parts, with_media
from loadgen.client.adapters.openai_common import read_usage
from loadgen.client.adapters.tools import responses_fields

if TYPE_CHECKING:
    from loadgen.workload import Media, Message, OutputAsk, Prompt, RequestSpec

__all__ = ["OpenAIResponses", "input_items", "message_content"]

_TEXT = "response.output_text.delta"
_REASONING = frozenset({"response.reasoning_text.delta", "response.reasoning_summary_text.delta"})
_TOOL = "response.function_call_arguments.delta"
_ADDED = "response.output_item.added"
_FINAL = frozenset({"response.completed", "response.incomplete"})


def message_content(message: Message) -> Any:
    """One message's ``content`` as the Responses API takes it: the text (an input
    with images would be a list of ``input_text`` / ``input_image`` parts, made here)."""
    return message["content"]


def input_items(prompt: Prompt, media: tuple[Media, ...] = ()) -> str | list[dict[str, Any]]:
    """``input``: text as is; messages as Responses input items (``role``, ``content``).
    With ``media`` the last user message's content is ``input_image`` and ``input_text``
    parts (text alone becomes that one user message)."""
    if isinstance(prompt, str) and not media:
        return prompt
    if isinstance(prompt, str):
        prompt = [{"role": "user", "content": prompt}]
    if not is_messages(prompt):
        raise TypeError("openai-responses takes text or chat messages, not token ids")
    if has_calls(prompt):  # an agent's tool rounds (no media: agents send none)
        return responses_items(prompt)
    items_ = [{"role": m["role"], "content": message_content(m)} for m in prompt]
    return with_media(items_, media, responses_parts) if media else items_


def _call_opened(event: dict[str, Any]) -> Delta:
    """``output_item.added``: a function call's opening is a token event naming it."""
    item = obj(event.get("item"), "item")
    if item.get("type") != "function_call":
        return EMPTY
    name = string(item.get("name"), "item.name") or ""
    index = tool_index(event.get("output_index"), "output_index")
    return Delta(1, "", tool_parts=((index, name, ""),))


def _event(value: Any) -> Delta:
    event = obj(value, "event")
    kind = event.get("type")
    if kind == _TEXT:
        text = event.get("delta")
        if type(text) is str:  # the common case, checked inline
            return Delta(1, text)
        return Delta(1, string(text, "delta") or "")
    if type(kind) is not str:
        raise MalformedEvent("type: expected a string naming the event")
    if kind in _REASONING:
        string(event.get("delta"), "delta")
        return Delta(1, "", reasoning=True)
    if kind == _TOOL:
        args = string(event.get("delta"), "delta") or ""
        index = tool_index(event.get("output_index"), "output_index")
        return Delta(1, "", tool_parts=((index, None, args),))
    if kind == _ADDED:
        return _call_opened(event)
    if kind in _FINAL:
        delta = _response(obj(event.get("response"), "response"))
        delta.final = True
        return delta
    if kind == "response.failed":
        response = obj(event.get("response"), "response")
        return Delta(error=error_message(response.get("error") or "response.failed"))
    if kind == "error":
        return Delta(error=error_message(event))
    return EMPTY


def _response(response: dict[str, Any]) -> Delta:
    """A finished response: its id, why it ended and its usage."""
    delta = Delta(response_id=string(response.get("id"), "response.id"))
    status = string(response.get("status"), "response.status")
    output = response.get("output")
    calls = output is not None and any(
        type(item) is dict and item.get("type") == "function_call"
        for item in items(output, "response.output")
    )
    if status == "incomplete":
        delta.finish_reason = "length"
    elif status == "completed":
        delta.finish_reason = "tool_calls" if calls else "stop"
    elif status is not None:
        delta.finish_reason = status[:64]
    if (usage := response.get("usage")) is not None:
        read_usage(delta, usage, "response.usage", "input_tokens", "output_tokens")
    return delta


def _calls(response: dict[str, Any]) -> tuple[tuple[int, str | None, str], ...]:
    """The ``function_call`` items of a whole response as (index, name, arguments) parts."""
    parts = []
    for i, item in enumerate(items(response.get("output") or [], "response.output")):
        item = obj(item, "response.output[]")
        if item.get("type") == "function_call":
            name = string(item.get("name"), "function_call.name")
            args = string(item.get("arguments"), "function_call.arguments") or ""
            parts.append((min(i, MAX_TOOL_INDEX), name, args))
    return tuple(parts)


def _answer_text(response: dict[str, Any]) -> str:
    """The answer text of a whole response: its message items' ``output_text`` parts."""
    parts: list[str] = []
    for item in items(response.get("output") or [], "response.output"):
        item = obj(item, "response.output[]")
        if item.get("type") != "message":
            continue
        for part in items(item.get("content") or [], "output[].content"):
            part = obj(part, "output[].content[]")
            if part.get("type") == "output_text":
                parts.append(string(part.get("text"), "output_text.text") or "")
    return "".join(parts)


class OpenAIResponses(TypedEvents):
    """``output``: tools, a tool choice or a response format to send with every request."""

    path = "/v1/responses"
    path_no_stream = "/v1/responses"
    ends_with_done = False
    read_event = staticmethod(_event)
    headers = NO_HEADERS
    auth_headers = staticmethod(bearer)

    def __init__(self, output: OutputAsk | None = None) -> None:
        self.output_fields = responses_fields(output) if output is not None else {}

    def body(
        self,
        spec: RequestSpec,
        model: str,
        extra: dict[str, Any],
        stream: bool = True,
    ) -> dict[str, Any]:
        """``input`` (images as ``input_image`` parts), ``max_output_tokens``, the tools or
        text format asked; a server-state session turn chains ``previous_response_id`` and
        asks the server to keep the answer (``store``)."""
        fields: dict[str, Any] = {
            "model": model,
            "input": input_items(spec.prompt, spec.media),
            "max_output_tokens": spec.max_tokens,
            "stream": stream,
            "store": spec.server_state,
        }
        if spec.previous_response_id is not None:
            fields["previous_response_id"] = spec.previous_response_id
        return {**fields, **self.output_fields, **extra}

    def parse_body(self, body: bytes) -> Delta:
        response = obj(orjson.loads(body), "body")
        delta = _response(response)
        delta.text = _answer_text(response)
        delta.tool_parts = _calls(response)
        delta.final = True
        return delta
