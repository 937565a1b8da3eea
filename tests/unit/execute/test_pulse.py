"""The live pulse: this process's CPU and loop lag over the last seconds, and the workers' merged.

The monitor's clock and CPU readings are replaced by a script, so the CPU
share and the window are exact.
"""

from __future__ import annotations

import orjson
import pytest

from loadgen.execute import monitor as monitor_module
from loadgen.execute.monitor import PULSE_WINDOW_S, SATURATION, LoopMonitor, Pulse
from loadgen.scale.pool import Worker, WorkerPool, _Step

MS = 1_000_000
S = 1_000_000_000


def scripted(monkeypatch: pytest.MonkeyPatch, readings: list[tuple[int, int]]) -> None:
    """Each pulse reads the next (wall, cpu) pair."""
    it = iter(readings)
    current: list[tuple[int, int]] = []

    def wall() -> int:
        current[:] = [next(it)]
        return current[0][0]

    monkeypatch.setattr(monitor_module, "now_ns", wall)
    monkeypatch.setattr(monitor_module, "cpu_ns", lambda: current[0][1])


def test_cpu_over_the_window_and_its_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    m = LoopMonitor(in_flight=7)
    m._wall0, m._cpu0 = 0, 0
    # 0.5 s in, half a core; at 1 s and after: 0.95 of a core from the start
    scripted(monkeypatch, [(S // 2, S // 4), (S, 95 * S // 100), (3 * S, 245 * S // 100)])
    first = m.pulse()
    assert first.in_flight == 7 and first.cpu_util == pytest.approx(0.5)
    assert first.warnings == ()  # under a second: no verdict on the CPU yet
    second = m.pulse()
    assert second.cpu_util == pytest.approx(0.95) and second.cpu_util > SATURATION["cpu_util"]
    assert second.warnings == ("loadgen uses 95% of a CPU core: it may be the bottleneck",)
    # at 3 s the window starts at the newest reading at least PULSE_WINDOW_S (2 s) back: 1 s
    third = m.pulse()
    assert PULSE_WINDOW_S == 2.0
    assert third.cpu_util == pytest.approx((2.45 - 0.95) / 2)
    assert third.warnings == ()


def test_loop_lag_of_the_last_samples_only(monkeypatch: pytest.MonkeyPatch) -> None:
    window = int(PULSE_WINDOW_S * S / (10 * MS))  # samples every 10 ms
    m = LoopMonitor(lags_ns=[5 * MS] * 50 + [100_000] * window)
    m._wall0, m._cpu0 = 0, 0
    scripted(monkeypatch, [(S, 0), (2 * S, 0)])
    calm = m.pulse()
    assert calm.loop_lag_p99_ms == pytest.approx(0.1) and calm.warnings == ()
    m.lags_ns += [3 * MS] * 10  # 10 of the last 200 at 3 ms: p99 3 ms
    hot = m.pulse()
    assert hot.loop_lag_p99_ms == pytest.approx(3.0)
    assert hot.warnings == ("event-loop lag p99 3.0 ms: timestamps may run late",)


def test_the_pool_sums_in_flight_and_takes_the_worst_of_the_rest() -> None:
    pool = WorkerPool([Worker(0, None, None), Worker(1, None, None), Worker(2, None, None)])
    assert pool.pulse() is None  # no step
    pool._step = _Step(lambda rec: None)
    assert pool.pulse() is None  # no worker has told yet
    a = Pulse(in_flight=3, cpu_util=0.4, loop_lag_p99_ms=0.2)
    b = Pulse(in_flight=5, cpu_util=0.92, loop_lag_p99_ms=0.1, warnings=("cpu",))
    w0, w1, w2 = pool._workers
    pool._message(w0, b"L" + orjson.dumps(a))
    pool._message(w1, b"L" + orjson.dumps(b))
    pool._message(w2, b"L" + orjson.dumps(Pulse(in_flight=100)))
    w2.alive = False  # a dead worker's last word is not counted
    assert pool.pulse() == Pulse(
        in_flight=8, cpu_util=0.92, loop_lag_p99_ms=0.2, warnings=("worker 1: cpu",)
    )
