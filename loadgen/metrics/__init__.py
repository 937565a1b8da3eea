"""Metrics: pure functions from records (or a step's compact columns) to summaries.

Owns every metric's formula (latency, tokens, profiles of other tools'
definitions), the statistics and their confidence intervals, the SLA checks,
the steady window and a step's summary (:func:`summarize_step`). Pure: no
I/O, no clock reading; they only subtract integer nanoseconds.

May import: loadgen.clock (unit constants), records, scenario (the SLA spec),
summary (the models they fill), vocab.
"""

from loadgen.metrics.columns import ErrorTally, StepColumns
from loadgen.metrics.confidence import requests_needed
from loadgen.metrics.frontier import best_under_sla, frontier_point, pareto_front, with_gpus
from loadgen.metrics.latency import (
    FIRST_STAMP,
    Stamp,
    e2e_ns,
    first_answer,
    first_token,
    itl_gaps_ns,
    queue_wait_ns,
    tpot_ns,
    ttft_answer_ns,
    ttft_from_scheduled_ns,
    ttft_ns,
    ttft_reasoning_ns,
)
from loadgen.metrics.profiles import PROFILES, Profile
from loadgen.metrics.sla import check_sla, request_meets_sla
from loadgen.metrics.stats import distribution_ms
from loadgen.metrics.step import step_cost, summarize_step
from loadgen.metrics.time_split import split_growth
from loadgen.metrics.tokens import PROMPT_TOLERANCE, prompt_length_check, token_counts

__all__ = [
    "FIRST_STAMP",
    "PROFILES",
    "PROMPT_TOLERANCE",
    "ErrorTally",
    "Profile",
    "Stamp",
    "StepColumns",
    "best_under_sla",
    "check_sla",
    "distribution_ms",
    "e2e_ns",
    "first_answer",
    "first_token",
    "frontier_point",
    "itl_gaps_ns",
    "pareto_front",
    "prompt_length_check",
    "queue_wait_ns",
    "request_meets_sla",
    "requests_needed",
    "split_growth",
    "step_cost",
    "summarize_step",
    "token_counts",
    "tpot_ns",
    "ttft_answer_ns",
    "ttft_from_scheduled_ns",
    "ttft_ns",
    "ttft_reasoning_ns",
    "with_gpus",
]
