"""The plots over the sweep's load: latency vs throughput, throughput vs load, GPU telemetry.

Owns ``latency_throughput.png`` (with its SLA lines, error bars, the
sla-search's bracket, the verdict's star and the point labels),
``throughput.png`` and ``telemetry.png``, and the load axis's log2 ticks
(:func:`load_ticks`, also the overlays'). The series come from
:mod:`loadgen.report.plots.series`; matplotlib is imported inside the functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from loadgen.report.plots import series as p
from loadgen.report.plots.figstyle import (
    SLA_COLOUR,
    STAT_STYLE,
    figure,
    log_y_if_wide,
    style,
    suptitle,
)
from loadgen.report.plots.labels import place_labels
from loadgen.summary import Summary
from loadgen.vocab import confidence_text, metric_label

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["draw_curve", "draw_telemetry", "draw_throughput", "load_ticks"]

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


def load_ticks(ax: Axes, xs: Sequence[float]) -> None:
    """Log2 x axis when the sweep spans 8x or more, a tick at each load value that
    :func:`loadgen.report.plots.series.thin_ticks` keeps apart."""
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
    text = f"error bars: {confidence_text(confidence)} confidence interval"
    return [Line2D([], [], ls="", marker="|", ms=10, mew=1.4, color="#666666", label=text)]


def draw_curve(summary: Summary) -> Figure:
    """Panel 1: TTFT p50 and its tail (the p99, or the percentile the SLA bounds); panel 2:
    TPOT and ITL, the same; x = output tokens/s; SLA lines;
    each point's confidence interval as an error bar; the verdict's point starred; each
    point of the p99 line labelled with its load where the label fits
    (:func:`loadgen.report.plots.labels.place_labels`)."""
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

    x = :func:`loadgen.report.plots.series.load_x`: the load, or a trace's achieved requests/s.
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
        load_ticks(ax, all_x)
        ax.set_ylim(bottom=0)
    style(ax1, "requests/s and goodput", xlabel, "requests/s")
    style(ax2, "output token throughput", xlabel, "output tokens/s")
    suptitle(fig, summary, "throughput vs load")
    return fig


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
        load_ticks(ax, all_x)
        ax.set_ylim(bottom=0)
        style(ax, title, xlabel, ylabel)
    suptitle(fig, summary, "GPU telemetry vs load")
    return fig
