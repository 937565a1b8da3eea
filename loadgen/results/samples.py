"""Per-request samples read back from ``records.jsonl`` and rows of ``telemetry.jsonl``.

Owns one streaming pass over the records that keeps what the plots and
``compare``'s bootstrap need and nothing else, in compact columns (no record
is kept): per step, the TTFT, TPOT and E2E of each successful measured request
(not warm-up, not ramp-up, as the metrics count them; TTFT to the first answer
token in steps whose summary says ``ttft_of: answer``) and the ITL values (ms),
each a :class:`~loadgen.results.bins.ValueColumn` of float64, and where each
request's ITL values end in that column (``itl_ends``, one int64 a request
that has any), so ``compare``'s bootstrap can resample whole requests
(:func:`loadgen.compare.resample.per_request`); for the context plot, each session call's
TTFT, prompt tokens and cached share
(:class:`~loadgen.results.context_points.ContextPoints`); for the timeline,
every request's (sent, end) interval and every token event's arrival with its
weight (the request's output tokens / its token events, so a server that sends
several tokens per event is counted right), a
:class:`~loadgen.results.bins.StampColumn`.

``exact_up_to``: the plots read a step's column exactly up to
:data:`~loadgen.results.bins.EXACT_UP_TO` values and from a log-spaced histogram
past that (the ITL of a 100,000-request step); ``compare``'s bootstrap reads
with ``exact_up_to=None``: every value, as float64 (8 bytes a value). The
timeline's token stamps are binned past the same bound whatever it is told:
only a plot reads them.

The formulas are those of the run's metrics profile
(:mod:`loadgen.metrics.profiles`, ``summary.metrics_profile``), not copies:
under ``vllm`` TTFT counts from the request's start, under ``aiperf`` and
``guidellm`` ITL is one value per request; in open-loop steps with
``latency_from: scheduled`` TTFT and E2E count from the intended send time
(coordinated omission). So the CDFs and ``compare``'s bootstrap resample the
same values the summary's statistics were made of.
"""

from __future__ import annotations

from array import array
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson

from loadgen.errors import ScenarioError
from loadgen.metrics import PROFILES, Profile, first_answer, first_token
from loadgen.records import Record, read_records
from loadgen.results.bins import EXACT_UP_TO, StampColumn, ValueColumn
from loadgen.results.context_points import ContextPoints
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


class StepSamples:
    """Values of one step's measured successful requests, in ms: a column per metric."""

    __slots__ = ("context", "e2e_ms", "itl_ends", "itl_ms", "tpot_ms", "ttft_ms")

    def __init__(self, exact_up_to: int | None = EXACT_UP_TO) -> None:
        self.ttft_ms = ValueColumn(exact_up_to)
        self.itl_ms = ValueColumn(exact_up_to)
        self.tpot_ms = ValueColumn(exact_up_to)
        self.e2e_ms = ValueColumn(exact_up_to)
        #: after each request with ITL values, how many the column then holds
        self.itl_ends = array("q")
        #: session calls: TTFT against prompt tokens and cached share (the context plot)
        self.context = ContextPoints()

    def column(self, metric: str) -> ValueColumn:
        """The column of ``metric`` (one of :data:`SAMPLED_METRICS`)."""
        if metric not in SAMPLED_METRICS:
            msg = f"no samples for {metric!r}; expected one of {', '.join(SAMPLED_METRICS)}"
            raise KeyError(msg)
        column: ValueColumn = getattr(self, metric)
        return column

    def values(self, metric: str) -> npt.NDArray[np.float64]:
        """Every value of ``metric``, in record order (a column that is not binned)."""
        return self.column(metric).values()


@dataclass(slots=True)
class RunSamples:
    """Everything of records.jsonl the outputs use, warm-up and ramp-up in the timeline only.

    ``answer_steps``: steps whose TTFT is to the first answer token (``ttft_of: answer``);
    ``scheduled_steps``: steps whose TTFT and E2E count from the intended send time
    (``latency_from: scheduled``, open loop); ``profile``: the metrics profile whose
    formulas make the values; ``exact_up_to``: see the module.
    """

    steps: dict[int, StepSamples] = field(default_factory=dict)
    sent_ns: array[int] = field(default_factory=lambda: array("q"))
    end_ns: array[int] = field(default_factory=lambda: array("q"))
    tokens: StampColumn = field(default_factory=StampColumn)
    answer_steps: frozenset[int] = frozenset()
    scheduled_steps: frozenset[int] = frozenset()
    profile: str = "loadgen"
    exact_up_to: int | None = EXACT_UP_TO

    def step(self, index: int) -> StepSamples:
        return self.steps.get(index) or StepSamples(self.exact_up_to)

    @property
    def binned(self) -> bool:
        """Whether any column is binned (some plot is drawn from bins)."""
        return self.tokens.binned or any(
            s.column(m).binned for s in self.steps.values() for m in SAMPLED_METRICS
        )

    def add(self, r: Record) -> None:
        if r.end_ns > r.sent_ns > 0:
            self.sent_ns.append(r.sent_ns)
            self.end_ns.append(r.end_ns)
        if r.token_ns:
            weight = r.output_tokens / len(r.token_ns) if r.output_tokens else 1.0
            self.tokens.extend(r.token_ns, weight)
        if r.warmup or r.ramp or not r.ok:
            return
        s = self.steps.get(r.step)
        if s is None:
            s = self.steps[r.step] = StepSamples(self.exact_up_to)
        profile = PROFILES[self.profile]
        first = first_answer if r.step in self.answer_steps else first_token
        since = "scheduled" if r.step in self.scheduled_steps else "sent"
        if (t := profile.ttft(r, first, since)) is not None:
            s.ttft_ms.append(t / _NS_PER_MS)
            if r.session is not None:
                s.context.add(r.prompt_tokens, t / _NS_PER_MS, r.cached_tokens_server)
        if (p := profile.tpot(r)) is not None:
            s.tpot_ms.append(p / _NS_PER_MS)
        if (e := profile.latency(r, since)) is not None:
            s.e2e_ms.append(e / _NS_PER_MS)
        gaps = profile.itl((r,))
        if gaps:
            s.itl_ms.extend(g / _NS_PER_MS for g in gaps)
            s.itl_ends.append((s.itl_ends[-1] if s.itl_ends else 0) + len(gaps))


def samples_from_records(
    records: Iterable[Record],
    answer_steps: Collection[int] = (),
    profile: str = "loadgen",
    scheduled_steps: Collection[int] = (),
    *,
    exact_up_to: int | None = EXACT_UP_TO,
) -> RunSamples:
    out = RunSamples(
        answer_steps=frozenset(answer_steps),
        scheduled_steps=frozenset(scheduled_steps),
        profile=profile_of(profile).name,
        exact_up_to=exact_up_to,
    )
    for r in records:
        out.add(r)
    return out


def read_samples(
    path: Path,
    answer_steps: Collection[int] = (),
    profile: str = "loadgen",
    scheduled_steps: Collection[int] = (),
    *,
    exact_up_to: int | None = EXACT_UP_TO,
) -> RunSamples | None:
    """The samples of a records.jsonl, or None when the file is absent.

    ``answer_steps``: the steps whose summary says ``ttft_of: answer``; ``profile``: the
    metrics profile the run was summarised with; ``scheduled_steps``: the steps whose
    summary says ``latency_from: scheduled``; ``exact_up_to``: see the module.
    """
    if not path.is_file():
        return None
    return samples_from_records(
        read_records(path), answer_steps, profile, scheduled_steps, exact_up_to=exact_up_to
    )


def read_run_samples(
    results_dir: Path, summary: Summary, *, exact_up_to: int | None = EXACT_UP_TO
) -> RunSamples | None:
    """The samples of a results directory, measured as its summary was: TTFT to the answer
    in steps with ``ttft_of: answer``, TTFT and E2E from the intended send time in steps
    with ``latency_from: scheduled``, and the run's metrics profile."""
    answer_steps = [s.index for s in summary.steps if s.ttft_of == "answer"]
    scheduled = [s.index for s in summary.steps if s.latency_from == "scheduled"]
    return read_samples(
        results_dir / "records.jsonl",
        answer_steps,
        summary.metrics_profile,
        scheduled,
        exact_up_to=exact_up_to,
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
