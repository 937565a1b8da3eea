"""``loadgen compare``: runs side by side, overlay plots, and the regression gate.

Owns the matching of steps across runs (by load mode and value: concurrency
16 in one run is compared with concurrency 16 in the other), the comparison
tables (each metric for each run and its relative difference from the first
run, the baseline), the overlay plots and ``comparison.md`` / ``comparison.html``.
The gate's rule lives in :mod:`loadgen.report.gate`.

Imports: loadgen.summary, loadgen.report.* (matplotlib lazily, through figures).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from loadgen.report.blocks import Block, Figures, Heading, Items, Table, Text
from loadgen.report.console import load_label
from loadgen.report.csv_out import load_value
from loadgen.report.gate import Gate, GateResult, evaluate_gate, step_value
from loadgen.report.markdown import render_markdown
from loadgen.report.plots import Series, load_axis_label, load_x
from loadgen.report.samples import RunSamples, read_samples
from loadgen.report.writer import load_summary
from loadgen.summary import StepSummary, Summary
from loadgen.vocab import CURVE_STATS, metric_label

__all__ = [
    "TABLE_METRICS",
    "Run",
    "comparison_tables",
    "default_out_dir",
    "format_table",
    "load_runs",
    "matched_steps",
    "overlay_series",
    "run_gates",
    "throughput_overlay",
    "write_comparison",
]

#: (field path, table title) of every metric the comparison tables show.
TABLE_METRICS = (
    ("ttft_ms.p50", "TTFT p50 (ms)"),
    ("ttft_ms.p99", "TTFT p99 (ms)"),
    ("tpot_ms.p50", "TPOT p50 (ms)"),
    ("tpot_ms.p99", "TPOT p99 (ms)"),
    ("itl_ms.p50", "ITL p50 (ms)"),
    ("itl_ms.p99", "ITL p99 (ms)"),
    ("e2e_ms.p50", "E2E p50 (ms)"),
    ("e2e_ms.p99", "E2E p99 (ms)"),
    ("throughput.requests_per_s", "requests/s"),
    ("throughput.goodput_requests_per_s", "goodput requests/s"),
    ("throughput.output_tokens_per_s", "output tokens/s"),
    ("requests.error_rate", "error rate"),
)
OVERLAY_METRICS = ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms")


@dataclass(frozen=True, slots=True)
class Run:
    name: str
    path: Path
    summary: Summary
    samples: RunSamples | None


def load_runs(paths: Sequence[Path]) -> list[Run]:
    """Each results directory's summary and samples; names are the folder names, made unique."""
    runs: list[Run] = []
    seen: set[str] = set()
    for i, path in enumerate(paths):
        summary = load_summary(path)
        name = path.resolve().name or f"run{i + 1}"
        if name in seen:
            name = f"{name}#{i + 1}"
        seen.add(name)
        answer_steps = [s.index for s in summary.steps if s.ttft_of == "answer"]
        samples = read_samples(path / "records.jsonl", answer_steps)
        runs.append(Run(name, path, summary, samples))
    return runs


def _key(step: StepSummary) -> tuple[str, float | None]:
    return step.load.mode, load_value(step)


def matched_steps(runs: Sequence[Run]) -> list[tuple[str, list[StepSummary | None]]]:
    """(load label, the step of each run or None) for each load of the baseline some other run has.

    The first step of a run at a given load is used (a sla-search may revisit one).
    """
    by_run = []
    for run in runs:
        steps: dict[tuple[str, float | None], StepSummary] = {}
        for s in run.summary.steps:
            steps.setdefault(_key(s), s)
        by_run.append(steps)
    out = []
    for key, base in by_run[0].items():
        row: list[StepSummary | None] = [steps.get(key) for steps in by_run]
        if any(s is not None for s in row[1:]):
            out.append((load_label(base), row))
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


def comparison_tables(runs: Sequence[Run]) -> list[tuple[str, Table]]:
    """Per metric: rows of load, each run's value, and each later run's change vs the baseline."""
    matches = matched_steps(runs)
    header = ("load", *(r.name for r in runs), *(f"Δ {r.name}" for r in runs[1:]))
    tables = []
    for path, title in TABLE_METRICS:
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
        tables.append((title, Table(header, tuple(rows))))
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


def run_gates(
    gates: Sequence[Gate], runs: Sequence[Run], *, seed: int = 0, resamples: int = 1000
) -> list[GateResult]:
    """Every gate on every step the baseline (first run) and the newest (last run) share."""
    base, new = runs[0], runs[-1]
    pairs = [
        (label, (steps[0], steps[-1]))
        for label, steps in matched_steps([base, new])
        if steps[0] is not None and steps[-1] is not None
    ]
    return [
        evaluate_gate(
            gate, label, pair, (base.samples, new.samples), seed=seed, resamples=resamples
        )
        for gate in gates
        for label, pair in pairs
    ]


def overlay_series(runs: Sequence[Run], metric: str) -> Series:
    """x = output tokens/s, y = the metric's p50 and p99 (ms), per run: ``"<run> p99"``."""
    out: Series = {}
    for run in runs:
        for stat in CURVE_STATS:
            points = [
                (s.throughput.output_tokens_per_s, float(v))
                for s in run.summary.steps
                if (v := getattr(getattr(s, metric), stat)) is not None
            ]
            if points:
                out[f"{run.name} {stat}"] = points
    return out


def throughput_overlay(runs: Sequence[Run]) -> Series:
    """x = the load (:func:`loadgen.report.plots.load_x`; a trace: achieved requests/s),
    y = output tokens/s, per run."""
    return {
        run.name: [
            (x, s.throughput.output_tokens_per_s)
            for s in run.summary.steps
            if (x := load_x(s)) is not None
        ]
        for run in runs
    }


def default_out_dir(runs: Sequence[Run]) -> Path:
    names = "-vs-".join(re.sub(r"[^\w.-]+", "_", r.name) for r in runs)
    return Path(f"compare-{names}"[:120])


def _gate_block(results: Sequence[GateResult]) -> list[Block]:
    if not results:
        return []
    failed = [r for r in results if r.failed]
    verdict = f"{len(failed)} regression(s)" if failed else "no regression"
    return [
        Heading("Regression gate"),
        Text(f"newest run vs baseline: {verdict}", "fail" if failed else "pass"),
        Items(tuple(r.message() for r in results), "warn" if failed else ""),
    ]


def write_comparison(
    runs: Sequence[Run], out_dir: Path, results: Sequence[GateResult] = ()
) -> list[Path]:
    """Overlay plots, comparison.md and comparison.html under ``out_dir``; their paths."""
    from loadgen.report.figures import draw_overlay, save_figure
    from loadgen.report.html import render_html

    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    images = []
    for metric in OVERLAY_METRICS:
        series = overlay_series(runs, metric)
        if series:
            title = f"{metric_label(metric, '')} vs throughput"
            fig = draw_overlay(series, title, "output tokens/s", f"{title.split()[0]} (ms)")
            written.append(save_figure(fig, out_dir / f"compare_{metric}.png"))
            images.append((f"compare_{metric}.png", title))
    xlabel = load_axis_label(runs[0].summary)
    fig = draw_overlay(throughput_overlay(runs), "output tokens/s vs load", xlabel, "output tok/s")
    written.append(save_figure(fig, out_dir / "compare_throughput.png"))
    images.append(("compare_throughput.png", "output tokens/s vs load"))
    blocks: list[Block] = [
        Heading(f"loadgen compare: {' vs '.join(r.name for r in runs)}", 1),
        Items(
            tuple(
                f"{r.name}: {r.path} ({r.summary.name}, {len(r.summary.steps)} steps)" for r in runs
            )
        ),
        *_gate_block(results),
        Heading("Overlays"),
        *(Figures(tuple(images[i : i + 2])) for i in range(0, len(images), 2)),
        Heading("Per matching step"),
    ]
    for title, table in comparison_tables(runs):
        blocks += [Heading(title, 3), table]
    md, page = out_dir / "comparison.md", out_dir / "comparison.html"
    md.write_text(render_markdown(blocks), encoding="utf-8")
    page.write_text(render_html(blocks, out_dir, "loadgen compare"), encoding="utf-8")
    return [*written, md, page]
