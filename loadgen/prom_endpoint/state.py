"""What the exporter knows of the run, updated on the event loop, read by the scrape thread.

:class:`ClientMetrics` takes each finished record at the parent
(:meth:`~ClientMetrics.record`: a few counter bumps and one histogram call per
latency, the request's inter-token gaps binned at once), the load point at
each step's start, and the executor's live figures (requests in flight, the
open loop's send lags) whenever it is polled. :meth:`~ClientMetrics.collect`
is a ``prometheus_client`` collector: it renders every metric of
:data:`~loadgen.prom_endpoint.names.METRICS` from a consistent copy taken under one
lock. Nothing here runs per token event or reads the clock.

The formulas are :mod:`loadgen.metrics.latency`'s (loadgen's own profile;
TTFT to the first token event of any kind).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)

from loadgen.metrics import e2e_ns, queue_wait_ns, tpot_ns, ttft_ns
from loadgen.prom_endpoint.hist import Hist
from loadgen.prom_endpoint.names import METRICS, PREFIX
from loadgen.records import Record

__all__ = ["ClientMetrics", "Live", "LiveSource", "phase_of", "status_of"]

_NS = 1e9
_HISTS = ("ttft_seconds", "itl_seconds", "tpot_seconds", "e2e_seconds", "queue_wait_seconds")


class Live(Protocol):
    """The executor's figures of the moment (``loadgen.execute.live.Live`` has this shape):
    requests in flight, and the step's send lags so far (a list that only grows within a
    step; a new one each step)."""

    @property
    def in_flight(self) -> int: ...

    @property
    def send_lags_ns(self) -> list[int]: ...


#: the running executor's :class:`Live`, or None when there is none
LiveSource = Callable[[], Live | None]


def phase_of(rec: Record) -> str:
    """``warmup``, ``ramp`` or ``measured``: the ``phase`` label."""
    return "warmup" if rec.warmup else "ramp" if rec.ramp else "measured"


def status_of(rec: Record) -> str:
    """``ok``, ``cancelled`` (stopped by the client on purpose) or ``error``."""
    return "ok" if rec.ok else "cancelled" if rec.cancelled_by_client else "error"


@dataclass(slots=True)
class _Step:
    hists: dict[str, Hist]
    send_lag: Hist
    input_tokens: int = 0
    output_tokens: int = 0


class ClientMetrics:
    """The counts behind every metric; thread-safe (one lock, held for microseconds)."""

    def __init__(self, run_id: str, scenario: str, model: str) -> None:
        self._lock = threading.Lock()
        self._info = (run_id, scenario, model)
        self._requests: dict[tuple[str, str, str, str], int] = {}
        self._steps: dict[str, _Step] = {}
        self._step = -1
        self._step_key = "-1"
        self._mode = ""
        self._value = 0.0
        self._steps_planned: int | None = None
        self._finished = False
        self._in_flight = 0
        self._live: LiveSource | None = None
        self._lags_list: list[int] | None = None  # the send-lag list last drained, and how far
        self._lags_seen = 0

    # -- the event loop's side
    def start_step(self, index: int, mode: str, value: float, planned: int | None) -> None:
        with self._lock:
            self._step, self._step_key = index, str(index)
            self._mode, self._value, self._steps_planned = mode, value, planned
            self._step_state(self._step_key)

    def set_live_source(self, source: LiveSource | None) -> None:
        self._live = source

    def finish(self) -> None:
        """The run's last step has ended: nothing is in flight, every record is counted."""
        self.poll()
        with self._lock:
            self._finished, self._in_flight = True, 0
            self._live = None

    def record(self, rec: Record) -> None:
        """One finished request (called at the parent, for every row records.jsonl gets)."""
        key = str(rec.step)
        status = status_of(rec)
        measured_ok = rec.ok and not rec.warmup and not rec.ramp
        gaps = np.diff(np.asarray(rec.token_ns, dtype=np.int64)) if measured_ok else None
        with self._lock:
            labels = (key, phase_of(rec), status, "" if rec.ok else rec.error_kind or "")
            self._requests[labels] = self._requests.get(labels, 0) + 1
            step = self._step_state(key)
            step.input_tokens += rec.prompt_tokens
            step.output_tokens += rec.output_tokens
            if not measured_ok:
                return
            h = step.hists
            ttft = ttft_ns(rec)
            if ttft is not None:
                h["ttft_seconds"].observe_s(ttft / _NS)
            h["e2e_seconds"].observe_s(e2e_ns(rec) / _NS)
            tpot = tpot_ns(rec)
            if tpot is not None:
                h["tpot_seconds"].observe_s(tpot / _NS)
            wait = queue_wait_ns(rec)
            if wait is not None:
                h["queue_wait_seconds"].observe_s(max(wait, 0) / _NS)
            if gaps is not None and len(gaps):
                h["itl_seconds"].observe_ns(gaps)

    def poll(self) -> None:
        """Read the live source: in flight, and send lags since the last poll."""
        source = self._live
        live = source() if source is not None else None
        with self._lock:
            if live is None:
                self._in_flight = 0
                return
            self._in_flight = live.in_flight
            lags = live.send_lags_ns
            if lags is not self._lags_list:
                self._lags_list, self._lags_seen = lags, 0
            new = lags[self._lags_seen :]
            self._lags_seen += len(new)
            if new:
                self._step_state(self._step_key).send_lag.observe_ns(new)

    def _step_state(self, key: str) -> _Step:
        step = self._steps.get(key)
        if step is None:
            hists = {name: Hist(METRICS[PREFIX + name].buckets) for name in _HISTS}
            step = _Step(hists, Hist(METRICS[f"{PREFIX}send_lag_seconds"].buckets))
            self._steps[key] = step
        return step

    # -- the scrape thread's side (prometheus_client.registry.Collector)
    def collect(self) -> Iterator[Metric]:
        if not self._finished:
            self.poll()
        with self._lock:
            yield from self._families()

    def _families(self) -> Iterator[Metric]:
        requests = self._family("requests_total")
        assert isinstance(requests, CounterMetricFamily)
        for labels, n in sorted(self._requests.items()):
            requests.add_metric(list(labels), n)
        yield requests
        steps = sorted(self._steps.items(), key=lambda kv: int(kv[0]))
        for name in (*_HISTS, "send_lag_seconds"):
            fam = self._family(name)
            assert isinstance(fam, HistogramMetricFamily)
            for key, s in steps:
                h = s.send_lag if name == "send_lag_seconds" else s.hists[name]
                if h.count:
                    fam.add_metric([key], h.cumulative(), h.total_s)
            yield fam
        for name, attr in (
            ("input_tokens_total", "input_tokens"),
            ("output_tokens_total", "output_tokens"),
        ):
            fam = self._family(name)
            assert isinstance(fam, CounterMetricFamily)
            for key, s in steps:
                fam.add_metric([key], getattr(s, attr))
            yield fam
        yield from self._gauges()

    def _gauges(self) -> Iterator[Metric]:
        values: dict[str, float | None] = {
            "in_flight_requests": self._in_flight,
            "step": self._step,
            "steps_planned": self._steps_planned,
            "run_finished": 1.0 if self._finished else 0.0,
        }
        for name, value in values.items():
            fam = self._family(name)
            assert isinstance(fam, GaugeMetricFamily)
            if value is not None:
                fam.add_metric([], value)
            yield fam
        point = self._family("load_point")
        assert isinstance(point, GaugeMetricFamily)
        if self._mode:
            point.add_metric([self._mode], self._value)
        yield point
        info = self._family("run_info")
        assert isinstance(info, GaugeMetricFamily)
        info.add_metric(list(self._info), 1.0)
        yield info

    @staticmethod
    def _family(name: str) -> Metric:
        full = PREFIX + name
        m = METRICS[full]
        labels = list(m.labels)
        if m.kind == "counter":
            return CounterMetricFamily(full, m.help, labels=labels)
        if m.kind == "histogram":
            return HistogramMetricFamily(full, m.help, labels=labels)
        return GaugeMetricFamily(full, m.help, labels=labels)
