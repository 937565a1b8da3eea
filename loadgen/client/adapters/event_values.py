"""Every value an adapter takes from a server's JSON, checked once before it is used.

A server decides what its events hold; loadgen decides what it believes. Each
function here takes one parsed value and returns it typed (``str``, ``int``,
a ``dict`` or ``list`` of the expected shape) or raises:

- :class:`MalformedEvent` (a ``ValueError``): the event is not of the
  protocol (text that is a number, ``choices`` that is not a list, a finish
  reason that is an object). The request ends as ``malformed_event``.
- :class:`MalformedUsage` (a :class:`MalformedEvent`): a token count that
  cannot be believed. The adapters catch it: the usage block is ignored, the
  delta says why (``Delta.usage_ignored``), and the request is measured from
  its stream.

So an adapter's :class:`~loadgen.client.adapters.base.Delta` holds only
values of its declared types: nothing a server sends can raise later, when
the text is joined or a record is written or read back. Messages name the
field and the type found, never the server's value (it may echo a secret).

:func:`tool_index` checks a tool call's index (chat's, Responses', Messages');
:func:`json_values` parses the events of one read as one JSON array.

:func:`error_message` reads the server's own words from an error event (an
SSE ``event: error`` frame or an ``error`` field), whatever its shape.
"""

from __future__ import annotations

from typing import Any

import orjson

__all__ = [
    "MAX_COUNT",
    "MAX_REASON_CHARS",
    "MAX_TOOL_INDEX",
    "MalformedEvent",
    "MalformedUsage",
    "count",
    "error_message",
    "event_error",
    "first_choice",
    "items",
    "json_values",
    "obj",
    "reason",
    "string",
    "tool_index",
]

#: the largest token count a server may report; anything above is not believed
MAX_COUNT = 10_000_000
#: a finish reason is a word ("stop", "length"); a longer one is cut to this
MAX_REASON_CHARS = 64
#: a tool call's index in an answer, at most (a bound on what a server can make us keep)
MAX_TOOL_INDEX = 1023
#: the most characters of a server's error message kept
MAX_ERROR_CHARS = 200


class MalformedEvent(ValueError):
    """A value of an event that is not what the protocol says it is."""


class MalformedUsage(MalformedEvent):
    """A token count from the server that is not a non-negative integer within bounds."""


def _kind(value: Any) -> str:
    """What a value is, without the value itself (it may hold anything)."""
    if value is None:
        return "null"
    if type(value) is bool:
        return "a boolean"
    if type(value) is int:
        return "an integer out of range"
    return {
        str: "a string",
        float: "a number with a fraction or exponent",
        list: "a list",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def obj(value: Any, name: str) -> dict[str, Any]:
    """A JSON object."""
    if type(value) is not dict:
        raise MalformedEvent(f"{name}: expected an object, got {_kind(value)}")
    return value


def items(value: Any, name: str) -> list[Any]:
    """A JSON list."""
    if type(value) is not list:
        raise MalformedEvent(f"{name}: expected a list, got {_kind(value)}")
    return value


def string(value: Any, name: str) -> str | None:
    """Text, or None where the field is absent or null."""
    if value is None or type(value) is str:
        return value
    raise MalformedEvent(f"{name}: expected a string, got {_kind(value)}")


def reason(value: Any, name: str) -> str | None:
    """A finish reason: a short string or None (cut to :data:`MAX_REASON_CHARS`)."""
    if value is None:
        return None
    if type(value) is not str:
        raise MalformedEvent(f"{name}: expected a string, got {_kind(value)}")
    return value[:MAX_REASON_CHARS]


def first_choice(choices: Any) -> dict[str, Any] | None:
    """``choices[0]`` of an OpenAI event: an object, or None when there is none."""
    if choices is None:
        return None
    return obj(items(choices, "choices")[0], "choices[0]") if choices else None


def count(value: Any, name: str) -> int | None:
    """A server's token count, checked: None stays None; else an int in 0..MAX_COUNT.

    ``bool`` is not a count, nor are floats, strings or containers.
    """
    if value is None:
        return None
    if type(value) is not int or not 0 <= value <= MAX_COUNT:
        msg = f"{name}: expected an integer in 0..{MAX_COUNT}, got {_kind(value)}"
        raise MalformedUsage(msg)
    return value


def tool_index(value: Any, name: str) -> int:
    """A tool call's index in an answer: an int in 0..MAX_TOOL_INDEX."""
    if type(value) is not int or not 0 <= value <= MAX_TOOL_INDEX:
        raise MalformedEvent(f"{name}: expected an integer in 0..{MAX_TOOL_INDEX}")
    return value


def json_values(payloads: list[bytes]) -> list[Any]:
    """Several events of one read, parsed as one JSON array (one call into orjson).

    Raises (a ValueError) if the joined text does not split back into exactly
    one value per payload; the caller then parses them one by one to find where.
    """
    values = orjson.loads(b"[" + b",".join(payloads) + b"]")
    if len(values) != len(payloads):
        raise ValueError("an event holds more than one JSON value")
    return values  # type: ignore[no-any-return]


def error_message(value: Any) -> str:
    """The server's words from an error value: ``{"message": ...}``, ``{"error": ...}``
    (nested), a string, or anything else as JSON; at most :data:`MAX_ERROR_CHARS`."""
    for _ in range(4):  # {"error": {"message": ...}} and the like
        if type(value) is not dict:
            break
        inner = value.get("message")
        if inner is None:
            inner = value.get("error")
        if inner is None:
            inner = value.get("detail")
        if inner is None:
            break
        value = inner
    if type(value) is not str:
        try:
            value = orjson.dumps(value).decode()
        except TypeError:  # e.g. an integer past 64 bits
            value = repr(value)
    return value.strip()[:MAX_ERROR_CHARS] or "(no message)"


def event_error(payload: bytes) -> str:
    """The message of an SSE ``event: error`` frame's data: JSON read by
    :func:`error_message`, else the text itself."""
    try:
        value: Any = orjson.loads(bytes(payload))  # a bytes subclass is refused
    except orjson.JSONDecodeError:
        value = payload.decode("utf-8", "replace")
    return error_message(value)
