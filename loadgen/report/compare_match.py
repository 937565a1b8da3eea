"""The steps of compared runs matched to each other, and the comparison tables.

Owns the matching of steps across runs (by load mode and the nearest load
value within a relative tolerance: rate 4 in one run with rate 4.1 in the
other, an ``auto`` sweep's concurrency probe only with a probe), and the
comparison tables (each metric for each run and its relative difference from
the first run, the baseline) with their plain-text layout for the terminal.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from loadgen.report.blocks import Table
from loadgen.report.console import load_label
from loadgen.report.csv_out import load_value
from loadgen.report.gate import step_value
from loadgen.report.pooling_compare import table_metrics
from loadgen.summary import StepSummary

if TYPE_CHECKING:
    from loadgen.report.compare_runs import Run

__all__ = [
    "MATCH_TOLERANCE",
    "TABLE_METRICS",
    "comparison_tables",
    "format_table",
    "matched_steps",
]

#: (field path, table title, unit) of every metric the comparison tables show.
TABLE_METRICS = (
    ("ttft_ms.p50", "TTFT p50", "ms"),
    ("ttft_ms.p99", "TTFT p99", "ms"),
    ("tpot_ms.p50", "TPOT p50", "ms"),
    ("tpot_ms.p99", "TPOT p99", "ms"),
    ("itl_ms.p50", "ITL p50", "ms"),
    ("itl_ms.p99", "ITL p99", "ms"),
    ("e2e_ms.p50", "E2E p50", "ms"),
    ("e2e_ms.p99", "E2E p99", "ms"),
    ("throughput.requests_per_s", "requests/s", "req/s"),
    ("throughput.goodput_requests_per_s", "goodput", "req/s"),
    ("throughput.output_tokens_per_s", "output tokens/s", "tok/s"),
    ("requests.error_rate", "error rate", "%"),
)
#: Two loads match when they differ by at most this fraction of the larger one.
MATCH_TOLERANCE = 0.1


def _distance(a: StepSummary, b: StepSummary) -> float | None:
    """How far apart two steps' loads are, as a fraction of the larger; None: never matched
    (another mode, a probe with a step, a load without a value)."""
    if a.role != b.role or a.load.mode != b.load.mode:
        return None
    va, vb = load_value(a), load_value(b)
    if va is None or vb is None:
        return None
    return abs(va - vb) / (max(abs(va), abs(vb)) or 1.0)


def _nearest(
    base: Sequence[StepSummary], other: Sequence[StepSummary], tolerance: float
) -> dict[int, StepSummary]:
    """Baseline position -> the other run's step at the nearest load within ``tolerance``;
    each step is matched once, the closest pairs first (then run order)."""
    pairs = sorted(
        (d, i, j)
        for i, a in enumerate(base)
        for j, b in enumerate(other)
        if (d := _distance(a, b)) is not None and d <= tolerance
    )
    out: dict[int, StepSummary] = {}
    used: set[int] = set()
    for _d, i, j in pairs:
        if i not in out and j not in used:
            out[i] = other[j]
            used.add(j)
    return out


def _label(steps: Sequence[StepSummary | None]) -> str:
    """The baseline's load, and ``~`` each other load matched to it: ``rate 4 req/s ~ 4.1``."""
    labels: list[str] = []
    for s in steps:
        if s is not None:
            label = ("probe " if s.role == "probe" else "") + load_label(s)
            if label not in labels:
                labels.append(label)
    return " ~ ".join(labels)


def matched_steps(
    runs: Sequence[Run], *, tolerance: float = MATCH_TOLERANCE
) -> list[tuple[str, list[StepSummary | None]]]:
    """(load label, the step of each run or None) for each step of the baseline some other
    run has a match for: same mode and role (a probe only with a probe), the nearest load
    value within ``tolerance`` (a fraction of the larger load). Probes first, then the
    baseline's steps in load order.
    """
    base = sorted(
        runs[0].summary.steps,
        key=lambda s: (s.role != "probe", load_value(s) is None, load_value(s) or 0.0, s.index),
    )
    found = [_nearest(base, run.summary.steps, tolerance) for run in runs[1:]]
    out = []
    for i, b in enumerate(base):
        row: list[StepSummary | None] = [b, *(f.get(i) for f in found)]
        if any(s is not None for s in row[1:]):
            out.append((_label(row), row))
    return out


def _rel(base: float | None, new: float | None) -> str:
    if base is None or new is None:
        return "–"
    if base == 0:
        return "=" if new == 0 else "n/a"
    return f"{(new - base) / abs(base) * 100:+.1f}%"


def _fmt(v: float | None, path: str) -> str:
    if v is None:
        return "–"
    return f"{100 * v:.2f}%" if path == "requests.error_rate" else f"{v:,.2f}"


def comparison_tables(
    runs: Sequence[Run], *, tolerance: float = MATCH_TOLERANCE
) -> list[tuple[str, Table]]:
    """Per metric: rows of load, each run's value, and each later run's change vs the baseline
    (a pooling run's figures when every run is one: no token timing)."""
    matches = matched_steps(runs, tolerance=tolerance)
    tables = []
    for path, title, unit in table_metrics([r.summary for r in runs], TABLE_METRICS):
        header = (
            "load",
            *(f"{r.name} ({unit})" for r in runs),
            *(f"Δ {r.name} (%)" for r in runs[1:]),
        )
        rows = []
        for label, steps in matches:
            values = [step_value(s, path) if s is not None else None for s in steps]
            rows.append(
                (
                    label,
                    *(_fmt(v, path) for v in values),
                    *(_rel(values[0], v) for v in values[1:]),
                )
            )
        tables.append((f"{title} ({unit})", Table(header, tuple(rows))))
    return tables


def format_table(table: Table) -> str:
    """Plain-text columns for the terminal."""
    rows = [table.header, *table.rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(table.header))]
    lines = []
    for row in rows:
        cells = zip(row, widths, strict=True)
        lines.append(
            "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(cells))
        )
    return "\n".join(lines)
