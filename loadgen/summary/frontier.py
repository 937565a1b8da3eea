"""One step as a point of the throughput-interactivity frontier: :class:`FrontierPoint`.

Owns :class:`FrontierPoint` (docs/metrics.md, "The frontier", has the formulas):
how fast each user saw tokens, how many tokens per second each GPU served,
and what a million output tokens cost there.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from loadgen.strict import Strict

__all__ = ["FrontierPoint"]


class FrontierPoint(Strict):
    """The step's place on the frontier: interactivity (x) against throughput per GPU (y)."""

    interactivity_tok_s: float | None = Field(
        None,
        description="Output tokens/s per user: the median over the successful measured "
        "requests with two tokens or more and two token stamps apart in time of "
        "output_tokens / ((last token - first token) in s); null when none has one.",
    )
    interactivity_requests: int = Field(
        0, description="The requests the interactivity median is taken over."
    )
    tpot_tok_s: float | None = Field(
        None, description="1000 / TPOT p50 (ms): the same speed read from the TPOT median."
    )
    output_tokens_per_s: float = Field(
        0.0, description="The step's output tokens/s (throughput.output_tokens_per_s)."
    )
    gpus: int | None = Field(None, description="The GPUs serving; null when not known.")
    gpus_from: Literal["cost.gpus", "telemetry"] | None = Field(
        None,
        description="Where the GPU count came from: the scenario's cost.gpus, else the "
        "GPUs the agent or dcgm-exporter sampled in the step (telemetry.total.gpus).",
    )
    output_tokens_per_s_per_gpu: float | None = Field(
        None, description="output_tokens_per_s / gpus; null without a GPU count."
    )
    per_gpu_missing: str | None = Field(
        None, description="Why output_tokens_per_s_per_gpu is null; null when it is set."
    )
    usd_per_million_output_tokens: float | None = Field(
        None, description="The step's cost.usd_per_million_output_tokens (null without it)."
    )
