"""Ring buffer retention and ``since`` semantics; the sampling thread's cadence."""

from __future__ import annotations

import time

import orjson

from loadgen.gpu_agent.host import HostSample
from loadgen.gpu_agent.ring import Ring, SamplingThread
from loadgen.gpu_agent.sampler import GpuSample


def _rows(*ts: int) -> list[GpuSample]:
    return [GpuSample(gpu=0, t_ns=t, wall_ns=t) for t in ts]


def test_since_returns_only_newer_rows_in_order() -> None:
    ring = Ring(10)
    ring.extend(_rows(10, 20, 30))
    part = ring.since(15)
    assert [orjson.loads(r)["t_ns"] for r in part.rows] == [20, 30]
    assert part.oldest_ns == 10 and not part.truncated
    assert ring.since(30).rows == []


def test_eviction_marks_truncated_only_for_stale_since() -> None:
    ring = Ring(3)
    ring.extend(_rows(1, 2, 3, 4, 5))
    assert len(ring) == 3
    assert ring.since(0).truncated  # rows 1 and 2 were lost to this reader
    assert not ring.since(2).truncated
    assert [orjson.loads(r)["t_ns"] for r in ring.since(0).rows] == [3, 4, 5]


def test_latest_per_source() -> None:
    ring = Ring(8)
    ring.extend([*_rows(1), HostSample(t_ns=1, wall_ns=1, cpu_util_pct=5.0)])
    ring.extend(_rows(2))
    assert ring.latest["gpu0"].t_ns == 2
    assert isinstance(ring.latest["host"], HostSample)


def test_thread_keeps_an_absolute_grid_and_survives_a_failing_source() -> None:
    ring = Ring(1000)
    calls: list[int] = []

    def source() -> list[GpuSample]:
        calls.append(time.monotonic_ns())
        return _rows(calls[-1])

    def broken() -> list[GpuSample]:
        raise RuntimeError("boom")

    thread = SamplingThread(ring, [source, broken], interval_ns=20_000_000)
    thread.start()
    time.sleep(0.3)
    thread.stop()
    thread.join(2)
    assert not thread.is_alive()
    assert 8 <= thread.ticks + thread.overruns <= 17
    assert thread.source_errors == thread.ticks
    assert len(ring) == thread.ticks
