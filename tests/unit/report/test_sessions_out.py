"""How sessions read: console and report lines, steps.csv, the SLA row, the context plot."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from loadgen.metrics import summarize_step
from loadgen.records import Record
from loadgen.report import sessions, step_table
from loadgen.report.documents.markdown import build_document, render_markdown
from loadgen.report.plots import figures
from loadgen.report.plots.context_figure import UNKNOWN_COLOUR, context_steps, draw_context
from loadgen.report.terminal.console import format_step
from loadgen.results.samples import samples_from_records
from loadgen.scenario import SlaSpec
from loadgen.summary import LoadPoint, StepSummary, Summary

from .conftest import T0, bare_summary

MS = 1_000_000
SLA = {"session_s": {"p90": 30}, "ttft_ms": {"p99": 100}}


def agent_records(step: int, tasks: int) -> list[Record]:
    """Each task: main call 0, two sub-agents after it, main call 1; every call's server
    reports its prompt and, for all but task 0's, the cached share."""
    out: list[Record] = []

    def add(session: int, start: float, end: float, **kw: Any) -> Record:
        i = len(out)
        s, e = T0 + round(start * MS), T0 + round(end * MS)
        first = s + round((5 + kw.get("prompt_tokens_server", 100) / 100) * MS)
        r = Record(
            step=step, id=i, warmup=False, request_id=f"{step}-{i}", prompt_tokens_requested=0,
            max_tokens=2, session=session, start_ns=s, sent_ns=s, first_token_ns=first,
            last_token_ns=e, end_ns=e, token_ns=[first, e], output_events=2, ok=True, **kw,
        )  # fmt: skip
        out.append(r)
        return r

    for t in range(tasks):
        base = 1000 * t
        cached = (lambda n: None) if t == 0 else (lambda n: n // 2)
        m = add(t, base, base + 100, agent=0, call=0, agent_depth=0,
                prompt_tokens_server=200, cached_tokens_server=cached(200))  # fmt: skip
        for a in (1, 2):
            add(t, base + 110, base + 200 + 50 * a, agent=a, call=0, parent=m.id, agent_depth=1,
                prompt_tokens_server=400, cached_tokens_server=cached(400))  # fmt: skip
        add(t, base + 320, base + 400, agent=0, call=1, agent_depth=0,
            prompt_tokens_server=900, cached_tokens_server=cached(900))  # fmt: skip
    return out


def step_of(records: list[Record], index: int = 0) -> StepSummary:
    load = LoadPoint(mode="concurrency", concurrency=2 + index)
    return summarize_step(index, load, records, SlaSpec.model_validate(SLA))


def summary_of(steps: list[StepSummary]) -> Summary:
    s = bare_summary(steps)
    s.sla = {"ttft_ms": {"p99": 100.0}, "session_s": {"p90": 30.0}}  # type: ignore[assignment]
    return s


def test_console_and_report_say_the_sessions_figures() -> None:
    step = step_of(agent_records(0, 4))
    s = step.sessions
    assert s is not None and s.completed == 4
    section = sessions.section(step)
    assert section is not None and section.key == "sessions"
    lines = section.lines
    assert lines[0].startswith("sessions: 4 completed, 0 failed · ")
    assert "time p50 0.40 s" in lines[0]
    # main 100 + 80 ms of 400, waiting 100 -> 300 ms, 20 ms the rest
    assert lines[1].startswith("main agent's time: LLM calls 45%, waiting for sub-agents 50%, ")
    assert "tools and other 5%" in lines[1]
    assert "4.0 calls/session (max 4), 2.0 sub-agents" in lines[1]
    assert "context p50 200 -> 900 tokens" in lines[1]
    assert "cached 50% of 12 calls' prompts" in lines[1]  # task 0's server said nothing
    assert lines[2].startswith("session TTFT p50 by call 0 ") and "by depth 0 " in lines[2]
    text = format_step(step)
    assert "sessions: 4 completed" in text and "session_s.p90" in text
    doc = render_markdown(build_document(summary_of([step])))
    assert "session time p90 ≤ 30 s" in doc  # the scenario's SLA line
    assert "| session time p90 | ≤ 30 s | 0.40 s |" in doc  # the step's SLA table


def test_a_chat_reads_without_sub_agents() -> None:
    records = agent_records(0, 3)
    chat = [r for r in records if r.agent == 0]
    for r in chat:
        r.agent = r.parent = r.agent_depth = None
        r.turn, r.call = r.call, None
    section = sessions.section(step_of(chat))
    assert section is not None
    (_, split, *_) = section.lines
    assert split.startswith("session time: LLM calls ") and "sub-agent" not in split


def test_steps_csv_has_the_session_columns_only_when_a_step_ran_sessions() -> None:
    with_sessions = step_of(agent_records(0, 4))
    plain_records = agent_records(1, 2)
    for r in plain_records:
        r.session = None
    plain = step_of(plain_records, 1)
    assert plain.sessions is None and sessions.section(plain) is None
    rows = [step_table.step_row(s) for s in (with_sessions, plain)]
    columns = step_table.csv_columns(rows)
    assert columns[-len(sessions.CSV_FIELDS) :] == list(sessions.CSV_FIELDS)
    assert rows[0]["sessions_completed"] == 4 and rows[0]["session_time_ms_p50"] == 400.0
    assert rows[0]["session_cached_share"] == with_sessions.sessions.cached_share  # type: ignore[union-attr]
    only_plain = step_table.csv_columns([rows[1]])
    assert not set(only_plain) & set(sessions.CSV_FIELDS)


def test_the_context_plot_colours_each_call_by_its_cached_share(tmp_path: Path) -> None:
    records = agent_records(0, 4) + agent_records(1, 2)
    steps = [step_of([r for r in records if r.step == i], i) for i in (0, 1)]
    summary = summary_of(steps)
    samples = samples_from_records(records)
    points = samples.step(0).context
    assert len(points) == 16
    assert list(points.prompt_tokens[:4]) == [200, 400, 400, 900]
    assert all(math.isnan(c) for c in points.cached_share[:4])  # task 0: not reported
    assert set(points.cached_share[4:]) == {0.5}
    assert [s.index for s in context_steps(summary, samples)] == [0, 1]
    fig = draw_context(summary, samples)
    ax = fig.axes[0]
    by_gid = {c.get_gid(): c for c in ax.collections}
    assert len(by_gid["unknown"].get_offsets()) == 4
    assert len(by_gid["cached"].get_offsets()) == 12
    grey = by_gid["unknown"].get_facecolor()[0][:3]
    assert np.allclose(grey, [int(UNKNOWN_COLOUR[i : i + 2], 16) / 255 for i in (1, 3, 5)])
    assert np.allclose(by_gid["cached"].get_array(), 0.5)  # coloured by the share
    ttft = sorted(p[1] for p in by_gid["cached"].get_offsets())
    assert ttft[0] == 7.0  # 5 ms + 200 prompt tokens / 100
    written, notes = figures.write_plots(summary, samples, [], tmp_path / "plots")
    assert not notes and written["context"].name == "ttft_vs_context.png"


def test_no_context_plot_without_sessions(tmp_path: Path) -> None:
    records = agent_records(0, 2)
    for r in records:
        r.session = None
    summary = summary_of([step_of(records)])
    samples = samples_from_records(records)
    assert context_steps(summary, samples) == []
    written, _ = figures.write_plots(summary, samples, [], tmp_path / "plots")
    assert "context" not in written
