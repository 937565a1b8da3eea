"""Per-request samples read back from ``records.jsonl`` and rows of ``telemetry.jsonl``.

Owns one streaming pass over the records that keeps what the plots and
``compare``'s bootstrap need and nothing else: per step, the TTFT, TPOT and
E2E of each successful measured request (not warm-up, not ramp-up, as the
metrics count them; TTFT to the first answer token in steps whose summary says
``ttft_of: answer``) and the ITL values (ms); for the
timeline, every request's (sent, end) interval and every token event's arrival
with its weight (the request's output tokens / its token events, so a server
that sends several tokens per event is counted right).

The formulas are those of the run's metrics profile
(:mod:`loadgen.metrics.profiles`, ``summary.metrics_profile``), not copies:
under ``vllm`` TTFT counts from the request's start, under ``aiperf`` and
``guidellm`` ITL is one value per request; in open-loop steps with
``latency_from: scheduled`` TTFT and E2E count from the intended send time
(coordinated omission). So the CDFs and ``compare``'s bootstrap resample the
same values the summary's statistics were made of.

Imports: orjson, loadgen.errors, loadgen.records, loadgen.summary, loadgen.vocab,
loadgen.metrics.latency, loadgen.metrics.profiles.
"""

from __future__ import annotations

from array import array
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from loadgen.errors import ScenarioError
from loadgen.metrics.latency import first_answer, first_token
from loadgen.metrics.profiles import PROFILES, Profile
from loadgen.records import Record, read_records
from loadgen.summary import Summary
from loadgen.vocab import LATENCY_METRICS

__all__ = [
    "SAMPLED_METRICS",
    "RunSamples",
    "StepSamples",
    "profile_of",
    "read_run_samples",
    "read_samples",
    "read_telemetry",
    "samples_from_records",
]

#: The latency metrics with per-request samples (the names of StepSummary's fields).
SAMPLED_METRICS = LATENCY_METRICS

_NS_PER_MS = 1e6


def profile_of(name: str) -> Profile:
    """The formulas of a metrics profile; an unknown name is a one-line ScenarioError."""
    if name not in PROFILES:
        msg = f"metrics_profile: unknown profile {name!r}; expected one of {', '.join(PROFILES)}"
        raise ScenarioError(msg)
    return PROFILES[name]


@dataclass(slots=True)
class StepSamples:
    """Raw values of one step's measured successful requests, in ms."""

    ttft_ms: list[float] = field(default_factory=list)
    itl_ms: list[float] = field(default_factory=list)
    tpot_ms: list[float] = field(default_factory=list)
    e2e_ms: list[float] = field(default_factory=list)

    def values(self, metric: str) -> list[float]:
        """The samples of ``metric`` (one of :data:`SAMPLED_METRICS`)."""
        if metric not in SAMPLED_METRICS:
            msg = f"no samples for {metric!r}; expected one of {', '.join(SAMPLED_METRICS)}"
            raise KeyError(msg)
        values: list[float] = getattr(self, metric)
        return values


@dataclass(slots=True)
class RunSamples:
    """Everything of records.jsonl the outputs use, warm-up and ramp-up in the timeline only.

    ``answer_steps``: steps whose TTFT is to the first answer token (``ttft_of: answer``);
    ``scheduled_steps``: steps whose TTFT and E2E count from the intended send time
    (``latency_from: scheduled``, open loop); ``profile``: the metrics profile whose
    formulas make the values.
    """

    steps: dict[int, StepSamples] = field(default_factory=dict)
    sent_ns: array[int] = field(default_factory=lambda: array("q"))
    end_ns: array[int] = field(default_factory=lambda: array("q"))
    token_ns: array[int] = field(default_factory=lambda: array("q"))
    token_weight: array[float] = field(default_factory=lambda: array("d"))
    answer_steps: frozenset[int] = frozenset()
    scheduled_steps: frozenset[int] = frozenset()
    profile: str = "loadgen"

    def step(self, index: int) -> StepSamples:
        return self.steps.get(index) or StepSamples()

    def add(self, r: Record) -> None:
        if r.end_ns > r.sent_ns > 0:
            self.sent_ns.append(r.sent_ns)
            self.end_ns.append(r.end_ns)
        if r.token_ns:
            weight = r.output_tokens / len(r.token_ns) if r.output_tokens else 1.0
            self.token_ns.extend(r.token_ns)
            self.token_weight.extend([weight] * len(r.token_ns))
        if r.warmup or r.ramp or not r.ok:
            return
        s = self.steps.setdefault(r.step, StepSamples())
        profile = PROFILES[self.profile]
        first = first_answer if r.step in self.answer_steps else first_token
        since = "scheduled" if r.step in self.scheduled_steps else "sent"
        if (t := profile.ttft(r, first, since)) is not None:
            s.ttft_ms.append(t / _NS_PER_MS)
        if (p := profile.tpot(r)) is not None:
            s.tpot_ms.append(p / _NS_PER_MS)
        if (e := profile.latency(r, since)) is not None:
            s.e2e_ms.append(e / _NS_PER_MS)
        s.itl_ms.extend(g / _NS_PER_MS for g in profile.itl((r,)))


def samples_from_records(
    records: Iterable[Record],
    answer_steps: Collection[int] = (),
    profile: str = "loadgen",
    scheduled_steps: Collection[int] = (),
) -> RunSamples:
    out = RunSamples(
        answer_steps=frozenset(answer_steps),
        scheduled_steps=frozenset(scheduled_steps),
        profile=profile_of(profile).name,
    )
    for r in records:
        out.add(r)
    return out


def read_samples(
    path: Path,
    answer_steps: Collection[int] = (),
    profile: str = "loadgen",
    scheduled_steps: Collection[int] = (),
) -> RunSamples | None:
    """The samples of a records.jsonl, or None when the file is absent.

    ``answer_steps``: the steps whose summary says ``ttft_of: answer``; ``profile``: the
    metrics profile the run was summarised with; ``scheduled_steps``: the steps whose
    summary says ``latency_from: scheduled``.
    """
    if not path.is_file():
        return None
    return samples_from_records(read_records(path), answer_steps, profile, scheduled_steps)


def read_run_samples(results_dir: Path, summary: Summary) -> RunSamples | None:
    """The samples of a results directory, measured as its summary was: TTFT to the answer
    in steps with ``ttft_of: answer``, TTFT and E2E from the intended send time in steps
    with ``latency_from: scheduled``, and the run's metrics profile."""
    answer_steps = [s.index for s in summary.steps if s.ttft_of == "answer"]
    scheduled = [s.index for s in summary.steps if s.latency_from == "scheduled"]
    return read_samples(
        results_dir / "records.jsonl", answer_steps, summary.metrics_profile, scheduled
    )


def read_telemetry(path: Path) -> list[dict[str, Any]]:
    """The JSON lines of a telemetry.jsonl (empty when absent); a torn line is skipped."""
    if not path.is_file():
        return []
    rows: list[dict[str, Any]] = []
    with path.open("rb") as fh:
        for line in fh:
            try:
                row = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if isinstance(row, dict):
                rows.append(row)
    return rows
