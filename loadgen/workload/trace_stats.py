"""What a trace looks like: its arrival-rate profile and summary figures.

For ``loadgen workload``: requests per second over time, token percentiles,
how many requests share a hash block (a prefix) with another, sessions, and
for an agent trace its agents: sub-agents, depth, calls per task, linked calls.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TypedDict

import numpy as np

from loadgen.workload.traces import TraceRow

__all__ = [
    "PERCENTILES",
    "AgentStats",
    "TokenStats",
    "TraceStats",
    "arrival_profile",
    "trace_stats",
]

#: Token-count percentiles :func:`trace_stats` reports.
PERCENTILES = (50, 90, 99)
_NS = 1_000_000_000


def arrival_profile(rows: Sequence[TraceRow], bins: int = 20) -> list[tuple[float, float]]:
    """(bin start s, requests/s) over ``bins`` equal bins from the first to the last arrival.

    The last arrival falls in the last bin. When every arrival shares one instant
    there is one bin, and its rate is the request count (as if over one second).
    """
    if bins < 1:
        raise ValueError(f"bins must be >= 1, got {bins}")
    if not rows:
        return []
    offs = np.fromiter((r.offset_ns for r in rows), dtype=np.int64, count=len(rows))
    first, span = int(offs.min()), int(offs.max() - offs.min())
    if span == 0:
        return [(first / _NS, float(len(rows)))]
    idx = np.minimum(((offs - first) * (bins / span)).astype(np.int64), bins - 1)
    counts = np.bincount(idx, minlength=bins)
    width = span / bins
    return [((first + i * width) / _NS, float(c) * _NS / width) for i, c in enumerate(counts)]


class TokenStats(TypedDict):
    p50: float
    p90: float
    p99: float
    mean: float
    max: int


class TraceStats(TypedDict):
    count: int
    duration_s: float  # first to last arrival
    mean_rate_rps: float | None  # count / duration_s; None when every arrival is at once
    input_tokens: TokenStats
    output_tokens: TokenStats
    shared_block_share: float | None  # requests with a hash block another one has; None: no ids
    sessions: int | None  # distinct session ids; None when no row has one
    # -- agent traces: None when no row carries a link
    agents: AgentStats | None


class AgentStats(TypedDict):
    tasks: int  # sessions: one agent task each
    sub_agents: int  # agents below a task's main agent, over every task
    max_depth: int  # 0: no sub-agents
    calls_p50: float  # LLM calls per task
    calls_max: int
    linked: int  # calls that wait for an earlier call (its end, plus the recorded gap)


def trace_stats(rows: Sequence[TraceRow]) -> TraceStats:
    """Count, span, mean rate, token percentiles (:data:`PERCENTILES`) and prefix sharing."""
    if not rows:
        raise ValueError("trace_stats needs at least one row")
    offs = [r.offset_ns for r in rows]
    duration = (max(offs) - min(offs)) / _NS
    sessions = {r.session for r in rows if r.session is not None}
    return TraceStats(
        count=len(rows),
        duration_s=duration,
        mean_rate_rps=len(rows) / duration if duration > 0 else None,
        input_tokens=_token_stats([r.input_tokens for r in rows]),
        output_tokens=_token_stats([r.output_tokens for r in rows]),
        shared_block_share=_shared_share(rows),
        sessions=len(sessions) if sessions else None,
        agents=_agent_stats(rows),
    )


def _agent_stats(rows: Sequence[TraceRow]) -> AgentStats | None:
    links = [(r.session, r.link) for r in rows if r.link is not None]
    if not links:
        return None
    calls = Counter(s for s, _ in links)
    agents = {(s, lk.agent) for s, lk in links if lk.depth > 0}
    return AgentStats(
        tasks=len(calls),
        sub_agents=len(agents),
        max_depth=max(lk.depth for _, lk in links),
        calls_p50=float(np.percentile(list(calls.values()), 50)),
        calls_max=max(calls.values()),
        linked=sum(1 for _, lk in links if lk.after is not None or lk.joins),
    )


def _token_stats(values: list[int]) -> TokenStats:
    arr = np.asarray(values, dtype=np.float64)
    p50, p90, p99 = (float(v) for v in np.percentile(arr, PERCENTILES))
    return TokenStats(p50=p50, p90=p90, p99=p99, mean=float(arr.mean()), max=int(arr.max()))


def _shared_share(rows: Sequence[TraceRow]) -> float | None:
    blocks = [set(r.hash_ids) for r in rows]
    if not any(blocks):
        return None
    seen: Counter[int] = Counter()
    for b in blocks:
        seen.update(b)
    shared = sum(1 for b in blocks if any(seen[h] > 1 for h in b))
    return shared / len(rows)
