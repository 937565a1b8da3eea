"""A stand-in for ``pynvml`` for tests and benchmarks (``--fake-nvml N``).

Owns nothing real: it answers the calls :class:`~loadgen.gpu_agent.sampler.Sampler`
makes, with the same names and units as pynvml (milliwatts, millijoules,
bytes, MHz), from a mutable :class:`FakeGpu` per device. Tests script values
by setting those attributes; a probe named in ``FakeGpu.unsupported`` raises
``NVMLError_NotSupported`` like a GPU that lacks it, one in ``FakeGpu.failing``
raises ``NVMLError_Unknown``. With ``animate=True`` the values drift with
time (a slow sine on utilisation, power following it, energy and traffic
counters growing) so a fake agent looks alive on a plot.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pynvml

__all__ = ["FakeGpu", "FakeNvml"]

_NOT_SUPPORTED = 3
_UNKNOWN = 999


@dataclass(slots=True)
class FakeGpu:
    name: str = "Fake GPU"
    uuid: str = "GPU-fake-0"
    util_gpu: int = 0
    util_mem: int = 0
    mem_used: int = 1 << 30
    mem_total: int = 80 << 30
    power_mw: int = 60_000
    energy_mj: int = 0
    sm_clock: int = 1410
    mem_clock: int = 1593
    temp: int = 35
    pcie_tx: int = 0  # bytes
    pcie_rx: int = 0
    nvlink_tx_kib: int = 0
    nvlink_rx_kib: int = 0
    unsupported: set[str] = field(default_factory=set)
    failing: set[str] = field(default_factory=set)
    calls: int = 0
    # -- processes on the GPU: (pid, used bytes), as nvmlDeviceGetComputeRunningProcesses
    processes: list[tuple[int, int]] = field(default_factory=list)


class FakeNvml:
    """Duck-types the pynvml module for the functions the sampler calls."""

    def __init__(
        self,
        count: int,
        *,
        animate: bool = False,
        clock: Callable[[], int] = time.monotonic_ns,
        driver: str = "fake-555.42",
        name: str = "Fake GPU",
        cuda: int = 12040,
    ) -> None:
        self.gpus = [
            FakeGpu(name=name, uuid=f"GPU-fake-{i}", processes=[(4200 + i, 1 << 30)])
            for i in range(count)
        ]
        self.driver = driver
        self.cuda = cuda  # nvmlSystemGetCudaDriverVersion: 1000 * major + 10 * minor
        self.initialised = False
        self._animate = animate
        self._clock = clock
        self._t_last = [clock()] * count

    # --- lifecycle -------------------------------------------------------
    def nvmlInit(self) -> None:
        self.initialised = True

    def nvmlShutdown(self) -> None:
        self.initialised = False

    def nvmlSystemGetDriverVersion(self) -> str:
        return self.driver

    def nvmlSystemGetCudaDriverVersion(self) -> int:
        return self.cuda

    def nvmlDeviceGetCount(self) -> int:
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        if not 0 <= index < len(self.gpus):
            raise pynvml.NVMLError(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        return index

    def nvmlDeviceGetName(self, handle: int) -> str:
        return self.gpus[handle].name

    def nvmlDeviceGetUUID(self, handle: int) -> str:
        return self.gpus[handle].uuid

    # --- readings ----------------------------------------------------------
    def _gpu(self, handle: int, probe: str) -> FakeGpu:
        g = self.gpus[handle]
        if probe in g.unsupported:
            raise pynvml.NVMLError(_NOT_SUPPORTED)
        if probe in g.failing:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_UNKNOWN)
        g.calls += 1
        return g

    def nvmlDeviceGetUtilizationRates(self, handle: int) -> Any:
        if self._animate:
            self._advance(handle)
        g = self._gpu(handle, "utilization")
        return SimpleNamespace(gpu=g.util_gpu, memory=g.util_mem)

    def nvmlDeviceGetMemoryInfo(self, handle: int) -> Any:
        g = self._gpu(handle, "memory")
        return SimpleNamespace(used=g.mem_used, total=g.mem_total, free=g.mem_total - g.mem_used)

    def nvmlDeviceGetPowerUsage(self, handle: int) -> int:
        return self._gpu(handle, "power").power_mw

    def nvmlDeviceGetTotalEnergyConsumption(self, handle: int) -> int:
        return self._gpu(handle, "energy").energy_mj

    def nvmlDeviceGetClockInfo(self, handle: int, clock_type: int) -> int:
        g = self._gpu(handle, "sm_clock" if clock_type == 1 else "mem_clock")
        return g.sm_clock if clock_type == 1 else g.mem_clock

    def nvmlDeviceGetTemperature(self, handle: int, sensor: int) -> int:
        return self._gpu(handle, "temperature").temp

    def nvmlDeviceGetComputeRunningProcesses(self, handle: int) -> list[Any]:
        g = self._gpu(handle, "processes")
        return [SimpleNamespace(pid=pid, usedGpuMemory=used) for pid, used in g.processes]

    def nvmlDeviceGetFieldValues(self, handle: int, field_ids: list[Any]) -> list[Any]:
        g = self._gpu(handle, "traffic")
        table = {197: g.pcie_tx, 198: g.pcie_rx, 138: g.nvlink_tx_kib, 139: g.nvlink_rx_kib}
        names = {197: "pcie_tx", 198: "pcie_rx", 138: "nvlink_tx", 139: "nvlink_rx"}
        out = []
        for fid in field_ids:
            key = fid[0] if isinstance(fid, tuple) else fid
            ret = _NOT_SUPPORTED if f"traffic.{names[key]}" in g.unsupported else 0
            out.append(
                SimpleNamespace(
                    fieldId=key, nvmlReturn=ret, value=SimpleNamespace(ullVal=table[key])
                )
            )
        return out

    # --- animation ---------------------------------------------------------
    def _advance(self, handle: int) -> None:
        """Move one GPU's state forward to now: a 20 s sine of load, power and counters follow."""
        g = self.gpus[handle]
        now = self._clock()
        dt_s = (now - self._t_last[handle]) / 1e9
        self._t_last[handle] = now
        phase = 2 * math.pi * (now / 1e9) / 20.0 + handle
        g.util_gpu = round(50 + 45 * math.sin(phase))
        g.util_mem = round(g.util_gpu * 0.6)
        g.power_mw = 80_000 + g.util_gpu * 3_000
        g.energy_mj += round(g.power_mw * dt_s)
        g.mem_used = min(g.mem_total, (8 << 30) + g.util_gpu * (600 << 20))
        g.temp = 35 + g.util_gpu // 3
        g.pcie_tx += round(g.util_gpu * 50e6 * dt_s)
        g.pcie_rx += round(g.util_gpu * 20e6 * dt_s)
        g.nvlink_tx_kib += round(g.util_gpu * 1e6 * dt_s)
        g.nvlink_rx_kib += round(g.util_gpu * 1e6 * dt_s)
