"""What a step's breakdown into parts (endpoints, models) shows the same way for either.

:mod:`loadgen.report.endpoints` and :mod:`loadgen.report.mix` name the part
(its index and URL, or its model and share) and lay out their console lines;
the figures after the name are these: the report table's columns
(:data:`HEADER`, :func:`cells`), the console's columns (:data:`CONSOLE_NAMES`,
:func:`console_values`; a pooling step's are cut by
:func:`loadgen.report.pooling.kept_columns`) and the ``steps.csv`` fields
(:data:`CSV_FIELDS`, :func:`csv_values`).
"""

from __future__ import annotations

from loadgen.summary import EndpointStats, ModelStats

__all__ = [
    "CONSOLE_NAMES",
    "CSV_FIELDS",
    "HEADER",
    "Part",
    "cells",
    "console_values",
    "csv_values",
    "num",
]

#: one part of a step: an endpoint's share or a model's
Part = EndpointStats | ModelStats

#: report.md / report.html: a breakdown table's columns after the part's own
HEADER = (
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

#: ``steps.csv``: a part's fields after its own (``endpoint<i>_<name>``, ``model<i>_<name>``)
CSV_FIELDS = (
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

#: the console: a part's compact line's columns before its own last one
CONSOLE_NAMES = ("ok", "failed", "req/s", "TTFT p50", "TTFT p99", "ITL p50", "E2E p50")


def _ms(v: float | None) -> str:
    return "–" if v is None else f"{v:,.2f}"


def cells(p: Part) -> tuple[str, ...]:
    """A part's report cells in :data:`HEADER`'s order."""
    r, t = p.requests, p.throughput
    return (
        f"{r.ok} / {r.failed}",
        f"{100 * r.error_rate:.2f}",
        f"{t.requests_per_s:,.2f}",
        f"{t.output_tokens_per_s:,.0f}",
        _ms(p.ttft_ms.p50),
        _ms(p.ttft_ms.p99),
        _ms(p.itl_ms.p50),
        _ms(p.itl_ms.p99),
        _ms(p.e2e_ms.p50),
        _ms(p.e2e_ms.p99),
    )


def num(v: float | None) -> str:
    """A console figure: ``12.34``, ``-`` for none."""
    return "-" if v is None else f"{v:.2f}"


def console_values(p: Part) -> tuple[str, ...]:
    """A part's console figures in :data:`CONSOLE_NAMES`' order."""
    return (
        str(p.requests.ok),
        str(p.requests.failed),
        num(p.throughput.requests_per_s),
        num(p.ttft_ms.p50),
        num(p.ttft_ms.p99),
        num(p.itl_ms.p50),
        num(p.e2e_ms.p50),
    )


def csv_values(p: Part) -> dict[str, object]:
    """A part's :data:`CSV_FIELDS`, by field."""
    r, t = p.requests, p.throughput
    return {
        "requests_total": r.total,
        "requests_ok": r.ok,
        "requests_failed": r.failed,
        "error_rate": r.error_rate,
        "requests_per_s": t.requests_per_s,
        "output_tokens_per_s": t.output_tokens_per_s,
        "ttft_ms_p50": p.ttft_ms.p50,
        "ttft_ms_p99": p.ttft_ms.p99,
        "itl_ms_p50": p.itl_ms.p50,
        "itl_ms_p99": p.itl_ms.p99,
        "tpot_ms_p50": p.tpot_ms.p50,
        "e2e_ms_p50": p.e2e_ms.p50,
        "e2e_ms_p99": p.e2e_ms.p99,
    }
