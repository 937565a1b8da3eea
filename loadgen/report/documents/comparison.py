"""``loadgen compare``'s files: runs side by side, overlay plots, and the gate's conclusions.

Owns the overlay plots (each run's latency and throughput curves on one
panel; pooling runs' on requests/s), the comparison tables (each figure for
each run and its relative change from the first run, the baseline) with
their plain-text layout for the terminal, and ``comparison.md`` /
``comparison.html``. What is compared, and what the gate concludes, is
decided in :mod:`loadgen.compare`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from loadgen.compare import (
    MATCH_TOLERANCE,
    TABLE_METRICS,
    GateResult,
    Run,
    all_pooling,
    conclusions,
    matched_steps,
    profiles_text,
    step_value,
    table_metrics,
)
from loadgen.report.blocks import Block, Figures, Heading, Items, Table, Text
from loadgen.report.documents.markdown import render_markdown
from loadgen.report.environment import environment_table
from loadgen.report.plots.series import Series, curve_steps, load_axis_label, load_x
from loadgen.summary import Summary
from loadgen.vocab import CURVE_STATS, metric_label

__all__ = [
    "comparison_tables",
    "format_table",
    "overlay_series",
    "overlay_x",
    "throughput_overlay",
    "throughput_y",
    "write_comparison",
]

OVERLAY_METRICS = ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms")


def overlay_x(summaries: Sequence[Summary]) -> tuple[str, str]:
    """The latency overlays' x: (the throughput field, its axis label)."""
    if all_pooling(summaries):
        return "requests_per_s", "requests/s"
    return "output_tokens_per_s", "output tokens/s"


def throughput_y(summaries: Sequence[Summary]) -> tuple[str, str, str]:
    """The throughput overlay's y: (the field, its axis label, the figure's title)."""
    if all_pooling(summaries):
        return "requests_per_s", "req/s", "requests/s vs load"
    return "output_tokens_per_s", "output tok/s", "output tokens/s vs load"


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


def overlay_series(runs: Sequence[Run], metric: str) -> Series:
    """x = output tokens/s (pooling runs: requests/s), y = the metric's p50 and p99 (ms), per
    run: ``"<run> p99"``; each run's steps in load order, probes left out
    (:func:`loadgen.report.plots.series.curve_steps`)."""
    out: Series = {}
    x_field, _ = overlay_x([r.summary for r in runs])
    for run in runs:
        for stat in CURVE_STATS:
            points = [
                (float(getattr(s.throughput, x_field) or 0.0), float(v))
                for s in curve_steps(run.summary)
                if (v := getattr(getattr(s, metric), stat)) is not None
            ]
            if points:
                out[f"{run.name} {stat}"] = points
    return out


def throughput_overlay(runs: Sequence[Run]) -> Series:
    """x = the load (:func:`loadgen.report.plots.series.load_x`; a trace: achieved requests/s),
    y = output tokens/s (pooling runs: requests/s), per run."""
    y_field, _, _ = throughput_y([r.summary for r in runs])
    return {
        run.name: [
            (x, float(getattr(s.throughput, y_field) or 0.0))
            for s in curve_steps(run.summary)
            if (x := load_x(s)) is not None
        ]
        for run in runs
    }


def _gate_block(results: Sequence[GateResult]) -> list[Block]:
    if not results:
        return []
    failed = [r for r in results if r.failed]
    verdict = f"{len(failed)} regression(s)" if failed else "no regression"
    return [
        Heading("Regression gate"),
        Text(f"newest run vs baseline: {verdict}", "fail" if failed else "pass"),
        Items(tuple(conclusions(results)), "warn" if failed else ""),
        Heading("Each step", 3),
        Items(tuple(r.message() for r in results), "warn" if failed else ""),
    ]


def write_comparison(
    runs: Sequence[Run],
    out_dir: Path,
    results: Sequence[GateResult] = (),
    *,
    tolerance: float = MATCH_TOLERANCE,
) -> list[Path]:
    """Overlay plots, comparison.md and comparison.html under ``out_dir``; their paths."""
    from loadgen.report.documents.html import render_html
    from loadgen.report.plots.compare_frontier import FRONTS_FILE, FRONTS_TITLE, write_fronts
    from loadgen.report.plots.figstyle import save_figure
    from loadgen.report.plots.figures import draw_overlay

    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    images = []
    profiles = f"metrics profile: {profiles_text(runs)}"
    summaries = [r.summary for r in runs]
    _, x_label = overlay_x(summaries)
    for metric in OVERLAY_METRICS:
        series = overlay_series(runs, metric)
        if series:
            title = f"{metric_label(metric, '')} vs throughput"
            fig = draw_overlay(series, title, x_label, f"{title.split()[0]} (ms)", profiles)
            written.append(save_figure(fig, out_dir / f"compare_{metric}.png"))
            images.append((f"compare_{metric}.png", title))
    xlabel = load_axis_label(runs[0].summary)
    _, y_label, y_title = throughput_y(summaries)
    fig = draw_overlay(throughput_overlay(runs), y_title, xlabel, y_label, profiles)
    written.append(save_figure(fig, out_dir / "compare_throughput.png"))
    images.append(("compare_throughput.png", y_title))
    fronts = write_fronts([r.name for r in runs], summaries, out_dir, profiles)
    if fronts is not None:
        written.append(fronts[0])
        images.append((FRONTS_FILE, FRONTS_TITLE))
    blocks: list[Block] = [
        Heading(f"loadgen compare: {' vs '.join(r.name for r in runs)}", 1),
        Items(
            tuple(
                f"{r.name}: {r.path} ({r.summary.name}, {len(r.summary.steps)} steps, "
                f"metrics profile {r.summary.metrics_profile})"
                for r in runs
            )
        ),
        Text(
            f"Metrics profile: {profiles_text(runs)}. Steps matched by the nearest load "
            f"within {tolerance:.0%}; a probe only with a probe."
        ),
        *_gate_block(results),
        Heading("Environment"),
        environment_table(runs)[0],
        Heading("Overlays"),
        *(Figures(tuple(images[i : i + 2])) for i in range(0, len(images), 2)),
        *([Items(tuple(fronts[1]))] if fronts is not None else []),
        Heading("Per matching step"),
    ]
    for title, table in comparison_tables(runs, tolerance=tolerance):
        blocks += [Heading(title, 3), table]
    md, page = out_dir / "comparison.md", out_dir / "comparison.html"
    md.write_text(render_markdown(blocks), encoding="utf-8")
    page.write_text(render_html(blocks, out_dir, "loadgen compare"), encoding="utf-8")
    return [*written, md, page]
