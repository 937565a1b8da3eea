"""One model's share of a step, when the scenario sends a mix (``target.models``).

Owns :class:`ModelStats`: the same figures as an endpoint's share
(:class:`~loadgen.summary.step.EndpointStats`), named by the model, with the
share of the requests its weight asked for beside the share it got.
"""

from __future__ import annotations

from pydantic import Field

from loadgen.strict import Strict
from loadgen.summary.counts import RequestCounts, Throughput
from loadgen.summary.latency import Distribution

__all__ = ["ModelStats"]


class ModelStats(Strict):
    """One model's share of a step (a LoRA adapter, or one of several served models)."""

    model: str = Field(description="The model name the requests sent.")
    weight_share: float = Field(
        0.0, description="The share of the requests its weight asked for: weight / sum of weights."
    )
    request_share: float = Field(
        0.0, description="The share of the step's measured requests that named it."
    )
    requests: RequestCounts = Field(default_factory=RequestCounts)
    throughput: Throughput = Field(
        default_factory=Throughput,
        description="Over the step's window (steady where the step has one), so the "
        "models' figures add up to the step's.",
    )
    ttft_ms: Distribution = Field(default_factory=Distribution)
    itl_ms: Distribution = Field(default_factory=Distribution)
    tpot_ms: Distribution = Field(default_factory=Distribution)
    e2e_ms: Distribution = Field(default_factory=Distribution)
