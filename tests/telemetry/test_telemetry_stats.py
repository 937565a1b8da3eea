"""step_stats computed from a scripted store: energy, per-token figures, server, gaps."""

from __future__ import annotations

import orjson
import pytest

from loadgen.summary import Mean, MeanMax, Peak
from loadgen.telemetry.rows import ServerScrape
from loadgen.telemetry.stats import Gap, TelemetryStore

S = 1_000_000_000
A = "http://agent:9347"
SRV = "http://server:8000/metrics"


def _store() -> TelemetryStore:
    store = TelemetryStore([A, "http://dead:9347"], SRV)
    store.add_health(A, {"gpus": [{"index": 0, "name": "H100"}, {"index": 1, "name": "H100"}]})
    for i in range(11):  # t = 0..10 s, GPU0: 100 W steady, counter; GPU1: ramps
        t = i * S
        store.add_row(
            A,
            {
                "kind": "gpu",
                "gpu": 0,
                "util_gpu_pct": 50.0,
                "mem_used_bytes": 10 + i,
                "processes_mem_bytes": 8 + i,  # the server's processes hold part of it
                "power_w": 100.0,
                "energy_j": 1000.0 + 100.0 * i,
                "energy_source": "counter",
            },
            t,
        )
        store.add_row(
            A,
            {
                "kind": "gpu",
                "gpu": 1,
                "util_gpu_pct": 10.0 * i,
                "power_w": 200.0,
                "energy_j": 200.0 * i,
                "energy_source": "integrated",
            },
            t,
        )
        store.add_row(A, {"kind": "host", "cpu_util_pct": 20.0, "mem_used_bytes": 5}, t)
        scrape = ServerScrape(
            running=float(i),
            waiting=2.0,
            kv_usage=0.1 * i,
            preemptions_total=3.0 + (i >= 6),
            engine="vllm",
        )
        store.server.append((t, scrape))
    return store


def test_energy_interpolates_window_edges_and_per_token() -> None:
    stats = _store().step_stats(int(2.5 * S), int(6.5 * S), output_tokens=1000)
    g0, g1 = stats.gpus
    assert g0.name == "H100" and g0.samples == 4  # t = 3, 4, 5, 6
    assert g0.energy_j == pytest.approx(400.0)  # 100 W for 4 s
    assert g0.energy_coverage == 1.0
    assert g0.j_per_output_token == pytest.approx(0.4)
    assert g0.output_tokens_per_j == pytest.approx(2.5)
    assert g0.util_pct == MeanMax(mean=50.0, max=50.0)
    assert g0.mem_used_bytes == Peak(peak=16) and g0.power_w.mean == 100.0
    assert g0.processes_mem_bytes == Peak(peak=14)  # t = 6 s: 8 + 6
    assert g1.energy_j == pytest.approx(800.0) and g1.energy_source == "integrated"
    assert g1.util_pct == MeanMax(mean=45.0, max=60.0)
    total = stats.total
    assert total.gpus == 2 and total.energy_j == pytest.approx(1200.0)
    assert total.j_per_output_token == pytest.approx(1.2)
    assert total.power_w == Mean(mean=300.0)
    assert stats.hosts[0].cpu_util_pct == MeanMax(mean=20.0, max=20.0)
    # summary.json keeps the keys step_stats wrote as a plain dict (docs/telemetry.md)
    data = orjson.loads(stats.model_dump_json())
    keys = ["window", "output_tokens", "gpus", "total", "hosts", "server", "gaps", "prometheus"]
    assert list(data) == keys
    assert list(data["gpus"][0]) == [
        "agent", "gpu", "name", "samples", "util_pct", "mem_used_bytes", "power_w",
        "energy_j", "energy_source", "energy_coverage", "j_per_output_token",
        "output_tokens_per_j", "source", "uuid", "hostname", "processes_mem_bytes",
    ]  # fmt: skip
    assert data["gpus"][0]["source"] == "agent" and data["total"]["sources"] == ["agent"]
    assert data["total"]["power_w"] == {"mean": 300.0}
    assert data["hosts"][0] == {
        "agent": A, "samples": 4, "cpu_util_pct": {"mean": 20.0, "max": 20.0},
        "mem_used_bytes": {"peak": 5},
    }  # fmt: skip


def test_counter_reset_is_skipped_and_short_coverage_gives_no_per_token() -> None:
    store = TelemetryStore([A], None)
    for i, e in enumerate([100.0, 200.0, 5.0, 105.0]):  # reset between 1 s and 2 s
        store.add_row(A, {"kind": "gpu", "gpu": 0, "energy_j": e}, i * S)
    g = store.step_stats(0, 3 * S, 10).gpus[0]
    assert g.energy_j == pytest.approx(200.0)
    g = store.step_stats(2 * S, 10 * S, 10).gpus[0]  # data covers 1 s of 8
    assert g.energy_coverage == pytest.approx(0.125)
    assert g.j_per_output_token is None and g.energy_j == pytest.approx(100.0)


def test_server_gauges_and_counter_delta_from_baseline_before_the_window() -> None:
    server = _store().step_stats(int(2.5 * S), int(6.5 * S), 1000).server
    assert server.scrapes == 4 and server.engine == "vllm"
    assert server.running == MeanMax(mean=4.5, max=6.0)
    assert server.kv_usage.max == pytest.approx(0.6)
    assert server.preemptions == 1.0  # baseline is the scrape at t=2 s


def test_gaps_in_window_and_silent_agents() -> None:
    store = _store()
    store.gaps += [
        Gap(SRV, "server_metrics", 3 * S, "ConnectError"),
        Gap(SRV, "server_metrics", 4 * S, "ReadTimeout"),
        Gap(SRV, "server_metrics", 20 * S, "outside"),
    ]
    gaps = store.step_stats(int(2.5 * S), int(6.5 * S), 1).gaps
    srv = next(g for g in gaps if g.source == SRV)
    assert srv.failures == 2 and srv.error == "ReadTimeout" and srv.first_ns == 3 * S
    dead = next(g for g in gaps if g.source == "http://dead:9347")
    assert dead.error == "no samples in the window" and dead.first_ns is None


def test_empty_window() -> None:
    stats = TelemetryStore([], None).step_stats(0, S, 0)
    assert stats.gpus == [] and stats.total is None and stats.server is None
