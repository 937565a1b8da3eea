"""Outputs: console tables, progress, files and plots, rendered from the results.

Owns every file and line a person reads, in three rooms and the pieces they
share: the terminal (``terminal``: the console's step tables and verdict,
the live progress line and the live view), the documents (``documents``:
report.md and report.html, every file of a results directory rewritten,
``loadgen compare``'s folder) and the plots (``plots``: each plot's series,
then its figure). At the top: what each feature says of a step, one
section each (``section`` the type; ``sessions``, ``validity``, ``endpoints``,
``mix``, ``cache``, ``frontier``, ...; ``sections`` their one ordered list,
which every writer iterates), the flat step table that steps.csv, Parquet and
MLflow share (``step_table``), the run header's words (``facts``), and what
``--repeat`` and compare's environment check decided, rendered (``repeats``,
``environment``). Never reads the clock (the run passes the time in), never sends
load, never judges a regression (that is :mod:`loadgen.compare`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loadgen.lazy import lazy_exports

if TYPE_CHECKING:
    from loadgen.report.documents.comparison import (
        comparison_tables,
        format_table,
        write_comparison,
    )
    from loadgen.report.documents.writer import write_reports
    from loadgen.report.environment import environment_table, hardware_warnings
    from loadgen.report.plots.compare_frontier import best_lines, compare_fronts
    from loadgen.report.repeats import render_console, write_spread
    from loadgen.report.spec_decode import SPEC_DECODE_COLUMNS
    from loadgen.report.step_table import CI_COLUMNS, LATENCY_COLUMNS, steps_table
    from loadgen.report.terminal.console import (
        format_run_header,
        format_step,
        format_verdict,
        step_warning_lines,
    )
    from loadgen.report.terminal.live import LiveView
    from loadgen.report.terminal.live_state import GpuNow, HealthNow, ServerNow
    from loadgen.report.terminal.progress import Progress

_EXPORTS = {
    "CI_COLUMNS": "step_table",
    "GpuNow": "terminal.live_state",
    "HealthNow": "terminal.live_state",
    "LATENCY_COLUMNS": "step_table",
    "LiveView": "terminal.live",
    "Progress": "terminal.progress",
    "SPEC_DECODE_COLUMNS": "spec_decode",
    "ServerNow": "terminal.live_state",
    "best_lines": "plots.compare_frontier",
    "compare_fronts": "plots.compare_frontier",
    "comparison_tables": "documents.comparison",
    "environment_table": "environment",
    "format_run_header": "terminal.console",
    "format_step": "terminal.console",
    "format_table": "documents.comparison",
    "format_verdict": "terminal.console",
    "hardware_warnings": "environment",
    "render_console": "repeats",
    "step_warning_lines": "terminal.console",
    "steps_table": "step_table",
    "write_comparison": "documents.comparison",
    "write_reports": "documents.writer",
    "write_spread": "repeats",
}

__all__ = [
    "CI_COLUMNS",
    "LATENCY_COLUMNS",
    "SPEC_DECODE_COLUMNS",
    "GpuNow",
    "HealthNow",
    "LiveView",
    "Progress",
    "ServerNow",
    "best_lines",
    "compare_fronts",
    "comparison_tables",
    "environment_table",
    "format_run_header",
    "format_step",
    "format_table",
    "format_verdict",
    "hardware_warnings",
    "render_console",
    "step_warning_lines",
    "steps_table",
    "write_comparison",
    "write_reports",
    "write_spread",
]

if not TYPE_CHECKING:  # mypy reads the imports above, and refuses a name not among them
    __getattr__ = lazy_exports(__name__, _EXPORTS)
