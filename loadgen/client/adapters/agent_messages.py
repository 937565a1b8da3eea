"""An agent's tool rounds in each API's form (the neutral form: loadgen.workload.agent_context).

A round whose answer made a real tool call is two neutral messages: the
answer (``role: assistant`` with ``call_id``, ``call_name``,
``call_arguments``) and the result (``role: tool`` with ``call_id``,
``call_name``). Each API spells them:

- chat: ``{"role": "assistant", "content": text or null, "tool_calls": [{"id",
  "type": "function", "function": {"name", "arguments"}}]}`` and ``{"role":
  "tool", "tool_call_id", "content"}``;
- Responses: the answer's text as an assistant message item (when it has
  any), then ``{"type": "function_call", "call_id", "name", "arguments"}``; the
  result ``{"type": "function_call_output", "call_id", "output"}``;
- Messages: an assistant message of a ``text`` block (when it has text) and a
  ``tool_use`` block (``id``, ``name``, ``input``: the arguments parsed, ``{}``
  when they are not a JSON object); the result a user message of one
  ``tool_result`` block (``tool_use_id``, ``content``).

Every other message is left to the adapter as before. Only prompts that hold
a call are mapped (:func:`has_calls`), so a plain chat pays one scan.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from loadgen.workload import Message

__all__ = ["chat_messages", "has_calls", "messages_blocks", "responses_items"]


def has_calls(messages: list[Message]) -> bool:
    """Some message is half of a tool round (the neutral form's ``call_id``)."""
    return any("call_id" in m for m in messages)


def chat_messages(messages: list[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in messages:
        if "call_id" not in m:
            out.append(m)
        elif m["role"] == "tool":
            out.append({"role": "tool", "tool_call_id": m["call_id"], "content": m["content"]})
        else:
            fn = {"name": m["call_name"], "arguments": m["call_arguments"]}
            call = {"id": m["call_id"], "type": "function", "function": fn}
            out.append({"role": "assistant", "content": m["content"] or None, "tool_calls": [call]})
    return out


def responses_items(messages: list[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in messages:
        if "call_id" not in m:
            out.append({"role": m["role"], "content": m["content"]})
        elif m["role"] == "tool":
            out.append(
                {"type": "function_call_output", "call_id": m["call_id"], "output": m["content"]}
            )
        else:
            if m["content"]:
                out.append({"role": "assistant", "content": m["content"]})
            out.append(
                {
                    "type": "function_call",
                    "call_id": m["call_id"],
                    "name": m["call_name"],
                    "arguments": m["call_arguments"],
                }
            )
    return out


def messages_blocks(messages: list[Message]) -> list[dict[str, Any]]:
    """The Messages API's ``messages`` (system messages already taken out)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if "call_id" not in m:
            out.append({"role": m["role"], "content": m["content"]})
        elif m["role"] == "tool":
            block = {"type": "tool_result", "tool_use_id": m["call_id"], "content": m["content"]}
            out.append({"role": "user", "content": [block]})
        else:
            blocks: list[dict[str, Any]] = []
            if m["content"]:
                blocks.append({"type": "text", "text": m["content"]})
            use = {"type": "tool_use", "id": m["call_id"], "name": m["call_name"]}
            blocks.append({**use, "input": _arguments(m["call_arguments"])})
            out.append({"role": "assistant", "content": blocks})
    return out


def _arguments(text: str) -> dict[str, Any]:
    try:
        value = orjson.loads(text or "{}")
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}
