"""OTLP JSON agent traces: spans read, calls linked to what they waited for, bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loadgen.errors import ScenarioError
from loadgen.workload.trace_agents import Link
from loadgen.workload.trace_stats import trace_stats
from loadgen.workload.traces import load_trace, read_trace

MS = 1_000_000
T0 = 1_760_000_000_000_000_000  # ns since the epoch, as exporters write them
TRACE_A = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACE_B = "00f067aa0ba902b700f067aa0ba902b7"


def sid(n: int) -> str:
    return f"{n:016x}"


def span(
    n: int,
    parent: int | None,
    op: str | None,
    start_ms: float,
    end_ms: float,
    inp: int | None = None,
    out: int | None = None,
    *,
    trace: str = TRACE_A,
    number: bool = False,
) -> dict[str, Any]:
    """One span as the OTLP JSON encoding writes it (ints as strings unless ``number``)."""
    attrs = []
    if op is not None:
        attrs.append({"key": "gen_ai.operation.name", "value": {"stringValue": op}})
    for key, v in (("gen_ai.usage.input_tokens", inp), ("gen_ai.usage.output_tokens", out)):
        if v is not None:
            attrs.append({"key": key, "value": {"intValue": v if number else str(v)}})
    start, end = T0 + round(start_ms * MS), T0 + round(end_ms * MS)
    return {
        "traceId": trace,
        "spanId": sid(n),
        "parentSpanId": "" if parent is None else sid(parent),
        "name": op or "span",
        "kind": 3,
        "startTimeUnixNano": start if number else str(start),
        "endTimeUnixNano": end if number else str(end),
        "attributes": attrs,
        "status": {},
    }


def document(spans: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "a"}}]
                },
                "scopeSpans": [{"scope": {"name": "agents"}, "spans": spans}],
            }
        ]
    }


def write(tmp: Path, spans: list[dict[str, Any]], name: str = "spans.json") -> Path:
    path = tmp / name
    path.write_text(json.dumps(document(spans), indent=2))  # indented, as tools save it
    return path


#: A coding agent: two calls with a tool between, a sub-agent (two calls) started by
#: the second call's answer through an execute_tool span, then the agent's last call.
AGENT = [
    span(1, None, "invoke_agent", 0, 1000),
    span(2, 1, "chat", 10, 110, 100, 20),
    span(3, 1, "execute_tool", 110, 150),
    span(4, 1, "chat", 160, 200, 180, 10),
    span(5, 1, "execute_tool", 200, 600),
    span(6, 5, "invoke_agent", 210, 590),
    span(7, 6, "chat", 220, 320, 250, 10),
    span(8, 6, "execute_tool", 320, 330),
    span(9, 6, "chat", 340, 400, 300, 10),
    span(10, 1, "chat", 620, 700, 400, 30),
]


def test_an_agent_with_a_sub_agent(tmp_path: Path) -> None:
    trace = load_trace(write(tmp_path, AGENT))
    assert trace.fmt == "otlp" and trace.skipped == {}
    got = [(r.offset_ns // MS, r.input_tokens, r.output_tokens, r.session) for r in trace.rows]
    assert got == [
        (0, 100, 20, TRACE_A),
        (150, 180, 10, TRACE_A),
        (210, 250, 10, TRACE_A),
        (330, 300, 10, TRACE_A),
        (610, 400, 30, TRACE_A),
    ]
    links = [r.link for r in trace.rows]
    assert links == [
        Link(0, None, 0, agent=0, call=0, depth=0, parent=None),
        Link(1, 0, 50 * MS, agent=0, call=1, depth=0, parent=None),  # tool time 50 ms
        Link(2, 1, 20 * MS, agent=1, call=0, depth=1, parent=1),  # the sub-agent's first
        Link(3, 2, 20 * MS, agent=1, call=1, depth=1, parent=1),
        # the agent's next call follows its own and joins the sub-agent's last call
        Link(4, 1, 420 * MS, agent=0, call=2, depth=0, parent=None, joins=((3, 220 * MS),)),
    ]


def test_json_lines_flat_traces_numbers_and_sessions(tmp_path: Path) -> None:
    """The Collector's file exporter: one document a line. Calls outside any agent are the
    trace's own loop; each trace is a session; 64-bit ints may be JSON numbers."""
    a = [span(1, None, "chat", 0, 50, 10, 5, number=True), span(2, None, "chat", 80, 90, 20, 5)]
    b = [span(3, None, "text_completion", 30, 40, 7, 3, trace=TRACE_B)]
    b += [span(4, 3, "generate_content", 35, 38, 8, 2, trace=TRACE_B)]  # nested: the same call
    path = tmp_path / "spans.jsonl"
    path.write_text(json.dumps(document(a)) + "\n\n" + json.dumps(document(b)) + "\n")
    trace = load_trace(path)
    assert trace.fmt == "otlp" and trace.skipped == {"nested_llm_span": 1}
    rows = [(r.offset_ns // MS, r.session, r.link) for r in trace.rows]
    assert rows == [
        (0, TRACE_A, Link(0, None, 0, 0, 0, 0, None)),
        (30, TRACE_B, Link(1, None, 0, 0, 0, 0, None)),
        (80, TRACE_A, Link(2, 0, 30 * MS, 0, 1, 0, None)),
    ]


def test_overlapping_calls_wait_only_for_calls_that_had_ended(tmp_path: Path) -> None:
    spans = [
        span(1, None, "invoke_agent", 0, 500),
        span(2, 1, "chat", 0, 100, 10, 1),
        span(3, 1, "chat", 5, 300, 10, 1),  # in parallel with the first: waits for none
        span(4, 1, "chat", 150, 200, 10, 1),  # the first had ended, the second not
        span(5, 1, "chat", 400, 450, 10, 1),  # the latest to end by then: the second
    ]
    links = [r.link for r in read_trace(write(tmp_path, spans))]
    assert [(lk.after, lk.gap_ns // MS) for lk in links if lk is not None] == [
        (None, 0),
        (None, 0),
        (0, 50),
        (1, 100),
    ]


def test_what_is_a_call(tmp_path: Path) -> None:
    """Usage without an operation name is a call; an agent's own usage totals, tools and
    embeddings are not; the older usage names are read."""
    spans = [
        span(1, None, "invoke_agent", 0, 100, 999, 999),
        span(2, 1, None, 10, 20, 11, 2),
        span(3, 1, "embeddings", 20, 30, 50, None),
        span(4, 1, "execute_tool", 30, 40),
    ]
    old = span(5, 1, "chat", 50, 60)
    old["attributes"] += [
        {"key": "gen_ai.usage.prompt_tokens", "value": {"intValue": "12"}},
        {"key": "gen_ai.usage.completion_tokens", "value": {"doubleValue": 3.0}},
    ]
    rows = read_trace(write(tmp_path, [*spans, old]), "otlp")
    assert [(r.input_tokens, r.output_tokens) for r in rows] == [(11, 2), (12, 3)]


def test_window_and_time_scale_keep_the_links(tmp_path: Path) -> None:
    path = write(tmp_path, AGENT)
    rows = read_trace(path, time_scale=2.0, window_s=(0.1, 1.0))
    assert [r.offset_ns // MS for r in rows] == [0, 120, 360, 920]  # from 150 ms, doubled
    assert [r.link.key for r in rows if r.link] == [1, 2, 3, 4]
    assert rows[0].link is not None and rows[0].link.gap_ns == 50 * MS  # gaps as recorded


def error(path: Path) -> str:
    with pytest.raises(ScenarioError) as info:
        read_trace(path, "otlp")
    return str(info.value)


def test_bad_spans_are_one_line_each(tmp_path: Path) -> None:
    where = f"{tmp_path / 'spans.json'}: span {sid(2)}"
    no_out = span(2, None, "chat", 0, 10, 5, None)
    assert error(write(tmp_path, [no_out])) == (
        f"{where}: gen_ai.usage.output_tokens: missing; an LLM-call span needs "
        "gen_ai.usage.input_tokens and gen_ai.usage.output_tokens"
    )
    bad = span(2, None, "chat", 0, 10, 5, 5)
    bad["startTimeUnixNano"] = "soon"
    assert error(write(tmp_path, [bad])) == (
        f"{where}: startTimeUnixNano: expected integer nanoseconds since the epoch (digits), "
        "got 'soon'"
    )
    backwards = span(2, None, "chat", 10, 5, 5, 5)
    assert error(write(tmp_path, [backwards])) == (
        f"{where}: endTimeUnixNano: {T0 + 5 * MS} is before startTimeUnixNano {T0 + 10 * MS}"
    )
    neg = span(2, None, "chat", 0, 10, -4, 5)
    assert error(write(tmp_path, [neg])) == (
        f"{where}: gen_ai.usage.input_tokens: expected a non-negative integer, got '-4'"
    )
    bad_id = span(2, None, "chat", 0, 10, 5, 5, trace="xyz")
    assert (
        error(write(tmp_path, [bad_id])) == f"{where}: traceId: expected 32 hex digits, got 'xyz'"
    )
    twice = [span(2, None, "chat", 0, 10, 5, 5)] * 2
    assert error(write(tmp_path, twice)) == f"{where}: appears twice in trace {TRACE_A}"


def test_a_parent_cycle_is_refused(tmp_path: Path) -> None:
    spans = [
        span(1, 3, "invoke_agent", 0, 10),
        span(2, 1, "chat", 1, 5, 5, 5),
        span(3, 2, "execute_tool", 2, 3),
    ]
    message = error(write(tmp_path, spans))
    assert message.endswith(
        "parentSpanId: the parent links form a cycle "
        f"({sid(1)} -> {sid(3)} -> {sid(2)} -> {sid(1)})"
    )
    assert "\n" not in message


def test_not_otlp_or_no_calls(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"spans": []}')
    assert (
        error(path)
        == f"{path}: expected an OTLP JSON object with a list resourceSpans, got keys spans"
    )
    path.write_text("{not json")
    assert (
        error(path)
        == f"{path}: expected OTLP JSON (an object with resourceSpans), got invalid JSON"
    )
    tools = write(tmp_path, [span(1, None, "execute_tool", 0, 1)])
    assert error(tools) == (
        f"{tools}: no LLM-call spans: expected spans with gen_ai.operation.name chat, "
        "text_completion, generate_content or gen_ai.usage.* attributes"
    )


def test_agent_stats(tmp_path: Path) -> None:
    other = [span(1, None, "chat", 50, 60, 5, 5, trace=TRACE_B)]
    rows = read_trace(write(tmp_path, [*AGENT, *other]))
    stats = trace_stats(rows)
    assert stats["sessions"] == 2
    assert stats["agents"] == {
        "tasks": 2,
        "sub_agents": 1,
        "max_depth": 1,
        "calls_p50": 3.0,  # 5 calls and 1
        "calls_max": 5,
        "linked": 4,  # every call of the agent task but its first
    }
    assert trace_stats([r for r in rows if r.session == TRACE_B])["agents"] == {
        "tasks": 1,
        "sub_agents": 0,
        "max_depth": 0,
        "calls_p50": 1.0,
        "calls_max": 1,
        "linked": 0,
    }
