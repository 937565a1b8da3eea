"""The words for run figures, and the step's counts and warnings, that several outputs print.

Owns the wording of: where the prompt lengths come from, the workload's
description (the run header), the ramp-up and cancelled counts after the
step's request counts, short outputs and the step's own warnings. What each
feature says of a step is its section (:mod:`loadgen.report.sections`). The
console, report.md and report.html all take their lines from here, so they say
the same thing. Each function returns nothing (None, an empty list) when its
figure carries no information, so a plain run shows none of these lines.
"""

from __future__ import annotations

from typing import Any

from loadgen.report.mix import mix_text
from loadgen.summary import (
    PromptCalibration,
    StepSummary,
    Summary,
    WorkloadAgent,
    WorkloadInfo,
)

__all__ = [
    "SOURCE_TEXT",
    "calibration_text",
    "cancelled_text",
    "ramp_text",
    "run_facts",
    "short_output_warning",
    "source_text",
    "step_warnings",
    "workload_lines",
]

#: ``Summary.prompt_length_source`` -> what it means for the requested prompt lengths.
SOURCE_TEXT = {
    "tokenizer": "counted with the model's tokenizer: exact",
    "server": "words per token measured with the server's /tokenize",
    "approximate": "a words-per-token guess: no tokenizer, no calibration",
    "token_ids": "the prompts are token ids: exact",
    "dataset": "a dataset's text, not counted: no tokenizer",
}
#: Workload keys shown by a line of their own, in this order; the prefix and sessions follow.
_WORKLOAD_KEYS = (
    "dataset",
    "trace",
    "prompt_tokens",
    "output_tokens",
    "tokenizer",
    *("batch", "documents", "query_tokens"),  # pooling APIs (embeddings, rerank)
    *("images", "audio"),  # inputs beyond text
    "cancel",  # users who stop (workload.cancel)
)


def source_text(source: str) -> str:
    """``tokenizer`` -> ``tokenizer (counted with the model's tokenizer: exact)``."""
    meaning = SOURCE_TEXT.get(source)
    return f"{source} ({meaning})" if meaning else source


def _value(v: Any) -> str:
    if isinstance(v, dict):
        return ", ".join(f"{k} {_value(x)}" for k, x in v.items() if x is not None)
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def workload_lines(w: WorkloadInfo | None) -> list[str]:
    """The runner's workload description as short ``what: how`` lines."""
    if w is None:
        return []
    out: list[str] = []
    if w.dataset is not None:
        count = f" ({w.dataset_rows:,} rows)" if w.dataset_rows is not None else ""
        out.append(f"dataset: {w.dataset}{count}")
    out += [
        f"{key.replace('_', ' ')}: {_value(value)}"
        for key in _WORKLOAD_KEYS[1:]
        if (value := getattr(w, key)) is not None
    ]
    if (prefix := w.prefix) is not None:
        size = (
            f"{prefix.tokens} tokens"
            if prefix.tokens is not None
            else f"{100 * prefix.share:g}% of each prompt"
            if prefix.share is not None
            else "?"
        )
        groups = "1 group" if prefix.groups == 1 else f"{prefix.groups} groups"
        out.append(f"shared prefix: {size}, {groups}")
    if (agent := w.agent) is not None:
        out.append(_agent_line(agent))
    if (sessions := w.sessions) is not None:
        think = sessions.think_time_s
        out.append(
            f"sessions: turns {_value(sessions.turns)}"
            + (f", think time {_value(think)}" if think is not None else "")
        )
    return out


def _agent_line(agent: WorkloadAgent) -> str:
    """``agent tasks: calls fixed 6, tool time ..., tool results ...; fan-out ...``."""
    parts = [f"calls {agent.calls}"]
    if agent.tool_time_s is not None:
        parts.append(f"tool time {agent.tool_time_s}")
    parts.append(f"tool results {agent.tool_result_tokens} tokens")
    if agent.max_context_tokens is not None:
        parts.append(f"context at most {agent.max_context_tokens:,} tokens")
    fan = f"; fan-out {agent.fan_out}" if agent.fan_out is not None else ""
    return "agent tasks: " + ", ".join(parts) + fan


def run_facts(summary: Summary) -> list[str]:
    """``prompt lengths: ...`` and the workload's lines.

    Empty for a summary that recorded no workload and the default source: a
    file written before these fields existed, where the source is a guess.
    """
    workers = []
    if summary.workers_clock_uncertainty_ms is not None:
        workers.append(
            f"workers: {summary.workers} Ray actors send the load (saturation judged per "
            f"worker; clocks matched to ±{summary.workers_clock_uncertainty_ms:.3f} ms)"
        )
    elif summary.workers > 1:
        workers.append(
            f"workers: {summary.workers} processes send the load (saturation judged per worker)"
        )
    mixed = [line] if (line := mix_text(summary)) is not None else []
    if summary.workload is None and summary.prompt_length_source == "approximate":
        return [*workers, *mixed]
    return [
        *workers,
        *mixed,
        "prompt lengths: "
        + (calibration_text(summary.calibration) or source_text(summary.prompt_length_source)),
        *workload_lines(summary.workload),
    ]


#: how each engine's name is written (summary.json keeps the plain key)
_ENGINE_NAMES = {"vllm": "vLLM", "tgi": "TGI", "sglang": "SGLang"}


def calibration_text(cal: PromptCalibration | None) -> str:
    """``server (llama.cpp's POST /tokenize: 1.310 tokens/word + 2.0, chat template counted)``;
    empty without a calibration."""
    if cal is None:
        return ""
    template = "chat template counted" if cal.chat_template else "chat template not counted"
    engine = _ENGINE_NAMES.get(cal.engine, cal.engine)
    return (
        f"server ({engine}'s {cal.endpoint}: {cal.per_word:.3f} tokens/word "
        f"+ {cal.overhead:.1f}, {template})"
    )


def short_output_warning(step: StepSummary) -> str | None:
    """Full outputs were forced (ignore_eos, min_tokens) and some requests still ended short."""
    t = step.tokens
    if not (t.full_output_expected and t.short_outputs):
        return None
    return (
        f"{t.short_outputs} of {step.requests.ok} outputs ended before max_tokens although "
        "the request body forces full outputs"
    )


def step_warnings(step: StepSummary) -> list[str]:
    """The step's own warnings, and the short-output warning when they do not carry one.

    The metrics add a short-output line of their own (it names ``max_tokens``);
    a summary built elsewhere may not, so the report adds its line then.
    """
    out = list(step.warnings)
    short = short_output_warning(step)
    if short is not None and not any("max_tokens" in w for w in out):
        out.append(short)
    return out


def ramp_text(step: StepSummary) -> str:
    """``, 12 ramp-up`` after the warm-up count, or nothing."""
    return f", {step.requests.ramp} ramp-up" if step.requests.ramp else ""


def cancelled_text(step: StepSummary) -> str:
    """``, 20 cancelled by client (10.0%)`` after the failed count (workload.cancel), or
    nothing."""
    r = step.requests
    if not r.cancelled_by_client:
        return ""
    return f", {r.cancelled_by_client} cancelled by client ({r.cancelled_by_client_share:.1%})"
