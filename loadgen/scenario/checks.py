"""Warnings about a valid scenario that cannot do what it seems to ask (said at load time).

A step whose measured requests are fewer than its concurrency never has
that many in flight: its latencies describe a lighter load than its label.
"""

from __future__ import annotations

from loadgen.scenario.loadspec import ConcurrencyLoad
from loadgen.scenario.models import Scenario

__all__ = ["load_warnings"]


def load_warnings(sc: Scenario) -> list[str]:
    """One line per problem, naming the field; empty for a scenario that can reach its load."""
    out: list[str] = []
    load = sc.load
    n = load.requests_per_step
    if isinstance(load, ConcurrencyLoad) and n is not None:
        what = "sessions" if sc.workload.sessions is not None else "requests"
        short = sorted({int(c) for c in load.points if c > n})
        if short:
            values = ", ".join(str(c) for c in short)
            out.append(
                f"warning: load.requests_per_step {n} is below load.concurrency {values}: "
                f"such a step never has that many {what} in flight (give at least "
                f"{max(short)} per step, better ten times that)"
            )
    return out
