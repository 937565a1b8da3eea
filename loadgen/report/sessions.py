"""How a step's sessions read: the sessions section, the SLA row.

From the step's :class:`~loadgen.summary.SessionStats` (nothing when the step
ran no sessions): completed and failed sessions, sessions/s and its goodput,
session time percentiles; the main agent's time split, calls per session,
sub-agents, context growth and the cached share; TTFT p50 by call index and
by agent depth (:func:`section`: the lines every output shows, and steps.csv's
:data:`CSV_FIELDS`). Also how the ``session_s`` SLA check is written (seconds).
"""

from __future__ import annotations

from loadgen.report.blocks import num, verdict_cell
from loadgen.report.section import Section
from loadgen.summary import Distribution, SessionStats, SlaBounds, SlaCheck, StepSummary

__all__ = ["CSV_FIELDS", "METRIC", "bound_texts", "check_cells", "section"]

#: the SLA check's metric (loadgen.metrics.sla.SESSION_METRIC)
METRIC = "session_s"
#: steps.csv's session columns, in order (written when a step ran sessions)
CSV_FIELDS = (
    "sessions_completed",
    "sessions_failed",
    "sessions_per_s",
    "goodput_sessions_per_s",
    "session_time_ms_p50",
    "session_time_ms_p90",
    "session_time_ms_p99",
    "session_llm_share",
    "session_sub_agent_wait_share",
    "session_tools_other_share",
    "session_calls_mean",
    "session_first_prompt_tokens_p50",
    "session_last_prompt_tokens_p50",
    "session_cached_share",
)


def _s(ms: float | None) -> str:
    return "-" if ms is None else f"{ms / 1000:.2f} s"


def _share(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.0f}%"


def _p50s(label: str, by: dict[str, Distribution]) -> str | None:
    cells = [f"{k} {d.p50:.1f}" for k, d in by.items() if d.p50 is not None]
    return f"{label} {', '.join(cells)} ms" if cells else None


def _head(s: SessionStats) -> str:
    text = f"sessions: {s.completed:,} completed, {s.failed:,} failed"
    if s.left_out:
        text += f" ({s.left_out:,} with warm-up or ramp-up calls left out)"
    text += f" · {s.sessions_per_s:.3g} sessions/s, goodput {s.goodput_sessions_per_s:.3g}"
    t = s.time_ms
    if t.count:
        text += f" · time p50 {_s(t.p50)}, p90 {_s(t.p90)}, p99 {_s(t.p99)}"
    return text


def _split(s: SessionStats) -> str | None:
    if s.llm_share is None:
        return None
    if s.sub_agents_mean:
        text = (
            f"main agent's time: LLM calls {_share(s.llm_share)}, waiting for sub-agents "
            f"{_share(s.sub_agent_wait_share)}, tools and other {_share(s.tools_other_share)}"
        )
    else:  # one agent (a chat's turns): no sub-agent to wait for
        text = (
            f"session time: LLM calls {_share(s.llm_share)}, tools, think time and other "
            f"{_share(s.tools_other_share)}"
        )
    if s.calls_mean is not None:
        text += f" · {s.calls_mean:.1f} calls/session (max {s.calls_max})"
    if s.sub_agents_mean:
        text += f", {s.sub_agents_mean:.1f} sub-agents"
    first, last = s.first_prompt_tokens_p50, s.last_prompt_tokens_p50
    if first is not None and last is not None:
        text += f" · context p50 {first:,.0f} -> {last:,.0f} tokens"
    if s.truncated_sessions:
        text += f", {s.truncated_sessions:,} truncated"
    if s.cached_share is not None:
        text += f" · cached {_share(s.cached_share)} of {s.cached_reported:,} calls' prompts"
    return text


def _lines(s: SessionStats) -> tuple[str, ...]:
    out = [_head(s)]
    if (split := _split(s)) is not None:
        out.append(split)
    ttft = [t for t in (_p50s("by call", s.ttft_by_call), _p50s("by depth", s.ttft_by_depth)) if t]
    if ttft:
        out.append("session TTFT p50 " + " · ".join(ttft))
    return tuple(out)


def _csv_fields(s: SessionStats) -> dict[str, object]:
    t = s.time_ms
    values = (
        *(s.completed, s.failed, s.sessions_per_s, s.goodput_sessions_per_s),
        *(t.p50, t.p90, t.p99),
        *(s.llm_share, s.sub_agent_wait_share, s.tools_other_share, s.calls_mean),
        *(s.first_prompt_tokens_p50, s.last_prompt_tokens_p50, s.cached_share),
    )
    return dict(zip(CSV_FIELDS, values, strict=True))


def section(step: StepSummary) -> Section | None:
    """The step's sessions (every output says the same lines); None when it ran none."""
    s = step.sessions
    if s is None:
        return None
    return Section("sessions", _lines(s), fields=_csv_fields(s))


def bound_texts(sla: SlaBounds) -> list[str]:
    """``session time p90 ≤ 30 s`` for each session bound the run stated."""
    if sla.session_s is None:
        return []
    stats = sla.session_s.model_dump().items()
    return [f"session time {stat.replace('_', '.')} ≤ {b:g} s" for stat, b in stats]


def check_cells(c: SlaCheck) -> tuple[str, ...]:
    """The report's SLA table row: name, limit, measured, margin, verdict, why."""
    value = "no completed session" if c.value is None else f"{num(c.value)} s"
    margin = "–" if c.margin is None else f"{c.margin:+,.2f} s"
    if c.margin is not None and c.bound:
        margin += f" ({100 * c.margin / c.bound:+.0f}%)"
    return (
        f"session time {c.stat_label}",
        f"≤ {c.bound:g} s",
        value,
        margin,
        verdict_cell(c.verdict),
        c.reason or "",
    )
