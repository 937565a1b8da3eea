"""Tool calls and schema answers: what a chat request asks for, and the stream that answers it.

:func:`parse_structured` reads ``tools``, ``tool_choice`` and
``response_format`` of a chat body (vLLM's 400 for a shape it refuses).
:func:`plan_answer` picks, seeded per request, what the answer is: a call of
which tool (``tool_choice`` required or NAME: always; auto or absent: three
answers in four; none: never), or a JSON answer for the schema
(``json_schema``) or a small object (``json_object``). The JSON text is made
by :mod:`loadgen.mock.schema_gen`; fault ``invalid_json`` makes it invalid.

:class:`ToolCallEvents` streams a call as vLLM's tool parsers do: the first
token event opens the call (``{"tool_calls":[{"id","type":"function","index":0,
"function":{"name"}}]}``), each later one carries a piece of the arguments
(``{"tool_calls":[{"index":0,"function":{"arguments":...}}]}``), the pieces
in order making the arguments' JSON text; finish ``tool_calls`` (``stop``
for a named choice, as vLLM). :class:`JsonAnswerEvents` streams the JSON
answer as ``content`` pieces. Either way one token, one event, as for text.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import orjson

from loadgen.mock.events import ChatEvents
from loadgen.mock.http_framing import vllm_error
from loadgen.mock.schema_gen import broken, instance

__all__ = ["Answer", "JsonAnswerEvents", "Structured", "ToolCallEvents", "plan_answer"]

#: the share of ``tool_choice: auto`` answers that call a tool
AUTO_CALL_SHARE = 0.75


@dataclass(slots=True, frozen=True)
class Structured:
    """What a chat request asks beyond text."""

    tools: dict[str, Any]  # name -> parameters schema
    tool_choice: str | None = None  # auto | required | none | a tool's name
    format_type: str | None = None  # json_schema | json_object
    schema: Any = None


@dataclass(slots=True, frozen=True)
class Answer:
    """The answer planned: a call of ``tool`` with ``text`` as its arguments, or ``text``
    as the answer's content (``tool`` None); ``finish`` its finish reason."""

    tool: str | None
    text: str
    finish: str


def parse_structured(data: dict[str, Any]) -> Structured | None:
    """The body's tools / tool_choice / response_format; None when it has none of them."""
    tools_raw, choice_raw, fmt = (
        data.get("tools"),
        data.get("tool_choice"),
        data.get("response_format"),
    )
    if tools_raw is None and fmt is None:
        return None
    tools: dict[str, Any] = {}
    if tools_raw is not None:
        if not isinstance(tools_raw, list):
            raise vllm_error(400, "tools must be a list", "tools")
        for t in tools_raw:
            fn = t.get("function") if isinstance(t, dict) else None
            if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
                raise vllm_error(400, "each tool needs function.name", "tools")
            tools[fn["name"]] = fn.get("parameters") or {"type": "object", "properties": {}}
    choice = _choice(choice_raw, tools)
    if fmt is None:
        return Structured(tools, choice)
    if not isinstance(fmt, dict) or fmt.get("type") not in ("json_schema", "json_object", "text"):
        raise vllm_error(400, "response_format.type must be json_schema, json_object or text")
    if fmt["type"] == "text":
        return Structured(tools, choice) if tools else None
    schema = None
    if fmt["type"] == "json_schema":
        spec = fmt.get("json_schema")
        if not isinstance(spec, dict) or not isinstance(spec.get("schema"), dict):
            raise vllm_error(400, "response_format.json_schema.schema must be an object")
        schema = spec["schema"]
    return Structured(tools, choice, fmt["type"], schema)


def _choice(raw: Any, tools: dict[str, Any]) -> str | None:
    if raw is None or raw in ("auto", "required", "none"):
        if raw is not None and not tools:
            raise vllm_error(400, "tool_choice needs tools", "tool_choice")
        return raw  # type: ignore[no-any-return]
    fn = raw.get("function") if isinstance(raw, dict) else None
    name = fn.get("name") if isinstance(fn, dict) else None
    if not isinstance(name, str):
        raise vllm_error(400, "tool_choice must be auto, required, none or a named function")
    if name not in tools:
        raise vllm_error(400, f"Tool '{name}' has not been passed in `tools`.", "tool_choice")
    return name


def plan_answer(s: Structured, rng: random.Random, faulty: bool) -> Answer | None:
    """The request's answer; None for a plain text answer (auto that does not call, none)."""
    if s.tools:
        choice = s.tool_choice
        if choice == "none" or (choice in (None, "auto") and rng.random() >= AUTO_CALL_SHARE):
            return None
        name = choice if choice in s.tools else rng.choice(sorted(s.tools))
        params = s.tools[name]
        call = instance(params, rng)
        text = broken(params, call, rng) if faulty else _dumps(call)
        return Answer(name, text, "stop" if choice == name else "tool_calls")
    value: Any
    if s.format_type == "json_object":
        value = {"answer": " ".join(rng.choice(("tok", "the", "a")) for _ in range(3))}
        schema = {"type": "object"}
    else:
        schema = s.schema
        value = instance(schema, rng)
    return Answer(None, broken(schema, value, rng) if faulty else _dumps(value), "stop")


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


def _pieces(text: str, n: int) -> list[str]:
    """``text`` cut into ``n`` pieces in order (some empty when n > len(text))."""
    n = max(1, n)
    return [text[len(text) * i // n : len(text) * (i + 1) // n] for i in range(n)]


class ToolCallEvents(ChatEvents):
    """A tool call, streamed: event 0 opens it (id, name), the rest carry its arguments."""

    def __init__(self, *args: Any, answer: Answer, n_out: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.frames = None  # every event differs
        self.answer = answer
        n = max(1, n_out - self.n_reason)
        self.pieces = ["", *_pieces(answer.text, n - 1)] if n > 1 else [answer.text]
        self.call_id = f"chatcmpl-tool-{random.Random(self.rid).getrandbits(64):016x}"

    def _call(self, j: int, finish: str | None) -> bytes:
        if j == 0:
            fn: dict[str, Any] = {"name": self.answer.tool}
            if len(self.pieces) == 1:
                fn["arguments"] = self.pieces[0]
            call: dict[str, Any] = {"id": self.call_id, "type": "function", "index": 0}
            call["function"] = fn
        else:
            call = {"index": 0, "function": {"arguments": self.pieces[j]}}
        delta = b'{"index":0,"delta":{"tool_calls":[' + orjson.dumps(call) + b']},"logprobs":null,'
        if finish is None:
            return delta + b'"finish_reason":null,"token_ids":null}'
        return (
            delta + b'"finish_reason":"%s","stop_reason":null,"token_ids":null}' % finish.encode()
        )

    def token(self, k: int, v: int) -> bytes:
        return self._event(self._call(k - self.n_reason, None), k + 1)

    def last(self, k: int, v: int, finish: str, variants: bytes) -> bytes:
        return self._event(self._call(k - self.n_reason, self.answer.finish), k + 1)

    def body(self, variants: bytes, finish: str) -> bytes:
        call = {
            "id": self.call_id,
            "type": "function",
            "function": {"name": self.answer.tool, "arguments": self.answer.text},
        }
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        choice = {"index": 0, "message": message, "logprobs": None,
                  "finish_reason": self.answer.finish, "stop_reason": None}  # fmt: skip
        return orjson.dumps({
            "id": self.rid, "object": "chat.completion", "created": self.created,
            "model": self.model, "choices": [choice], "usage": self._usage_obj(len(variants)),
        })  # fmt: skip


class JsonAnswerEvents(ChatEvents):
    """A JSON answer, streamed as ``content`` pieces that join to its text."""

    def __init__(self, *args: Any, answer: Answer, n_out: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.frames = None
        self.answer = answer
        self.pieces = _pieces(answer.text, max(1, n_out - self.n_reason))

    def _content(self, j: int, finish: str | None) -> bytes:
        head = (
            b'{"index":0,"delta":{"content":' + orjson.dumps(self.pieces[j]) + b'},"logprobs":null,'
        )
        if finish is None:
            return head + b'"finish_reason":null,"token_ids":null}'
        return head + b'"finish_reason":"%s","stop_reason":null,"token_ids":null}' % finish.encode()

    def token(self, k: int, v: int) -> bytes:
        return self._event(self._content(k - self.n_reason, None), k + 1)

    def last(self, k: int, v: int, finish: str, variants: bytes) -> bytes:
        return self._event(self._content(k - self.n_reason, self.answer.finish), k + 1)

    def body(self, variants: bytes, finish: str) -> bytes:
        message = {"role": "assistant", "content": self.answer.text}
        choice = {"index": 0, "message": message, "logprobs": None,
                  "finish_reason": self.answer.finish, "stop_reason": None}  # fmt: skip
        return orjson.dumps({
            "id": self.rid, "object": "chat.completion", "created": self.created,
            "model": self.model, "choices": [choice], "usage": self._usage_obj(len(variants)),
        })  # fmt: skip
