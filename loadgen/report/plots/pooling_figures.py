"""A pooling run's plots (embeddings, rerank): E2E against requests/s and inputs/s.

A pooling answer has no token timing, so the latency-throughput curve of a
generating API (TTFT, TPOT and ITL against output tokens/s) has nothing to
draw. In its place (``plots/curve.png``): panel 1 E2E p50 and its tail (the
percentile the SLA bounds, else p99) against requests/s; panel 2 the same
against inputs/s (documents/s for rerank); the SLA's E2E bound as a line. The
throughput plot (``plots/throughput.png``) shows requests/s and goodput, and
inputs/s, against the load.

matplotlib is imported inside the functions (loadgen.report.plots.figstyle).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loadgen.report.plots import series as p
from loadgen.report.plots.figstyle import SLA_COLOUR, STAT_STYLE, figure, style, suptitle
from loadgen.report.plots.pooling_views import curve_points
from loadgen.results import inputs_word
from loadgen.summary import Summary
from loadgen.vocab import CURVE_STATS, metric_label

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["draw_pooling_curve", "draw_pooling_throughput"]


def _word(summary: Summary) -> str:
    return inputs_word(summary.steps[0]) if summary.steps else "inputs"


def draw_pooling_curve(summary: Summary) -> Figure:
    """E2E p50 and tail vs requests/s (panel 1) and vs inputs/s (panel 2)."""
    fig = figure(11, 4.4, 1, 2)
    tail = p.tail_stat(summary, "e2e_ms")
    bounds = p.sla_bounds(summary)
    word = _word(summary)
    for ax, x, xlabel in zip(
        fig.axes, ("requests", "inputs"), ("requests/s", f"{word}/s"), strict=True
    ):
        for stat in (CURVE_STATS[0], tail):
            points = curve_points(summary, stat, x)
            if not points:
                continue
            xs, ys = zip(*points, strict=True)
            label = metric_label("e2e_ms", stat)
            ax.plot(xs, ys, STAT_STYLE.get(stat, "-"), marker="o", ms=4, color="#d62728",
                    label=label)  # fmt: skip
            if label in bounds:
                ax.axhline(bounds[label], color=SLA_COLOUR, ls=":", lw=1.5,
                           label=f"SLA {label} ≤ {bounds[label]:g} ms")  # fmt: skip
        style(ax, f"E2E vs {xlabel}", xlabel, "E2E (ms)")
    suptitle(fig, summary, "latency vs throughput")
    return fig


def draw_pooling_throughput(summary: Summary) -> Figure:
    """Requests/s and goodput (panel 1), inputs/s (panel 2), against the load."""
    fig = figure(11, 4.0, 1, 2)
    ax1, ax2 = fig.axes
    word = _word(summary)
    req, good, inputs = [], [], []
    for s in p.curve_steps(summary):
        x = p.load_x(s)
        if x is None:
            continue
        t = s.throughput
        req.append((x, t.requests_per_s))
        if t.goodput_requests_per_s is not None:
            good.append((x, t.goodput_requests_per_s))
        if t.inputs_per_s is not None:
            inputs.append((x, t.inputs_per_s))
    for ax, series in ((ax1, (("throughput", req, "-"), ("goodput", good, "--"))),
                       (ax2, ((f"{word}/s", inputs, "-"),))):  # fmt: skip
        for label, pts, ls in series:
            if pts:
                xs, ys = zip(*pts, strict=True)
                ax.plot(xs, ys, ls, marker="o", ms=4, label=label)
        ax.set_ylim(bottom=0)
    xlabel = p.load_axis_label(summary)
    style(ax1, "requests/s and goodput", xlabel, "requests/s")
    style(ax2, f"{word} per second", xlabel, f"{word}/s")
    suptitle(fig, summary, "throughput vs load")
    return fig
