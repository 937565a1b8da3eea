"""The per-endpoint breakdown as every output shows it (several target URLs or mock replicas).

Owns :func:`target_text` (what the run was sent to, in one phrase) and the
step's :func:`section`: the breakdown's table for report.md and report.html
(:data:`HEADER`, :func:`cells`), its compact console lines and its
``steps.csv`` columns (``endpoint<i>_<field>``). A run of one endpoint has no
breakdown: no section, and outputs read as before.

The figures after the URL are :mod:`loadgen.report.parts`, shared with the model mix.
"""

from __future__ import annotations

from loadgen.report import parts
from loadgen.report.pooling import kept_columns, part_table
from loadgen.report.section import Breakdown, Section
from loadgen.summary import EndpointStats, StepSummary, Summary

__all__ = ["CSV_FIELDS", "HEADER", "cells", "section", "target_text"]

#: URLs named in :func:`target_text` before it says how many more there are
_NAMED = 4

#: report.md / report.html: the breakdown table's header
HEADER = ("endpoint", "URL", *parts.HEADER)

#: ``steps.csv``: the columns each endpoint ``i`` adds, as ``endpoint<i>_<name>``
CSV_FIELDS = ("url", *parts.CSV_FIELDS)


def target_text(summary: Summary) -> str:
    """``http://host:8000``, or ``2 endpoints (routing round_robin): URL, URL``."""
    urls = summary.endpoints
    if not urls:
        return summary.target_url
    named = ", ".join(urls[:_NAMED]) + (
        f", +{len(urls) - _NAMED} more" if len(urls) > _NAMED else ""
    )
    return f"{len(urls)} endpoints (routing {summary.routing}): {named}"


def cells(e: EndpointStats) -> tuple[str, ...]:
    """One row of the report's breakdown table, in :data:`HEADER`'s order."""
    return (str(e.endpoint), e.url, *parts.cells(e))


def _console_lines(step: StepSummary) -> list[str]:
    """Under the step's table: one compact line per endpoint; none for one endpoint."""
    if not step.endpoints:
        return []
    names = (*parts.CONSOLE_NAMES, "E2E p99")
    keep = kept_columns(step, names)  # pooling: no token timing
    head = [names[i] for i in keep]
    lines = [f"  {'endpoint':<10}" + "".join(f"{h:>10}" for h in head) + "  url"]
    for e in step.endpoints:
        row = (*parts.console_values(e), parts.num(e.e2e_ms.p99))
        values = [row[i] for i in keep]
        lines.append(f"  {'#' + str(e.endpoint):<10}" + "".join(f"{v:>10}" for v in values))
        lines[-1] += f"  {e.url}"
    return lines


def _csv_fields(step: StepSummary) -> dict[str, object]:
    """``endpoint<i>_<field>`` for each endpoint and :data:`CSV_FIELDS` (empty: no breakdown)."""
    out: dict[str, object] = {}
    for e in step.endpoints or ():
        values: dict[str, object] = {"url": e.url, **parts.csv_values(e)}
        out.update({f"endpoint{e.endpoint}_{k}": values[k] for k in CSV_FIELDS})
    return out


def section(step: StepSummary) -> Section | None:
    """The step's per-endpoint breakdown; None for one endpoint. A pooling step's table
    and console lines show no token timing (:func:`loadgen.report.pooling.part_table`)."""
    if not step.endpoints:
        return None
    rows = tuple(cells(e) for e in step.endpoints)
    return Section(
        "endpoints",
        console=tuple(_console_lines(step)),
        table=Breakdown(*part_table(step, HEADER, rows)),
        fields=_csv_fields(step),
    )
