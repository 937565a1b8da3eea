"""The timeline plot: the run's in-flight requests, throughput, server queue, KV cache and
GPUs over time, each step's window shaded.

Owns ``timeline.png``'s panels, its step shading and the legend that names the
shades; the series come from :mod:`loadgen.report.plots.sample_series`. matplotlib is
imported inside the functions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loadgen.report.plots import sample_series as ss
from loadgen.report.plots.figstyle import figure, style, suptitle
from loadgen.results import EXACT_UP_TO, RunSamples
from loadgen.summary import Summary
from loadgen.vocab import POOLING_APIS

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["SHADING_LABELS", "draw_timeline"]

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
