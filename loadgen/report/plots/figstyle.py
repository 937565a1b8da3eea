"""The look shared by every plot: figure size and DPI, colours, the legend, titles, saving.

Owns :data:`STEP_COLOURS` (one colour per step, distinct for up to 12 steps: tab10 and
two dark ones; a step past the 12th reuses a colour with a dashed line, see
:func:`step_style`), the SLA colour, the p50/p99 line styles, and the helpers the
``draw_*`` functions of :mod:`loadgen.report.plots.figures` and its drawing modules
(:mod:`loadgen.report.plots.load_figures`, :mod:`loadgen.report.plots.timeline_figure`,
:mod:`loadgen.report.plots.cdf_figure`, ...) share. matplotlib is imported inside the functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loadgen.summary import Summary

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "DPI",
    "SLA_COLOUR",
    "STAT_STYLE",
    "STEP_COLOURS",
    "figure",
    "figure_legend",
    "log_y_if_wide",
    "save_figure",
    "step_style",
    "style",
    "suptitle",
]

DPI = 110
STAT_STYLE = {"p50": "--", "p99": "-"}
SLA_COLOUR = "#c0392b"
#: One colour per step in load order: matplotlib's tab10, then near-black and navy
#: (CIE L*a*b* distance >= 27 between any two; viridis' 12 shades are not told apart).
STEP_COLOURS = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
    "#1a1a1a", "#00008b",
)  # fmt: skip


def step_style(i: int) -> tuple[str, str]:
    """(colour, line style) of the ``i``-th step (0-based, load order): the first 12 solid
    in 12 colours, the next 12 dashed in the same colours, and so on."""
    styles = ("-", "--", ":", "-.")
    return STEP_COLOURS[i % len(STEP_COLOURS)], styles[(i // len(STEP_COLOURS)) % len(styles)]


def figure(width: float, height: float, nrows: int, ncols: int, **kw: Any) -> Figure:
    """A constrained-layout figure on an Agg canvas (so it can be laid out before saving)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    fig.subplots(nrows, ncols, squeeze=False, **kw)
    return fig


def save_figure(fig: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fig.savefig(path, format="png")
    except OSError as exc:  # name the file: a full disk's error does not
        raise OSError(exc.errno, exc.strerror, str(path)) from exc
    return path


def style(
    ax: Axes,
    title: str,
    xlabel: str,
    ylabel: str,
    extra: Sequence[Artist] = (),
    *,
    legend: bool = True,
) -> None:
    """Title, axis labels, grid, and (``legend``) a legend of the labelled lines and
    ``extra`` handles (proxies that explain what is not a line: error bars, shading)."""
    ax.set_title(title, fontsize=11)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    if not legend:
        return
    handles, _labels = ax.get_legend_handles_labels()
    handles += list(extra)
    if handles:
        ax.legend(handles=handles, fontsize=8, loc="best", framealpha=0.85)


def log_y_if_wide(ax: Axes, values: Sequence[float], ratio: float) -> bool:
    """Log y axis, labelled in plain numbers, when the values span ``ratio`` or more."""
    from matplotlib.ticker import FuncFormatter

    positive = [v for v in values if v > 0]
    if positive and len(positive) == len(values) and max(positive) / min(positive) >= ratio:
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
        return True
    return False


def figure_legend(fig: Figure, max_columns: int = 8) -> None:
    """One legend under the panels for the labelled lines of every panel (each label once):
    for panels that share their lines, such as one per step."""
    seen: dict[str, Artist] = {}
    for ax in fig.axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(label, handle)
    if seen:
        ncols = min(len(seen), max_columns)
        fig.legend(list(seen.values()), list(seen), loc="outside lower center", ncols=ncols,
                   fontsize=8, frameon=False)  # fmt: skip


def suptitle(fig: Figure, summary: Summary, what: str, binned: str = "") -> None:
    """``<run>: <what>`` and, under it, the metrics profile the values were computed with;
    ``binned``: what of the plot is drawn from bins, a third line."""
    text = f"{summary.name}: {what}\nmetrics profile: {summary.metrics_profile}"
    fig.suptitle(text + (f"\n{binned}" if binned else ""), fontsize=12)
