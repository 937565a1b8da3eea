"""``loadgen compare``: runs side by side, overlay plots, and the regression gate.

Owns the overlay plots (each run's latency and throughput curves on one
panel), the gates run on the steps the baseline and the newest run share, and
``comparison.md`` / ``comparison.html``. The runs are read, and runs under
different metrics profiles refused, in :mod:`loadgen.report.compare_runs`;
steps are matched across runs and the comparison tables made in
:mod:`loadgen.report.compare_match` (both re-exported here).
The environments side by side and the refusal of unequal workloads live in
:mod:`loadgen.report.env_compare`.
The gate's rule lives in :mod:`loadgen.report.gate`; what pooling runs
(embeddings, rerank: no token timing) are compared by, in
:mod:`loadgen.report.pooling_compare`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from loadgen.report.blocks import Block, Figures, Heading, Items, Text
from loadgen.report.compare_match import (
    MATCH_TOLERANCE,
    TABLE_METRICS,
    comparison_tables,
    format_table,
    matched_steps,
)
from loadgen.report.compare_runs import (
    ProfileMismatchError,
    Run,
    check_profiles,
    default_out_dir,
    load_runs,
    profiles_text,
)
from loadgen.report.env_compare import environment_table
from loadgen.report.gate import Gate, GateResult, conclusions, evaluate_gate
from loadgen.report.markdown import render_markdown
from loadgen.report.plots import Series, curve_steps, load_axis_label, load_x
from loadgen.report.pooling_compare import check_gates, overlay_x, throughput_y
from loadgen.vocab import CURVE_STATS, metric_label

__all__ = [
    "MATCH_TOLERANCE",
    "TABLE_METRICS",
    "ProfileMismatchError",
    "Run",
    "check_profiles",
    "comparison_tables",
    "default_out_dir",
    "format_table",
    "load_runs",
    "matched_steps",
    "overlay_series",
    "profiles_text",
    "run_gates",
    "throughput_overlay",
    "write_comparison",
]

OVERLAY_METRICS = ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms")


def run_gates(
    gates: Sequence[Gate],
    runs: Sequence[Run],
    *,
    seed: int = 0,
    resamples: int = 1000,
    tolerance: float = MATCH_TOLERANCE,
) -> list[GateResult]:
    """Every gate on every step the baseline (first run) and the newest (last run) share.

    The bootstrap resamples values made by the runs' metrics profile (:func:`load_runs`
    refuses runs under different profiles unless told). A gate on token timing where a run
    is a pooling one is a one-line ScenarioError.
    """
    check_gates(gates, [r.name for r in runs], [r.summary for r in runs])
    base, new = runs[0], runs[-1]
    pairs = [
        (label, (steps[0], steps[-1]))
        for label, steps in matched_steps([base, new], tolerance=tolerance)
        if steps[0] is not None and steps[-1] is not None
    ]
    return [
        evaluate_gate(
            gate,
            label,
            pair,
            (base.samples, new.samples),
            seed=seed,
            resamples=resamples,
            repeats=(base.repeat_steps(pair[0]), new.repeat_steps(pair[1]))
            if base.repeats and new.repeats
            else None,
        )
        for gate in gates
        for label, pair in pairs
    ]


def overlay_series(runs: Sequence[Run], metric: str) -> Series:
    """x = output tokens/s (pooling runs: requests/s), y = the metric's p50 and p99 (ms), per
    run: ``"<run> p99"``; each run's steps in load order, probes left out
    (:func:`loadgen.report.plots.curve_steps`)."""
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
    """x = the load (:func:`loadgen.report.plots.load_x`; a trace: achieved requests/s),
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
    from loadgen.report.compare_frontier import FRONTS_FILE, FRONTS_TITLE, write_fronts
    from loadgen.report.figures import draw_overlay, save_figure
    from loadgen.report.html import render_html

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
