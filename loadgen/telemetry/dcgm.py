"""GPU figures from a dcgm-exporter: its ``/metrics`` text into the agent's GPU rows.

Owns the mapping from dcgm-exporter's documented field names (its
``etc/default-counters.csv``) to the keys of a telemetry.jsonl ``gpu`` line,
and :class:`DcgmSource`, one exporter's state between scrapes. A scrape is
parsed by :func:`~loadgen.telemetry.prom.parse_prometheus_text`; each series
names its GPU with the ``gpu`` label (an index) and carries ``UUID``,
``modelName`` and ``Hostname``. Per GPU, by key (DCGM field -> unit conversion):

- ``util_gpu_pct``: ``DCGM_FI_DEV_GPU_UTIL`` (%)
- ``mem_used_bytes``: ``DCGM_FI_DEV_FB_USED`` (MiB) x 2**20
- ``mem_free_bytes``: ``DCGM_FI_DEV_FB_FREE`` (MiB) x 2**20
- ``power_w``: ``DCGM_FI_DEV_POWER_USAGE`` (W)
- ``energy_j``: ``DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION`` (mJ since boot) / 1000,
  ``energy_source: "counter"``; an exporter without it: ``power_w`` integrated
  over the scrapes with the trapezoid rule (joules since the first scrape),
  ``energy_source: "integrated"``, as the agent does without NVML's counter
- ``sm_clock_mhz``: ``DCGM_FI_DEV_SM_CLOCK``; ``mem_clock_mhz``: ``DCGM_FI_DEV_MEM_CLOCK``
- ``temp_c``: ``DCGM_FI_DEV_GPU_TEMP``

A value at or above DCGM's "blank" sentinel of its field's type
(``DCGM_INT32_BLANK`` 0x7ffffff0, ``DCGM_INT64_BLANK`` 0x7ffffffffffffff0,
``DCGM_FP64_BLANK`` 2**47: not supported, no data yet) is left out, as is NaN.
Several series of one field for one GPU (MIG instances, pod labels): the
first wins. A series without an integer ``gpu`` label is skipped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from loadgen import clock
from loadgen.control import ControlClient, Limit
from loadgen.telemetry.answer import SourceStatus, ok_reply
from loadgen.telemetry.prom import PromSample, parse_prometheus_text
from loadgen.telemetry.rows import GpuSample

__all__ = ["DCGM_FIELDS", "DcgmGpu", "DcgmSource", "parse_dcgm"]

INT32_BLANK = 0x7FFFFFF0
INT64_BLANK = 0x7FFFFFFFFFFFFFF0
FP64_BLANK = 2.0**47
MiB = 2**20

#: DCGM field -> (telemetry.jsonl key, x and / to loadgen's unit, the type's blank sentinel)
DCGM_FIELDS: dict[str, tuple[str, int, int, float]] = {
    "DCGM_FI_DEV_GPU_UTIL": ("util_gpu_pct", 1, 1, INT32_BLANK),
    "DCGM_FI_DEV_FB_USED": ("mem_used_bytes", MiB, 1, INT32_BLANK),
    "DCGM_FI_DEV_FB_FREE": ("mem_free_bytes", MiB, 1, INT32_BLANK),
    "DCGM_FI_DEV_POWER_USAGE": ("power_w", 1, 1, FP64_BLANK),
    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": ("energy_j", 1, 1000, INT64_BLANK),
    "DCGM_FI_DEV_SM_CLOCK": ("sm_clock_mhz", 1, 1, INT32_BLANK),
    "DCGM_FI_DEV_MEM_CLOCK": ("mem_clock_mhz", 1, 1, INT32_BLANK),
    "DCGM_FI_DEV_GPU_TEMP": ("temp_c", 1, 1, INT32_BLANK),
}
#: label -> the GpuStats field it fills
_IDENTITY = (("UUID", "uuid"), ("modelName", "name"), ("Hostname", "hostname"))


@dataclass(slots=True)
class DcgmGpu:
    """One GPU of one scrape: its identity labels and the values present."""

    gpu: int
    uuid: str | None = None
    name: str | None = None
    hostname: str | None = None
    values: dict[str, float] = field(default_factory=dict)


def parse_dcgm(samples: list[PromSample]) -> list[DcgmGpu]:
    """The GPUs of one dcgm-exporter scrape, by ``gpu`` label, in index order."""
    gpus: dict[int, DcgmGpu] = {}
    for s in samples:
        known = DCGM_FIELDS.get(s.name)
        index = s.labels.get("gpu", "")
        if known is None or not index.isdigit():
            continue
        key, times, per, blank = known
        g = gpus.get(int(index))
        if g is None:
            g = gpus[int(index)] = DcgmGpu(int(index))
        for label, attr in _IDENTITY:
            if getattr(g, attr) is None and s.labels.get(label):
                setattr(g, attr, s.labels[label])
        if key in g.values or math.isnan(s.value) or s.value >= blank or s.value < 0:
            continue  # a second series of it, or no value
        g.values[key] = s.value * times / per
    return [gpus[i] for i in sorted(gpus)]


@dataclass(slots=True)
class _Integral:
    t_ns: int
    power_w: float
    joules: float = 0.0


@dataclass(slots=True)
class DcgmSource:
    """One exporter: what to scrape, what to call it, and its energy integrals."""

    url: str  # what requests go to (a password in it is sent)
    label: str  # what is written: the URL without userinfo
    told: bool = False  # its first failure was said
    _integrals: dict[int, _Integral] = field(default_factory=dict)

    async def scrape(self, client: ControlClient, limit: Limit) -> tuple[int, list[DcgmGpu]]:
        """One scrape: its time (the middle of the request) and its GPUs; raises when the
        exporter fails, answers not 2xx, or serves no GPU series."""
        t0 = clock.now_ns()
        reply = ok_reply(await client.get(self.url, limit))
        t1 = clock.now_ns()
        samples, bad = parse_prometheus_text(reply.text)
        gpus = parse_dcgm(samples)
        if not gpus:
            why = f"{bad} malformed lines" if bad else f"{len(samples)} other series"
            raise SourceStatus(f"answered, but with no DCGM_FI_DEV_* series of a GPU ({why})")
        return (t0 + t1) // 2, gpus

    def rows(self, gpus: list[DcgmGpu], t_ns: int) -> list[tuple[GpuSample, dict[str, object]]]:
        """Each GPU as a typed sample and its telemetry.jsonl ``gpu`` line."""
        out = []
        for g in gpus:
            v = g.values
            source = "counter" if "energy_j" in v else None
            if source is None and "power_w" in v:
                v["energy_j"], source = self._integrate(g.gpu, t_ns, v["power_w"]), "integrated"
            sample = GpuSample(
                t_ns,
                g.gpu,
                v.get("util_gpu_pct"),
                v.get("mem_used_bytes"),
                v.get("power_w"),
                v.get("energy_j"),
                source,
            )
            line: dict[str, object] = {"type": "gpu", "source": self.label, "t_ns": t_ns}
            line.update({"via": "dcgm", "gpu": g.gpu, "uuid": g.uuid, "name": g.name})
            line.update({"hostname": g.hostname, **v, "energy_source": source})
            out.append((sample, {k: x for k, x in line.items() if x is not None}))
        return out

    def _integrate(self, gpu: int, t_ns: int, power_w: float) -> float:
        """Joules since this GPU's first scrape (trapezoid rule over the scrapes)."""
        last = self._integrals.get(gpu)
        if last is None:
            self._integrals[gpu] = _Integral(t_ns, power_w)
            return 0.0
        if t_ns > last.t_ns:
            last.joules += (power_w + last.power_w) / 2 * (t_ns - last.t_ns) / 1e9
            last.t_ns, last.power_w = t_ns, power_w
        return last.joules
