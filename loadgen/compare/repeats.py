"""Run-to-run spread of a sweep run several times (``loadgen run --repeat N``).

Each repeat is a whole sweep in its own results directory (``repeat-1`` ...
``repeat-N`` under the run's directory). Whole sweeps, not each step
repeated in turn: a step then meets the server in the state the previous
step left, as in a single run, and a repeat is a run someone could have
made alone. A step is compared across repeats by its index when its load
is the same in every repeat (a sweep that stops early or searches may run
different steps; those are left out).

For each such step and each metric below: every repeat's value, their
mean, standard deviation (n - 1), min, max and coefficient of variation.
A pooling step (embeddings, rerank: no token timing) has its own metrics:
E2E, requests/s, inputs/s, input tokens/s
(:mod:`loadgen.compare.pooling`). Written as ``repeats.json`` and
``repeats.md`` beside the repeat folders, and said on the console, by
:mod:`loadgen.report.repeats`.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from loadgen.compare.gate import step_value
from loadgen.compare.pooling import repeat_metrics
from loadgen.results import load_label
from loadgen.summary import Summary

__all__ = [
    "REPEAT_METRICS",
    "RepeatSpread",
    "Spread",
    "repeat_dirs",
    "spread",
]

#: the step figures whose spread is reported (dotted paths into a step of summary.json)
REPEAT_METRICS = (
    "ttft_ms.p50",
    "ttft_ms.p99",
    "itl_ms.p50",
    "itl_ms.p99",
    "tpot_ms.p50",
    "e2e_ms.p50",
    "e2e_ms.p99",
    "throughput.requests_per_s",
    "throughput.output_tokens_per_s",
    "requests.error_rate",
)


class Spread(BaseModel):
    metric: str
    values: list[float]
    mean: float
    std: float | None  # None with one value
    min: float
    max: float
    cv: float | None  # std / mean; None when undefined


class StepSpread(BaseModel):
    index: int
    label: str
    metrics: list[Spread]


class RepeatSpread(BaseModel):
    repeats: int
    dirs: list[str]
    steps: list[StepSpread]


def repeat_dirs(out_dir: Path, n: int) -> list[Path]:
    return [out_dir / f"repeat-{k}" for k in range(1, n + 1)]


def _label(summary: Summary, index: int) -> str:
    return load_label(summary.steps[index])


def spread(summaries: Sequence[Summary], dirs: Sequence[str]) -> RepeatSpread:
    """Each step every repeat ran at the same load: each metric's values and their spread."""
    out = RepeatSpread(repeats=len(summaries), dirs=list(dirs), steps=[])
    if not summaries:
        return out
    shortest = min(len(s.steps) for s in summaries)
    for i in range(shortest):
        steps = [s.steps[i] for s in summaries]
        if any(st.load != steps[0].load for st in steps):
            continue
        metrics = []
        for path in repeat_metrics(steps, REPEAT_METRICS):
            values = [step_value(st, path) for st in steps]
            present = [v for v in values if v is not None]
            if len(present) != len(values):
                continue
            mean = statistics.fmean(present)
            std = statistics.stdev(present) if len(present) > 1 else None
            cv = std / mean if std is not None and mean else None
            metrics.append(
                Spread(
                    metric=path,
                    values=present,
                    mean=mean,
                    std=std,
                    min=min(present),
                    max=max(present),
                    cv=cv,
                )
            )
        out.steps.append(StepSpread(index=i, label=_label(summaries[0], i), metrics=metrics))
    return out
