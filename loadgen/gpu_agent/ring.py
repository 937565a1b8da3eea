"""The bounded buffer of serialised samples and the thread that fills it.

Owns the sampling cadence and retention. :class:`SamplingThread` wakes at
absolute deadlines ``t0 + k * interval`` (never a relative sleep, so the
schedule does not drift), reads every source, serialises each row once with
orjson and appends it to :class:`Ring`. A tick that overruns is skipped, not
queued (``overruns`` counts them). The HTTP side only reads the ring under a
lock, so NVML calls never run on the event loop.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import orjson

from loadgen.gpu_agent.host import HostSample
from loadgen.gpu_agent.sampler import GpuSample

__all__ = ["Ring", "SamplingThread", "Slice"]

log = logging.getLogger("loadgen.gpu_agent")

Row = GpuSample | HostSample


@dataclass(frozen=True, slots=True)
class Slice:
    """Rows newer than ``since``; ``truncated`` when rows after ``since`` were already evicted."""

    rows: list[bytes]
    oldest_ns: int | None
    truncated: bool


class Ring:
    """Keeps the newest ``maxlen`` rows as ``(t_ns, json bytes)``, oldest first."""

    def __init__(self, maxlen: int) -> None:
        self._rows: deque[tuple[int, bytes]] = deque(maxlen=maxlen)
        self._lock = threading.Lock()
        self._evicted_up_to = -1  # newest t_ns ever evicted
        self.latest: dict[str, Row] = {}

    def extend(self, rows: Sequence[Row]) -> None:
        encoded = [(r.t_ns, orjson.dumps(r.as_dict())) for r in rows]
        with self._lock:
            for item in encoded:
                if len(self._rows) == self._rows.maxlen:
                    self._evicted_up_to = self._rows[0][0]
                self._rows.append(item)
            for r in rows:
                key = f"gpu{r.gpu}" if isinstance(r, GpuSample) else "host"
                self.latest[key] = r

    def since(self, since_ns: int) -> Slice:
        """Rows with ``t_ns > since_ns``, walking back from the newest (polls ask for few)."""
        out: list[bytes] = []
        with self._lock:
            for t_ns, row in reversed(self._rows):
                if t_ns <= since_ns:
                    break
                out.append(row)
            oldest = self._rows[0][0] if self._rows else None
            truncated = self._evicted_up_to > since_ns
        out.reverse()
        return Slice(out, oldest, truncated)

    def __len__(self) -> int:
        return len(self._rows)


class SamplingThread(threading.Thread):
    """Calls each source every ``interval_ns`` and appends what it returns to ``ring``."""

    def __init__(
        self,
        ring: Ring,
        sources: Sequence[Callable[[], Sequence[Row]]],
        interval_ns: int,
        clock: Callable[[], int] = time.monotonic_ns,
    ) -> None:
        super().__init__(name="loadgen-agent-sampler", daemon=True)
        self._ring = ring
        self._sources = sources
        self._interval_ns = interval_ns
        self._clock = clock
        self._stop_event = threading.Event()
        self.ticks = 0
        self.overruns = 0
        self.source_errors = 0

    def tick(self) -> None:
        rows: list[Row] = []
        for source in self._sources:
            try:
                rows.extend(source())
            except Exception:  # a sampler bug must not kill the agent
                self.source_errors += 1
                if self.source_errors <= 3:
                    log.exception("sampling failed")
        self._ring.extend(rows)
        self.ticks += 1

    def run(self) -> None:
        t0 = self._clock()
        k = 0
        while not self._stop_event.is_set():
            self.tick()
            k += 1
            deadline = t0 + k * self._interval_ns
            now = self._clock()
            if now >= deadline:  # overran: skip the missed ticks, keep the grid
                missed = (now - deadline) // self._interval_ns + 1
                self.overruns += int(missed)
                k += int(missed)
                deadline = t0 + k * self._interval_ns
            self._stop_event.wait((deadline - now) / 1e9)

    def stop(self) -> None:
        self._stop_event.set()
