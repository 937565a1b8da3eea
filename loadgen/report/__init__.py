"""Outputs: console tables, progress, files and plots, made from the results.

Owns every file and line a person reads: the console's step tables and
verdict, the live progress line and the live view on a terminal (``live``,
its state and rolling figures in ``live_state``), summary.json and scenario.yaml on disk,
steps.csv, report.md, report.html, the plots, ``loadgen report`` and
``loadgen compare``.

May import: loadgen.errors, metrics (formulas for per-request samples, the frontier's front),
records (streamed, never all held), redact, scenario (the typed resolved
scenario), summary, vocab. Never the clock (the run passes the time in) nor
any stage that sends load.

Public names: write_reports, read_summary, Progress, format_step, format_verdict.
"""
