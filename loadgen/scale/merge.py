"""What the workers send back, put together on the parent's side: one step's outcome.

Owns merging the workers' done reports into one
:class:`~loadgen.execute.executor.StepOutcome` (:func:`step_outcome`): their
in-flight series moved onto the parent's clock, their HTTP versions, and one
:class:`~loadgen.summary.ClientHealth` (:func:`merge_health`: saturation is
per worker, so the worst of each figure, each worker's own, and the CPU and
memory of every loadgen process added up), and moving a worker's record onto
the parent's clock (:func:`shift_record`, every ``*_ns`` field in
``_TIME_FIELDS``). Functions of what came over the wire (each report with its
sender's index and clock offset: :class:`WorkerReport`, not the pool's worker)
and the parent's own CPU and memory, for :mod:`loadgen.scale.pool` (and so its
Ray subclass).
"""

from __future__ import annotations

from dataclasses import dataclass

from loadgen.execute import StepOutcome, rss_bytes
from loadgen.records import Record
from loadgen.scale.messages import StepDone
from loadgen.summary import ClientHealth

__all__ = ["WorkerReport", "merge_health", "shift_record", "step_outcome"]


@dataclass(frozen=True, slots=True)
class WorkerReport:
    """One worker's done report, with what the parent knows of its sender."""

    index: int
    #: the worker's monotonic clock minus the parent's (0 on one machine)
    offset_ns: int
    #: None: the worker died before it reported
    done: StepDone | None


def step_outcome(reports: list[WorkerReport], parent_cpu: float) -> StepOutcome:
    """One step outcome from the workers' done reports."""
    healths: list[tuple[int, ClientHealth]] = []
    outcome = StepOutcome(ClientHealth())
    for r in reports:
        report = r.done
        if report is None:
            continue
        outcome.interrupted = outcome.interrupted or report.interrupted
        if report.sat_out or report.health is None:
            continue
        healths.append((r.index, report.health))
        outcome.in_flight.append([(t - r.offset_ns, n) for t, n in report.in_flight])
        outcome.http_versions.update(report.http_versions)
    outcome.health = merge_health(healths, parent_cpu)
    return outcome


def merge_health(healths: list[tuple[int, ClientHealth]], parent_cpu: float) -> ClientHealth:
    """The worst of each figure over the workers (saturation is per worker), and each one."""

    def worst(name: str) -> float | None:
        values = [getattr(h, name) for _, h in healths if getattr(h, name) is not None]
        return max(values) if values else None

    merged = ClientHealth(
        cpu_util=max((h.cpu_util for _, h in healths), default=0.0),
        loop_lag_p99_ms=worst("loop_lag_p99_ms"),
        loop_lag_max_ms=worst("loop_lag_max_ms"),
        send_lag_p99_ms=worst("send_lag_p99_ms"),
        read_lag_p99_ms=worst("read_lag_p99_ms"),
        read_lag_max_ms=worst("read_lag_max_ms"),
        saturated=any(h.saturated for _, h in healths),
        warnings=[f"worker {i}: {text}" for i, h in healths for text in h.warnings],
        cpu_util_total=round(sum(h.cpu_util for _, h in healths) + parent_cpu, 4),
        rss_peak_mib=worst("rss_peak_mib"),
        rss_peak_total_mib=_total_rss(healths),
        workers=[h for _, h in healths],
        media_wait_p99_ms=worst("media_wait_p99_ms"),
    )
    return merged


def _total_rss(healths: list[tuple[int, ClientHealth]]) -> float | None:
    peaks = [h.rss_peak_mib for _, h in healths if h.rss_peak_mib is not None]
    parent = rss_bytes()
    if not peaks or parent is None:
        return None
    return round(sum(peaks) + parent / 2**20, 1)


#: every Record field that holds a reading of the monotonic clock
_TIME_FIELDS = (
    "scheduled_ns",
    "start_ns",
    "sent_ns",
    "headers_ns",
    "first_token_ns",
    "first_answer_ns",
    "first_reasoning_ns",
    "last_token_ns",
    "end_ns",
    "first_tool_ns",
    # -- request phases
    "connect_start_ns",
    "connect_ns",
    "tls_ns",
    "first_byte_ns",
)


def shift_record(rec: Record, delta_ns: int) -> None:
    """Move every time of ``rec`` by ``delta_ns`` (a worker's clock onto the parent's)."""
    for name in _TIME_FIELDS:
        value = getattr(rec, name)
        if value is not None:
            setattr(rec, name, value + delta_ns)
    rec.token_ns = [t + delta_ns for t in rec.token_ns]
