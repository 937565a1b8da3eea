"""The frontier point of a step as steps.csv and the facts lines write it.

Owns :func:`csv_fields` (steps.csv's ``frontier_*`` columns) and :func:`step_text`
(the step's ``frontier:`` line in the console and report.md). The formulas are
:mod:`loadgen.metrics.frontier`'s; :mod:`loadgen.report.plots.frontier_view` has the
run's points and front.
"""

from __future__ import annotations

from typing import Any

from loadgen.summary import StepSummary

__all__ = ["csv_fields", "step_text"]


def csv_fields(step: StepSummary) -> dict[str, Any]:
    """steps.csv's ``frontier_*`` columns (only a step with a frontier point has them)."""
    f = step.frontier
    if f is None:
        return {}
    return {
        "frontier_interactivity_tok_s": f.interactivity_tok_s,
        "frontier_tpot_tok_s": f.tpot_tok_s,
        "frontier_gpus": f.gpus,
        "frontier_output_tokens_per_s_per_gpu": f.output_tokens_per_s_per_gpu,
        "frontier_usd_per_million_output_tokens": f.usd_per_million_output_tokens,
    }


def step_text(step: StepSummary) -> str | None:
    """``frontier: 41.2 tok/s per user (1000/TPOT p50 43.0) · 812 output tok/s per GPU
    (2 GPUs, cost.gpus) · 0.41 USD per M output tokens``; None without interactivity."""
    f = step.frontier
    if f is None or f.interactivity_tok_s is None:
        return None
    parts = [f"frontier: {f.interactivity_tok_s:,.1f} tok/s per user"]
    if f.tpot_tok_s is not None:
        parts[0] += f" (1000/TPOT p50 {f.tpot_tok_s:,.1f})"
    if f.output_tokens_per_s_per_gpu is not None:
        parts.append(
            f"{f.output_tokens_per_s_per_gpu:,.0f} output tok/s per GPU ({f.gpus} "
            f"GPU{'' if f.gpus == 1 else 's'}, {f.gpus_from})"
        )
    if f.usd_per_million_output_tokens is not None:
        parts.append(f"{f.usd_per_million_output_tokens:,.2f} USD per M output tokens")
    return " · ".join(parts)
