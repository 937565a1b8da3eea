"""The sampler against a scripted fake of the pynvml functions it calls."""

from __future__ import annotations

import pytest

from loadgen.gpu_agent.fake_nvml import FakeNvml
from loadgen.gpu_agent.sampler import GpuSample, Sampler


class Clock:
    def __init__(self) -> None:
        self.t = 1_000_000_000

    def __call__(self) -> int:
        return self.t


def test_full_support_units_and_rates() -> None:
    nv, clock = FakeNvml(2), Clock()
    g = nv.gpus[1]
    g.util_gpu, g.util_mem, g.power_mw, g.energy_mj = 80, 40, 250_000, 5_000_000
    g.mem_used, g.pcie_tx, g.nvlink_tx_kib = 3 << 30, 1_000, 10
    sampler = Sampler(nv, clock=clock)
    first = sampler.sample()[1]
    assert (first.util_gpu_pct, first.util_mem_pct, first.power_w) == (80.0, 40.0, 250.0)
    assert first.energy_j == 5000.0 and first.energy_source == "counter"
    assert first.mem_used_bytes == 3 << 30 and first.mem_total_bytes == 80 << 30
    assert first.pcie_tx_bytes == 1_000 and first.nvlink_tx_bytes == 10 * 1024
    assert first.pcie_tx_bytes_per_s is None  # no rate before a second reading
    assert (first.sm_clock_mhz, first.mem_clock_mhz, first.temp_c) == (1410, 1593, 35)

    clock.t += 500_000_000
    g.pcie_tx += 1_000_000
    second = sampler.sample()[1]
    assert second.t_ns - first.t_ns == 500_000_000
    assert second.pcie_tx_bytes_per_s == pytest.approx(2_000_000.0)
    assert [s.gpu for s in sampler.sample()] == [0, 1]


def test_unsupported_fields_are_absent_and_not_asked_again() -> None:
    nv = FakeNvml(1)
    nv.gpus[0].unsupported |= {
        "utilization",
        "temperature",
        "traffic.nvlink_tx",
        "traffic.nvlink_rx",
    }
    sampler = Sampler(nv, clock=Clock())
    row = sampler.sample()[0].as_dict()
    for absent in ("util_gpu_pct", "util_mem_pct", "temp_c", "nvlink_tx_bytes", "nvlink_rx_bytes"):
        assert absent not in row
    assert row["pcie_tx_bytes"] == 0 and row["kind"] == "gpu"
    assert sampler.errors == 0
    assert {"utilization", "temperature", "traffic.nvlink_tx"} <= sampler.gpus[0].unsupported
    calls = nv.gpus[0].calls
    sampler.sample()
    # utilization and temperature were not attempted again: 7 calls succeed per tick
    # (memory, power, energy, two clocks, traffic, processes)
    assert nv.gpus[0].calls - calls == 7
    assert sampler.gpus[0].describe()["unsupported"] == sorted(sampler.gpus[0].unsupported)


def test_energy_integrated_from_power_when_no_counter() -> None:
    nv, clock = FakeNvml(1), Clock()
    nv.gpus[0].unsupported.add("energy")
    sampler = Sampler(nv, clock=clock)
    nv.gpus[0].power_mw = 100_000
    assert sampler.sample()[0].energy_j == 0.0
    clock.t += 2_000_000_000
    nv.gpus[0].power_mw = 300_000
    s = sampler.sample()[0]
    assert s.energy_source == "integrated"
    assert s.energy_j == pytest.approx((100 + 300) / 2 * 2.0)  # trapezoid: 400 J
    assert sampler.gpus[0].energy_source == "integrated"


def test_no_power_and_no_energy_means_no_energy_field() -> None:
    nv = FakeNvml(1)
    nv.gpus[0].unsupported |= {"energy", "power"}
    row = Sampler(nv, clock=Clock()).sample()[0].as_dict()
    assert "energy_j" not in row and "energy_source" not in row and "power_w" not in row


def test_transient_error_is_absent_for_that_tick_only() -> None:
    nv = FakeNvml(1)
    sampler = Sampler(nv, clock=Clock())
    nv.gpus[0].failing.add("power")
    assert sampler.sample()[0].power_w is None
    assert sampler.errors == 1
    nv.gpus[0].failing.clear()
    assert sampler.sample()[0].power_w == 60.0
    assert "power" not in sampler.gpus[0].unsupported


def test_as_dict_leaves_out_none() -> None:
    row = GpuSample(gpu=0, t_ns=1, wall_ns=2, power_w=3.5).as_dict()
    assert row == {"kind": "gpu", "gpu": 0, "t_ns": 1, "wall_ns": 2, "power_w": 3.5}


def test_processes_and_cuda_version() -> None:
    """NVML's running-process list: each pid's memory on /health, their sum in each sample;
    a withheld figure (NVML_VALUE_NOT_AVAILABLE) is None, not 16 EiB."""
    nv = FakeNvml(2, cuda=12040)
    nv.gpus[0].processes = [(101, 3 << 30), (102, 1 << 30)]
    nv.gpus[1].processes = [(103, (1 << 64) - 1)]
    sampler = Sampler(nv, clock=Clock())
    rows = [s.as_dict() for s in sampler.sample()]
    assert rows[0]["processes_mem_bytes"] == 4 << 30
    assert "processes_mem_bytes" not in rows[1]
    assert sampler.gpus[0].describe()["processes"] == [
        {"pid": 101, "used_bytes": 3 << 30},
        {"pid": 102, "used_bytes": 1 << 30},
    ]
    assert sampler.gpus[1].describe()["processes"] == [{"pid": 103, "used_bytes": None}]
    assert sampler.cuda_version() == "12.4"
    nv.gpus[0].unsupported.add("processes")
    fresh = Sampler(nv, clock=Clock())
    assert "processes_mem_bytes" not in fresh.sample()[0].as_dict()
    assert fresh.gpus[0].describe()["processes"] is None
