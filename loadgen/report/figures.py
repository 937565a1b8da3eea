"""Drawing: the series of :mod:`loadgen.report.plots` as matplotlib figures and PNG files.

Owns the look of every plot (sizes, colours, scales, annotations) and the
file names under ``plots/``. Figures are built with ``matplotlib.figure.Figure``
(no pyplot, no global state) and saved with the Agg canvas; matplotlib is
imported inside the functions, so importing this module costs nothing.
Each ``draw_*`` returns the figure unsaved, so tests can read the lines back.

Imports: matplotlib (lazily), loadgen.summary, loadgen.vocab, loadgen.report.plots,
loadgen.report.sample_series, loadgen.report.bins, loadgen.report.samples,
loadgen.report.context_figure, loadgen.report.frontier_figure,
loadgen.report.split_figure.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loadgen.report import plots as p
from loadgen.report import sample_series as ss
from loadgen.report.bins import EXACT_UP_TO
from loadgen.report.cdf_figure import draw_cdf, draw_e2e_cdf
from loadgen.report.context_figure import context_steps, draw_context
from loadgen.report.figstyle import (
    SLA_COLOUR,
    STAT_STYLE,
    figure,
    log_y_if_wide,
    save_figure,
    step_style,
    style,
    suptitle,
)
from loadgen.report.frontier_figure import draw_frontier, has_frontier
from loadgen.report.labels import place_labels
from loadgen.report.pooling import is_pooling
from loadgen.report.pooling_figures import draw_pooling_curve, draw_pooling_throughput
from loadgen.report.pooling_views import curve_points
from loadgen.report.samples import RunSamples
from loadgen.report.split_figure import draw_time_split, split_bars
from loadgen.summary import Summary
from loadgen.vocab import CURVE_STATS, POOLING_APIS, metric_label

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "PLOT_FILES",
    "SHADING_LABELS",
    "draw_cdf",
    "draw_curve",
    "draw_overlay",
    "draw_telemetry",
    "draw_throughput",
    "draw_timeline",
    "draw_turns",
    "save_figure",
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
#: bracket end, or inconclusive -> (marker, colour)
_BRACKET_STYLE = {
    p.BRACKET_LABELS[0]: ("o", "#27ae60"),
    p.BRACKET_LABELS[1]: ("X", SLA_COLOUR),
    p.INCONCLUSIVE_LABEL: ("s", "#7f7f7f"),
}


def _bracket(ax: Axes, series: p.Series) -> None:
    """Big hollow markers on the points of an sla-search's bracket, or on inconclusive
    steps, in the legend."""
    for label, pts in series.items():
        marker, colour = _BRACKET_STYLE.get(label) or _BRACKET_STYLE[label.split(" (")[0]]
        xs, ys = zip(*pts, strict=True)
        ax.plot(xs, ys, ls="", marker=marker, color=colour, ms=11, mfc="none", mew=2, label=label)


def _load_ticks(ax: Axes, xs: Sequence[float]) -> None:
    """Log2 x axis when the sweep spans 8x or more, a tick at each load value that
    :func:`loadgen.report.plots.thin_ticks` keeps apart."""
    from matplotlib.ticker import FixedLocator, NullLocator

    values = sorted(set(xs))
    if values and values[0] > 0 and values[-1] / values[0] >= 8:
        ticks = p.thin_ticks(values)
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xticks(ticks, [f"{v:g}" for v in ticks])


def _wanted_first(
    labels: list[tuple[float, float, str]], verdict: str | None
) -> list[tuple[float, float, str]]:
    """The point labels in the order they are placed: the verdict's load, the heaviest,
    the lightest, then the others in load order (a crowded knee keeps its ends)."""
    if not labels:
        return []
    order = [len(labels) - 1, 0, *range(1, len(labels) - 1)]
    order.sort(key=lambda i: labels[i][2] != verdict)  # stable: the verdict's first
    return [labels[i] for i in dict.fromkeys(order)]


def _verdict(ax: Axes, series: p.Series) -> None:
    """A big gold star on the verdict's point, in the legend."""
    for label, pts in series.items():
        xs, ys = zip(*pts, strict=True)
        ax.plot(xs, ys, ls="", marker="*", ms=15, color="#f1c40f", mec="#1a1a1a", mew=0.9,
                label=label, zorder=5)  # fmt: skip


def _ci_handle(confidence: float | None) -> list[Artist]:
    """The legend's entry for the error bars: what they are, at which level."""
    from matplotlib.lines import Line2D

    if confidence is None:
        return []
    text = f"error bars: {confidence:.0%} confidence interval"
    return [Line2D([], [], ls="", marker="|", ms=10, mew=1.4, color="#666666", label=text)]


def draw_curve(summary: Summary) -> Figure:
    """Panel 1: TTFT p50 and its tail (the p99, or the percentile the SLA bounds); panel 2:
    TPOT and ITL, the same; x = output tokens/s; SLA lines;
    each point's confidence interval as an error bar; the verdict's point starred; each
    point of the p99 line labelled with its load where the label fits
    (:func:`loadgen.report.labels.place_labels`)."""
    series, bounds = p.curve_series(summary), p.sla_bounds(summary)
    fig = figure(11, 4.4, 1, 2)
    colours = {"ttft_ms": "#1f77b4", "tpot_ms": "#2ca02c", "itl_ms": "#9467bd"}
    verdict = p.verdict_step(summary)
    to_label = []
    for ax, panel in zip(fig.axes, p.curve_panels(summary), strict=True):
        ys: list[float] = []
        has_bars = False
        for metric, stats in panel:
            for stat in stats:
                label = metric_label(metric, stat)
                if label not in series:
                    continue
                xs_, ys_ = zip(*series[label], strict=True)
                ys += ys_
                ax.plot(xs_, ys_, STAT_STYLE.get(stat, "-"), marker="o", ms=4,
                        color=colours[metric], label=label)  # fmt: skip
                bars = p.curve_intervals(summary, metric, stat)
                if bars:  # each point's confidence interval, where its sample gives both ends
                    bx, lo, hi = zip(*bars, strict=True)
                    ax.vlines(bx, lo, hi, color=colours[metric], lw=1.2, alpha=0.55)
                    ys += [*lo, *hi]
                    has_bars = True
                if label in bounds:
                    ys.append(bounds[label])
                    ax.axhline(bounds[label], color=SLA_COLOUR, ls=":", lw=1.5,
                               label=f"SLA {label} ≤ {bounds[label]:g} ms")  # fmt: skip
        metric, stats = panel[0]
        _bracket(ax, p.curve_bracket(summary, metric, stats[-1]))
        _bracket(ax, p.curve_inconclusive(summary, metric, stats[-1]))
        _verdict(ax, p.curve_verdict(summary, metric, stats[-1]))
        log_y_if_wide(ax, ys, 30)
        names = " / ".join(metric_label(m, "") for m, _ in panel)
        extra = _ci_handle(p.curve_confidence(summary)) if has_bars else []
        style(ax, f"{names} vs throughput", "output tokens/s", f"{names} (ms)", extra)
        labels = p.point_labels(summary, metric, stats[-1])
        to_label.append((ax, _wanted_first(labels, p.point_label(verdict) if verdict else None)))
    suptitle(fig, summary, "latency vs throughput")
    for ax, labels in to_label:  # once the whole figure is laid out
        place_labels(ax, labels)
    return fig


def draw_throughput(summary: Summary) -> Figure:
    """Panel 1: requests/s and goodput; panel 2: output tokens/s.

    x = :func:`loadgen.report.plots.load_x`: the load, or a trace's achieved requests/s.
    """
    series = p.throughput_series(summary)
    fig = figure(11, 4.0, 1, 2)
    ax1, ax2 = fig.axes
    styles = {"throughput": ("-", "#1f77b4"), "goodput": ("--", "#ff7f0e")}
    for label in ("throughput", "goodput"):
        if label in series:
            xs, ys = zip(*series[label], strict=True)
            ls, colour = styles[label]
            ax1.plot(xs, ys, ls, marker="o", ms=4, color=colour, label=f"{label} (req/s)")
    _bracket(ax1, p.throughput_bracket(summary))
    _bracket(ax1, p.throughput_inconclusive(summary))
    if "output tokens/s" in series:
        xs, ys = zip(*series["output tokens/s"], strict=True)
        ax2.plot(xs, ys, "-", marker="o", ms=4, color="#2ca02c", label="output tokens/s")
    xlabel = p.load_axis_label(summary)
    all_x = [x for pts in series.values() for x, _ in pts]
    for ax in (ax1, ax2):
        _load_ticks(ax, all_x)
        ax.set_ylim(bottom=0)
    style(ax1, "requests/s and goodput", xlabel, "requests/s")
    style(ax2, "output token throughput", xlabel, "output tokens/s")
    suptitle(fig, summary, "throughput vs load")
    return fig


def draw_turns(summary: Summary) -> Figure:
    """TTFT p50 and p99 per turn of the sessions, one line per step (one colour each, in
    :func:`loadgen.report.figstyle.step_style`'s order), one panel per stat."""
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


_TIMELINE_PANELS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("requests in flight", ("in flight",)),
    ("output tokens/s", ("output tokens/s",)),
    ("server queue (requests)", ("server running", "server waiting")),
    ("KV cache usage (%)", ("KV cache usage",)),
    ("GPU utilisation (%)", ()),  # every "GPU<n> util" series
)


def draw_timeline(
    summary: Summary, samples: RunSamples | None, telemetry: list[dict[str, Any]]
) -> Figure:
    """Stacked panels over the run's time, step windows shaded and labelled on top; a
    legend under the panels says what the shades are."""
    series = ss.timeline_series(summary, samples, telemetry)
    if summary.api in POOLING_APIS:  # embeddings, rerank: no tokens generated, no panel
        series.pop("output tokens/s", None)
    panels: list[tuple[str, list[str]]] = []
    for ylabel, keys in _TIMELINE_PANELS:
        chosen = keys or tuple(k for k in series if k.startswith("GPU"))
        if any(k in series for k in chosen):
            panels.append((ylabel, [k for k in chosen if k in series]))
    fig = figure(11, 1.2 + 1.9 * max(len(panels), 1), max(len(panels), 1), 1, sharex=True)
    t0 = ss.timeline_origin_ns(summary, samples)
    spans, steady = ss.step_spans(summary, t0), ss.steady_spans(summary, t0)
    for i, (ax, (ylabel, names)) in enumerate(zip(fig.axes, panels, strict=False)):
        for j, (a, b, _label) in enumerate(spans):
            ax.axvspan(a, b, color=_SPAN_GREYS[j % 2], alpha=0.25, lw=0, gid="step")
        for a, b, _label in steady:
            ax.axvspan(a, b, color=_STEADY_BLUE, alpha=0.12, lw=0, gid="steady")
        for key in names:
            xs, ys = zip(*series[key], strict=True)
            ax.plot(xs, ys, "-", lw=1.3, label=key)
        ax.set_ylim(bottom=0)
        style(ax, "", "seconds since start" if i == len(panels) - 1 else "", ylabel)
    if panels and spans:
        ax0 = fig.axes[0]
        total = max(b for _, b, _ in spans) - min(a for a, _, _ in spans) or 1.0
        for a, b, label in spans:
            if (b - a) / total >= 0.04:
                ax0.text(
                    (a + b) / 2,
                    1.02,
                    label,
                    transform=ax0.get_xaxis_transform(),
                    ha="center",
                    va="bottom",
                    fontsize=7.5,
                )
    _shading_legend(fig, bool(spans), bool(steady))
    binned = samples is not None and samples.tokens.binned
    note = f"output tokens/s from time bins (a run of over {EXACT_UP_TO:,} token events)"
    suptitle(fig, summary, "timeline", note if binned else "")
    return fig


_SPAN_GREYS = ("#cccccc", "#999999")  # neighbouring steps alternate
_STEADY_BLUE = "#4c72b0"
#: the timeline's shading, as its legend names it
SHADING_LABELS = (
    "a step's measured window (grey, alternating step to step)",
    "its steady window: where throughput and goodput are measured (blue)",
)


def _shading_legend(fig: Figure, spans: bool, steady: bool) -> None:
    """The legend of the timeline's shading, under the panels."""
    from matplotlib.patches import Patch

    handles = []
    if spans:
        handles.append(Patch(color=_SPAN_GREYS[0], alpha=0.5, lw=0, label=SHADING_LABELS[0]))
    if steady:  # drawn over a step's grey, as on the plot
        handles.append(Patch(color=_STEADY_BLUE, alpha=0.3, lw=0, label=SHADING_LABELS[1]))
    if handles:
        fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=8,
                   frameon=False)  # fmt: skip


def draw_telemetry(summary: Summary) -> Figure:
    """GPU utilisation, memory and power vs load, one panel each."""
    series = p.telemetry_series(summary)
    panels = [x for x in p.TELEMETRY_PANELS if any(label in series for _, label in x[2])]
    fig = figure(11, 3.6, 1, max(len(panels), 1), sharex=True)
    xlabel = p.load_axis_label(summary)
    all_x = [x for pts in series.values() for x, _ in pts]
    for ax, (title, ylabel, keys) in zip(fig.axes, panels, strict=False):
        for _key, label in keys:
            if label in series:
                xs, ys = zip(*series[label], strict=True)
                ax.plot(xs, ys, "-", marker="o", ms=4, label=label)
        _load_ticks(ax, all_x)
        ax.set_ylim(bottom=0)
        style(ax, title, xlabel, ylabel)
    suptitle(fig, summary, "GPU telemetry vs load")
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
        _load_ticks(ax, [x for pts in series.values() for x, _ in pts])
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
