"""Reading NVML: one :class:`GpuSample` per GPU per tick.

Owns the list of NVML calls the agent makes, their units, and what "not
supported" means. A call that raises ``NVMLError_NotSupported`` is never made
again for that GPU and its fields are simply absent; any other NVML error
leaves the fields absent for that tick only.

Energy: ``nvmlDeviceGetTotalEnergyConsumption`` (millijoules since the driver
loaded, Volta and newer) when the GPU has it (``energy_source="counter"``);
otherwise the sampler integrates power over time with the trapezoid rule
(``energy_source="integrated"``, joules since the agent started).

PCIe and NVLink traffic come from the cumulative byte counters of
``nvmlDeviceGetFieldValues`` (one cheap call per GPU). The older
``nvmlDeviceGetPcieThroughput`` blocks about 20 ms per call, which at 8 GPUs
and 100 ms sampling would eat the whole tick, so it is deliberately not used.

Nothing from the rest of loadgen.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import pynvml

from loadgen.gpu_agent.host import row_of

__all__ = ["NOT_SUPPORTED", "GpuInfo", "GpuSample", "NvmlLike", "Sampler"]

#: NVML ABI constants (stable across driver versions), kept here so a fake
#: NVML does not need to carry them.
NOT_SUPPORTED = 3
CLOCK_SM = 1
CLOCK_MEM = 2
TEMPERATURE_GPU = 0
FI_NVLINK_TX = 138  # KiB, cumulative; scopeId UINT_MAX = all links
FI_NVLINK_RX = 139
FI_PCIE_TX = 197  # bytes, cumulative
FI_PCIE_RX = 198
ALL_LINKS = 0xFFFFFFFF
_FIELD_IDS = [FI_PCIE_TX, FI_PCIE_RX, (FI_NVLINK_TX, ALL_LINKS), (FI_NVLINK_RX, ALL_LINKS)]
_FIELD_NAMES = ("pcie_tx", "pcie_rx", "nvlink_tx", "nvlink_rx")
_FIELD_SCALE = (1, 1, 1024, 1024)  # to bytes


class NvmlLike(Protocol):
    """The pynvml functions the agent calls; the real module or :mod:`.fake_nvml`."""

    def nvmlInit(self) -> None: ...
    def nvmlShutdown(self) -> None: ...
    def nvmlSystemGetDriverVersion(self) -> str: ...
    def nvmlDeviceGetCount(self) -> int: ...
    def nvmlDeviceGetHandleByIndex(self, index: int) -> Any: ...
    def nvmlDeviceGetName(self, handle: Any) -> str: ...
    def nvmlDeviceGetUUID(self, handle: Any) -> str: ...
    def nvmlDeviceGetUtilizationRates(self, handle: Any) -> Any: ...
    def nvmlDeviceGetMemoryInfo(self, handle: Any) -> Any: ...
    def nvmlDeviceGetPowerUsage(self, handle: Any) -> int: ...
    def nvmlDeviceGetTotalEnergyConsumption(self, handle: Any) -> int: ...
    def nvmlDeviceGetClockInfo(self, handle: Any, clock_type: int) -> int: ...
    def nvmlDeviceGetTemperature(self, handle: Any, sensor: int) -> int: ...
    def nvmlDeviceGetFieldValues(self, handle: Any, field_ids: list[Any]) -> Any: ...
    def nvmlSystemGetCudaDriverVersion(self) -> int: ...
    def nvmlDeviceGetComputeRunningProcesses(self, handle: Any) -> Any: ...


@dataclass(slots=True)
class GpuSample:
    """One reading of one GPU. ``None`` means "not measured" and is left out of the JSON.

    ``t_ns`` is the agent's monotonic clock (CLOCK_MONOTONIC) at the middle of
    the reads, ``wall_ns`` the agent's Unix time. Counters (``energy_j``,
    ``*_bytes``) are cumulative; ``*_bytes_per_s`` are rates over the last tick.
    """

    gpu: int
    t_ns: int
    wall_ns: int
    util_gpu_pct: float | None = None
    util_mem_pct: float | None = None
    mem_used_bytes: int | None = None
    mem_total_bytes: int | None = None
    power_w: float | None = None
    energy_j: float | None = None
    energy_source: str | None = None
    sm_clock_mhz: int | None = None
    mem_clock_mhz: int | None = None
    temp_c: int | None = None
    pcie_tx_bytes: int | None = None
    pcie_rx_bytes: int | None = None
    nvlink_tx_bytes: int | None = None
    nvlink_rx_bytes: int | None = None
    pcie_tx_bytes_per_s: float | None = None
    pcie_rx_bytes_per_s: float | None = None
    nvlink_tx_bytes_per_s: float | None = None
    nvlink_rx_bytes_per_s: float | None = None
    # -- memory the GPU's compute processes hold (nvmlDeviceGetComputeRunningProcesses), summed
    processes_mem_bytes: int | None = None

    def as_dict(self) -> dict[str, object]:
        return row_of(self, "gpu")


@dataclass(slots=True)
class GpuInfo:
    """What /health says about one GPU; ``supported`` fills in after the first sample."""

    index: int
    name: str
    uuid: str
    handle: Any
    unsupported: set[str] = field(default_factory=set)
    energy_source: str | None = None
    last: GpuSample | None = None
    # -- the compute processes of the last tick: [{"pid", "used_bytes"}]; None: not read
    processes: list[dict[str, int | None]] | None = None

    def describe(self) -> dict[str, object]:
        return {
            "index": self.index,
            "name": self.name,
            "uuid": self.uuid,
            "mem_total_bytes": self.last.mem_total_bytes if self.last else None,
            "energy_source": self.energy_source,
            "unsupported": sorted(self.unsupported),
            "processes": self.processes,
        }


def _is_not_supported(exc: BaseException) -> bool:
    return isinstance(exc, pynvml.NVMLError) and getattr(exc, "value", None) == NOT_SUPPORTED


class Sampler:
    """Reads every GPU through ``nvml``; call :meth:`sample` once per tick from one thread."""

    def __init__(self, nvml: NvmlLike, clock: Callable[[], int] = time.monotonic_ns) -> None:
        self._nv = nvml
        self._clock = clock
        self.errors = 0  # NVML errors other than "not supported"
        self.gpus = [self._open(i) for i in range(nvml.nvmlDeviceGetCount())]

    def _open(self, index: int) -> GpuInfo:
        handle = self._nv.nvmlDeviceGetHandleByIndex(index)
        return GpuInfo(
            index=index,
            name=_text(self._nv.nvmlDeviceGetName(handle)),
            uuid=_text(self._nv.nvmlDeviceGetUUID(handle)),
            handle=handle,
        )

    def driver_version(self) -> str:
        return _text(self._nv.nvmlSystemGetDriverVersion())

    def cuda_version(self) -> str | None:
        """The CUDA version the driver supports (``12.4``); None when NVML does not say."""
        try:
            n = int(self._nv.nvmlSystemGetCudaDriverVersion())
        except (pynvml.NVMLError, AttributeError, TypeError, ValueError):
            return None
        return f"{n // 1000}.{n % 1000 // 10}"

    def sample(self) -> list[GpuSample]:
        return [self._sample_one(info) for info in self.gpus]

    def _call(self, info: GpuInfo, probe: str, fn: Callable[[], Any]) -> Any:
        """Run one NVML call; ``None`` when unsupported (remembered) or failing (this tick)."""
        if probe in info.unsupported:
            return None
        try:
            return fn()
        except pynvml.NVMLError as exc:
            if _is_not_supported(exc):
                info.unsupported.add(probe)
            else:
                self.errors += 1
            return None

    def _sample_one(self, info: GpuInfo) -> GpuSample:
        nv, h = self._nv, info.handle
        before = self._clock()
        wall = time.time_ns()
        util = self._call(info, "utilization", lambda: nv.nvmlDeviceGetUtilizationRates(h))
        mem = self._call(info, "memory", lambda: nv.nvmlDeviceGetMemoryInfo(h))
        power_mw = self._call(info, "power", lambda: nv.nvmlDeviceGetPowerUsage(h))
        energy_mj = self._call(info, "energy", lambda: nv.nvmlDeviceGetTotalEnergyConsumption(h))
        s = GpuSample(gpu=info.index, t_ns=0, wall_ns=wall)
        s.sm_clock_mhz = self._call(
            info, "sm_clock", lambda: nv.nvmlDeviceGetClockInfo(h, CLOCK_SM)
        )
        s.mem_clock_mhz = self._call(
            info, "mem_clock", lambda: nv.nvmlDeviceGetClockInfo(h, CLOCK_MEM)
        )
        s.temp_c = self._call(
            info, "temperature", lambda: nv.nvmlDeviceGetTemperature(h, TEMPERATURE_GPU)
        )
        counters = self._call(info, "traffic", lambda: nv.nvmlDeviceGetFieldValues(h, _FIELD_IDS))
        procs = self._call(info, "processes", lambda: nv.nvmlDeviceGetComputeRunningProcesses(h))
        s.t_ns = (before + self._clock()) // 2
        if util is not None:
            s.util_gpu_pct, s.util_mem_pct = float(util.gpu), float(util.memory)
        if mem is not None:
            s.mem_used_bytes, s.mem_total_bytes = int(mem.used), int(mem.total)
        if power_mw is not None:
            s.power_w = power_mw / 1000.0
        self._energy(info, s, energy_mj)
        self._traffic(info, s, counters)
        if procs is not None:
            info.processes = [_process(p) for p in procs]
            used = [p["used_bytes"] for p in info.processes if p["used_bytes"] is not None]
            s.processes_mem_bytes = sum(used) if used else None
        info.last = s
        return s

    def _energy(self, info: GpuInfo, s: GpuSample, energy_mj: int | None) -> None:
        if energy_mj is not None:
            info.energy_source = "counter"
            s.energy_j = energy_mj / 1000.0
        elif "energy" in info.unsupported and s.power_w is not None:
            info.energy_source = "integrated"
            prev = info.last
            if prev is None or prev.energy_j is None or prev.power_w is None:
                s.energy_j = 0.0
            else:
                dt_s = (s.t_ns - prev.t_ns) / 1e9
                s.energy_j = prev.energy_j + (prev.power_w + s.power_w) / 2.0 * dt_s
        s.energy_source = info.energy_source if s.energy_j is not None else None

    def _traffic(self, info: GpuInfo, s: GpuSample, values: Any) -> None:
        if values is None:
            return
        prev = info.last
        dt_s = (s.t_ns - prev.t_ns) / 1e9 if prev is not None else 0.0
        for name, scale, value in zip(_FIELD_NAMES, _FIELD_SCALE, values, strict=False):
            probe = f"traffic.{name}"
            if probe in info.unsupported:
                continue
            if value.nvmlReturn == NOT_SUPPORTED:
                info.unsupported.add(probe)
                continue
            if value.nvmlReturn != 0:
                continue
            total = int(value.value.ullVal) * scale
            setattr(s, f"{name}_bytes", total)
            before = getattr(prev, f"{name}_bytes", None) if prev is not None else None
            if before is not None and dt_s > 0 and total >= before:
                setattr(s, f"{name}_bytes_per_s", (total - before) / dt_s)


def _process(p: Any) -> dict[str, int | None]:
    """One NVML process entry: its pid and used memory (None where NVML withholds it)."""
    used = getattr(p, "usedGpuMemory", None)
    # NVML reports NVML_VALUE_NOT_AVAILABLE (2**64 - 1) where it withholds the figure
    ok = isinstance(used, int) and 0 <= used < (1 << 63)
    return {"pid": int(p.pid), "used_bytes": used if ok else None}


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value
