"""Watching loadgen itself: event-loop lag, requests in flight, CPU use.

A small task wakes about every ``period`` and measures the event loop's lag:
how late its timer fired, past the timer's 1 ms resolution, less the time the
OS kept the loop's thread waiting for a core meanwhile (:class:`RunQueue`: a
busy machine's, not loadgen's), so one long busy stretch of loadgen's own
shows whole; or, when larger, how long one pass through the ready queue takes
(the delay any work waiting its turn carries). The worst raw lateness of the
last second (the OS's waits included) is ``clock.LATELY``, the slack of a
stamp the loop takes as it reads. It
also samples the number of requests in flight, for Little's law, and (every
tenth wake) the process's resident memory, for the step's peak. With the h1
transport the step also gets the read lag (how long bytes waited in the socket
before loadgen read them). Whatever numpy imports lazily for these figures is
imported with this module, not mid-run.

:meth:`LoopMonitor.pulse` is the same watch right now, for the live view: the
CPU use and loop lag of the last :data:`PULSE_WINDOW_S` seconds and the
saturation warnings they would raise, read about four times a second.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from loadgen.clock import LATELY, NS_PER_MS, NS_PER_S, cpu_ns, now_ns, pause, yield_lag_ns
from loadgen.summary import ClientHealth

# np.percentile imports numpy.ma the first time it is called: call it here, at import,
# not at the end of a step, when every file descriptor may be held by a connection
# (the import then fails EMFILE: a traceback and no summary).
np.percentile(np.zeros(1), 99)

__all__ = ["PULSE_WINDOW_S", "SATURATION", "LoopMonitor", "Pulse", "rss_bytes"]

#: Thresholds past which a step is flagged as limited by loadgen itself (its SLA
#: result is then inconclusive). Chosen with benchmarks/truth_error.py on a 2-core VM
#: (docs/metrics.md has the table): while loadgen's TTFT/ITL error against the mock's
#: truth stayed under 0.04 ms, loop lag p99 was at most 0.94 ms, read lag p99 at most
#: 3.9 ms (the README demo: 3.6-3.8 ms) and CPU at most 0.79; once the error grew
#: (8-23 ms), loop lag p99 was 3.1 ms or more and read lag p99 8.2 ms or more. Every
#: figure is exact (raw values, no histogram buckets).
SATURATION = {
    "cpu_util": 0.9,
    "loop_lag_p99_ms": 2.5,
    # open loop: how late the sender woke for its deadlines (never the wait for a slot)
    "send_lag_p99_ms": 10.0,
    "read_lag_p99_ms": 8.0,
    # closed loop: how long requests waited for the synthetic media made ahead of them
    "media_wait_p99_ms": 10.0,
}


#: what to do about a saturated client, in every warning that says it is one
_HINT = "--workers N spreads it over cores; or fewer streams"

#: the live pulse's figures cover about this many seconds back
PULSE_WINDOW_S = 2.0


@dataclass(frozen=True, slots=True)
class Pulse:
    """Loadgen right now: requests in flight, and CPU and loop lag over the last seconds."""

    in_flight: int
    cpu_util: float | None = None  # fraction of one core
    loop_lag_p99_ms: float | None = None
    warnings: tuple[str, ...] = ()


class RunQueue:
    """How long the event loop's thread has waited on a CPU run queue (Linux
    ``/proc/thread-self/schedstat``, its second figure): runnable, but another
    process had the core. Opened once in the loop's thread; 0 where it cannot be read."""

    __slots__ = ("_fd",)

    def __init__(self) -> None:
        try:
            self._fd: int | None = os.open("/proc/thread-self/schedstat", os.O_RDONLY)
        except OSError:
            self._fd = None

    def wait_ns(self) -> int:
        if self._fd is None:
            return 0
        try:
            return int(os.pread(self._fd, 128, 0).split()[1])
        except (OSError, ValueError, IndexError):
            return 0

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def rss_bytes() -> int | None:
    """This process's resident memory now (Linux /proc), else None."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
#: the RSS is read every this many lag samples (every 100 ms)
_RSS_EVERY = 10
#: the loop's timers fire up to a millisecond late on an idle loop (epoll waits whole
#: milliseconds): a timer's lateness counts as lag past this
TIMER_RESOLUTION_NS = NS_PER_MS
#: ``clock.LATELY`` is the worst of this many latest samples (about a second)
_LATELY_SAMPLES = 100


@dataclass(slots=True)
class LoopMonitor:
    period_ns: int = 10 * NS_PER_MS
    in_flight: int = 0
    rss_peak: int | None = None  # bytes: the largest resident size read during the step
    lags_ns: list[int] = field(default_factory=list)
    samples: list[tuple[int, int]] = field(default_factory=list)  # (time, in flight)
    _cpu0: int = 0
    _wall0: int = 0
    _task: asyncio.Task[None] | None = None
    _queue: RunQueue | None = None
    #: (wall, cpu) at each pulse of the last PULSE_WINDOW_S
    _marks: deque[tuple[int, int]] = field(default_factory=lambda: deque(maxlen=64))

    def start(self) -> None:
        self._cpu0, self._wall0 = cpu_ns(), now_ns()
        self._read_rss()
        self._queue = RunQueue()
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._queue is not None:
            self._queue.close()
            self._queue = None

    async def _run(self) -> None:
        period = self.period_ns
        period_s = period / NS_PER_S
        lags = self.lags_ns
        queue = self._queue or RunQueue()
        lately = deque([0], maxlen=_LATELY_SAMPLES)  # raw lateness, the OS's waits included
        while True:
            waited = queue.wait_ns()
            due = now_ns() + period
            await pause(period_s)
            # how late the timer fired, past its own resolution: the loop's own busy
            # stretch, less what the OS kept the thread waiting for a core meanwhile (that
            # is the machine's, not loadgen's); else one pass through the ready queue
            late = now_ns() - due - TIMER_RESOLUTION_NS
            own = late - (queue.wait_ns() - waited)
            lag = await yield_lag_ns()
            lags.append(own if own > lag else lag)
            self.samples.append((now_ns(), self.in_flight))
            lately.append(late)
            LATELY.ns = max(lately)
            if len(lags) % _RSS_EVERY == 0:
                self._read_rss()

    def _read_rss(self) -> None:
        rss = rss_bytes()
        if rss is not None and (self.rss_peak is None or rss > self.rss_peak):
            self.rss_peak = rss

    def pulse(self) -> Pulse:
        """The live figures: CPU since the oldest pulse of the window, lag p99 of its samples."""
        wall, cpu = now_ns(), cpu_ns()
        marks = self._marks
        if not marks:
            marks.append((self._wall0, self._cpu0))
        while len(marks) > 1 and wall - marks[1][0] >= PULSE_WINDOW_S * NS_PER_S:
            marks.popleft()
        wall0, cpu0 = marks[0]
        marks.append((wall, cpu))
        span = wall - wall0
        cpu_util = (cpu - cpu0) / span if span > 0 else None
        recent = self.lags_ns[-int(PULSE_WINDOW_S * NS_PER_S / self.period_ns) :]
        lag = float(np.percentile(recent, 99)) / NS_PER_MS if recent else None
        warnings = []
        if cpu_util is not None and span >= NS_PER_S and cpu_util > SATURATION["cpu_util"]:
            warnings.append(f"loadgen uses {cpu_util:.0%} of a CPU core: it may be the bottleneck")
        if lag is not None and lag > SATURATION["loop_lag_p99_ms"]:
            warnings.append(f"event-loop lag p99 {lag:.1f} ms: timestamps may run late")
        return Pulse(self.in_flight, cpu_util, lag, tuple(warnings))

    def mean_in_flight(self, start_ns: int, end_ns: int) -> float | None:
        window = [n for t, n in self.samples if start_ns <= t <= end_ns]
        return float(np.mean(window)) if window else None

    def health(
        self,
        send_lags_ns: list[int],
        read_lag: tuple[int, float, int] | None = None,
        media_waits_ns: list[int] | None = None,
    ) -> ClientHealth:
        """``read_lag``: ``ReadLag.take()`` of the step, where the transport has one;
        ``media_waits_ns``: each request's wait for its synthetic media (closed loop)."""
        wall = now_ns() - self._wall0
        cpu_util = (cpu_ns() - self._cpu0) / wall if wall > 0 else 0.0
        self._read_rss()
        h = ClientHealth(cpu_util=round(cpu_util, 4))
        if self.rss_peak is not None:
            h.rss_peak_mib = round(self.rss_peak / 2**20, 1)
        if self.lags_ns:
            lags = np.asarray(self.lags_ns, dtype=np.float64) / NS_PER_MS
            h.loop_lag_p99_ms = float(np.percentile(lags, 99))
            h.loop_lag_max_ms = float(lags.max())
        if send_lags_ns:
            h.send_lag_p99_ms = float(np.percentile(send_lags_ns, 99)) / NS_PER_MS
        if read_lag is not None and read_lag[0]:
            h.read_lag_p99_ms = read_lag[1] / NS_PER_MS
            h.read_lag_max_ms = read_lag[2] / NS_PER_MS
        if wall >= 2 * NS_PER_S and h.cpu_util > SATURATION["cpu_util"]:
            h.warnings.append(
                f"loadgen used {h.cpu_util:.0%} of a CPU core: it may be the bottleneck ({_HINT})"
            )
        if (h.loop_lag_p99_ms or 0.0) > SATURATION["loop_lag_p99_ms"]:
            h.warnings.append(
                f"event-loop lag p99 {h.loop_lag_p99_ms:.1f} ms: timestamps may run late"
            )
        if (h.read_lag_p99_ms or 0.0) > SATURATION["read_lag_p99_ms"]:
            h.warnings.append(
                f"loadgen read its sockets up to {h.read_lag_p99_ms:.1f} ms (p99) after bytes "
                "arrived: events that piled up meanwhile share the last one's stamp "
                "(client_error bounds each reading)"
            )
        if media_waits_ns:
            h.media_wait_p99_ms = float(np.percentile(media_waits_ns, 99)) / NS_PER_MS
            if h.media_wait_p99_ms > SATURATION["media_wait_p99_ms"]:
                h.warnings.append(
                    f"requests waited {h.media_wait_p99_ms:.1f} ms (p99) for their images/"
                    "audio: loadgen makes them slower than the server takes them"
                )
        if (h.send_lag_p99_ms or 0.0) > SATURATION["send_lag_p99_ms"]:
            h.warnings.append(
                f"sends ran {h.send_lag_p99_ms:.1f} ms (p99) behind the arrival schedule: "
                f"loadgen did not offer the load asked for, so doubt its rates ({_HINT})"
            )
        h.saturated = bool(h.warnings)
        return h
