"""What a new connection cost beside a kept-alive one: the step's request phases.

Owns :func:`section`: the ``connections:`` line (:func:`phases_text`, only when
new connections carried a share worth a note) and steps.csv's
:data:`PHASE_COLUMNS` (every step a transport described).
"""

from __future__ import annotations

from typing import Any

from loadgen.report.section import Section
from loadgen.summary import NEW_SHARE_NOTE, StepSummary

__all__ = ["PHASE_COLUMNS", "phase_fields", "phases_text", "section"]

#: request phases: new connections beside reused ones (step.phases)
PHASE_COLUMNS = (
    "conn_new_requests",
    "conn_reused_requests",
    "connect_ms_p50",
    "connect_ms_p99",
    "tls_ms_p50",
    "tls_ms_p99",
    "ttft_new_conn_ms_p50",
    "ttft_reused_conn_ms_p50",
)


def phase_fields(step: StepSummary) -> dict[str, Any]:
    """The step's :data:`PHASE_COLUMNS` (all None when no transport said)."""
    p = step.phases
    if p is None:
        return dict.fromkeys(PHASE_COLUMNS)
    n, r = p.new, p.reused
    values = [n.requests, r.requests, n.connect_ms_p50, n.connect_ms_p99, n.tls_ms_p50]
    values += [n.tls_ms_p99, n.ttft_ms_p50, r.ttft_ms_p50]
    return dict(zip(PHASE_COLUMNS, values, strict=True))


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def phases_text(step: StepSummary) -> str | None:
    """``connections: 40 new (25%), connect 0.3/1.2 ms, TLS 4.1/9.8 ms (p50/p99); TTFT p50
    from start 95.0 ms new vs 22.0 ms reused``: what a new connection cost beside a
    kept-alive one. None unless new connections carried at least ``NEW_SHARE_NOTE`` of
    the measured requests (a kept-alive run opens one per stream: nothing to say)."""
    p = step.phases
    if p is None or not p.new.requests or p.new_share < NEW_SHARE_NOTE:
        return None
    n = p.new
    text = f"connections: {n.requests} new ({100 * p.new_share:.0f}%)"
    if n.connect_ms_p50 is not None:
        text += f", connect {_ms(n.connect_ms_p50)}/{_ms(n.connect_ms_p99)} ms"
    if n.tls_ms_p50 is not None:
        text += f", TLS {_ms(n.tls_ms_p50)}/{_ms(n.tls_ms_p99)} ms"
    if n.connect_ms_p50 is not None or n.tls_ms_p50 is not None:
        text += " (p50/p99)"
    if step.pooling is not None or n.ttft_ms_p50 is None:  # no token timing (pooling)
        return text
    text += f"; TTFT p50 from start {_ms(n.ttft_ms_p50)} ms new"
    if p.reused.requests:
        text += f" vs {_ms(p.reused.ttft_ms_p50)} ms reused"
    return text


def section(step: StepSummary) -> Section | None:
    """The step's phases; None when no transport described its connections."""
    if step.phases is None:
        return None
    text = phases_text(step)
    return Section("phases", () if text is None else (text,), fields=phase_fields(step))
