"""Drawing: the series of :mod:`loadgen.report.plots` as matplotlib figures and PNG files.

Owns the look of every plot (sizes, colours, scales, annotations) and the
file names under ``plots/``. Figures are built with ``matplotlib.figure.Figure``
(no pyplot, no global state) and saved with the Agg canvas; matplotlib is
imported inside the functions, so importing this module costs nothing.
Each ``draw_*`` returns the figure unsaved, so tests can read the lines back.

Imports: matplotlib (lazily), loadgen.summary, loadgen.vocab, loadgen.report.plots,
loadgen.report.sample_series, loadgen.report.bins, loadgen.report.samples.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loadgen.report import plots as p
from loadgen.report import sample_series as ss
from loadgen.report.bins import EXACT_UP_TO
from loadgen.report.samples import RunSamples
from loadgen.summary import Summary
from loadgen.vocab import CURVE_STATS, metric_label

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "PLOT_FILES",
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
}
DPI = 110
_STAT_STYLE = {"p50": "--", "p99": "-"}
_SLA_COLOUR = "#c0392b"


def _figure(width: float, height: float, nrows: int, ncols: int, **kw: Any) -> Figure:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    fig.subplots(nrows, ncols, squeeze=False, **kw)
    return fig


def save_figure(fig: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fig.savefig(path, format="png")
    except OSError as exc:  # name the file: a full disk's error does not
        raise OSError(exc.errno, exc.strerror, str(path)) from exc
    return path


def _style(ax: Axes, title: str, xlabel: str, ylabel: str) -> None:
    ax.set_title(title, fontsize=11)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    if ax.get_lines():
        ax.legend(fontsize=8, loc="best", framealpha=0.85)


def _log_y_if_wide(ax: Axes, values: Sequence[float], ratio: float) -> bool:
    """Log y axis, labelled in plain numbers, when the values span ``ratio`` or more."""
    from matplotlib.ticker import FuncFormatter

    positive = [v for v in values if v > 0]
    if positive and len(positive) == len(values) and max(positive) / min(positive) >= ratio:
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
        return True
    return False


def _suptitle(fig: Figure, summary: Summary, what: str, binned: str = "") -> None:
    """``<run>: <what>`` and, under it, the metrics profile the values were computed with;
    ``binned``: what of the plot is drawn from bins, a third line."""
    text = f"{summary.name}: {what}\nmetrics profile: {summary.metrics_profile}"
    fig.suptitle(text + (f"\n{binned}" if binned else ""), fontsize=12)


#: bracket end, or inconclusive -> (marker, colour)
_BRACKET_STYLE = {
    p.BRACKET_LABELS[0]: ("o", "#27ae60"),
    p.BRACKET_LABELS[1]: ("X", _SLA_COLOUR),
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


def _annotate(ax: Axes, labels: list[tuple[float, float, str]], log_y: bool) -> None:
    """Label the points that :func:`loadgen.report.plots.thin_labels` keeps apart."""
    for x, y, text in p.thin_labels(labels, log_y=log_y):
        ax.annotate(text, (x, y), textcoords="offset points", xytext=(4, 6), fontsize=7.5)


def draw_curve(summary: Summary) -> Figure:
    """Panel 1: TTFT p50/p99; panel 2: TPOT and ITL p50/p99; x = output tokens/s; SLA lines."""
    series, bounds = p.curve_series(summary), p.sla_bounds(summary)
    fig = _figure(11, 4.4, 1, 2)
    colours = {"ttft_ms": "#1f77b4", "tpot_ms": "#2ca02c", "itl_ms": "#9467bd"}
    for ax, panel in zip(fig.axes, p.CURVE_PANELS, strict=True):
        ys: list[float] = []
        for metric, stats in panel:
            for stat in stats:
                label = metric_label(metric, stat)
                if label not in series:
                    continue
                xs_, ys_ = zip(*series[label], strict=True)
                ys += ys_
                ax.plot(
                    xs_,
                    ys_,
                    _STAT_STYLE.get(stat, "-"),
                    marker="o",
                    ms=4,
                    color=colours[metric],
                    label=label,
                )
                bars = p.curve_intervals(summary, metric, stat)
                if bars:  # each point's confidence interval, where its sample gives both ends
                    bx, lo, hi = zip(*bars, strict=True)
                    ax.vlines(bx, lo, hi, color=colours[metric], lw=1.2, alpha=0.55)
                    ys += [*lo, *hi]
                if label in bounds:
                    ys.append(bounds[label])
                    ax.axhline(
                        bounds[label],
                        color=_SLA_COLOUR,
                        ls=":",
                        lw=1.5,
                        label=f"SLA {label} ≤ {bounds[label]:g} ms",
                    )
        metric, stats = panel[0]
        _bracket(ax, p.curve_bracket(summary, metric, stats[-1]))
        _bracket(ax, p.curve_inconclusive(summary, metric, stats[-1]))
        log_y = _log_y_if_wide(ax, ys, 30)
        _annotate(ax, p.point_labels(summary, metric, stats[-1]), log_y)
        names = " / ".join(metric_label(m, "") for m, _ in panel)
        _style(ax, f"{names} vs throughput", "output tokens/s", f"{names} (ms)")
    _suptitle(fig, summary, "latency vs throughput")
    return fig


def draw_throughput(summary: Summary) -> Figure:
    """Panel 1: requests/s and goodput; panel 2: output tokens/s.

    x = :func:`loadgen.report.plots.load_x`: the load, or a trace's achieved requests/s.
    """
    series = p.throughput_series(summary)
    fig = _figure(11, 4.0, 1, 2)
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
    _style(ax1, "requests/s and goodput", xlabel, "requests/s")
    _style(ax2, "output token throughput", xlabel, "output tokens/s")
    _suptitle(fig, summary, "throughput vs load")
    return fig


def _cdf_panel(ax: Axes, series: p.Series, title: str, xlabel: str, log_x: bool = False) -> None:
    """One line per step, coloured from low to high load. ``log_x``: a log x axis (TTFT,
    whose steps differ by orders of magnitude), labelled in plain numbers; otherwise the
    axis is cut at the 99.5th percentile when a long tail would squash the rest."""
    from matplotlib import colormaps
    from matplotlib.ticker import FuncFormatter

    cmap = colormaps["viridis"]
    n = len(series)
    cut = 0.0
    for i, (label, pts) in enumerate(series.items()):
        xs, ys = zip(*pts, strict=True)
        ax.plot(xs, ys, "-", lw=1.6, color=cmap(0.9 * i / max(n - 1, 1)), label=label)
        cut = max(cut, next((x for x, f in pts if f >= 0.995), xs[-1]))
    tail = max((pts[-1][0] for pts in series.values()), default=0.0)
    if log_x:
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
        title += " (log x)"
    elif cut > 0 and tail > 1.5 * cut:
        ax.set_xlim(left=0, right=cut * 1.05)
        title += " (x cut at the 99.5th pct)"
    ax.set_ylim(0, 1.02)
    _style(ax, title, xlabel, "fraction ≤ x")


def draw_cdf(summary: Summary, samples: RunSamples) -> Figure:
    """TTFT and ITL CDFs, one line per step, coloured from low to high load."""
    fig = _figure(11, 4.2, 1, 2)
    ax1, ax2 = fig.axes
    ttft = ss.cdf_series(summary, samples, "ttft_ms")
    _cdf_panel(ax1, ttft, "TTFT CDF per step", "TTFT (ms, log scale)", log_x=True)
    _cdf_panel(ax2, ss.cdf_series(summary, samples, "itl_ms"), "ITL CDF per step", "ITL (ms)")
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
    _suptitle(fig, summary, "latency distributions", note)
    return fig


def draw_turns(summary: Summary) -> Figure:
    """TTFT p50 and p99 per turn of the sessions, one line per step, one panel per stat."""
    from matplotlib import colormaps
    from matplotlib.ticker import MaxNLocator

    fig = _figure(11, 4.0, 1, 2, sharex=True)
    cmap = colormaps["viridis"]
    for ax, stat in zip(fig.axes, CURVE_STATS, strict=True):
        series = p.turn_series(summary, stat)
        n = len(series)
        for i, (label, pts) in enumerate(series.items()):
            xs, ys = zip(*pts, strict=True)
            colour = cmap(0.9 * i / max(n - 1, 1))
            ax.plot(xs, ys, _STAT_STYLE[stat], marker="o", ms=4, color=colour, label=label)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylim(bottom=0)
        _style(ax, f"TTFT {stat} by turn", "turn (0 = the session's first request)", "TTFT (ms)")
    _suptitle(fig, summary, "TTFT by turn")
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
    """Stacked panels over the run's time, step windows shaded and labelled on top."""
    series = ss.timeline_series(summary, samples, telemetry)
    panels: list[tuple[str, list[str]]] = []
    for ylabel, keys in _TIMELINE_PANELS:
        chosen = keys or tuple(k for k in series if k.startswith("GPU"))
        if any(k in series for k in chosen):
            panels.append((ylabel, [k for k in chosen if k in series]))
    fig = _figure(11, 1.2 + 1.9 * max(len(panels), 1), max(len(panels), 1), 1, sharex=True)
    t0 = ss.timeline_origin_ns(summary, samples)
    spans, steady = ss.step_spans(summary, t0), ss.steady_spans(summary, t0)
    for i, (ax, (ylabel, names)) in enumerate(zip(fig.axes, panels, strict=False)):
        for j, (a, b, _label) in enumerate(spans):
            ax.axvspan(a, b, color="#999999" if j % 2 else "#cccccc", alpha=0.25, lw=0)
        for a, b, _label in steady:
            ax.axvspan(a, b, color="#4c72b0", alpha=0.12, lw=0, gid="steady")
        for key in names:
            xs, ys = zip(*series[key], strict=True)
            ax.plot(xs, ys, "-", lw=1.3, label=key)
        ax.set_ylim(bottom=0)
        _style(ax, "", "seconds since start" if i == len(panels) - 1 else "", ylabel)
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
    what = "measured step windows" + (", blue: steady windows" if steady else "")
    binned = samples is not None and samples.tokens.binned
    note = f"output tokens/s from time bins (a run of over {EXACT_UP_TO:,} token events)"
    _suptitle(fig, summary, f"timeline (shaded: {what})", note if binned else "")
    return fig


def draw_telemetry(summary: Summary) -> Figure:
    """GPU utilisation, memory and power vs load, one panel each."""
    series = p.telemetry_series(summary)
    panels = [x for x in p.TELEMETRY_PANELS if any(label in series for _, label in x[2])]
    fig = _figure(11, 3.6, 1, max(len(panels), 1), sharex=True)
    xlabel = p.load_axis_label(summary)
    all_x = [x for pts in series.values() for x, _ in pts]
    for ax, (title, ylabel, keys) in zip(fig.axes, panels, strict=False):
        for _key, label in keys:
            if label in series:
                xs, ys = zip(*series[label], strict=True)
                ax.plot(xs, ys, "-", marker="o", ms=4, label=label)
        _load_ticks(ax, all_x)
        ax.set_ylim(bottom=0)
        _style(ax, title, xlabel, ylabel)
    _suptitle(fig, summary, "GPU telemetry vs load")
    return fig


def draw_overlay(
    series: p.Series, title: str, xlabel: str, ylabel: str, subtitle: str = ""
) -> Figure:
    """Several runs on one panel: one colour per run, p50 dashed and p99 solid.

    Keys are ``"<run> <stat>"`` or just ``"<run>"``; a load axis gets log2 ticks;
    ``subtitle`` (the metrics profile) goes above the panel.
    """
    from matplotlib import colormaps

    fig = _figure(8, 4.6, 1, 1)
    ax = fig.axes[0]
    colours: dict[str, Any] = {}
    palette = colormaps["tab10"]
    for label, pts in series.items():
        run, _, stat = label.rpartition(" ") if label.endswith(CURVE_STATS) else (label, "", "")
        colour = colours.setdefault(run, palette(len(colours) % 10))
        xs, ys = zip(*pts, strict=True)
        ax.plot(xs, ys, _STAT_STYLE.get(stat, "-"), marker="o", ms=4, color=colour, label=label)
    if "tokens/s" not in xlabel:
        _load_ticks(ax, [x for pts in series.values() for x, _ in pts])
    else:
        _log_y_if_wide(ax, [y for pts in series.values() for _, y in pts], 30)
    _style(ax, title, xlabel, ylabel)
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
    is a note in the report, not a lost report.
    """
    jobs: dict[str, Any] = {}
    if p.curve_series(summary):
        jobs["curve"] = lambda: draw_curve(summary)
    if p.telemetry_series(summary):
        jobs["telemetry"] = lambda: draw_telemetry(summary)
    if p.throughput_series(summary):
        jobs["throughput"] = lambda: draw_throughput(summary)
    if samples is not None and any(len(samples.step(s.index).ttft_ms) for s in summary.steps):
        jobs["cdf"] = lambda: draw_cdf(summary, samples)
    if p.turn_series(summary, "p50"):
        jobs["turns"] = lambda: draw_turns(summary)
    if (samples is not None and len(samples.sent_ns)) or telemetry:
        jobs["timeline"] = lambda: draw_timeline(summary, samples, telemetry)
    written: dict[str, Path] = {}
    notes: list[str] = []
    for name, file in PLOT_FILES.items():
        path = plots_dir / file
        path.unlink(missing_ok=True)
        if name not in jobs:
            continue
        try:
            written[name] = save_figure(jobs[name](), path)
        except Exception as exc:  # a plot bug must not cost the run its report
            notes.append(f"plot {name} failed: {type(exc).__name__}: {exc}")
    return written, notes
