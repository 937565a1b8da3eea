"""A pooling run's overview table and curve points (embeddings, rerank): loadgen.report.pooling."""

from __future__ import annotations

from collections.abc import Callable

from loadgen.report.blocks import Table, num, verdict_cell
from loadgen.report.plots.series import curve_steps, tail_stat
from loadgen.results import inputs_word
from loadgen.summary import StepSummary, Summary
from loadgen.vocab import metric_label

__all__ = ["curve_points", "overview"]


def overview(
    summary: Summary, steps: list[StepSummary], label: Callable[[StepSummary], str]
) -> Table:
    """The overview table of a pooling run: throughput in requests, inputs and input tokens,
    E2E p50 and its tail (the percentile the SLA bounds, else p99)."""
    tail = tail_stat(summary, "e2e_ms")
    word = inputs_word(steps[0]) if steps else "inputs"
    header = (
        "step",
        "load",
        "ok / failed",
        "error rate (%)",
        "requests (req/s)",
        "goodput (req/s)",
        f"{word} (/s)",
        "input (tok/s)",
        "E2E p50 (ms)",
        f"{metric_label('e2e_ms', tail)} (ms)",
        "SLA",
    )
    rows = tuple(
        (
            str(s.index),
            ("probe: " if s.role == "probe" else "") + label(s),
            f"{s.requests.ok} / {s.requests.failed}",
            f"{100 * s.requests.error_rate:.2f}",
            num(s.throughput.requests_per_s),
            num(s.throughput.goodput_requests_per_s),
            num(s.throughput.inputs_per_s, 1),
            num(s.throughput.input_tokens_per_s, 0),
            num(s.e2e_ms.p50),
            num(getattr(s.e2e_ms, tail)),
            verdict_cell(s.standing),
        )
        for s in steps
    )
    return Table(header, rows)


def curve_points(summary: Summary, stat: str, x: str) -> list[tuple[float, float]]:
    """(requests/s or inputs/s, E2E ``stat`` in ms) of each step on the curve that has both."""
    out = []
    for s in curve_steps(summary):
        xv = s.throughput.requests_per_s if x == "requests" else s.throughput.inputs_per_s
        yv = getattr(s.e2e_ms, stat)
        if xv is not None and yv is not None:
            out.append((float(xv), float(yv)))
    return out
