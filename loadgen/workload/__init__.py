"""Workload: prompts, token lengths, datasets, traces and arrival schedules, all seeded.

``Workload.prepare`` reads the files once; ``plan_step`` plans one step.
Pure given its inputs: no network, no clock; a seeded ``numpy`` Generator
is passed around.

May import: loadgen.scenario, loadgen.errors, loadgen.vocab (words).

Public names: Workload, SessionPlan, StepPlan (ClosedPlan, ClosedSessionsPlan, OpenPlan,
OpenSessionsPlan, LinkedPlan), plan_step, RequestSpec,
Message, Prompt, step_rng, PromptMaker, Calibration, make_prompt,
arrival_offsets_ns, sample_lengths.
"""

from loadgen.workload.arrivals import arrival_offsets_ns, ramped_offsets_ns
from loadgen.workload.lengths import sample_lengths, sample_seconds
from loadgen.workload.plan import Message, Prompt, RequestSpec, step_rng
from loadgen.workload.prompts import VOCABULARY, Calibration, PromptMaker, make_prompt
from loadgen.workload.source import SessionPlan, Workload
from loadgen.workload.step import (
    ClosedPlan,
    ClosedSessionsPlan,
    LinkedPlan,
    OpenPlan,
    OpenSessionsPlan,
    StepPlan,
    plan_step,
)

__all__ = [
    "VOCABULARY",
    "Calibration",
    "ClosedPlan",
    "ClosedSessionsPlan",
    "LinkedPlan",
    "Message",
    "OpenPlan",
    "OpenSessionsPlan",
    "Prompt",
    "PromptMaker",
    "RequestSpec",
    "SessionPlan",
    "StepPlan",
    "Workload",
    "arrival_offsets_ns",
    "make_prompt",
    "plan_step",
    "ramped_offsets_ns",
    "sample_lengths",
    "sample_seconds",
    "step_rng",
]
