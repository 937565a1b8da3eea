"""The saturation verdict of a step from the figures the monitor gathered."""

from __future__ import annotations

from loadgen.runner.monitor import SATURATION, LoopMonitor

MS = 1_000_000


def test_a_long_read_lag_flags_the_step() -> None:
    monitor = LoopMonitor()
    health = monitor.health([], read_lag=(1000, 9 * MS, 13 * MS))
    assert (health.read_lag_p99_ms, health.read_lag_max_ms) == (9.0, 13.0)
    assert health.saturated
    assert any("read its sockets" in w for w in health.warnings)


def test_a_short_read_lag_does_not() -> None:
    monitor = LoopMonitor()
    p99 = int(SATURATION["read_lag_p99_ms"] * MS) - 1
    health = monitor.health([], read_lag=(1000, p99, 5 * MS))
    assert not health.saturated and health.warnings == []
    assert monitor.health([], read_lag=(0, 0, 0)).read_lag_p99_ms is None  # no reads, no figure
