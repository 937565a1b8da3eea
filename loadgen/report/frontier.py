"""The frontier point of a step as every output writes it.

Owns the step's :func:`section`: steps.csv's ``frontier_*`` columns (after the cost
columns, beside the USD figure) and the ``frontier:`` line (:func:`step_text`) in
the console and report.md. The formulas are
:mod:`loadgen.metrics.frontier`'s; :mod:`loadgen.report.plots.frontier_view` has the
run's points and front.
"""

from __future__ import annotations

from typing import Any

from loadgen.report.section import Section
from loadgen.summary import FrontierPoint, StepSummary

__all__ = ["section", "step_text"]


def section(step: StepSummary) -> Section | None:
    """The step's frontier point: its line (when it has interactivity) and its columns;
    None without a point (a pooling step)."""
    f = step.frontier
    if f is None:
        return None
    text = step_text(step)
    return Section(
        "frontier", () if text is None else (text,), fields=_csv_fields(f), late_columns=True
    )


def _csv_fields(f: FrontierPoint) -> dict[str, Any]:
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
