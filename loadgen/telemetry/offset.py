"""Clock offset between an agent and loadgen, from ``/clock`` round trips.

Owns the estimate. One probe: loadgen reads its clock (``t0``), asks the agent
for its monotonic time (``agent_ns``), reads its clock again (``t1``). If the
reply was stamped half-way, ``offset = agent_ns - (t0 + t1) / 2`` and the error
is at most ``(t1 - t0) / 2``. Of several probes, the one with the shortest
round trip has the tightest bound and is kept. An agent stamp converts to
loadgen's monotonic time as ``loadgen_ns = agent_ns - offset_ns``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["ClockProbe", "OffsetEstimate", "best_offset"]


@dataclass(frozen=True, slots=True)
class ClockProbe:
    t0_ns: int  # loadgen monotonic, before the request
    agent_ns: int  # agent monotonic, from the reply
    t1_ns: int  # loadgen monotonic, after the reply


@dataclass(frozen=True, slots=True)
class OffsetEstimate:
    """``offset_ns = agent clock - loadgen clock``; true offset within ``± uncertainty_ns``."""

    offset_ns: int
    uncertainty_ns: int
    measured_at_ns: int  # loadgen monotonic

    def to_local(self, agent_ns: int) -> int:
        return agent_ns - self.offset_ns


def best_offset(probes: Iterable[ClockProbe]) -> OffsetEstimate | None:
    """The midpoint estimate of the probe with the shortest round trip; ``None`` if none."""
    best = min(probes, key=lambda p: p.t1_ns - p.t0_ns, default=None)
    if best is None:
        return None
    mid = (best.t0_ns + best.t1_ns) // 2
    return OffsetEstimate(
        offset_ns=best.agent_ns - mid,
        uncertainty_ns=(best.t1_ns - best.t0_ns + 1) // 2,
        measured_at_ns=best.t1_ns,
    )
