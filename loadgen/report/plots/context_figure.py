"""The TTFT-vs-context plot of session steps: does a long context cost first-token time,
and does the prefix cache take it back?

Owns :func:`draw_context` and :func:`context_steps`: one panel per step that ran
sessions (at most :data:`MAX_PANELS`, spread over the sweep), x = a call's
prompt tokens, y = its TTFT (ms), each point coloured by the share of its prompt
the server served from its cache (0 to 1 on one colour scale; grey where the
server did not report cached tokens). The points are
:class:`~loadgen.results.context_points.ContextPoints`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from loadgen.report.plots import series as p
from loadgen.report.plots.figstyle import figure, style, suptitle
from loadgen.results import MAX_POINTS, RunSamples
from loadgen.summary import StepSummary, Summary

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["MAX_PANELS", "UNKNOWN_COLOUR", "context_steps", "draw_context"]

#: At most this many steps get a panel (spread evenly over the sweep's load order).
MAX_PANELS = 6
#: A point whose server did not report cached tokens.
UNKNOWN_COLOUR = "#b0b0b0"
_CMAP = "viridis"


def context_steps(summary: Summary, samples: RunSamples | None) -> list[StepSummary]:
    """The steps that ran sessions and have call points, in load order, at most
    :data:`MAX_PANELS` of them (the first, the last and evenly between)."""
    if samples is None:
        return []
    steps = [
        s
        for s in p.curve_steps(summary)
        if s.sessions is not None and len(samples.step(s.index).context)
    ]
    if len(steps) <= MAX_PANELS:
        return steps
    picks = sorted({round(i * (len(steps) - 1) / (MAX_PANELS - 1)) for i in range(MAX_PANELS)})
    return [steps[i] for i in picks]


def draw_context(summary: Summary, samples: RunSamples) -> Figure:
    """TTFT vs prompt tokens per session call, coloured by cached share, a panel per step."""
    from matplotlib import colormaps
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize
    from matplotlib.lines import Line2D

    steps = context_steps(summary, samples)
    cols = min(3, max(len(steps), 1))
    rows = max(1, math.ceil(len(steps) / cols))
    fig = figure(3.9 * cols + 1.2, 3.4 * rows + 0.9, rows, cols, sharex=True, sharey=True)
    cmap, norm = colormaps[_CMAP], Normalize(0.0, 1.0)
    thinned = False
    for ax, step in zip(fig.axes, steps, strict=False):
        pts = samples.step(step.index).context
        thinned |= len(pts) > MAX_POINTS
        xs, ys, shares = pts.thinned()
        grey = [(x, y) for x, y, c in zip(xs, ys, shares, strict=True) if math.isnan(c)]
        known = [(x, y, c) for x, y, c in zip(xs, ys, shares, strict=True) if not math.isnan(c)]
        if grey:
            gx, gy = zip(*grey, strict=True)
            ax.scatter(gx, gy, s=9, color=UNKNOWN_COLOUR, alpha=0.6, lw=0, gid="unknown")
        if known:
            kx, ky, kc = zip(*known, strict=True)
            ax.scatter(kx, ky, s=9, c=kc, cmap=cmap, norm=norm, alpha=0.8, lw=0, gid="cached")
        ax.set_ylim(bottom=0)
        ax.set_xlim(left=0)
        style(ax, p.point_label(step), "prompt tokens (context)", "TTFT (ms)", legend=False)
    for ax in fig.axes[len(steps) :]:
        ax.set_visible(False)
    fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=fig.axes, shrink=0.85,
                 label="cached share of the prompt (server)")  # fmt: skip
    grey_handle = Line2D([], [], ls="", marker="o", ms=5, color=UNKNOWN_COLOUR,
                         label="cached tokens not reported")  # fmt: skip
    fig.legend(handles=[grey_handle], loc="outside lower center", fontsize=8, frameon=False)
    note = f"at most {MAX_POINTS:,} calls a panel (every k-th)" if thinned else ""
    suptitle(fig, summary, "TTFT vs context, per session call", note)
    return fig
