"""Workload: prompts, token lengths, datasets, traces and arrival schedules, all seeded.

``Workload.prepare`` reads the files once; ``plan_step`` plans one step.
Pure given its inputs: no network, no clock; a seeded ``numpy`` Generator
is passed around.

May import: loadgen.scenario, loadgen.errors, loadgen.vocab (words).
"""

from loadgen.workload.agent import AgentPlan, FanOut, LoopPlan
from loadgen.workload.agent_context import AgentContext, ToolUse
from loadgen.workload.arrivals import arrival_offsets_ns, ramped_offsets_ns
from loadgen.workload.deal import workers_for
from loadgen.workload.describe import describe_workload, workload_report
from loadgen.workload.lengths import sample_lengths, sample_seconds
from loadgen.workload.media import Media, MediaMaker
from loadgen.workload.plan import Message, Prompt, RequestSpec, step_rng
from loadgen.workload.prompts import VOCABULARY, Calibration, PromptMaker, make_prompt
from loadgen.workload.source import SessionPlan, Workload
from loadgen.workload.step import (
    NS_PER_S,
    ClosedLoop,
    ClosedPlan,
    ClosedSessionsPlan,
    LinkedPlan,
    OpenLoop,
    OpenPlan,
    OpenSessionsPlan,
    Session,
    StepPlan,
    plan_step,
    with_own_media,
)
from loadgen.workload.tools import TOOL_CHOICES, OutputAsk, ResponseFormat, ToolDef, output_ask
from loadgen.workload.trace_links import Waits

__all__ = [
    "NS_PER_S",
    "TOOL_CHOICES",
    "VOCABULARY",
    "AgentContext",
    "AgentPlan",
    "Calibration",
    "ClosedLoop",
    "ClosedPlan",
    "ClosedSessionsPlan",
    "FanOut",
    "LinkedPlan",
    "LoopPlan",
    "Media",
    "MediaMaker",
    "Message",
    "OpenLoop",
    "OpenPlan",
    "OpenSessionsPlan",
    "OutputAsk",
    "Prompt",
    "PromptMaker",
    "RequestSpec",
    "ResponseFormat",
    "Session",
    "SessionPlan",
    "StepPlan",
    "ToolDef",
    "ToolUse",
    "Waits",
    "Workload",
    "arrival_offsets_ns",
    "describe_workload",
    "make_prompt",
    "output_ask",
    "plan_step",
    "ramped_offsets_ns",
    "sample_lengths",
    "sample_seconds",
    "step_rng",
    "with_own_media",
    "workers_for",
    "workload_report",
]
