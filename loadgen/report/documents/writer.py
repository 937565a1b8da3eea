"""Every output file of a results directory, (re)written from what the run saved.

Owns :func:`write_reports`: reads ``summary.json``, ``records.jsonl``,
``telemetry.jsonl`` and ``scenario.yaml`` (each but the summary optional) and
writes ``steps.csv``, ``plots/*.png``, ``report.md`` and ``report.html``.
The runner calls it at the end of every run, ``loadgen report`` on demand; it
works on an interrupted run and on steps without a successful request. Each
file is replaced atomically.
"""

from __future__ import annotations

from pathlib import Path

import pydantic
import yaml

from loadgen.report.step_table import render_steps_csv
from loadgen.results import load_summary, read_run_samples, read_telemetry, write_atomic
from loadgen.scenario import Scenario

__all__ = ["REPORT_FILES", "write_reports"]

#: What write_reports writes, besides plots/*.png.
REPORT_FILES = ("steps.csv", "report.md", "report.html")


def _read_scenario(path: Path) -> Scenario | None:
    """The resolved scenario the run saved; None when it is absent or does not validate
    (a file from another loadgen version): the report then leaves out what it told."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        return Scenario.model_validate(data)
    except (OSError, UnicodeDecodeError, yaml.YAMLError, pydantic.ValidationError):
        return None


def write_reports(results_dir: Path) -> list[Path]:
    """(Re)write steps.csv, plots/*.png, report.md and report.html; return their paths."""
    from loadgen.report.documents.html import render_html
    from loadgen.report.documents.markdown import build_document, render_markdown
    from loadgen.report.plots.figures import write_plots

    summary = load_summary(results_dir)
    samples = read_run_samples(results_dir, summary)
    telemetry = read_telemetry(results_dir / "telemetry.jsonl")
    scenario = _read_scenario(results_dir / "scenario.yaml")

    written = [write_atomic(results_dir / "steps.csv", render_steps_csv(summary))]
    plots, notes = write_plots(summary, samples, telemetry, results_dir / "plots")
    written += plots.values()
    rel = {name: path.relative_to(results_dir).as_posix() for name, path in plots.items()}
    blocks = build_document(summary, scenario, rel, notes)
    written.append(write_atomic(results_dir / "report.md", render_markdown(blocks)))
    title = f"loadgen report: {summary.name}"
    html = render_html(blocks, results_dir, title)
    written.append(write_atomic(results_dir / "report.html", html))
    return written
