"""OpenTelemetry GenAI spans exported as OTLP JSON, read as an agent trace.

The file is one OTLP JSON document (``TracesData``, or the body of an
``ExportTraceServiceRequest``: ``{"resourceSpans": [{"scopeSpans": [{"spans":
[...]}]}]}``), or JSON lines of them, as the OpenTelemetry Collector's file
exporter writes. Per the OTLP JSON encoding, ``traceId``, ``spanId`` and
``parentSpanId`` are hex (``parentSpanId`` empty or absent for a root);
``startTimeUnixNano`` and ``endTimeUnixNano`` are 64-bit integers, written as
strings of digits (numbers are read too); ``attributes`` are ``[{"key": ...,
"value": {"stringValue" | "intValue" | "doubleValue" | ...: ...}}]``.

What becomes a row, by the GenAI semantic conventions:

- an LLM call: a span whose ``gen_ai.operation.name`` is ``chat``,
  ``text_completion`` or ``generate_content``, or a span without an operation
  name that carries ``gen_ai.usage.*`` counts. Its input tokens
  (``gen_ai.usage.input_tokens``; the older ``gen_ai.usage.prompt_tokens``) are
  the prompt length, its output tokens (``gen_ai.usage.output_tokens``, or
  ``gen_ai.usage.completion_tokens``) the ``max_tokens``. An LLM-call span
  inside another one (a framework's span around the SDK's) is the same call:
  it is left out and counted in ``skipped["nested_llm_span"]``.
- an agent: a span whose operation is ``invoke_agent``. A call belongs to the
  nearest agent above it; an agent inside another agent (through its
  ``execute_tool`` span, say) is a sub-agent. ``execute_tool`` and every other
  span only carry the parent links.
- the session (the agent task) is the trace: ``traceId``.

How calls wait for each other is :mod:`loadgen.workload.trace_agents`'s.

Bad input raises a one-line :class:`ScenarioError` naming the file (the line,
for JSON lines), the span and the field: an LLM-call span without its token
counts, a time that is not integer nanoseconds or ends before it starts, an id
that is not hex, a span twice, parent links that form a cycle.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

import orjson

from loadgen.workload.trace_agents import AgentSpan, Call, link_calls
from loadgen.workload.trace_formats import Raw, fail

__all__ = ["LLM_OPERATIONS", "read_otlp"]

#: ``gen_ai.operation.name`` values of an LLM call.
LLM_OPERATIONS = ("chat", "text_completion", "generate_content")
AGENT_OPERATION = "invoke_agent"
_INPUT = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens")
_OUTPUT = ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens")
_HEX = re.compile(r"[0-9a-fA-F]+")
_DIGITS = re.compile(r"\d+")


@dataclass(slots=True)
class _Span:
    where: str  # file or file:line, and the span
    trace: str
    span: str
    parent: str | None
    op: str | None
    body: dict[str, Any]
    attrs: dict[str, Any]


def read_otlp(name: str, fh: IO[bytes], skipped: Counter[str]) -> list[Raw]:
    """The LLM calls of an OTLP JSON file as raw rows, linked, sorted by start."""
    spans: dict[tuple[str, str], _Span] = {}
    for where, doc in _documents(name, fh.read()):
        for s in _spans(where, doc):
            key = (s.trace, s.span)
            if key in spans:
                fail(s.where, f"appears twice in trace {s.trace}")
            spans[key] = s
    _check_cycles(spans)
    calls: list[Call] = []
    agents: dict[tuple[str, str | None], AgentSpan] = {}
    above: dict[tuple[str, str], _Span | None] = {}  # a span -> its nearest agent or LLM span
    for s in spans.values():
        is_call = _is_call(s)
        if not is_call and s.op != AGENT_OPERATION:
            continue
        up = _nearest(s, spans, above)
        if is_call and up is not None and up.op != AGENT_OPERATION:
            skipped["nested_llm_span"] += 1
            continue
        up_agent = None if up is None else _agent_of(up, spans, above)
        if is_call:
            start, end = _times(s)
            inp, out = _tokens(s, _INPUT), _tokens(s, _OUTPUT)
            calls.append(Call(s.trace, up_agent, start, end, inp, out))
        else:
            agents[(s.trace, s.span)] = AgentSpan(_time(s, "startTimeUnixNano"), up_agent)
    if not calls:
        fail(
            name,
            "no LLM-call spans: expected spans with gen_ai.operation.name "
            f"{', '.join(LLM_OPERATIONS)} or gen_ai.usage.* attributes",
        )
    return list(link_calls(calls, agents))


def _is_call(s: _Span) -> bool:
    if s.op is not None:
        return s.op in LLM_OPERATIONS
    return any(k in s.attrs for k in (*_INPUT, *_OUTPUT))


def _agent_of(s: _Span, spans: dict[tuple[str, str], _Span], above: dict[Any, Any]) -> str | None:
    """The agent ``s`` is in: ``s`` itself when it is one, else the nearest agent above it."""
    node: _Span | None = s
    while node is not None and node.op != AGENT_OPERATION:
        node = _nearest(node, spans, above)
    return None if node is None else node.span


def _nearest(
    s: _Span, spans: dict[tuple[str, str], _Span], memo: dict[tuple[str, str], _Span | None]
) -> _Span | None:
    """The nearest span above ``s`` that is an agent or an LLM call (None: none is)."""
    path = []
    node = s
    found: _Span | None = None
    while (node.trace, node.span) not in memo:
        path.append((node.trace, node.span))
        up = None if node.parent is None else spans.get((node.trace, node.parent))
        if up is None:  # a root, or its parent was not exported: the chain ends here
            break
        if _is_call(up) or up.op == AGENT_OPERATION:
            found = up
            break
        node = up
    else:
        found = memo[(node.trace, node.span)]
    for k in path:
        memo[k] = found
    return found


def _check_cycles(spans: dict[tuple[str, str], _Span]) -> None:
    """One line naming a span whose parent links come back to it."""
    done: set[tuple[str, str]] = set()
    for start in spans.values():
        path: list[tuple[str, str]] = []
        node: _Span | None = start
        while node is not None and (node.trace, node.span) not in done:
            key = (node.trace, node.span)
            if key in path:
                loop = " -> ".join(k[1] for k in [*path[path.index(key) :], key])
                fail(node.where, f"parentSpanId: the parent links form a cycle ({loop})")
            path.append(key)
            node = None if node.parent is None else spans.get((node.trace, node.parent))
        done.update(path)


# ------------------------------------------------------------------- reading


def _documents(name: str, data: bytes) -> Iterator[tuple[str, dict[str, Any]]]:
    """The OTLP documents of the file: one JSON object, or one a line."""
    try:
        whole = orjson.loads(data)
    except orjson.JSONDecodeError:
        whole = None
        lines = data.splitlines()
        if len([line for line in lines if line.strip()]) < 2:
            fail(name, "expected OTLP JSON (an object with resourceSpans), got invalid JSON")
    if whole is not None:
        yield name, _document(name, whole)
        return
    for n, line in enumerate(lines, 1):
        if line.strip():
            where = f"{name}:{n}"
            try:
                obj = orjson.loads(line)
            except orjson.JSONDecodeError:
                fail(where, "expected an OTLP JSON object (one a line), got invalid JSON")
            yield where, _document(where, obj)


def _document(where: str, obj: object) -> dict[str, Any]:
    if not isinstance(obj, dict) or not isinstance(obj.get("resourceSpans"), list):
        got = f"keys {', '.join(map(str, obj))}" if isinstance(obj, dict) else type(obj).__name__
        fail(where, f"expected an OTLP JSON object with a list resourceSpans, got {got}")
    return obj


def _spans(where: str, doc: dict[str, Any]) -> Iterator[_Span]:
    for rs in _list(where, doc, "resourceSpans"):
        groups = rs.get("scopeSpans", rs.get("instrumentationLibrarySpans", []))
        for ss in _list(where, {"scopeSpans": groups}, "scopeSpans"):
            for body in _list(where, ss, "spans"):
                yield _span(where, body)


def _list(where: str, obj: object, key: str) -> list[dict[str, Any]]:
    items = obj.get(key, []) if isinstance(obj, dict) else None
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        fail(where, f"{key}: expected a list of objects, got {items!r:.60}")
    return items


def _span(where: str, body: dict[str, Any]) -> _Span:
    span = _hex_id(where, body, "spanId", 16)
    here = f"{where}: span {span}"
    trace = _hex_id(here, body, "traceId", 32)
    parent = body.get("parentSpanId") or None
    if parent is not None:
        parent = _hex_id(here, body, "parentSpanId", 16)
    attrs = _attributes(here, body.get("attributes", []))
    op = attrs.get("gen_ai.operation.name")
    return _Span(here, trace, span, parent, op if isinstance(op, str) else None, body, attrs)


def _hex_id(where: str, body: dict[str, Any], key: str, digits: int) -> str:
    value = body.get(key)
    if value is None or value == "":
        fail(where, f"{key}: missing; expected {digits} hex digits")
    if not isinstance(value, str) or not _HEX.fullmatch(value) or len(value) != digits:
        fail(where, f"{key}: expected {digits} hex digits, got {value!r:.60}")
    return value.lower()


def _attributes(where: str, items: object) -> dict[str, Any]:
    """``[{key, value: {stringValue | intValue | ...}}]`` as {key: the plain value}."""
    if not isinstance(items, list):
        fail(where, f"attributes: expected a list of {{key, value}}, got {items!r:.60}")
    out: dict[str, Any] = {}
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("key"), str):
            fail(where, f"attributes: expected {{key, value}} objects, got {item!r:.60}")
        value = item.get("value")
        if isinstance(value, dict) and len(value) == 1:
            out[item["key"]] = next(iter(value.values()))
        else:  # an empty AnyValue, or a bare value some exporters write
            out[item["key"]] = value
    return out


def _tokens(s: _Span, keys: tuple[str, str]) -> int:
    for key in keys:
        if key in s.attrs:
            value = s.attrs[key]
            if type(value) is int and value >= 0:
                return value
            if isinstance(value, str) and _DIGITS.fullmatch(value):
                return int(value)
            if type(value) is float and value >= 0 and value.is_integer():
                return int(value)
            fail(s.where, f"{key}: expected a non-negative integer, got {value!r:.60}")
    return fail(
        s.where,
        f"{keys[0]}: missing; an LLM-call span needs {_INPUT[0]} and {_OUTPUT[0]}",
    )


def _time(s: _Span, key: str) -> int:
    value = s.body.get(key)
    if type(value) is int and value >= 0:
        return value
    if isinstance(value, str) and _DIGITS.fullmatch(value):
        return int(value)
    if value is None:
        fail(s.where, f"{key}: missing; expected integer nanoseconds since the epoch")
    return fail(
        s.where,
        f"{key}: expected integer nanoseconds since the epoch (digits), got {value!r:.60}",
    )


def _times(s: _Span) -> tuple[int, int]:
    start, end = _time(s, "startTimeUnixNano"), _time(s, "endTimeUnixNano")
    if end < start:
        fail(s.where, f"endTimeUnixNano: {end} is before startTimeUnixNano {start}")
    return start, end
