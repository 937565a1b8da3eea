"""Is an answer valid? Its tool calls' arguments and its structured text, against the schemas.

:class:`OutputCheck` is built once per run from the workload's
:class:`~loadgen.workload.tools.OutputAsk` (every schema compiled once into a
``jsonschema`` validator); :meth:`OutputCheck.check` runs once per
successful answer, after its stream has ended (never in the token loop), on
what the requester assembled (:class:`ToolCalls`: each call's name and
arguments fragments, in the order they came).

What is checked, and what makes an answer invalid (the first reason is kept):

- tools: every call names a tool that was offered (and the one a named
  ``tool_choice`` asks for); its arguments are JSON (empty arguments read as
  ``{}``) and valid for that tool's ``parameters``; ``tool_choice: required``
  or a name with no call at all is invalid. With ``auto`` (or none given) an
  answer without a call has nothing to check (``None``).
- response format: the answer's text is JSON, an object for ``json_object``,
  valid for the schema for ``json_schema``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from loadgen.records import Record
from loadgen.workload import OutputAsk

__all__ = ["MAX_DETAIL", "OutputCheck", "ToolCalls", "keep_tool_call", "tool_event"]

#: characters of an invalid answer's reason kept in its record
MAX_DETAIL = 200


@dataclass(slots=True)
class ToolCalls:
    """One answer's tool calls as they streamed: index -> (name, argument fragments)."""

    names: dict[int, str] = field(default_factory=dict)
    args: dict[int, list[str]] = field(default_factory=dict)

    def add(self, index: int, name: str | None, text: str) -> None:
        if name is not None:
            self.names[index] = name
        self.args.setdefault(index, []).append(text)


class OutputCheck:
    """The run's validity check: one compiled validator per tool and for the answer schema."""

    def __init__(self, ask: OutputAsk) -> None:
        import jsonschema

        self.ask = ask

        def compile_(schema: dict[str, Any]) -> Any:
            return jsonschema.validators.validator_for(schema)(schema)  # formats: annotations

        self._tools = {t.name: compile_(t.parameters) for t in ask.tools}
        fmt = ask.response_format
        self._format = compile_(fmt.schema) if fmt is not None and fmt.schema is not None else None
        self._best_match = jsonschema.exceptions.best_match
        #: the answer's text is needed (a response format is checked)
        self.needs_text = fmt is not None
        #: tool calls are assembled (tools are offered)
        self.needs_calls = bool(ask.tools)

    def check(self, calls: ToolCalls | None, text: str) -> tuple[bool | None, str | None]:
        """(valid, why not) of one answer; (None, None) when there is nothing to check."""
        valid, why = self._check(calls, text)
        return valid, None if why is None else why[:MAX_DETAIL]

    def _check(self, calls: ToolCalls | None, text: str) -> tuple[bool | None, str | None]:
        if self.needs_calls:
            return self._calls(calls or ToolCalls())
        if self.needs_text:
            return self._text(text)
        return None, None

    def _calls(self, calls: ToolCalls) -> tuple[bool | None, str | None]:
        choice = self.ask.tool_choice
        if not calls.args:
            if choice is None or choice in ("auto", "none"):
                return None, None
            return False, f"no tool call (tool_choice {choice})"
        for index in sorted(calls.args):
            name = calls.names.get(index)
            where = f"tool call {index}"
            if name is None:
                return False, f"{where}: no function name"
            validator = self._tools.get(name)
            if validator is None:
                return False, f"{where}: {name!r} is not a tool that was offered"
            if choice not in (None, "auto", "required", "none") and name != choice:
                return False, f"{where}: {name!r}, but tool_choice named {choice!r}"
            raw = "".join(calls.args[index]) or "{}"
            try:
                value = orjson.loads(raw)
            except orjson.JSONDecodeError:
                return False, f"{where} {name}: arguments are not JSON: {raw[:60]!r}"
            if (why := self._invalid(validator, value)) is not None:
                return False, f"{where} {name}: {why}"
        return True, None

    def _text(self, text: str) -> tuple[bool | None, str | None]:
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            return False, f"the answer is not JSON: {text[:60]!r}"
        if self._format is None:  # json_object
            if not isinstance(value, dict):
                return False, f"the answer is JSON but not an object ({type(value).__name__})"
            return True, None
        if (why := self._invalid(self._format, value)) is not None:
            return False, f"the answer: {why}"
        return True, None

    def _invalid(self, validator: Any, value: Any) -> str | None:
        error = self._best_match(validator.iter_errors(value))
        if error is None:
            return None
        where = "/".join(str(p) for p in error.absolute_path)
        message: str = error.message
        return f"{message} (at {where})" if where else message


def tool_event(
    rec: Record,
    parts: tuple[tuple[int, str | None, str], ...],
    arrived: int,
    calls: ToolCalls | None,
) -> None:
    """A token event with tool-call fragments, on ``rec`` (and ``calls`` when they are
    kept): off the common path, text answers pay one attribute read. A fragment that names
    a function opens a call."""
    if rec.first_tool_ns is None:
        rec.first_tool_ns = arrived
    rec.tool_events += len(parts)
    for index, name, args in parts:
        if name is not None:
            rec.tool_calls += 1
        if calls is not None:
            calls.add(index, name, args)


def keep_tool_call(rec: Record, calls: ToolCalls) -> None:
    """The answer's first tool call (its name and whole arguments text) on ``rec``, for
    an agent's next call to carry forward."""
    first = min(calls.args)
    rec.answer_tool_name = calls.names.get(first, "")
    rec.answer_tool_arguments = "".join(calls.args[first])
