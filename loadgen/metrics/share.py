"""A part of a step's requests (one endpoint's, one model's) measured over the step's window.

:func:`throughput` is the one formula of a window's rates; :func:`part_throughput`
puts a part's requests on the step's window (steady where the step has one),
so the parts' figures add up to the step's. :func:`by_model` is the step's
breakdown per model of a mix (``target.models``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from loadgen.metrics import vector as v
from loadgen.metrics.aggregate import completed_in, meets_sla
from loadgen.metrics.columns import NONE, StepColumns
from loadgen.metrics.profiles import Profile
from loadgen.scenario import SlaSpec
from loadgen.summary import ModelStats, StepSummary, Throughput

__all__ = ["by_model", "part_throughput", "throughput"]

Mask = npt.NDArray[np.bool_]


def throughput(
    ok: v.Columns, counted: Mask, good: Mask, window_s: float, window: str
) -> Throughput:
    """Requests, tokens and good requests (within every per-request bound) per second,
    over the successful requests ``counted`` says."""
    per_s = 1.0 / window_s if window_s else 0.0
    inputs = ok["inputs"][counted]  # pooling APIs: inputs or documents sent (NONE otherwise)
    pooled = inputs != NONE
    return Throughput(
        inputs_per_s=int(inputs[pooled].sum()) * per_s if pooled.any() else None,
        requests_per_s=int(counted.sum()) * per_s,
        output_tokens_per_s=int(ok["output_tokens"][counted].sum()) * per_s,
        input_tokens_per_s=int(ok["prompt_tokens"][counted].sum()) * per_s,
        goodput_requests_per_s=int(good.sum()) * per_s,
        window="steady" if window == "steady" else "whole",
    )


def part_throughput(
    step: StepSummary, cols: StepColumns, sla: SlaSpec, ttft_of: str, profile: Profile
) -> Throughput:
    """The throughput of a part's requests ``cols`` over ``step``'s window."""
    ok = v.Columns(cols)
    good = meets_sla(ok, sla, ttft_of, profile.name)
    if step.steady_started_ns is not None and step.steady_ended_ns is not None:
        inside = completed_in(ok["end"], step.steady_started_ns, step.steady_ended_ns)
        return throughput(ok, inside, good & inside, step.steady_duration_s or 0.0, "steady")
    everyone = np.ones(len(ok), dtype=bool)
    return throughput(ok, everyone, good, step.duration_s, "whole")


def by_model(
    step: StepSummary,
    parts: Sequence[StepColumns],
    models: Sequence[tuple[str, float]],
    summarize: Callable[[StepColumns], StepSummary],
    sla: SlaSpec,
    ttft_of: str,
    profile: Profile,
) -> list[ModelStats]:
    """Each model's counts and latencies (``summarize`` on its own columns) and its
    throughput over ``step``'s window; ``parts[i]`` holds the requests that named
    ``models[i]`` (name, weight)."""
    total_weight = sum(w for _, w in models)
    measured = step.requests.total
    out = []
    for (name, weight), cols in zip(models, parts, strict=True):
        s = summarize(cols)
        out.append(
            ModelStats(
                model=name,
                weight_share=weight / total_weight if total_weight else 0.0,
                request_share=s.requests.total / measured if measured else 0.0,
                requests=s.requests,
                throughput=part_throughput(step, cols, sla, ttft_of, profile),
                ttft_ms=s.ttft_ms,
                itl_ms=s.itl_ms,
                tpot_ms=s.tpot_ms,
                e2e_ms=s.e2e_ms,
            )
        )
    return out
