"""The where-the-time-went plot: a stacked bar per step of queue, prefill, decode, server
frontend and network + client (mean ms), from the server's histograms
(``StepSummary.time_split``); a bar's parts add up to the client's E2E mean.

Owns :func:`split_bars` (the data: one bar per step with a split, in load order;
a negative server frontend or network + client, a server clock or request set
that does not match the client's, is drawn as 0 and its value kept in the label) and
:func:`draw_time_split`. A step that missed the SLA has its tick label in the
SLA colour.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from loadgen.report.plots import series as p
from loadgen.report.plots.figstyle import SLA_COLOUR, figure, style, suptitle
from loadgen.summary import PART_WORDS, PHASES, Summary

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["PART_COLOURS", "SplitBar", "draw_time_split", "split_bars"]

#: part -> colour of its segment
PART_COLOURS = {
    "queue": "#9467bd",
    "prefill": "#ff7f0e",
    "decode": "#1f77b4",
    "frontend": "#2ca02c",
    "network": "#7f7f7f",
}


#: part -> how its legend says it is derived
_HOW = {
    "frontend": " (server E2E - queue - prefill - decode)",
    "network": " (client - server E2E)",
}


@dataclass(frozen=True, slots=True)
class SplitBar:
    label: str  # the step's load, e.g. ``c=8`` or ``4 req/s``
    parts: dict[str, float]  # part -> mean ms (absent: the server does not export it)
    missed: bool  # the step missed the SLA


def split_bars(summary: Summary) -> list[SplitBar]:
    """One bar per step with the server's split, in load order."""
    out = []
    for step in p.curve_steps(summary):
        if step.time_split is None:
            continue
        parts = step.time_split.part_means()
        if not parts:
            continue
        x = p.load_x(step)
        label = f"{x:g}" if x is not None else f"step {step.index + 1}"
        out.append(SplitBar(label, parts, step.sla.verdict == "missed"))
    return out


def draw_time_split(summary: Summary) -> Figure:
    """Stacked bars of mean ms per part, one per step."""
    bars = split_bars(summary)
    fig = figure(max(6.0, 1.0 + 0.8 * len(bars)), 4.5, 1, 1)
    ax = fig.axes[0]
    xs = list(range(len(bars)))
    bottom = [0.0] * len(bars)
    for part in PHASES:
        heights = [max(0.0, b.parts.get(part, 0.0)) for b in bars]
        if not any(part in b.parts for b in bars):
            continue
        label = PART_WORDS[part] + _HOW.get(part, "")
        ax.bar(xs, heights, 0.6, bottom=bottom, color=PART_COLOURS[part], label=label)
        bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
    ax.set_xticks(xs, [b.label for b in bars])
    for tick, bar in zip(ax.get_xticklabels(), bars, strict=True):
        if bar.missed:
            tick.set_color(SLA_COLOUR)
    ax.set_ylim(bottom=0)
    style(ax, "mean time per request, by part (red load: SLA missed)", p.load_axis_label(summary),
          "mean ms (server histograms)")  # fmt: skip
    suptitle(fig, summary, "where the time went")
    return fig
