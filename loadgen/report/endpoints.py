"""The per-endpoint breakdown as every output shows it (several target URLs or mock replicas).

Owns :func:`target_text` (what the run was sent to, in one phrase), the
breakdown's columns (:data:`HEADER`, :func:`cells`) shared by report.md and
report.html, its compact console lines (:func:`console_lines`) and its
``steps.csv`` columns (:func:`csv_fields`). A run of one endpoint has no
breakdown: every function then returns nothing and outputs read as before.

Imports: loadgen.summary, loadgen.report.pooling.
"""

from __future__ import annotations

from loadgen.report.pooling import keep_column
from loadgen.summary import EndpointStats, StepSummary, Summary

__all__ = ["CSV_FIELDS", "HEADER", "cells", "console_lines", "csv_fields", "target_text"]

#: URLs named in :func:`target_text` before it says how many more there are
_NAMED = 4

#: report.md / report.html: the breakdown table's header
HEADER = (
    "endpoint",
    "URL",
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

#: ``steps.csv``: the columns each endpoint ``i`` adds, as ``endpoint<i>_<name>``
CSV_FIELDS = (
    "url",
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


def target_text(summary: Summary) -> str:
    """``http://host:8000``, or ``2 endpoints (routing round_robin): URL, URL``."""
    urls = summary.endpoints
    if not urls:
        return summary.target_url
    named = ", ".join(urls[:_NAMED]) + (
        f", +{len(urls) - _NAMED} more" if len(urls) > _NAMED else ""
    )
    return f"{len(urls)} endpoints (routing {summary.routing}): {named}"


def _ms(v: float | None) -> str:
    return "–" if v is None else f"{v:,.2f}"


def cells(e: EndpointStats) -> tuple[str, ...]:
    """One row of the report's breakdown table, in :data:`HEADER`'s order."""
    r, t = e.requests, e.throughput
    return (
        str(e.endpoint),
        e.url,
        f"{r.ok} / {r.failed}",
        f"{100 * r.error_rate:.2f}",
        f"{t.requests_per_s:,.2f}",
        f"{t.output_tokens_per_s:,.0f}",
        _ms(e.ttft_ms.p50),
        _ms(e.ttft_ms.p99),
        _ms(e.itl_ms.p50),
        _ms(e.itl_ms.p99),
        _ms(e.e2e_ms.p50),
        _ms(e.e2e_ms.p99),
    )


def _num(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def console_lines(step: StepSummary) -> list[str]:
    """Under the step's table: one compact line per endpoint; none for one endpoint."""
    if not step.endpoints:
        return []
    names = ("ok", "failed", "req/s", "TTFT p50", "TTFT p99", "ITL p50", "E2E p50", "E2E p99")
    keep = [i for i, h in enumerate(names) if keep_column(step, h)]  # pooling: no token timing
    head = [names[i] for i in keep]
    lines = [f"  {'endpoint':<10}" + "".join(f"{h:>10}" for h in head) + "  url"]
    for e in step.endpoints:
        row = (
            str(e.requests.ok),
            str(e.requests.failed),
            _num(e.throughput.requests_per_s),
            _num(e.ttft_ms.p50),
            _num(e.ttft_ms.p99),
            _num(e.itl_ms.p50),
            _num(e.e2e_ms.p50),
            _num(e.e2e_ms.p99),
        )
        values = [row[i] for i in keep]
        lines.append(f"  {'#' + str(e.endpoint):<10}" + "".join(f"{v:>10}" for v in values))
        lines[-1] += f"  {e.url}"
    return lines


def csv_fields(step: StepSummary) -> dict[str, object]:
    """``endpoint<i>_<field>`` for each endpoint and :data:`CSV_FIELDS` (empty: no breakdown)."""
    out: dict[str, object] = {}
    for e in step.endpoints or ():
        r, t = e.requests, e.throughput
        values: dict[str, object] = {
            "url": e.url,
            "requests_total": r.total,
            "requests_ok": r.ok,
            "requests_failed": r.failed,
            "error_rate": r.error_rate,
            "requests_per_s": t.requests_per_s,
            "output_tokens_per_s": t.output_tokens_per_s,
            "ttft_ms_p50": e.ttft_ms.p50,
            "ttft_ms_p99": e.ttft_ms.p99,
            "itl_ms_p50": e.itl_ms.p50,
            "itl_ms_p99": e.itl_ms.p99,
            "tpot_ms_p50": e.tpot_ms.p50,
            "e2e_ms_p50": e.e2e_ms.p50,
            "e2e_ms_p99": e.e2e_ms.p99,
        }
        out.update({f"endpoint{e.endpoint}_{k}": values[k] for k in CSV_FIELDS})
    return out
