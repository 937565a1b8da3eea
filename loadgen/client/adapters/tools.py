"""Tools, tool choices and response formats in each API's wire form.

The neutral form is :class:`~loadgen.workload.tools.OutputAsk` (function
definitions with a JSON schema of parameters, a choice, a response format);
each API spells it differently:

- OpenAI chat: tools ``{"type": "function", "function": {name, description,
  parameters}}``; a named choice ``{"type": "function", "function": {"name": NAME}}``.
- OpenAI Responses: tools ``{"type": "function", name, description, parameters}``
  (flat); a named choice ``{"type": "function", "name": NAME}``.
- Anthropic Messages: tools ``{name, description, input_schema}``; a named choice
  ``{"type": "tool", "name": NAME}``.

``auto`` / ``required`` / ``none`` are strings for both OpenAI APIs; Messages
says ``{"type":"auto"}``, ``{"type":"any"}``, ``{"type":"none"}``. A response
format is chat's ``response_format`` (``{"type":"json_schema","json_schema":
{name, schema, strict}}`` or ``{"type":"json_object"}``), Responses'
``text.format`` (``{"type":"json_schema", name, schema, strict}``) and Messages'
``output_config.format`` (``{"type":"json_schema", schema}``: Anthropic's
structured outputs, which vLLM 0.32 turns into chat's ``response_format``; it
has no name, no ``strict`` and no json_object, which the scenario refuses).

Each ``*_fields`` function gives the body fields an adapter adds (computed
once per run, not per request).
"""

from __future__ import annotations

from typing import Any

from loadgen.workload import TOOL_CHOICES, OutputAsk, ResponseFormat, ToolDef

__all__ = [
    "chat_fields",
    "chat_response_format",
    "chat_tool_choice",
    "chat_tools",
    "messages_fields",
    "messages_output_config",
    "messages_tool_choice",
    "messages_tools",
    "responses_fields",
    "responses_text_format",
    "responses_tool_choice",
    "responses_tools",
]


def _strict(t: ToolDef) -> dict[str, Any]:
    """``{"strict": ...}`` when the tool says, else nothing (the server's default)."""
    return {} if t.strict is None else {"strict": t.strict}


def chat_tools(tools: tuple[ToolDef, ...]) -> list[dict[str, Any]]:
    """OpenAI chat: ``{"type": "function", "function": {name, description, parameters}}``
    (and ``strict`` where the tool gives it)."""
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.parameters,
                **_strict(t),
            },
        }
        for t in tools
    ]


def chat_tool_choice(choice: str) -> str | dict[str, Any]:
    """``auto`` / ``required`` / ``none`` as they are; a name as a named function choice."""
    if choice in TOOL_CHOICES:
        return choice
    return {"type": "function", "function": {"name": choice}}


def chat_response_format(fmt: ResponseFormat) -> dict[str, Any]:
    """``{"type": "json_schema", "json_schema": {name, schema, strict}}`` or json_object."""
    if fmt.type == "json_object":
        return {"type": "json_object"}
    return {
        "type": "json_schema",
        "json_schema": {"name": fmt.name, "schema": fmt.schema, "strict": fmt.strict},
    }


def chat_fields(ask: OutputAsk) -> dict[str, Any]:
    """The chat body's ``tools``, ``tool_choice`` and ``response_format``, where asked."""
    out: dict[str, Any] = {}
    if ask.tools:
        out["tools"] = chat_tools(ask.tools)
    if ask.tool_choice is not None:
        out["tool_choice"] = chat_tool_choice(ask.tool_choice)
    if ask.response_format is not None:
        out["response_format"] = chat_response_format(ask.response_format)
    return out


def responses_tools(tools: tuple[ToolDef, ...]) -> list[dict[str, Any]]:
    """OpenAI Responses: ``{"type": "function", name, description, parameters}`` (flat;
    ``strict`` where the tool gives it)."""
    return [
        {
            "type": "function",
            "name": t.name,
            "description": t.description,
            "parameters": t.parameters,
            **_strict(t),
        }
        for t in tools
    ]


def responses_tool_choice(choice: str) -> str | dict[str, Any]:
    """``auto`` / ``required`` / ``none`` as they are; a name as ``{"type": "function", name}``."""
    if choice in TOOL_CHOICES:
        return choice
    return {"type": "function", "name": choice}


def responses_text_format(fmt: ResponseFormat) -> dict[str, Any]:
    """The Responses body's ``text``: ``{"format": {"type": "json_schema", name, schema,
    strict}}`` or ``{"format": {"type": "json_object"}}``."""
    if fmt.type == "json_object":
        return {"format": {"type": "json_object"}}
    return {
        "format": {
            "type": "json_schema",
            "name": fmt.name,
            "schema": fmt.schema,
            "strict": fmt.strict,
        }
    }


def responses_fields(ask: OutputAsk) -> dict[str, Any]:
    """The Responses body's ``tools``, ``tool_choice`` and ``text``, where asked."""
    out: dict[str, Any] = {}
    if ask.tools:
        out["tools"] = responses_tools(ask.tools)
    if ask.tool_choice is not None:
        out["tool_choice"] = responses_tool_choice(ask.tool_choice)
    if ask.response_format is not None:
        out["text"] = responses_text_format(ask.response_format)
    return out


def messages_tools(tools: tuple[ToolDef, ...]) -> list[dict[str, Any]]:
    """Anthropic Messages: ``{name, description, input_schema}`` (``strict`` where given)."""
    return [
        {"name": t.name, "description": t.description, "input_schema": t.parameters, **_strict(t)}
        for t in tools
    ]


_MESSAGES_CHOICE = {"auto": "auto", "required": "any", "none": "none"}


def messages_tool_choice(choice: str) -> dict[str, Any]:
    """``{"type": "auto" | "any" | "none"}`` (required is ``any``), or a named tool:
    ``{"type": "tool", name}``."""
    if choice in _MESSAGES_CHOICE:
        return {"type": _MESSAGES_CHOICE[choice]}
    return {"type": "tool", "name": choice}


def messages_output_config(fmt: ResponseFormat) -> dict[str, Any]:
    """The Messages body's ``output_config``: ``{"format": {"type": "json_schema", schema}}``
    (Anthropic's structured outputs, as vLLM 0.32 reads them; json_object has no Messages
    form and is refused by the scenario)."""
    if fmt.type != "json_schema" or fmt.schema is None:
        raise ValueError("anthropic-messages takes a json_schema response format only")
    return {"format": {"type": "json_schema", "schema": fmt.schema}}


def messages_fields(ask: OutputAsk) -> dict[str, Any]:
    """The Messages body's ``tools``, ``tool_choice`` and ``output_config``, where asked."""
    out: dict[str, Any] = {}
    if ask.tools:
        out["tools"] = messages_tools(ask.tools)
    if ask.tool_choice is not None:
        out["tool_choice"] = messages_tool_choice(ask.tool_choice)
    if ask.response_format is not None:
        out["output_config"] = messages_output_config(ask.response_format)
    return out
