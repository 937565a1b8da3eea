"""Reading a dataset file, one format at a time: JSONL rows, JSON arrays, ShareGPT conversations.

Owns the readers :mod:`loadgen.workload.datasets` builds on (and the lengths
module reuses for empirical files): :func:`read_text` (UTF-8, a BOM dropped),
:func:`json_array_items` (each item with the line it starts on),
:func:`jsonl_items`, and one parser per row format (:func:`jsonl_row`,
:func:`sharegpt_row`) giving a :class:`Parsed` row: its prompt, answer,
``output_tokens`` and images, not yet counted or filtered. Every problem is one
:class:`ScenarioError` line naming the file and line.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loadgen.errors import ScenarioError

__all__ = [
    "JSON_WS",
    "Parsed",
    "json_array_items",
    "jsonl_items",
    "jsonl_row",
    "read_text",
    "sharegpt_row",
]

_ROLES = ("system", "user", "assistant")
_SHAREGPT_ROLES = {
    "human": "user",
    "user": "user",
    "gpt": "assistant",
    "assistant": "assistant",
    "chatgpt": "assistant",
    "system": "system",
}
JSON_WS = " \t\r\n"


@dataclass(slots=True)
class Parsed:
    prompt: str | list[dict[str, str]]
    answer: str | None
    output_tokens: int | None
    line: int
    images: tuple[str, ...] = ()


# --- reading ------------------------------------------------------------------------------


def read_text(path: Path, what: str) -> str:
    """The UTF-8 text of ``path`` (a leading BOM dropped); ``what`` names it in errors."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read the {what}: {exc.strerror or exc}") from None
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        msg = f"{path}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x})"
        raise ScenarioError(msg) from None


def json_array_items(text: str, source: str) -> list[tuple[int, Any]]:
    """(line, item) for each item of the JSON array ``text``; the line is where the item starts."""
    decoder = json.JSONDecoder()
    pos = _skip_ws(text, 0)
    if text[pos : pos + 1] != "[":
        raise ScenarioError(f"{source}:{_line_at(text, pos)}: not valid JSON: expected '['")
    pos = _skip_ws(text, pos + 1)
    items: list[tuple[int, Any]] = []
    line, counted = 1, 0
    if text[pos : pos + 1] == "]":
        pos += 1
    else:
        while True:
            line += text.count("\n", counted, pos)
            counted = pos
            try:
                item, pos = decoder.raw_decode(text, pos)
            except json.JSONDecodeError as exc:
                msg = f"{source}:{exc.lineno}: not valid JSON: {exc.msg} (column {exc.colno})"
                raise ScenarioError(msg) from None
            items.append((line, item))
            pos = _skip_ws(text, pos)
            sep = text[pos : pos + 1]
            if sep not in (",", "]"):
                at = _line_at(text, pos)
                msg = f"{source}:{at}: not valid JSON: expected ',' or ']' after an item"
                raise ScenarioError(msg)
            pos = _skip_ws(text, pos + 1)
            if sep == "]":
                break
    if pos < len(text):
        at = _line_at(text, pos)
        raise ScenarioError(f"{source}:{at}: not valid JSON: extra data after the array")
    return items


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in JSON_WS:
        pos += 1
    return pos


def _line_at(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def jsonl_items(text: str, source: str) -> Iterator[tuple[int, Any]]:
    for number, raw in enumerate(text.split("\n"), 1):
        if not raw.strip():
            continue
        try:
            yield number, json.loads(raw)
        except json.JSONDecodeError as exc:
            msg = f"{source}:{number}: not valid JSON: {exc.msg} (column {exc.colno})"
            raise ScenarioError(msg) from None


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "true/false"}
    if value is None:
        return "null"
    return names.get(type(value), "a number")


# --- rows ---------------------------------------------------------------------------------


def jsonl_row(obj: Any, where: str, line: int) -> Parsed:
    """A ``prompt`` or ``messages`` row."""
    if not isinstance(obj, dict):
        raise ScenarioError(f"{where}: expected a JSON object, got {_json_type(obj)}")
    if ("prompt" in obj) == ("messages" in obj):
        both = ", not both" if "prompt" in obj else ""
        raise ScenarioError(f'{where}: expected "prompt" or "messages"{both}')
    answer = obj.get("answer")
    if answer is not None and not isinstance(answer, str):
        raise ScenarioError(f"{where}: answer: expected a string, got {_json_type(answer)}")
    prompt: str | list[dict[str, str]]
    if "prompt" in obj:
        prompt = obj["prompt"]
        if not isinstance(prompt, str) or not prompt:
            raise ScenarioError(f"{where}: prompt: expected a non-empty string")
    else:
        prompt = _messages(obj["messages"], where)
        if prompt[-1]["role"] == "assistant":
            if answer is not None:
                msg = f'{where}: give "answer" or a final assistant message, not both'
                raise ScenarioError(msg)
            answer = prompt.pop()["content"]
        if not prompt or prompt[-1]["role"] != "user":
            msg = f"{where}: messages: expected a user message last (before any final answer)"
            raise ScenarioError(msg)
    return Parsed(prompt, answer, _output_tokens(obj, where), line, _images(obj, where))


def _images(obj: dict[str, Any], where: str) -> tuple[str, ...]:
    raw = obj.get("images")
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(p, str) and p for p in raw):
        raise ScenarioError(f"{where}: images: expected a list of image file paths")
    return tuple(raw)


def _messages(raw: Any, where: str) -> list[dict[str, str]]:
    if not isinstance(raw, list) or not raw:
        msg = f'{where}: messages: expected a non-empty list of {{"role", "content"}} objects'
        raise ScenarioError(msg)
    out: list[dict[str, str]] = []
    for i, m in enumerate(raw):
        if not isinstance(m, dict) or "role" not in m or not isinstance(m.get("content"), str):
            msg = f'{where}: messages[{i}]: expected {{"role": ..., "content": "..."}}'
            raise ScenarioError(msg)
        if m["role"] not in _ROLES:
            got = m["role"]
            msg = f"{where}: messages[{i}].role: expected system, user or assistant, got {got!r}"
            raise ScenarioError(msg)
        out.append({"role": m["role"], "content": m["content"]})
    return out


def _output_tokens(obj: dict[str, Any], where: str) -> int | None:
    value = obj.get("output_tokens")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ScenarioError(f"{where}: output_tokens: expected a positive integer, got {value!r}")
    return value


def sharegpt_row(obj: Any, where: str, line: int, turns: str) -> Parsed | None:
    """A conversation; None when it has no human turn with text."""
    if not isinstance(obj, dict):
        raise ScenarioError(f"{where}: expected a JSON object, got {_json_type(obj)}")
    if "conversations" not in obj:
        raise ScenarioError(f'{where}: expected "conversations"')
    raw = obj["conversations"]
    if not isinstance(raw, list):
        msg = f'{where}: conversations: expected a list of {{"from", "value"}} objects'
        raise ScenarioError(msg)
    chat: list[dict[str, str]] = []
    for i, t in enumerate(raw):
        if not isinstance(t, dict) or not isinstance(t.get("value"), str) or "from" not in t:
            msg = f'{where}: conversations[{i}]: expected {{"from": ..., "value": "..."}}'
            raise ScenarioError(msg)
        role = _SHAREGPT_ROLES.get(t["from"]) if isinstance(t["from"], str) else None
        if role is None:
            got = t["from"]
            msg = f"{where}: conversations[{i}].from: expected human, gpt or system, got {got!r}"
            raise ScenarioError(msg)
        chat.append({"role": role, "content": t["value"]})
    asks = [i for i, m in enumerate(chat) if m["role"] == "user" and m["content"]]
    if not asks:
        return None
    ask = asks[0] if turns == "first" else asks[-1]
    after = chat[ask + 1] if ask + 1 < len(chat) else None
    answer = after["content"] if after is not None and after["role"] == "assistant" else None
    prompt = chat[ask]["content"] if turns == "first" else chat[: ask + 1]
    return Parsed(prompt, answer, _output_tokens(obj, where), line)
