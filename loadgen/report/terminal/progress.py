"""Live progress of a run on a terminal (rich), silent otherwise.

Shows the current step (i of N where the sweep knows N), requests done /
total, time left where known (a timed step's end, or the requests left at
the live rate), live req/s and TTFT p50 so far, in one line of at most
:data:`WIDTH` columns. Rendering runs in rich's refresh thread at 4 Hz; the
event loop only bumps counters.

The time comes from the caller (``now``: the run passes
:func:`loadgen.clock.now_ns`), so the outputs never read the clock.
"""

from __future__ import annotations

import statistics
import sys
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from loadgen.records import Record

__all__ = ["WIDTH", "Progress"]

#: the progress line is cut to this many columns
WIDTH = 80

_NS_PER_MS = 1_000_000
_NS_PER_S = 1_000_000_000


@dataclass(slots=True)
class _State:
    label: str = ""
    total: int | None = None
    duration_s: float | None = None
    done: int = 0
    failed: int = 0
    tokens: int = 0
    started_ns: int = 0
    ttft_ms: deque[float] = field(default_factory=lambda: deque(maxlen=2000))


class Progress:
    """``enabled`` only when stdout is a terminal and not ``--quiet``."""

    def __init__(self, *, now: Callable[[], int], enabled: bool | None = None) -> None:
        self._now = now  # monotonic ns
        self.enabled = sys.stdout.isatty() if enabled is None else enabled
        self._state = _State()
        self._live: Any = None

    def start_step(self, label: str, total: int | None, duration_s: float | None = None) -> None:
        """``label`` such as ``step 2/7 c=4``; ``total`` requests or ``duration_s`` when known."""
        self._state = _State(
            label=label, total=total, duration_s=duration_s, started_ns=self._now()
        )
        if self.enabled and self._live is None:
            from rich.live import Live

            self._live = Live(self, refresh_per_second=4, transient=True)
            self._live.start()

    def record(self, rec: Record) -> None:
        s = self._state
        s.done += 1
        if not rec.ok and not rec.cancelled_by_client:  # a user who stopped did not fail
            s.failed += 1
        s.tokens += rec.output_tokens
        if rec.first_token_ns is not None and rec.ok:
            s.ttft_ms.append((rec.first_token_ns - rec.sent_ns) / _NS_PER_MS)

    def print(self, text: str) -> None:
        if self._live is not None:
            self._live.console.print(text, markup=False, highlight=False)
        else:
            print(text, flush=True)

    def warn(self, text: str) -> None:
        """A warning or error line: on stderr (above the live line, while one is shown)."""
        if self._live is not None:
            self._live.console.print(text, markup=False, highlight=False, style="yellow")
        else:
            print(text, file=sys.stderr, flush=True)

    def stop(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    def line(self) -> str:
        """``[2/7] concurrency 4 · 37/200 req · 12 s left · 6.1 req/s · TTFT p50 41 ms``.

        Failures are counted when there are any; the time is what is left where
        known, else what has passed. Segments drop from the end (TTFT, then the
        rate) until the line fits :data:`WIDTH`.
        """
        s = self._state
        elapsed = max((self._now() - s.started_ns) / _NS_PER_S, 1e-9)
        rate = s.done / elapsed
        left = _time_left(s, elapsed, rate)
        requests = f"{s.done}/{s.total} req" if s.total else f"{s.done} req"
        if s.failed:
            requests += f", {s.failed} failed"
        segments = [
            s.label,
            requests,
            _time_text(s, elapsed, left),
            f"{rate:.1f} req/s",
            f"TTFT p50 {statistics.median(s.ttft_ms):.0f} ms" if s.ttft_ms else "TTFT p50 -",
        ]
        while len(" · ".join(segments)) > WIDTH and len(segments) > 3:
            segments.pop()
        return " · ".join(segments)[:WIDTH]

    def __rich__(self) -> Any:
        from rich.text import Text

        return Text(self.line())


def _time_left(s: _State, elapsed: float, rate: float) -> float | None:
    """Seconds until the step ends: its duration, or the requests left at the live rate."""
    if s.duration_s is not None:
        return max(s.duration_s - elapsed, 0.0)
    if s.total and rate > 0:
        return max(s.total - s.done, 0) / rate
    return None


def _time_text(s: _State, elapsed: float, left: float | None) -> str:
    """``12 s left``; ``draining`` once a timed step's sending is over; else the time passed."""
    if left is None:
        return f"{elapsed:.0f} s"
    if s.duration_s is not None and left <= 0:
        return "draining"
    return f"{left:.0f} s left"
