"""Outputs: console tables, progress, files and plots, rendered from the results.

Owns every file and line a person reads, in three rooms and the pieces they
share: the terminal (``terminal``: the console's step tables and verdict,
the live progress line and the live view), the documents (``documents``:
report.md and report.html, every file of a results directory rewritten,
``loadgen compare``'s folder) and the plots (``plots``: each plot's series,
then its figure). At the top: steps.csv (``csv_out``), what each feature
says in every output (``facts``, ``sessions``, ``validity``, ``endpoints``,
``mix``, ``pooling``, ...), and what ``--repeat`` and compare's environment
check decided, rendered (``repeats``, ``environment``); ``commands`` holds
``loadgen report`` and ``loadgen compare``. Never reads the clock (the run
passes the time in), never sends load, never judges a regression (that is
:mod:`loadgen.compare`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loadgen.lazy import lazy_exports

if TYPE_CHECKING:
    from loadgen.report.commands import compare, report
    from loadgen.report.csv_out import CI_COLUMNS, LATENCY_COLUMNS, SPEC_DECODE_COLUMNS, steps_table
    from loadgen.report.documents.writer import write_reports
    from loadgen.report.repeats import render_console, write_spread
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
    "CI_COLUMNS": "csv_out",
    "GpuNow": "terminal.live_state",
    "HealthNow": "terminal.live_state",
    "LATENCY_COLUMNS": "csv_out",
    "LiveView": "terminal.live",
    "Progress": "terminal.progress",
    "SPEC_DECODE_COLUMNS": "csv_out",
    "ServerNow": "terminal.live_state",
    "compare": "commands",
    "format_run_header": "terminal.console",
    "format_step": "terminal.console",
    "format_verdict": "terminal.console",
    "render_console": "repeats",
    "report": "commands",
    "step_warning_lines": "terminal.console",
    "steps_table": "csv_out",
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
    "compare",
    "format_run_header",
    "format_step",
    "format_verdict",
    "render_console",
    "report",
    "step_warning_lines",
    "steps_table",
    "write_reports",
    "write_spread",
]

if not TYPE_CHECKING:  # mypy reads the imports above, and refuses a name not among them
    __getattr__ = lazy_exports(__name__, _EXPORTS)
