"""What the live terminal view knows: counters bumped per record, rolling figures read at 4 Hz.

:class:`LiveState` is fed two ways. Per finished record (the event loop's
hot side) :meth:`LiveState.record` bumps a few counters and appends one
tuple to a bounded ring (:data:`RING`) and, for a streamed answer, a
reference to its token stamps to a smaller one (:data:`ITL_RING`): no
sorting, no percentiles, no allocation beyond the tuple. Four times a second
(the idle side) :meth:`LiveState.tick` turns the cumulative token count into
the tokens/s series, and the view asks :meth:`LiveState.rolling` for the
percentiles of the last :data:`WINDOW_S` seconds.

Rolling figures (docs/reports.md, "The live view"):

- TTFT = first-token time - send time; E2E = end time - send time, of the
  requests that ended in the window (from the scheduled send in open loop
  when ``sla.latency_from`` is ``scheduled``; TTFT to the first answer token
  when ``sla.ttft_of`` is ``answer``), as the step's SLA counts them.
- ITL = the gaps between consecutive token events of the newest streamed
  requests that ended in the window, newest first until :data:`ITL_GAPS`
  gaps (of at most :data:`ITL_RING` requests).
- TPOT = (last-token time - first-token time) / (output tokens - 1), per request.
- Output tokens/s: the output tokens of the requests that ended in each
  second (a request's tokens count when it ends).

Every time comes from the caller (the run passes the clock's ``now_ns``).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from loadgen.metrics import FIRST_STAMP, Stamp, tpot_ns
from loadgen.records import Record
from loadgen.scenario import SlaSpec

__all__ = [
    "ITL_GAPS",
    "ITL_RING",
    "RING",
    "SPARK_POINTS",
    "WINDOW_S",
    "Figures",
    "GpuNow",
    "HealthNow",
    "LiveState",
    "Rolling",
    "ServerNow",
    "rolling_stats",
]

#: the rolling figures cover the requests that ended this many seconds back
WINDOW_S = 10.0
#: the most recent finished requests kept for TTFT and E2E (the window's newest, if more ended)
RING = 2048
#: the most recent streamed requests whose token gaps may make the rolling ITL
ITL_RING = 256
#: the rolling ITL is taken over about this many gaps (the newest requests' first)
ITL_GAPS = 4096
#: seconds of output tokens/s kept for the sparkline
SPARK_POINTS = 60

_NS_PER_S = 1_000_000_000
_NS_PER_MS = 1_000_000


@dataclass(frozen=True, slots=True)
class Figures:
    """One latency's rolling figures, in ms (the percentiles an SLA may bound)."""

    mean: float
    p50: float
    p90: float
    p95: float
    p99: float


@dataclass(frozen=True, slots=True)
class Rolling:
    """The window's latencies (None: none in it); ``n``: how many requests ended in it."""

    n: int
    ttft: Figures | None
    itl: Figures | None
    tpot: Figures | None
    e2e: Figures | None


@dataclass(frozen=True, slots=True)
class HealthNow:
    """Loadgen itself just now (the worst worker's figure where there are several)."""

    in_flight: int | None = None
    cpu_util: float | None = None  # fraction of one core
    loop_lag_p99_ms: float | None = None
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ServerNow:
    """The server's latest /metrics scrape."""

    running: float | None = None
    waiting: float | None = None
    kv_usage: float | None = None  # fraction


@dataclass(frozen=True, slots=True)
class GpuNow:
    """One GPU's latest agent sample."""

    label: str
    util_pct: float | None = None
    mem_used_bytes: float | None = None
    power_w: float | None = None


@dataclass(slots=True)
class LiveState:
    """One run's live figures: the current step's counters and rings, the run's token rate."""

    sla: SlaSpec = field(default_factory=SlaSpec)
    label: str = ""
    total: int | None = None
    duration_s: float | None = None
    started_ns: int = 0
    steps_planned: int | None = None
    step_seconds: list[float] = field(default_factory=list)  # each finished step's length
    done: int = 0
    failed: int = 0
    tokens: int = 0  # the run's output tokens so far (all steps)
    errors: dict[str, int] = field(default_factory=dict)  # this step's failures by kind
    #: (end, TTFT, E2E, TPOT) of the newest finished requests, ns
    recent: deque[tuple[int, int | None, int, float | None]] = field(
        default_factory=lambda: deque(maxlen=RING)
    )
    gaps: deque[tuple[int, list[int]]] = field(default_factory=lambda: deque(maxlen=ITL_RING))
    rates: deque[float] = field(default_factory=lambda: deque(maxlen=SPARK_POINTS))
    health: HealthNow = field(default_factory=HealthNow)
    server: ServerNow | None = None
    gpus: tuple[GpuNow, ...] = ()
    #: (seconds into the step, warnings) when loadgen first looked saturated in this step
    saturated: tuple[float, tuple[str, ...]] | None = None
    _in_step: bool = False
    _first: Stamp = FIRST_STAMP["any"]
    _from_scheduled: bool = True
    _bucket_ns: int | None = None  # start of the token-rate second being filled
    _bucket_tokens: int = 0  # self.tokens at that start

    def __post_init__(self) -> None:
        self._first = FIRST_STAMP[self.sla.ttft_of]
        self._from_scheduled = self.sla.latency_from == "scheduled"

    def start_step(
        self, label: str, total: int | None, duration_s: float | None, now_ns: int
    ) -> None:
        """A new step: its counters, rings and errors start empty; the token rate goes on."""
        if self._in_step:
            self.step_seconds.append((now_ns - self.started_ns) / _NS_PER_S)
        self.label, self.total, self.duration_s, self.started_ns = label, total, duration_s, now_ns
        self._in_step = True
        self.done = self.failed = 0
        self.errors = {}
        self.recent.clear()
        self.gaps.clear()
        self.health = HealthNow()
        self.saturated = None

    def record(self, rec: Record) -> None:
        """One finished request: the hot side (counters and one append, nothing sorted)."""
        self.done += 1
        if not rec.ok:
            self.failed += 1
            kind = rec.error_kind or "unknown"
            self.errors[kind] = self.errors.get(kind, 0) + 1
            return
        self.tokens += rec.output_tokens
        t0 = rec.sent_ns
        if self._from_scheduled and rec.scheduled_ns is not None:
            t0 = rec.scheduled_ns
        first = self._first(rec)
        ttft = None if first is None else first - t0
        self.recent.append((rec.end_ns, ttft, rec.end_ns - t0, tpot_ns(rec)))
        if len(rec.token_ns) > 1:
            self.gaps.append((rec.end_ns, rec.token_ns))

    def tick(self, now_ns: int, health: HealthNow | None = None) -> None:
        """The idle side, 4 times a second: close each full second of tokens/s; take health."""
        if self._bucket_ns is None:
            self._bucket_ns, self._bucket_tokens = now_ns, self.tokens
        elif now_ns - self._bucket_ns >= _NS_PER_S:
            seconds = (now_ns - self._bucket_ns) / _NS_PER_S
            self.rates.append((self.tokens - self._bucket_tokens) / seconds)
            self._bucket_ns, self._bucket_tokens = now_ns, self.tokens
        if health is not None:
            self.health = health
            if health.warnings:  # kept for the step: the view says since when
                since = self.saturated[0] if self.saturated else self.elapsed_s(now_ns)
                self.saturated = (since, health.warnings)

    def elapsed_s(self, now_ns: int) -> float:
        return max((now_ns - self.started_ns) / _NS_PER_S, 0.0)

    def rolling(self, now_ns: int) -> Rolling:
        return rolling_stats(self.recent, self.gaps, now_ns - int(WINDOW_S * _NS_PER_S))

    def step_left_s(self, now_ns: int) -> float | None:
        """Seconds until the step ends: its duration, or the requests left at the live rate."""
        elapsed = max(self.elapsed_s(now_ns), 1e-9)
        if self.duration_s is not None:
            return max(self.duration_s - elapsed, 0.0)
        rate = self.done / elapsed
        if self.total and rate > 0:
            return max(self.total - self.done, 0) / rate
        return None

    def run_left_s(self, now_ns: int, step_index: int | None) -> float | None:
        """The steps after this one at the mean length of those done, plus this one's rest.

        Only where the sweep knows its number of steps and one has finished.
        """
        left = self.step_left_s(now_ns)
        if self.steps_planned is None or step_index is None or not self.step_seconds:
            return None
        mean = sum(self.step_seconds) / len(self.step_seconds)
        return (left or 0.0) + mean * max(self.steps_planned - step_index - 1, 0)


def rolling_stats(
    recent: deque[tuple[int, int | None, int, float | None]],
    gaps: deque[tuple[int, list[int]]],
    since_ns: int,
) -> Rolling:
    """The figures (ms) of the TTFT, TPOT, E2E and token gaps of the requests that ended
    after ``since_ns``.

    The rings are in arrival order, which is nearly end order (a worker's batch
    may come late): every entry is checked, none is assumed sorted.
    """
    rows = [row for row in list(recent) if row[0] >= since_ns]
    return Rolling(
        n=len(rows),
        ttft=_figures([r[1] for r in rows if r[1] is not None]),
        itl=_figures(_newest_gaps(gaps, since_ns)),
        tpot=_figures([r[3] for r in rows if r[3] is not None]),
        e2e=_figures([r[2] for r in rows]),
    )


def _newest_gaps(gaps: deque[tuple[int, list[int]]], since_ns: int) -> Any:
    """The token gaps of the window's newest streamed requests, until ITL_GAPS (numpy)."""
    import numpy as np

    flat: list[int] = []
    starts: list[int] = []
    for end, stamps in reversed(list(gaps)):
        if end >= since_ns:
            starts.append(len(flat))
            flat.extend(stamps)
            if len(flat) - len(starts) >= ITL_GAPS:
                break
    if len(flat) < 2:
        return []
    diffs = np.diff(np.asarray(flat, dtype=np.int64))
    keep = np.ones(len(diffs), dtype=bool)
    keep[np.asarray(starts[1:], dtype=np.int64) - 1] = False  # one request's end to the next
    return diffs[keep]


def _figures(values_ns: Any) -> Figures | None:
    if len(values_ns) == 0:
        return None
    import numpy as np

    a = np.asarray(values_ns, dtype=np.float64) / _NS_PER_MS
    p50, p90, p95, p99 = (float(x) for x in np.percentile(a, [50, 90, 95, 99]))
    return Figures(mean=float(a.mean()), p50=p50, p90=p90, p95=p95, p99=p99)
