"""``frontier.png`` and the compare overlay of fronts: throughput against interactivity.

Owns :func:`draw_frontier` (one run: each step a point labelled by its load, the
Pareto front as a step line, points that miss the SLA hollow and grey, the
region slower than the SLA's TPOT bound shaded, the best point under the SLA
starred) and :func:`draw_fronts` (several runs on one panel, a colour each,
each run's best point named, the points labelled by load where the labels fit).
The points are
:class:`~loadgen.report.plots.frontier_view.FrontierView`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from loadgen.report.plots.figstyle import SLA_COLOUR, figure, style, suptitle
from loadgen.report.plots.frontier_view import FrontierView, frontier_view
from loadgen.report.plots.labels import place_labels
from loadgen.report.plots.series import sla_bounds
from loadgen.summary import Summary

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["MISS_COLOUR", "X_LABEL", "draw_frontier", "draw_fronts", "has_frontier"]

X_LABEL = "interactivity (output tokens/s per user)"
#: A point of a step that missed the SLA (drawn hollow).
MISS_COLOUR = "#999999"
_BEST_STYLE: dict[str, Any] = {"marker": "*", "ms": 16, "mec": "#1a1a1a", "mew": 0.9, "zorder": 5}


def has_frontier(summary: Summary) -> bool:
    """Whether a run has a point to draw (a step with interactivity and throughput)."""
    return bool(frontier_view(summary).points)


def _points(
    ax: Axes, view: FrontierView, colour: Any, name: str = "", miss: Any = MISS_COLOUR
) -> None:
    """The SLA-meeting points filled in ``colour``, the missing ones hollow (in ``miss``), the front
    as a step line (steps-pre: at interactivity x the best throughput of the points at
    least as interactive), and the best point under the SLA starred."""
    prefix = f"{name}: " if name else ""
    looks: tuple[tuple[bool, dict[str, Any]], ...] = (
        (True, {"color": colour}),
        (False, {"color": miss, "mfc": "none"}),
    )
    for meets, look in looks:
        pts = [xy for xy, m in zip(view.points, view.meets, strict=True) if m == meets]
        if pts:
            xs, ys = zip(*pts, strict=True)
            what = view.point_names[0 if meets else 1]
            ax.plot(xs, ys, ls="", marker="o", ms=6, mew=1.4, label=f"{prefix}{what}",
                    gid="meets" if meets else "misses", **look)  # fmt: skip
    if view.front:
        fx, fy = zip(*(view.points[i] for i in view.front), strict=True)
        ax.plot(fx, fy, "-", drawstyle="steps-pre", lw=1.6, color=colour,
                label=f"{prefix}Pareto front", gid="front")  # fmt: skip
    if view.best is not None:
        bx, by = view.points[view.best]
        ax.plot([bx], [by], ls="", color=colour, gid="best",
                label=f"{prefix}{view.best_name}: {view.label(view.best)}",
                **_BEST_STYLE)  # fmt: skip


def _tpot_shade(ax: Axes, summary: Summary) -> None:
    """The interactivity below 1000 / the SLA's TPOT bound (the tightest), shaded."""
    bounds = [v for k, v in sla_bounds(summary).items() if k.startswith("TPOT") and v > 0]
    if bounds:
        edge = 1000.0 / min(bounds)
        ax.axvspan(0, edge, color=SLA_COLOUR, alpha=0.08, lw=0, gid="sla",
                   label=f"slower than the SLA's TPOT bound ({min(bounds):g} ms)")  # fmt: skip


def draw_frontier(summary: Summary) -> Figure:
    """One run's frontier: y = output tokens/s per GPU (or of the run without a GPU count),
    x = interactivity; each point labelled by its load where the label fits."""
    view = frontier_view(summary)
    fig = figure(8, 5.0, 1, 1)
    ax = fig.axes[0]
    _tpot_shade(ax, summary)
    _points(ax, view, "#1f77b4")
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    style(ax, "throughput vs interactivity", X_LABEL, view.y_label)
    suptitle(fig, summary, "the throughput-interactivity frontier")
    place_labels(ax, [(x, y, view.label(i)) for i, (x, y) in enumerate(view.points)])
    return fig


def draw_fronts(names: Sequence[str], views: Sequence[FrontierView], subtitle: str = "") -> Figure:
    """Several runs' fronts on one panel, one colour per run (its SLA misses hollow in it),
    each run's best point named, each point labelled by its load where the label fits."""
    from matplotlib import colormaps

    fig = figure(8, 5.0, 1, 1)
    ax = fig.axes[0]
    palette = colormaps["tab10"]
    for i, (name, view) in enumerate(zip(names, views, strict=True)):
        _points(ax, view, palette(i % 10), name, palette(i % 10))  # misses: hollow, its colour
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    y_label = views[0].y_label if views else ""
    style(ax, "throughput vs interactivity", X_LABEL, y_label)
    if subtitle:
        fig.suptitle(subtitle, fontsize=10)
    # the loads, where they fit (the runs' steps share loads: the colour says whose)
    place_labels(ax, [(x, y, v.label(i)) for v in views for i, (x, y) in enumerate(v.points)])
    return fig
