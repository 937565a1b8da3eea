"""The live terminal view of a run (rich), in place of the progress line on a terminal.

:class:`LiveView` has :class:`~loadgen.report.terminal.progress.Progress`'s methods
(``start_step``, ``record``, ``print``, ``warn``, ``stop``) plus
:meth:`LiveView.tick`, which the run calls four times a second from its
event loop, between the load's callbacks: it takes loadgen's health and the
latest telemetry, closes the token-rate second and redraws. rich never
refreshes on its own thread (``auto_refresh=False``), so nothing reads the
state while a record changes it. Lines printed through the view (each
step's table, warnings) go above the live area and stay in the scrollback;
the area itself is erased when the run ends.

The lines, at most :data:`WIDTH` columns::

    [2/4] concurrency 4 · step 12 s left · run ≈ 40 s left
    requests 37/200 done · 1 failed · 4 in flight · 6.1 req/s
    last 10 s   p50       p99       SLA
    TTFT        41 ms     80 ms     p99 ≤ 500 ms
    ...
    output tok/s 1,234  ▁▂▃▅▇█▇▆
    errors   http_500 3 · read_timeout 1
    server   running 4 · waiting 0 · KV 12%
    GPU 0    util 87% · mem 40.1 GiB · 310 W
    loadgen  CPU 34% · loop lag p99 0.4 ms
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from loadgen.records import Record
from loadgen.report.terminal.live_state import (
    WINDOW_S,
    Figures,
    GpuNow,
    HealthNow,
    LiveState,
    Rolling,
    ServerNow,
)
from loadgen.scenario import PercentileBounds, SlaSpec

__all__ = ["WIDTH", "LiveView", "sparkline"]

#: the view is laid out in this many columns
WIDTH = 80
_BARS = "▁▂▃▄▅▆▇█"
_STEP_INDEX = re.compile(r"^\[(\d+)")


def sparkline(values: Iterable[float], width: int = 40) -> str:
    """The last ``width`` values as bars, scaled to the largest (all zero: the lowest bar)."""
    points = list(values)[-width:]
    top = max(points, default=0.0)
    if top <= 0:
        return _BARS[0] * len(points)
    return "".join(
        _BARS[min(int(v / top * (len(_BARS) - 1) + 0.5), len(_BARS) - 1)] for v in points
    )


class LiveView:
    """Shown on a terminal unless ``--quiet``, ``--no-live`` or CI (decided by the run)."""

    enabled = True

    def __init__(
        self,
        *,
        now: Callable[[], int],
        sla: SlaSpec | None = None,
        steps_planned: int | None = None,
        console: Any = None,
    ) -> None:
        """``console``: a rich Console to draw on (tests, the benchmark); else stdout's."""
        self._now = now
        self.state = LiveState(sla=sla or SlaSpec(), steps_planned=steps_planned)
        self._console = console
        self._live: Any = None
        self._step_index: int | None = None

    # --- what Progress does -----------------------------------------------
    def start_step(self, label: str, total: int | None, duration_s: float | None = None) -> None:
        self.state.start_step(label, total, duration_s, self._now())
        m = _STEP_INDEX.match(label)
        self._step_index = int(m.group(1)) - 1 if m else None
        if self._live is None:
            from rich.live import Live

            self._live = Live(self, console=self._console, auto_refresh=False, transient=True)
            self._live.start(refresh=True)

    def record(self, rec: Record) -> None:
        self.state.record(rec)

    def print(self, text: str) -> None:
        if self._live is not None:
            self._live.console.print(text, markup=False, highlight=False, soft_wrap=True)
        else:
            print(text, flush=True)

    def warn(self, text: str) -> None:
        if self._live is not None:
            self._live.console.print(
                text, markup=False, highlight=False, style="yellow", soft_wrap=True
            )
        else:
            import sys

            print(text, file=sys.stderr, flush=True)

    def stop(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    # --- the idle side ----------------------------------------------------
    def tick(
        self,
        health: HealthNow | None = None,
        server: ServerNow | None = None,
        gpus: tuple[GpuNow, ...] = (),
    ) -> None:
        """Four times a second: take the figures the run read, redraw."""
        s = self.state
        s.tick(self._now(), health)
        if server is not None:
            s.server = server
        if gpus:
            s.gpus = gpus
        if self._live is not None:
            self._live.refresh()

    # --- drawing ----------------------------------------------------------
    def lines(self) -> list[tuple[str, str]]:
        """The view as (text, style) lines: what :meth:`__rich__` draws, and what tests read."""
        s, now = self.state, self._now()
        out = [(self._header(now), "bold"), (self._requests(now), "")]
        out += _latency_lines(s.rolling(now), s.sla)
        if s.rates:
            spark = sparkline(s.rates, WIDTH - 28)
            out.append((f"output tok/s {s.rates[-1]:>9,.0f}  {spark}", "cyan"))
        if s.errors:
            kinds = sorted(s.errors.items(), key=lambda kv: (-kv[1], kv[0]))
            out.append(("errors   " + " · ".join(f"{k} {n}" for k, n in kinds), "red"))
        if s.server is not None:
            out.append((_server_line(s.server), ""))
        out += [(_gpu_line(g), "") for g in s.gpus]
        out.append((_health_line(s.health), ""))
        if s.health.warnings:  # now: from the figures the health line shows
            out += [(f"⚠ saturated now: {t}", "bold red") for t in s.health.warnings]
        elif s.saturated is not None:  # earlier in the step, not now
            since, texts = s.saturated
            out += [(f"⚠ saturated earlier, at {since:.0f} s: {t}", "yellow") for t in texts]
        return [(text[:WIDTH], style) for text, style in out]

    def _header(self, now: int) -> str:
        s = self.state
        step_left = s.step_left_s(now)
        if step_left is None:
            timing = f"step {s.elapsed_s(now):.0f} s"
        elif s.duration_s is not None and step_left <= 0:
            timing = "draining"
        else:
            timing = f"step {_duration(step_left)} left"
        run_left = s.run_left_s(now, self._step_index)
        if run_left is not None:
            timing += f" · run ≈ {_duration(run_left)} left"
        return f"{s.label} · {timing}"

    def _requests(self, now: int) -> str:
        s = self.state
        done = f"{s.done}/{s.total}" if s.total else f"{s.done}"
        parts = [f"requests {done} done", f"{s.failed} failed"]
        if s.health.in_flight is not None:
            parts.append(f"{s.health.in_flight} in flight")
        parts.append(f"{s.done / max(s.elapsed_s(now), 1e-9):.1f} req/s")
        return " · ".join(parts)

    def __rich__(self) -> Any:
        from rich.text import Text

        text = Text()
        for i, (line, style) in enumerate(self.lines()):
            if i:
                text.append("\n")
            text.append(line, style=style or None)
        return text


def _duration(seconds: float) -> str:
    """``42 s``, ``3 min 05 s``, ``1 h 02 min``."""
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def _latency_lines(r: Rolling, sla: SlaSpec) -> list[tuple[str, str]]:
    """TTFT, ITL, E2E (and TPOT where the SLA bounds it): p50, p99, the SLA's bounds.

    A line is red when the window's figure is over any of its bounds (the
    step's verdict, with its confidence interval, comes after the step).
    """
    head = f"last {WINDOW_S:g} s ({r.n} req)"
    out = [(f"{head:<18}{'p50':>10}{'p99':>10}   SLA", "dim")]
    rows = [("TTFT", r.ttft, sla.ttft_ms), ("ITL", r.itl, sla.itl_ms)]
    if sla.tpot_ms.items():
        rows.append(("TPOT", r.tpot, sla.tpot_ms))
    rows.append(("E2E", r.e2e, sla.e2e_ms))
    for name, figure, bounds in rows:
        p50, p99 = (f"{figure.p50:.1f} ms", f"{figure.p99:.1f} ms") if figure else ("-", "-")
        miss = figure is not None and _misses(figure, bounds)
        line = f"{name:<18}{p50:>10}{p99:>10}   {_bounds_text(bounds)}"
        out.append((line, "red" if miss else ""))
    return out


def _bounds_text(bounds: PercentileBounds) -> str:
    items = bounds.items()
    return " · ".join(f"{k} ≤ {v:g} ms" for k, v in items) if items else "-"


def _misses(figure: Figures, bounds: PercentileBounds) -> bool:
    """Whether the window's figure is over any bound the SLA sets on it."""
    return any(getattr(figure, k) > v for k, v in bounds.items())


def _server_line(s: ServerNow) -> str:
    def n(v: float | None) -> str:
        return "-" if v is None else f"{v:g}"

    kv = "-" if s.kv_usage is None else f"{s.kv_usage:.0%}"
    return f"server   running {n(s.running)} · waiting {n(s.waiting)} · KV {kv}"


def _gpu_line(g: GpuNow) -> str:
    util = "-" if g.util_pct is None else f"{g.util_pct:.0f}%"
    mem = "-" if g.mem_used_bytes is None else f"{g.mem_used_bytes / 2**30:.1f} GiB"
    power = "-" if g.power_w is None else f"{g.power_w:.0f} W"
    return f"{g.label:<8} util {util} · mem {mem} · {power}"


def _health_line(h: HealthNow) -> str:
    cpu = "-" if h.cpu_util is None else f"{h.cpu_util:.0%}"
    lag = "-" if h.loop_lag_p99_ms is None else f"{h.loop_lag_p99_ms:.1f} ms"
    return f"loadgen  CPU {cpu} · loop lag p99 {lag}"
