"""The tokens of an agent's tool round in a prompt: the calls an answer made, the results.

A prompt that carries earlier tool calls and their results counts them as
vLLM's chat template renders them, one token per whitespace-separated word
here as everywhere in the mock:

- chat: an assistant message's ``tool_calls[].function.arguments`` (after its
  ``content``); a ``tool`` message's ``content`` is counted as any content;
- Responses: a ``function_call`` item's ``arguments``, a ``function_call_output``
  item's ``output``;
- Messages: a ``tool_use`` block's ``input`` (as compact JSON text), a
  ``tool_result`` block's ``content`` (text, or its ``text`` blocks).

Names, ids and roles count nothing, as role names do.
"""

from __future__ import annotations

from typing import Any

import orjson

__all__ = ["message_tool_words", "part_tool_words"]


def message_tool_words(message: dict[str, Any]) -> list[str]:
    """The words of a message's (or a Responses item's) tool calls and tool output."""
    words: list[str] = []
    kind = message.get("type")
    if kind == "function_call":
        words += _split(message.get("arguments"))
    elif kind == "function_call_output":
        words += _split(message.get("output"))
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        for call in calls:
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict):
                words += _split(fn.get("arguments"))
    return words


def part_tool_words(part: dict[str, Any]) -> list[str] | None:
    """A content block's words when it is a ``tool_use`` or ``tool_result`` block, else None."""
    kind = part.get("type")
    if kind == "tool_use":
        return orjson.dumps(part.get("input") or {}).decode().split()
    if kind != "tool_result":
        return None
    content = part.get("content")
    if isinstance(content, list):
        return [w for b in content if isinstance(b, dict) for w in _split(b.get("text"))]
    return _split(content)


def _split(text: Any) -> list[str]:
    return text.split() if isinstance(text, str) else []
