"""The per-model breakdown as every output shows it (a model mix: ``target.models``).

As :mod:`loadgen.report.endpoints` for endpoints: the report table's columns
(:data:`HEADER`, :func:`cells`), the console's compact lines
(:func:`console_lines`), the ``steps.csv`` columns (:func:`csv_fields`, named
``model<i>_<field>`` in target.models' order, the name in ``model<i>_name``),
and the run header's phrase (:func:`mix_text`). A run of one model has no
breakdown: every function then returns nothing and outputs read as before.

Imports: loadgen.summary, loadgen.report.pooling.
"""

from __future__ import annotations

from loadgen.report.pooling import keep_column
from loadgen.summary import ModelStats, StepSummary, Summary

__all__ = ["CSV_FIELDS", "HEADER", "cells", "console_lines", "csv_fields", "mix_text"]

#: report.md / report.html: the breakdown table's header
HEADER = (
    "model",
    "share (asked / sent)",
    "ok / failed",
    "error rate (%)",
    "requests (req/s)",
    "output (tok/s)",
    "TTFT p50 (ms)",
    "TTFT p99 (ms)",
    "ITL p50 (ms)",
    "ITL p99 (ms)",
    "E2E p50 (ms)",
    "E2E p99 (ms)",
)

#: ``steps.csv``: the columns each model ``i`` adds, as ``model<i>_<name>``
CSV_FIELDS = (
    "name",
    "weight_share",
    "request_share",
    "requests_total",
    "requests_ok",
    "requests_failed",
    "error_rate",
    "requests_per_s",
    "output_tokens_per_s",
    "ttft_ms_p50",
    "ttft_ms_p99",
    "itl_ms_p50",
    "itl_ms_p99",
    "tpot_ms_p50",
    "e2e_ms_p50",
    "e2e_ms_p99",
)


def mix_text(summary: Summary) -> str | None:
    """``model mix: base, sql-lora`` for the run header; None for one model."""
    if not summary.models:
        return None
    return f"model mix: {', '.join(summary.models)} (each step broken down per model)"


def _ms(v: float | None) -> str:
    return "–" if v is None else f"{v:,.2f}"


def cells(m: ModelStats) -> tuple[str, ...]:
    """One row of the report's breakdown table, in :data:`HEADER`'s order."""
    r, t = m.requests, m.throughput
    return (
        m.model,
        f"{100 * m.weight_share:.0f}% / {100 * m.request_share:.1f}%",
        f"{r.ok} / {r.failed}",
        f"{100 * r.error_rate:.2f}",
        f"{t.requests_per_s:,.2f}",
        f"{t.output_tokens_per_s:,.0f}",
        _ms(m.ttft_ms.p50),
        _ms(m.ttft_ms.p99),
        _ms(m.itl_ms.p50),
        _ms(m.itl_ms.p99),
        _ms(m.e2e_ms.p50),
        _ms(m.e2e_ms.p99),
    )


def _num(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def console_lines(step: StepSummary) -> list[str]:
    """Under the step's table: one compact line per model (at most 80 columns; a name longer
    than 12 is cut, report.md has it whole); none for one model."""
    if not step.models:
        return []
    widths = (5, 7, 8, 9, 9, 8, 9, 11)
    names = ("ok", "failed", "req/s", "TTFT p50", "TTFT p99", "ITL p50", "E2E p50", "asked/sent")
    keep = [i for i, h in enumerate(names) if keep_column(step, h)]  # pooling: no token timing
    lines = [f"  {'model':<12}" + "".join(f"{names[i]:>{widths[i]}}" for i in keep)]
    for m in step.models:
        row = (
            str(m.requests.ok),
            str(m.requests.failed),
            _num(m.throughput.requests_per_s),
            _num(m.ttft_ms.p50),
            _num(m.ttft_ms.p99),
            _num(m.itl_ms.p50),
            _num(m.e2e_ms.p50),
            f"{100 * m.weight_share:.0f}%/{100 * m.request_share:.0f}%",
        )
        name = m.model if len(m.model) <= 12 else m.model[:11] + "…"
        lines.append(f"  {name:<12}" + "".join(f"{row[i]:>{widths[i]}}" for i in keep))
    return lines


def csv_fields(step: StepSummary) -> dict[str, object]:
    """``model<i>_<field>`` for each model and :data:`CSV_FIELDS` (empty: no breakdown)."""
    out: dict[str, object] = {}
    for i, m in enumerate(step.models or ()):
        r, t = m.requests, m.throughput
        values: dict[str, object] = {
            "name": m.model,
            "weight_share": m.weight_share,
            "request_share": m.request_share,
            "requests_total": r.total,
            "requests_ok": r.ok,
            "requests_failed": r.failed,
            "error_rate": r.error_rate,
            "requests_per_s": t.requests_per_s,
            "output_tokens_per_s": t.output_tokens_per_s,
            "ttft_ms_p50": m.ttft_ms.p50,
            "ttft_ms_p99": m.ttft_ms.p99,
            "itl_ms_p50": m.itl_ms.p50,
            "itl_ms_p99": m.itl_ms.p99,
            "tpot_ms_p50": m.tpot_ms.p50,
            "e2e_ms_p50": m.e2e_ms.p50,
            "e2e_ms_p99": m.e2e_ms.p99,
        }
        out.update({f"model{i}_{k}": values[k] for k in CSV_FIELDS})
    return out
