"""Host CPU utilisation and memory from ``/proc`` (``--host-stats``).

Owns the parsing of ``/proc/stat`` and ``/proc/meminfo``. CPU utilisation is
the busy share of all CPU time between two reads of the aggregate ``cpu``
line: busy = total - idle - iowait. Memory used = MemTotal - MemAvailable.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = ["HostSample", "HostSampler", "cpu_busy_total", "mem_used_total", "row_of"]


@dataclass(slots=True)
class HostSample:
    """One reading of the host; ``cpu_util_pct`` is absent on the first read."""

    t_ns: int
    wall_ns: int
    cpu_util_pct: float | None = None
    mem_used_bytes: int | None = None
    mem_total_bytes: int | None = None

    def as_dict(self) -> dict[str, object]:
        return row_of(self, "host")


def row_of(sample: DataclassInstance, kind: str) -> dict[str, object]:
    """A sample as a row: ``kind`` first, then every field that has a value."""
    out: dict[str, object] = {"kind": kind}
    for f in fields(sample):
        value = getattr(sample, f.name)
        if value is not None:
            out[f.name] = value
    return out


def cpu_busy_total(stat_text: str) -> tuple[int, int]:
    """(busy, total) jiffies from the ``cpu`` line of /proc/stat."""
    for line in stat_text.splitlines():
        if line.startswith("cpu "):
            values = [int(v) for v in line.split()[1:]]
            # user nice system idle iowait irq softirq steal guest guest_nice;
            # guest time is already counted in user/nice.
            total = sum(values[:8])
            idle = values[3] + (values[4] if len(values) > 4 else 0)
            return total - idle, total
    msg = "no aggregate 'cpu' line in /proc/stat"
    raise ValueError(msg)


def mem_used_total(meminfo_text: str) -> tuple[int, int]:
    """(used, total) bytes from /proc/meminfo: MemTotal - MemAvailable."""
    kib: dict[str, int] = {}
    for line in meminfo_text.splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts:
            kib[key] = int(parts[0])
    total = kib["MemTotal"] * 1024
    return total - kib["MemAvailable"] * 1024, total


class HostSampler:
    def __init__(
        self, proc: Path = Path("/proc"), clock: Callable[[], int] = time.monotonic_ns
    ) -> None:
        self._proc = proc
        self._clock = clock
        self._prev: tuple[int, int] | None = None

    def sample(self) -> HostSample:
        s = HostSample(t_ns=self._clock(), wall_ns=time.time_ns())
        try:
            busy, total = cpu_busy_total((self._proc / "stat").read_text())
            if self._prev is not None and total > self._prev[1]:
                s.cpu_util_pct = 100.0 * (busy - self._prev[0]) / (total - self._prev[1])
            self._prev = (busy, total)
        except (OSError, ValueError, IndexError):
            pass
        with contextlib.suppress(OSError, ValueError, KeyError):
            s.mem_used_bytes, s.mem_total_bytes = mem_used_total(
                (self._proc / "meminfo").read_text()
            )
        return s
