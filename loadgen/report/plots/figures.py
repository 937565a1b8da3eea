"""Drawing: the series of :mod:`loadgen.report.plots.series` as matplotlib figures and PNG files.

Owns the file names under ``plots/``, which plots a run gets
(:func:`write_plots`), the TTFT-by-turn plot and the overlays of
``loadgen compare``. Figures are built with ``matplotlib.figure.Figure``
(no pyplot, no global state) and saved with the Agg canvas; matplotlib is
imported inside the functions, so importing this module costs nothing.
Each ``draw_*`` returns the figure unsaved, so tests can read the lines back.
The look shared by every plot is :mod:`loadgen.report.plots.figstyle`'s; the plots
over the load are drawn in :mod:`loadgen.report.plots.load_figures`, the timeline in
:mod:`loadgen.report.plots.timeline_figure`, the others in their own ``*_figure``
modules.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from loadgen.report.plots import series as p
from loadgen.report.plots.cdf_figure import draw_cdf, draw_e2e_cdf
from loadgen.report.plots.context_figure import context_steps, draw_context
from loadgen.report.plots.figstyle import (
    STAT_STYLE,
    figure,
    log_y_if_wide,
    save_figure,
    step_style,
    style,
    suptitle,
)
from loadgen.report.plots.frontier_figure import draw_frontier, has_frontier
from loadgen.report.plots.load_figures import (
    draw_curve,
    draw_telemetry,
    draw_throughput,
    load_ticks,
)
from loadgen.report.plots.pooling_figures import draw_pooling_curve, draw_pooling_throughput
from loadgen.report.plots.pooling_views import curve_points
from loadgen.report.plots.split_figure import draw_time_split, split_bars
from loadgen.report.plots.timeline_figure import draw_timeline
from loadgen.results import RunSamples, is_pooling
from loadgen.summary import Summary
from loadgen.vocab import CURVE_STATS

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "PLOT_FILES",
    "draw_overlay",
    "draw_turns",
    "write_plots",
]

#: Plot name -> file name under ``plots/``.
PLOT_FILES = {
    "curve": "latency_throughput.png",
    "telemetry": "telemetry.png",
    "throughput": "throughput.png",
    "cdf": "latency_cdf.png",
    "turns": "ttft_by_turn.png",
    "timeline": "timeline.png",
    "context": "ttft_vs_context.png",
    "frontier": "frontier.png",
    "time_split": "time_split.png",
}


def draw_turns(summary: Summary) -> Figure:
    """TTFT p50 and p99 per turn of the sessions, one line per step (one colour each, in
    :func:`loadgen.report.plots.figstyle.step_style`'s order), one panel per stat."""
    from matplotlib.ticker import MaxNLocator

    fig = figure(11, 4.0, 1, 2, sharex=True)
    for ax, stat in zip(fig.axes, CURVE_STATS, strict=True):
        series = p.turn_series(summary, stat)
        for i, (label, pts) in enumerate(series.items()):
            xs, ys = zip(*pts, strict=True)
            colour, _ls = step_style(i)
            ax.plot(xs, ys, STAT_STYLE[stat], marker="o", ms=4, color=colour, label=label)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylim(bottom=0)
        style(ax, f"TTFT {stat} by turn", "turn (0 = the session's first request)", "TTFT (ms)")
    suptitle(fig, summary, "TTFT by turn")
    return fig


def draw_overlay(
    series: p.Series, title: str, xlabel: str, ylabel: str, subtitle: str = ""
) -> Figure:
    """Several runs on one panel: one colour per run, p50 dashed and p99 solid.

    Keys are ``"<run> <stat>"`` or just ``"<run>"``; a load axis gets log2 ticks;
    ``subtitle`` (the metrics profile) goes above the panel.
    """
    from matplotlib import colormaps

    fig = figure(8, 4.6, 1, 1)
    ax = fig.axes[0]
    colours: dict[str, Any] = {}
    palette = colormaps["tab10"]
    for label, pts in series.items():
        run, _, stat = label.rpartition(" ") if label.endswith(CURVE_STATS) else (label, "", "")
        colour = colours.setdefault(run, palette(len(colours) % 10))
        xs, ys = zip(*pts, strict=True)
        ax.plot(xs, ys, STAT_STYLE.get(stat, "-"), marker="o", ms=4, color=colour, label=label)
    if "tokens/s" not in xlabel:
        load_ticks(ax, [x for pts in series.values() for x, _ in pts])
    else:
        log_y_if_wide(ax, [y for pts in series.values() for _, y in pts], 30)
    style(ax, title, xlabel, ylabel)
    if subtitle:
        fig.suptitle(subtitle, fontsize=10)
    return fig


def write_plots(
    summary: Summary,
    samples: RunSamples | None,
    telemetry: list[dict[str, Any]],
    plots_dir: Path,
) -> tuple[dict[str, Path], list[str]]:
    """Draw and save every plot that has data; ({name: path}, notes on plots that failed).

    Files of :data:`PLOT_FILES` left from an earlier write and not redrawn are
    removed, so a rebuilt report never shows a stale plot. A plot that raises
    is a note in the report, not a lost report; a write the disk refuses is
    raised (OSError naming the file), as for every other file of the run.
    """
    jobs: dict[str, Any] = {}
    if p.curve_series(summary):
        jobs["curve"] = lambda: draw_curve(summary)
    if p.telemetry_series(summary):
        jobs["telemetry"] = lambda: draw_telemetry(summary)
    if p.throughput_series(summary):
        jobs["throughput"] = lambda: draw_throughput(summary)
    if is_pooling(summary):  # no token timing: E2E vs requests/s and inputs/s
        jobs.pop("curve", None)
        if curve_points(summary, "p50", "requests"):
            jobs["curve"] = lambda: draw_pooling_curve(summary)
            jobs["throughput"] = lambda: draw_pooling_throughput(summary)
    if samples is not None and any(len(samples.step(s.index).ttft_ms) for s in summary.steps):
        draw = draw_e2e_cdf if is_pooling(summary) else draw_cdf  # pooling: E2E only
        jobs["cdf"] = lambda: draw(summary, samples)
    if p.turn_series(summary, "p50"):
        jobs["turns"] = lambda: draw_turns(summary)
    if (samples is not None and len(samples.sent_ns)) or telemetry:
        jobs["timeline"] = lambda: draw_timeline(summary, samples, telemetry)
    if samples is not None and context_steps(summary, samples):
        jobs["context"] = lambda: draw_context(summary, samples)
    if has_frontier(summary):
        jobs["frontier"] = lambda: draw_frontier(summary)
    if split_bars(summary):
        jobs["time_split"] = lambda: draw_time_split(summary)
    written: dict[str, Path] = {}
    notes: list[str] = []
    for name, file in PLOT_FILES.items():
        path = plots_dir / file
        path.unlink(missing_ok=True)
        if name not in jobs:
            continue
        try:
            written[name] = save_figure(jobs[name](), path)
        except OSError:  # a write the disk refused (save_figure names the file): the run's error
            raise
        except Exception as exc:  # a plot bug must not cost the run its report
            notes.append(f"plot {name} failed: {type(exc).__name__}: {exc}")
    return written, notes
