"""OpenAI ``/v1/chat/completions``.

The opener that only carries the role (``delta: {role, content: ""}``) is not
a token; every later event whose delta has ``content`` (even empty),
``reasoning_content``/``reasoning`` or ``tool_calls`` is one token. An event
with reasoning and no ``content`` text is a reasoning token. A ``tool_calls``
list with entries is a token even beside ``role`` (OpenAI opens a call so);
each entry's ``index``, ``function.name`` and ``function.arguments`` become
the delta's ``tool_parts`` (:func:`tool_parts`, values checked). A non-streaming
answer has ``message`` where a stream has ``delta``. Text and the finish
reason are checked (:mod:`~loadgen.client.adapters.event_values`): a ``content`` that
is a number or a list is a malformed event, not text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loadgen.client.adapters.agent_messages import chat_messages, has_calls
from loadgen.client.adapters.base import Delta, as_text, is_messages
from loadgen.client.adapters.event_values import items, obj, reason, string, tool_index
from loadgen.client.adapters.media_parts import with_media
from loadgen.client.adapters.openai_common import OpenAIAdapter, openai_body
from loadgen.client.adapters.tools import chat_fields

if TYPE_CHECKING:
    from loadgen.workload import OutputAsk, Prompt, RequestSpec

__all__ = ["OpenAIChat", "read_chat_choice", "tool_parts"]


def tool_parts(calls: object) -> tuple[tuple[int, str | None, str], ...]:
    """``delta.tool_calls`` (or ``message.tool_calls``) as (index, name, arguments) parts."""
    out = []
    for i, entry in enumerate(items(calls, "delta.tool_calls")):
        call = obj(entry, f"delta.tool_calls[{i}]")
        index = tool_index(call.get("index", i), f"delta.tool_calls[{i}].index")
        fn = obj(call.get("function") or {}, f"delta.tool_calls[{i}].function")
        name = string(fn.get("name"), f"delta.tool_calls[{i}].function.name")
        args = string(fn.get("arguments"), f"delta.tool_calls[{i}].function.arguments")
        out.append((index, name, args or ""))
    return tuple(out)


def _choice(choice: dict[str, Any]) -> Delta:
    d = obj(choice.get("delta") or choice.get("message") or {}, "choices[0].delta")
    text = d.get("content")
    finish = choice.get("finish_reason")
    if finish is None and type(text) is str and text:  # the common case, checked inline
        return Delta(1, text)
    text = string(text, "delta.content")
    finish = reason(finish, "choices[0].finish_reason")
    if text:
        return Delta(1, text, finish)
    calls = d.get("tool_calls")
    if calls:
        return Delta(1, "", finish, tool_parts=tool_parts(calls))
    reasoning = string(d.get("reasoning_content"), "delta.reasoning_content")
    if reasoning is None:
        reasoning = string(d.get("reasoning"), "delta.reasoning")
    # the role-only opener is not a token; an empty content or other output is
    if reasoning is not None and (reasoning or "role" not in d):
        return Delta(1, "", finish, reasoning=True)
    is_token = "role" not in d and (text is not None or d.get("tool_calls") is not None)
    return Delta(1 if is_token else 0, "", finish)


#: ``choices[0]`` of a chat event -> its delta (transcription chunks read the same way)
read_chat_choice = _choice


class OpenAIChat(OpenAIAdapter):
    """``output``: tools, a tool choice or a response format to send with every request."""

    path = "/v1/chat/completions"
    path_no_stream = "/v1/chat/completions"
    read_choice = staticmethod(_choice)

    def __init__(self, output: OutputAsk | None = None) -> None:
        self.output_fields = chat_fields(output) if output is not None else {}

    def prompt_field(self, prompt: Prompt) -> dict[str, Any]:
        """A message list is sent as is (an agent's tool rounds in chat's form:
        :mod:`~loadgen.client.adapters.agent_messages`); text becomes one user message."""
        if is_messages(prompt):
            return {"messages": chat_messages(prompt) if has_calls(prompt) else prompt}
        return {"messages": [{"role": "user", "content": as_text(prompt, "openai-chat")}]}

    def body(
        self,
        spec: RequestSpec,
        model: str,
        extra: dict[str, Any],
        stream: bool = True,
    ) -> dict[str, Any]:
        """The skeleton's body; a spec's images and audio become content parts of its
        last user message (:mod:`~loadgen.client.adapters.media_parts`)."""
        if not spec.media:
            return super().body(spec, model, extra, stream)
        field = self.prompt_field(spec.prompt)
        field["messages"] = with_media(field["messages"], spec.media)
        fields = {"model": model, **field, "max_tokens": spec.max_tokens, **self.output_fields}
        return openai_body(fields, extra, stream)
