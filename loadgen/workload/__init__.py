"""Workload: prompts, token lengths and arrival schedules, all seeded and pure."""

from loadgen.workload.arrivals import arrival_offsets_ns
from loadgen.workload.lengths import sample_lengths
from loadgen.workload.plan import RequestSource, RequestSpec, plan_requests, step_rng
from loadgen.workload.prompts import VOCABULARY, make_prompt

__all__ = [
    "VOCABULARY",
    "RequestSource",
    "RequestSpec",
    "arrival_offsets_ns",
    "make_prompt",
    "plan_requests",
    "sample_lengths",
    "step_rng",
]
