"""Tools and structured output as the Responses and Messages APIs ask for them.

The same :class:`~loadgen.mock.structured.Structured` as chat's, read from each API's own
shape (vLLM 0.32's validation, its 400s):

- Responses: flat ``tools`` (``{"type": "function", name, description, parameters}``;
  other tool types are not functions and are skipped), ``tool_choice`` ``auto`` /
  ``required`` / ``none`` or ``{"type": "function", name}``, and ``text.format``
  (``{"type": "json_schema", name, schema, strict}``, ``json_object`` or ``text``);
- Messages: ``tools`` (``{name, description, input_schema}``), ``tool_choice``
  ``{"type": "auto" | "any" | "none" | "tool", name}`` (``any`` is chat's ``required``)
  and ``output_config.format`` (``{"type": "json_schema", schema}``: vLLM's
  ``AnthropicJsonOutputFormat``; any other type is a 400, and a format without a
  schema is ignored, as vLLM maps only a schema to chat's ``response_format``).
"""

from __future__ import annotations

from typing import Any

from loadgen.mock.http_framing import vllm_error
from loadgen.mock.structured import Structured

__all__ = ["messages_structured", "responses_structured"]

_EMPTY = {"type": "object", "properties": {}}
_MESSAGES_CHOICE = {"auto": "auto", "any": "required", "none": "none"}


def _choice_needs_tools(choice: str | None, tools: dict[str, Any], err: Any) -> str | None:
    if choice is None:
        return None
    if not tools:
        if choice in ("auto", "none"):
            return None  # vLLM: tool_choice none without tools
        raise err(400, f"Tool choice '{choice}' must be specified with 'tools' parameter.")
    if choice not in ("auto", "required", "none") and choice not in tools:
        raise err(400, "Tool choice 'function' not found in 'tools' parameter.")
    return choice


def responses_structured(data: dict[str, Any]) -> Structured | None:
    """A Responses body's tools / tool_choice / text.format; None when it asks for none."""
    tools: dict[str, Any] = {}
    raw = data.get("tools")
    if raw is not None:
        if not isinstance(raw, list):
            raise vllm_error(400, "tools must be a list", "tools")
        for t in raw:
            if not isinstance(t, dict) or t.get("type") != "function":
                continue
            if not isinstance(t.get("name"), str):
                raise vllm_error(400, "each function tool needs a name", "tools")
            tools[t["name"]] = t.get("parameters") or _EMPTY
    choice_raw = data.get("tool_choice")
    choice: str | None
    if choice_raw is None or isinstance(choice_raw, str):
        if choice_raw not in (None, "auto", "required", "none"):
            raise vllm_error(400, "tool_choice must be auto, required, none or a function")
        choice = choice_raw
    elif isinstance(choice_raw, dict) and choice_raw.get("type") == "function":
        name = choice_raw.get("name")
        if not isinstance(name, str):
            raise vllm_error(400, "Tool choice 'function' not found in 'tools' parameter.")
        choice = name
    else:
        raise vllm_error(400, "tool_choice must be auto, required, none or a function")
    choice = _choice_needs_tools(choice, tools, vllm_error)
    fmt = _text_format(data.get("text"))
    if not tools and fmt is None:
        return None
    if fmt is None:
        return Structured(tools, choice)
    return Structured(tools, choice, fmt[0], fmt[1])


def _text_format(text: Any) -> tuple[str, Any] | None:
    """``text.format``: (json_schema, its schema) or (json_object, None); None for text."""
    if text is None:
        return None
    fmt = text.get("format") if isinstance(text, dict) else None
    if fmt is None:
        return None
    kind = fmt.get("type") if isinstance(fmt, dict) else None
    if kind not in ("json_schema", "json_object", "text"):
        raise vllm_error(400, "text.format.type must be json_schema, json_object or text")
    if kind == "text":
        return None
    if kind == "json_object":
        return kind, None
    if not isinstance(fmt.get("schema"), dict):
        raise vllm_error(400, "text.format.schema must be an object", "text")
    return kind, fmt["schema"]


def messages_structured(data: dict[str, Any], err: Any) -> Structured | None:
    """A Messages body's tools / tool_choice / output_config.format; None when it asks for
    neither. ``err`` makes the 400 (Anthropic's error shape)."""
    raw = data.get("tools")
    tools: dict[str, Any] = {}
    if raw is not None:
        if not isinstance(raw, list):
            raise err(400, "tools: Input should be a valid list")
        for t in raw:
            if not isinstance(t, dict) or not isinstance(t.get("name"), str):
                raise err(400, "tools: each tool needs a name")
            tools[t["name"]] = t.get("input_schema") or _EMPTY
    choice_raw = data.get("tool_choice")
    choice: str | None = None
    if choice_raw is not None:
        kind = choice_raw.get("type") if isinstance(choice_raw, dict) else None
        if kind == "tool":
            name = choice_raw.get("name")
            if not isinstance(name, str):
                raise err(400, "tool_choice: a tool choice of type tool needs a name")
            choice = name
        elif kind in _MESSAGES_CHOICE:
            choice = _MESSAGES_CHOICE[kind]
        else:
            raise err(400, "tool_choice: type must be auto, any, none or tool")
    choice = _choice_needs_tools(choice, tools, err)
    schema = _output_schema(data.get("output_config"), err)
    if schema is not None:
        return Structured(tools, choice, "json_schema", schema)
    return Structured(tools, choice) if tools else None


def _output_schema(config: Any, err: Any) -> dict[str, Any] | None:
    """``output_config.format.schema``, or None when no format (or no schema) is given."""
    if config is None:
        return None
    if not isinstance(config, dict):
        raise err(400, "output_config: Input should be a valid dictionary")
    fmt = config.get("format")
    if fmt is None:
        return None
    if not isinstance(fmt, dict):
        raise err(400, "output_config.format: Input should be a valid dictionary")
    if fmt.get("type", "json_schema") != "json_schema":
        raise err(400, "output_config.format.type: Input should be 'json_schema'")
    schema = fmt.get("schema")
    if schema is None:
        return None
    if not isinstance(schema, dict):
        raise err(400, "output_config.format.schema: Input should be a valid dictionary")
    return schema
