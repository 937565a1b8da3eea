"""The open loop's wait in loadgen's own queue: a request due to be sent, no slot free.

An open-loop step capped by ``load.max_concurrency`` holds a request whose
send time came while every slot was busy; ``steps[].queue_wait_ms`` is that
wait (start - intended send time, plus any sender lag). Its latency counts from
the intended time (``latency_from: scheduled``), so the wait is inside TTFT and
E2E: this section says how much. Nothing when no request waited (a closed loop,
an open loop without a cap, a cap never reached).
"""

from __future__ import annotations

from loadgen.report.section import Fact, Section
from loadgen.summary import StepSummary
from loadgen.vocab import CURVE_STATS

__all__ = ["section"]

#: the wait's statistics that every output shows, in order: the curves' and the largest
_STATS = (*CURVE_STATS, "max")


def section(step: StepSummary) -> Section | None:
    """``client queue (load.max_concurrency 8): wait for a free slot p50 0.00 ms,
    p99 41.20 ms, max 63.00 ms`` and steps.csv's ``queue_wait_ms_{p50,p99,max}``."""
    d = step.queue_wait_ms
    if d is None or not d.count or not d.max:
        return None
    values = {stat: getattr(d, stat) for stat in _STATS}
    facts = [
        Fact(f"{'wait for a free slot ' if i == 0 else ''}{stat}", f"{v:.2f}", "ms")
        for i, (stat, v) in enumerate(values.items())
        if v is not None
    ]
    cap = step.load.max_concurrency
    head = "client queue" + (f" (load.max_concurrency {cap})" if cap is not None else "")
    text = f"{head}: " + ", ".join(f.text() for f in facts)
    return Section(
        "client_queue", (text,), fields={f"queue_wait_ms_{s}": v for s, v in values.items()}
    )
