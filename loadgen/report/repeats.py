"""The run-to-run spread of ``loadgen run --repeat N``, written and said.

Owns ``repeats.json`` and ``repeats.md`` beside the repeat folders
(:func:`write_spread`: every repeat's value of each figure, their mean,
standard deviation, min, max and coefficient of variation) and the console's
compact table (:func:`render_console`: per step, the headline figures' mean ±
std and cv; a pooling step's: E2E, requests/s, inputs/s). The spread itself
is decided by :mod:`loadgen.compare.repeats`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from loadgen.compare import RepeatSpread
from loadgen.results import write_atomic

__all__ = ["console_heads", "render_console", "render_markdown", "write_spread"]

_GENERATIVE_HEADS = ("ttft_ms.p99", "itl_ms.p50", "e2e_ms.p50", "throughput.output_tokens_per_s")
_POOLING_HEADS = (
    "e2e_ms.p50",
    "e2e_ms.p99",
    "throughput.requests_per_s",
    "throughput.inputs_per_s",
)


def console_heads(metrics: Sequence[str]) -> tuple[str, ...]:
    """The figures the console's spread line shows of a step whose spread has ``metrics``."""
    return _POOLING_HEADS if "throughput.inputs_per_s" in metrics else _GENERATIVE_HEADS


def render_markdown(s: RepeatSpread) -> str:
    lines = [f"# Run-to-run spread over {s.repeats} repeats", ""]
    for step in s.steps:
        lines += [
            f"## step {step.index} · {step.label}",
            "",
            "| metric | mean | std | min | max | cv | values |",
            "|---|---|---|---|---|---|---|",
        ]
        for m in step.metrics:
            std = "-" if m.std is None else f"{m.std:.3g}"
            cv = "-" if m.cv is None else f"{100 * m.cv:.1f}%"
            values = ", ".join(f"{v:.4g}" for v in m.values)
            lines.append(
                f"| {m.metric} | {m.mean:.4g} | {std} | {m.min:.4g} | {m.max:.4g} | {cv} "
                f"| {values} |"
            )
        lines.append("")
    return "\n".join(lines)


def render_console(s: RepeatSpread) -> str:
    """A compact table: per step, the headline metrics' mean ± std and cv (a pooling step's:
    E2E, requests/s, inputs/s)."""
    lines = [f"spread over {s.repeats} repeats (mean ± std, cv):"]
    for step in s.steps:
        heads = console_heads([m.metric for m in step.metrics])
        cells = []
        for m in step.metrics:
            if m.metric in heads:
                std = f" ± {m.std:.3g}" if m.std is not None else ""
                cv = f" ({100 * m.cv:.1f}%)" if m.cv is not None else ""
                cells.append(f"{m.metric} {m.mean:.4g}{std}{cv}")
        lines.append(f"  step {step.index} · {step.label}: " + "; ".join(cells))
    return "\n".join(lines)


def write_spread(s: RepeatSpread, out_dir: Path) -> list[Path]:
    return [
        write_atomic(out_dir / "repeats.json", s.model_dump_json(indent=2)),
        write_atomic(out_dir / "repeats.md", render_markdown(s)),
    ]
