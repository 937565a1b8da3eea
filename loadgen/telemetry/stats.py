"""Per-step telemetry statistics: what ``summary.json`` says about the GPUs and the server.

Owns :class:`TelemetryStore` (the compact in-memory copy of what the collector
wrote to telemetry.jsonl, all times already in loadgen's monotonic ns) and the
pure computation of :meth:`TelemetryStore.step_stats`. Formulas, over the step
window ``[start_ns, end_ns]``:

- util / power mean and max: plain mean and max of the samples in the window
  (the agent samples on a fixed grid, so a plain mean is a time mean).
- memory used peak: max of ``mem_used_bytes`` in the window; in ``total``,
  the sum of the per-GPU peaks.
- energy_j = sum of the positive increments of the cumulative energy series,
  linearly interpolated at the window edges (a counter reset is skipped, not
  subtracted). ``energy_coverage`` = covered time / window length.
- j_per_output_token = energy_j / output_tokens; output_tokens_per_j = its
  inverse. Per GPU this is that GPU's share of the energy per token of the
  whole step. Left ``None`` when no tokens or coverage < 0.9.
- server gauges (running, waiting, kv_usage) mean and max over scrapes in the
  window; counters (preemptions, prompt/generation tokens) as the last value in
  the window minus the last value at or before ``start_ns`` (else the first in
  the window).
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from loadgen.summary import (
    GpuStats,
    GpuTotal,
    HostStats,
    Mean,
    MeanMax,
    Peak,
    ServerStats,
    StepTelemetry,
    TelemetryGap,
    TelemetryWindow,
)
from loadgen.telemetry.rows import GpuSample, HostSample, ServerScrape, parse_sample

__all__ = ["MIN_ENERGY_COVERAGE", "Gap", "TelemetryStore"]

MIN_ENERGY_COVERAGE = 0.9
SERVER_GAUGES = ("running", "waiting", "kv_usage")
SERVER_COUNTERS = (
    ("preemptions", "preemptions_total"),
    ("prompt_tokens", "prompt_tokens_total"),
    ("generation_tokens", "generation_tokens_total"),
)


@dataclass(frozen=True, slots=True)
class Gap:
    source: str
    kind: str  # "agent" | "server_metrics" | "dcgm"
    t_ns: int
    error: str


@dataclass(slots=True)
class _GpuSeries:
    name: str | None = None
    energy_source: str | None = None
    points: list[GpuSample] = field(default_factory=list)
    # -- sources a cluster already has
    via: Literal["agent", "dcgm"] = "agent"
    uuid: str | None = None
    hostname: str | None = None


def _mean_max(values: Iterable[float | None]) -> MeanMax | None:
    vs = [v for v in values if v is not None]
    if not vs:
        return None
    return MeanMax(mean=sum(vs) / len(vs), max=max(vs))


def _peak(values: Iterable[float | None]) -> Peak | None:
    peak = max((v for v in values if v is not None), default=None)
    return Peak(peak=peak) if peak is not None else None


def _energy(points: list[tuple[int, float]], a: int, b: int) -> tuple[float | None, float]:
    """(joules over [a, b] from a cumulative series, covered share of [a, b])."""
    if len(points) < 2 or b <= a:
        return None, 0.0
    points = sorted(points)
    times = [t for t, _ in points]
    lo, hi = max(a, times[0]), min(b, times[-1])
    if hi <= lo:
        return None, 0.0

    def at(t: int) -> float:
        i = bisect.bisect_left(times, t)
        if times[i] == t:
            return points[i][1]
        (t1, e1), (t2, e2) = points[i - 1], points[i]
        return e1 + (e2 - e1) * (t - t1) / (t2 - t1)

    chain = [at(lo)] + [e for t, e in points if lo < t < hi] + [at(hi)]
    total = sum(max(0.0, e2 - e1) for e1, e2 in itertools.pairwise(chain))
    return total, (hi - lo) / (b - a)


def _per_token(energy: float | None, coverage: float, tokens: int) -> dict[str, float | None]:
    """``j_per_output_token`` and ``output_tokens_per_j`` (keyword arguments of the models)."""
    if energy is None or tokens <= 0 or coverage < MIN_ENERGY_COVERAGE:
        return {"j_per_output_token": None, "output_tokens_per_j": None}
    return {
        "j_per_output_token": energy / tokens,
        "output_tokens_per_j": tokens / energy if energy > 0 else None,
    }


class TelemetryStore:
    """Everything step_stats needs, appended by the collector (under its lock)."""

    def __init__(
        self, agents: list[str], server_metrics: str | None, dcgm: list[str] | None = None
    ) -> None:
        self.agents = agents
        self.server_metrics = server_metrics
        self.dcgm = dcgm or []
        self.gpus: dict[tuple[str, int], _GpuSeries] = {}
        self.hosts: dict[str, list[HostSample]] = {}
        self.server: list[tuple[int, ServerScrape]] = []
        self.gaps: list[Gap] = []

    def add_health(self, agent: str, health: dict[str, object]) -> None:
        """Take GPU names from an agent's /health reply."""
        gpus = health.get("gpus")
        for g in gpus if isinstance(gpus, list) else []:
            if isinstance(g, dict) and isinstance(g.get("index"), int):
                series = self.gpus.setdefault((agent, g["index"]), _GpuSeries())
                series.name = str(g.get("name"))

    def add_gpu_identity(
        self, source: str, gpu: int, name: str | None, uuid: str | None, hostname: str | None
    ) -> None:
        """A dcgm-exporter's GPU, named by its labels (``modelName``, ``UUID``, ``Hostname``)."""
        series = self.gpus.setdefault((source, gpu), _GpuSeries())
        series.via = "dcgm"
        series.name, series.uuid, series.hostname = name, uuid, hostname

    def add_row(self, agent: str, row: dict[str, object], t_ns: int) -> None:
        """One agent sample (the JSON the agent sent), stamped in loadgen time."""
        self.add_sample(agent, parse_sample(row, t_ns))

    def add_sample(self, agent: str, sample: GpuSample | HostSample | None) -> None:
        """One typed agent sample (None: a row that named no GPU, skipped)."""
        if isinstance(sample, HostSample):
            self.hosts.setdefault(agent, []).append(sample)
        elif sample is not None:
            series = self.gpus.setdefault((agent, sample.gpu), _GpuSeries())
            if sample.energy_source is not None:
                series.energy_source = sample.energy_source
            series.points.append(sample)

    def step_stats(self, start_ns: int, end_ns: int, output_tokens: int) -> StepTelemetry:
        computed = (
            self._gpu_stats(agent, idx, s, start_ns, end_ns, output_tokens)
            for (agent, idx), s in sorted(self.gpus.items())
        )
        gpus = [x for x in computed if x is not None]
        return StepTelemetry(
            window=TelemetryWindow(
                start_ns=start_ns, end_ns=end_ns, duration_s=(end_ns - start_ns) / 1e9
            ),
            output_tokens=output_tokens,
            gpus=gpus,
            total=_total(gpus, output_tokens),
            hosts=self._host_stats(start_ns, end_ns),
            server=self._server_stats(start_ns, end_ns),
            gaps=self._gaps(start_ns, end_ns, gpus),
        )

    def _gpu_stats(
        self, agent: str, idx: int, s: _GpuSeries, a: int, b: int, tokens: int
    ) -> GpuStats | None:
        inside = [p for p in s.points if a <= p.t_ns <= b]
        if not inside:
            return None
        energy, coverage = _energy(
            [(p.t_ns, p.energy_j) for p in s.points if p.energy_j is not None], a, b
        )
        return GpuStats(
            agent=agent,
            gpu=idx,
            name=s.name,
            samples=len(inside),
            util_pct=_mean_max(p.util_pct for p in inside),
            mem_used_bytes=_peak(p.mem_used_bytes for p in inside),
            power_w=_mean_max(p.power_w for p in inside),
            energy_j=energy,
            energy_source=s.energy_source,
            energy_coverage=coverage,
            **_per_token(energy, coverage, tokens),
            source=s.via,
            uuid=s.uuid,
            hostname=s.hostname,
            processes_mem_bytes=_peak(p.processes_mem_bytes for p in inside),
        )

    def _host_stats(self, a: int, b: int) -> list[HostStats]:
        out: list[HostStats] = []
        for agent, points in sorted(self.hosts.items()):
            inside = [p for p in points if a <= p.t_ns <= b]
            if inside:
                out.append(
                    HostStats(
                        agent=agent,
                        samples=len(inside),
                        cpu_util_pct=_mean_max(p.cpu_util_pct for p in inside),
                        mem_used_bytes=_peak(p.mem_used_bytes for p in inside),
                    )
                )
        return out

    def _server_stats(self, a: int, b: int) -> ServerStats | None:
        inside = [(t, v) for t, v in self.server if a <= t <= b]
        if self.server_metrics is None or not inside:
            return None
        before = [(t, v) for t, v in self.server if t <= a]
        base = before[-1][1] if before else inside[0][1]
        last = inside[-1][1]
        gauges = {key: _mean_max(getattr(v, key) for _, v in inside) for key in SERVER_GAUGES}
        counters: dict[str, float | None] = {}
        for name, key in SERVER_COUNTERS:
            first, end = getattr(base, key), getattr(last, key)
            ok = first is not None and end is not None and end >= first
            counters[name] = end - first if ok and end is not None and first is not None else None
        return ServerStats(
            source=self.server_metrics,
            engine=last.engine,
            scrapes=len(inside),
            **gauges,
            **counters,
        )

    def _gaps(self, a: int, b: int, gpus: list[GpuStats]) -> list[TelemetryGap]:
        grouped: dict[tuple[str, str], list[Gap]] = {}
        for gap in self.gaps:
            if a <= gap.t_ns <= b:
                grouped.setdefault((gap.source, gap.kind), []).append(gap)
        out = [
            TelemetryGap(
                source=source,
                kind=kind,
                failures=len(gs),
                first_ns=gs[0].t_ns,
                last_ns=gs[-1].t_ns,
                error=gs[-1].error,
            )
            for (source, kind), gs in grouped.items()
        ]
        seen = {g.agent for g in gpus} | {h for h, pts in self.hosts.items() if pts}
        configured = [(a, "agent") for a in self.agents] + [(d, "dcgm") for d in self.dcgm]
        silent = [(s, k) for s, k in configured if s not in seen and (s, k) not in grouped]
        out.extend(
            TelemetryGap(source=s, kind=k, failures=0, error="no samples in the window")
            for s, k in silent
        )
        return out


def _total(gpus: list[GpuStats], tokens: int) -> GpuTotal | None:
    if not gpus:
        return None
    energies = [g.energy_j for g in gpus]
    energy = sum(e for e in energies if e is not None) if None not in energies else None
    coverage = min(g.energy_coverage for g in gpus)
    utils = [g.util_pct for g in gpus if g.util_pct is not None]
    powers = [g.power_w for g in gpus if g.power_w is not None]
    peaks = [g.mem_used_bytes for g in gpus if g.mem_used_bytes is not None]
    return GpuTotal(
        gpus=len(gpus),
        util_pct=MeanMax(
            mean=sum(u.mean for u in utils) / len(utils), max=max(u.max for u in utils)
        )
        if utils
        else None,
        mem_used_bytes=Peak(peak=sum(p.peak for p in peaks)) if peaks else None,
        power_w=Mean(mean=sum(p.mean for p in powers)) if powers else None,
        energy_j=energy,
        energy_coverage=coverage,
        **_per_token(energy, coverage, tokens),
        sources=sorted({g.source for g in gpus}),
    )
