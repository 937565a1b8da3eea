"""The latency CDF plot on a tail scale: where p50, p90, p99 and p99.9 fall, step by step.

Owns :func:`draw_cdf` and the tail scale: x = latency (ms), y = ``-log10(1 - p)``, so
p90, p99 and p99.9 are one unit apart (p50 at 0.3), ticks labelled p50 ... p99.9, and
the tail that a linear CDF squashes into its top pixel fills the upper half. A step's
i-th smallest of n values is drawn at p = (i - ½)/n (Hazen's plotting position), so its
largest, at 1 - 1/(2n), stays on the scale. The SLA's bound on the metric is a vertical
line, its statistic's level marked on it: a step meets it where its line crosses that
level left of the mark.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from loadgen.report.plots import sample_series as ss
from loadgen.report.plots import series as p
from loadgen.report.plots.figstyle import (
    SLA_COLOUR,
    figure,
    figure_legend,
    step_style,
    style,
    suptitle,
)
from loadgen.results import EXACT_UP_TO, RunSamples
from loadgen.summary import Summary
from loadgen.vocab import PERCENTILE_OF, metric_label

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["TAIL_TICKS", "draw_cdf", "draw_e2e_cdf", "tail_points", "tail_y"]

#: The tail scale's ticks: percentile -> its label.
TAIL_TICKS = {50.0: "p50", 90.0: "p90", 99.0: "p99", 99.9: "p99.9", 99.99: "p99.99"}
#: The tail scale always reaches just past p99.9, so plots of small and large steps compare.
_TOP = 3.25


def tail_y(fraction: float) -> float:
    """``-log10(1 - fraction)``: 0.3 at p50, 1 at p90, 2 at p99, 3 at p99.9."""
    return -math.log10(1.0 - fraction)


def tail_points(pts: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """A CDF's (value, fraction <= value) points on the tail scale, each fraction moved
    down by half a sample (1/(2n), n read off the first point's fraction 1/n)."""
    n = max(round(1.0 / pts[0][1]), 1) if pts and pts[0][1] > 0 else 1
    return [(x, tail_y(max(f - 0.5 / n, 0.0))) for x, f in pts]


def _tail_axis(ax: Axes, top: float) -> None:
    from matplotlib.ticker import FixedLocator, NullLocator

    ceiling = max(_TOP, top + 0.15)
    ax.set_ylim(0, ceiling)
    ticks = {
        tail_y(q / 100): label for q, label in TAIL_TICKS.items() if tail_y(q / 100) <= ceiling
    }
    ax.yaxis.set_major_locator(FixedLocator(list(ticks)))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_yticks(list(ticks), list(ticks.values()))


def _sla_marks(ax: Axes, summary: Summary, metric: str) -> list[float]:
    """A vertical line at each bound of ``metric`` the SLA states, a mark at its
    statistic's level; the bounds drawn."""
    drawn = []
    for m, stat, bound in summary.sla.latency_bounds():
        if m != metric or bound is None:
            continue
        label = metric_label(m, stat)
        ax.axvline(bound, color=SLA_COLOUR, ls=":", lw=1.5, label=f"SLA {label} ≤ {bound:g} ms")
        if stat in PERCENTILE_OF:  # where the step's line must pass left of
            level = tail_y(PERCENTILE_OF[stat] / 100)
            ax.plot([bound], [level], marker="<", ms=7, color=SLA_COLOUR, ls="", gid="sla-level")
        drawn.append(bound)
    return drawn


def _cdf_panel(
    ax: Axes, summary: Summary, series: p.Series, metric: str, xlabel: str, log_x: bool
) -> None:
    """One line per step in :func:`loadgen.report.plots.figstyle.step_style`'s colours, a step
    function (the fraction holds between two samples). ``log_x``: a log x axis in plain
    numbers; otherwise the axis is cut at the 99.9th percentile when a long tail would
    squash the rest."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    title = f"{metric_label(metric, '')} CDF per step, tail scale"
    cut, top = 0.0, 0.0
    for i, (label, pts) in enumerate(series.items()):
        tail = tail_points(pts)
        xs, ys = zip(*tail, strict=True)
        colour, ls = step_style(i)
        ax.plot(xs, ys, ls, lw=1.6, color=colour, label=label, drawstyle="steps-post")
        cut = max(cut, next((x for x, f in pts if f >= 0.999), xs[-1]))
        top = max(top, ys[-1])
    bounds = _sla_marks(ax, summary, metric)
    longest = max((pts[-1][0] for pts in series.values()), default=0.0)
    if log_x:
        ax.set_xscale("log")
        # 1-2-5 labels, none on the minor ticks: a span of one or two decades otherwise
        # gets matplotlib's crowded 2x10^1 3x10^1 ... labels
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        title += " (log x)"
    elif cut > 0 and longest > 1.5 * cut:
        ax.set_xlim(left=0, right=max(cut, *bounds) * 1.05 if bounds else cut * 1.05)
        title += " (x cut at p99.9)"
    _tail_axis(ax, top)
    style(ax, title, xlabel, "percentile (tail scale)", legend=False)


def _wide(series: p.Series, ratio: float = 10.0) -> bool:
    """Whether the values span ``ratio`` or more, all positive: a log x axis then (an ITL
    of 0, tokens in one read, keeps the axis linear)."""
    xs = [x for pts in series.values() for x, _ in pts]
    return bool(xs) and min(xs) > 0 and max(xs) / min(xs) >= ratio


def draw_cdf(summary: Summary, samples: RunSamples) -> Figure:
    """TTFT and ITL CDFs on the tail scale, one line per step, in load order, one legend
    under both panels; x in log for TTFT (steps differ by orders of magnitude) and for ITL
    when it spans 10x or more."""
    fig = figure(11, 4.4, 1, 2)
    ax1, ax2 = fig.axes
    ttft = ss.cdf_series(summary, samples, "ttft_ms")
    _cdf_panel(ax1, summary, ttft, "ttft_ms", "TTFT (ms, log scale)", log_x=True)
    itl = ss.cdf_series(summary, samples, "itl_ms")
    wide = _wide(itl)
    _cdf_panel(ax2, summary, itl, "itl_ms", "ITL (ms, log scale)" if wide else "ITL (ms)", wide)
    binned = [
        f"{metric_label(m, '')} of {', '.join(labels)}"
        for m in ("ttft_ms", "itl_ms")
        if (labels := ss.cdf_binned(summary, samples, m))
    ]
    note = (
        f"from log-spaced bins (1.2% wide; steps of over {EXACT_UP_TO:,} values): "
        + "; ".join(binned)
        if binned
        else ""
    )
    figure_legend(fig)
    suptitle(fig, summary, "latency distributions", note)
    return fig


def draw_e2e_cdf(summary: Summary, samples: RunSamples) -> Figure:
    """A pooling run's (embeddings, rerank) latency CDF: E2E only, one panel, on the tail
    scale as :func:`draw_cdf`'s panels (its TTFT would be the E2E again, and it has no ITL)."""
    fig = figure(6.5, 4.4, 1, 1)
    e2e = ss.cdf_series(summary, samples, "e2e_ms")
    wide = _wide(e2e)
    xlabel = "E2E (ms, log scale)" if wide else "E2E (ms)"
    _cdf_panel(fig.axes[0], summary, e2e, "e2e_ms", xlabel, wide)
    binned = ss.cdf_binned(summary, samples, "e2e_ms")
    note = (
        f"from log-spaced bins (1.2% wide; steps of over {EXACT_UP_TO:,} values): "
        + ", ".join(binned)
        if binned
        else ""
    )
    figure_legend(fig)
    suptitle(fig, summary, "latency distribution", note)
    return fig
