"""Was the measurement sound? The client's own health, Little's law, the pre-flight check.

Owns :class:`ClientHealth` (was loadgen the bottleneck), :class:`LittleCheck`
and :class:`TargetCheck` (what the target answered before the first step).
"""

from __future__ import annotations

from pydantic import Field

from loadgen.strict import Strict

__all__ = ["ClientHealth", "LittleCheck", "TargetCheck"]


class ClientHealth(Strict):
    """Was loadgen itself the bottleneck? See docs/metrics.md."""

    cpu_util: float = 0.0  # loadgen process CPU seconds per wall second (1.0 = one core)
    loop_lag_p99_ms: float | None = None
    loop_lag_max_ms: float | None = None
    # open loop: how late the sender woke for a deadline (from when a slot freed, if it
    # was waiting for one past the deadline); the slot wait itself is queue_wait_ms
    send_lag_p99_ms: float | None = None
    read_lag_p99_ms: float | None = None  # h1: read time - kernel receive stamp, exact p99
    read_lag_max_ms: float | None = None
    saturated: bool = False
    warnings: list[str] = Field(default_factory=list)
    #: peak resident memory during the step, MiB (read every 100 ms; with workers the
    #: largest worker's); None where it cannot be read (not Linux)
    rss_peak_mib: float | None = None
    #: load.workers > 1: every loadgen process's CPU together (the parent's included)
    cpu_util_total: float | None = None
    #: load.workers > 1: every process's peak RSS added up (the parent's at the step's end)
    rss_peak_total_mib: float | None = None
    #: load.workers > 1: each worker's own figures; those above are the worst of them
    workers: list[ClientHealth] | None = None
    # -- synthetic media made off the event loop (closed loop)
    #: how long requests waited for their images/audio from the helper that makes them
    #: ahead of demand (p99, ms; before each request starts); None: no such media
    media_wait_p99_ms: float | None = None


class LittleCheck(Strict):
    """Little's law: mean in flight = throughput x mean latency."""

    mean_in_flight: float
    predicted: float
    ratio: float | None
    flagged: bool


class TargetCheck(Strict):
    """What the pre-flight check saw of the target before the first step."""

    healthy: bool = Field(description="GET /health answered 200.")
    models: list[str] | None = Field(
        None, description="The models GET /v1/models listed; null when it did not answer."
    )
    warnings: list[str] = Field(
        default_factory=list, description="What the check warned of (also printed on stderr)."
    )
    http_versions: list[str] | None = Field(
        None,
        description="target.http2: the HTTP versions the server answered in (after the "
        "first step that had a response); null otherwise.",
    )
