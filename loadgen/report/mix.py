"""The per-model breakdown as every output shows it (a model mix: ``target.models``).

As :mod:`loadgen.report.endpoints` for endpoints: the step's :func:`section`
(the report table's columns, :data:`HEADER` and :func:`cells`; the console's
compact lines; the ``steps.csv`` columns, named ``model<i>_<field>`` in
target.models' order, the name in ``model<i>_name``), and the run header's
phrase (:func:`mix_text`). A run of one model has no breakdown: no section, no
phrase, and outputs read as before.

The figures after the name are :mod:`loadgen.report.parts`, shared with endpoints.
"""

from __future__ import annotations

from loadgen.report import parts
from loadgen.report.pooling import kept_columns, part_table
from loadgen.report.section import Breakdown, Section
from loadgen.summary import ModelStats, StepSummary, Summary

__all__ = ["CSV_FIELDS", "HEADER", "cells", "mix_text", "section"]

#: report.md / report.html: the breakdown table's header
HEADER = ("model", "share (asked / sent)", *parts.HEADER)

#: ``steps.csv``: the columns each model ``i`` adds, as ``model<i>_<name>``
CSV_FIELDS = ("name", "weight_share", "request_share", *parts.CSV_FIELDS)


def mix_text(summary: Summary) -> str | None:
    """``model mix: base, sql-lora`` for the run header; None for one model."""
    if not summary.models:
        return None
    return f"model mix: {', '.join(summary.models)} (each step broken down per model)"


def cells(m: ModelStats) -> tuple[str, ...]:
    """One row of the report's breakdown table, in :data:`HEADER`'s order."""
    share = f"{100 * m.weight_share:.0f}% / {100 * m.request_share:.1f}%"
    return (m.model, share, *parts.cells(m))


def _console_lines(step: StepSummary) -> list[str]:
    """Under the step's table: one compact line per model (at most 80 columns; a name longer
    than 12 is cut, report.md has it whole); none for one model."""
    if not step.models:
        return []
    widths = (5, 7, 8, 9, 9, 8, 9, 11)
    names = (*parts.CONSOLE_NAMES, "asked/sent")
    keep = kept_columns(step, names)  # pooling: no token timing
    lines = [f"  {'model':<12}" + "".join(f"{names[i]:>{widths[i]}}" for i in keep)]
    for m in step.models:
        share = f"{100 * m.weight_share:.0f}%/{100 * m.request_share:.0f}%"
        row = (*parts.console_values(m), share)
        name = m.model if len(m.model) <= 12 else m.model[:11] + "…"
        lines.append(f"  {name:<12}" + "".join(f"{row[i]:>{widths[i]}}" for i in keep))
    return lines


def _csv_fields(step: StepSummary) -> dict[str, object]:
    """``model<i>_<field>`` for each model and :data:`CSV_FIELDS` (empty: no breakdown)."""
    out: dict[str, object] = {}
    for i, m in enumerate(step.models or ()):
        values: dict[str, object] = {
            "name": m.model,
            "weight_share": m.weight_share,
            "request_share": m.request_share,
            **parts.csv_values(m),
        }
        out.update({f"model{i}_{k}": values[k] for k in CSV_FIELDS})
    return out


def section(step: StepSummary) -> Section | None:
    """The step's per-model breakdown; None for one model."""
    if not step.models:
        return None
    rows = tuple(cells(m) for m in step.models)
    return Section(
        "models",
        console=tuple(_console_lines(step)),
        table=Breakdown(*part_table(step, HEADER, rows)),
        fields=_csv_fields(step),
    )
