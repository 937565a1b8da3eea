"""The data of every plot, as pure functions: summary (and samples) in, series out.

Owns what each plot shows; :mod:`loadgen.report.plots.figures` (and the ``*_figure(s)``
modules it draws with) only draws it. A series is ``{legend label: [(x, y), ...]}``,
exactly the points handed to matplotlib, so tests check the data rather than pixels.

1. :func:`curve_series`: latency vs output tokens/s (TTFT p50/p99; TPOT and ITL
   p50/p99), :func:`sla_bounds` the SLA lines, :func:`point_labels` the load
   of each point.
2. :func:`throughput_series`: requests/s, goodput and output tokens/s vs load.
3. :func:`telemetry_series`: GPU utilisation, memory and power vs load.
4. :func:`turn_series`: TTFT per turn of multi-turn sessions, one line per step.

The plots drawn from the per-request samples (CDFs, the timeline) have their
series in :mod:`loadgen.report.plots.sample_series`.

"vs load" means :func:`load_x`: the concurrency or the offered rate, and for
a trace replay the achieved requests/s (a time scale is not a load: x0.5 of
one trace and of another are different rates).

Every curve is drawn through :func:`curve_steps`: the sweep's steps ordered by
load, whatever order they ran in (an sla-search runs 1, 64, 32, 16, ...), and
without an ``auto`` sweep's concurrency probe, which is not a point of a rate
sweep. :func:`bracket_marks` marks an sla-search's bracket (the passing and
the failing load) on the curves, :func:`curve_verdict` the verdict's point (the highest
load meeting the SLA) and :func:`curve_confidence` the level of the curve's error bars.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from loadgen.report.telemetry import telemetry_fields
from loadgen.results import load_value
from loadgen.summary import StepSummary, Summary
from loadgen.vocab import CURVE_STATS, PERCENTILE_OF, metric_label

__all__ = [
    "BRACKET_LABELS",
    "CURVE_PANELS",
    "INCONCLUSIVE_LABEL",
    "TELEMETRY_PANELS",
    "VERDICT_LABEL",
    "VERDICT_LABEL_NO_SLA",
    "Series",
    "bracket_marks",
    "curve_bracket",
    "curve_confidence",
    "curve_inconclusive",
    "curve_panels",
    "curve_series",
    "curve_steps",
    "curve_verdict",
    "load_axis_label",
    "load_x",
    "point_label",
    "point_labels",
    "sla_bounds",
    "tail_stat",
    "telemetry_series",
    "thin_ticks",
    "throughput_bracket",
    "throughput_inconclusive",
    "throughput_series",
    "turn_series",
    "verdict_step",
]

Series = dict[str, list[tuple[float, float]]]

#: The latency-throughput curve's panels: (metric, stats) drawn on each.
CURVE_PANELS: tuple[tuple[tuple[str, tuple[str, ...]], ...], ...] = (
    (("ttft_ms", CURVE_STATS),),
    (("tpot_ms", CURVE_STATS), ("itl_ms", CURVE_STATS)),
)
#: The telemetry plot's panels: (title, y label, telemetry_fields keys -> legend labels).
TELEMETRY_PANELS: tuple[tuple[str, str, tuple[tuple[str, str], ...]], ...] = (
    (
        "GPU utilisation",
        "utilisation (%)",
        (("gpu_util_pct_mean", "GPU util mean"), ("gpu_util_pct_max", "GPU util max")),
    ),
    ("GPU memory", "memory used (GiB)", (("gpu_mem_used_gib_peak", "GPU memory peak"),)),
    ("GPU power", "power (W)", (("gpu_power_w_mean", "GPU power mean"),)),
)


def point_label(step: StepSummary) -> str:
    """What a point on a curve is: ``c=16`` (concurrency), ``4 r/s`` (rate), ``trace x0.5``;
    an ``auto`` sweep's probe is ``probe c=64``."""
    value = load_value(step)
    if value is None:
        return f"step {step.index}"
    if step.load.mode == "trace":
        return f"trace x{value:g}"
    if step.load.mode == "offline":
        return f"offline {value:g}"
    label = f"c={value:g}" if step.load.mode == "concurrency" else f"{value:g} r/s"
    return f"probe {label}" if step.role == "probe" else label


def load_x(step: StepSummary) -> float | None:
    """The x of a step on a plot against load: concurrency, offered rate, or for a trace
    replay the achieved requests/s (None when no request succeeded)."""
    if step.load.mode in ("trace", "offline"):
        rps = step.throughput.requests_per_s
        return rps if step.requests.ok and rps > 0 else None
    return load_value(step)


_AXIS_LABELS = {
    "concurrency": "concurrency (requests in flight)",
    "rate": "offered rate (req/s)",
    "trace": "achieved rate (req/s), trace replay",
    "offline": "achieved rate (req/s), offline",
}


def _load_order(step: StepSummary) -> tuple[int, float]:
    """Lighter load first (concurrency, rate, a trace's achieved rate); no load: last."""
    x = load_x(step)
    return (0, x) if x is not None else (1, float(step.index))


def curve_steps(summary: Summary) -> list[StepSummary]:
    """The steps a curve joins, ordered by load (run order among equal loads); probes left out."""
    return sorted((s for s in summary.steps if s.role != "probe"), key=_load_order)


#: Legend labels of an sla-search's bracket marks, by which end of the bracket.
BRACKET_LABELS = ("SLA passes", "SLA fails")


def bracket_marks(summary: Summary) -> list[tuple[str, StepSummary]]:
    """An sla-search's bracket: ("SLA passes", the step at the passing load), ("SLA fails",
    the step at the failing load); empty for other sweeps or when the search found none."""
    v = summary.verdict
    if v is None or not v.bracket or len(v.bracket) != 2:
        return []
    out = []
    for label, value in zip(BRACKET_LABELS, v.bracket, strict=True):
        at = [s for s in curve_steps(summary) if load_value(s) == value]
        if at:
            out.append((f"{label} ({point_label(at[-1])})", at[-1]))
    return out


def curve_bracket(summary: Summary, metric: str, stat: str) -> Series:
    """The bracket marks on the latency curve: x = output tokens/s, y = ``metric stat`` (ms)."""
    return {
        label: [(s.throughput.output_tokens_per_s, float(v))]
        for label, s in bracket_marks(summary)
        if (v := getattr(getattr(s, metric), stat)) is not None
    }


def throughput_bracket(summary: Summary) -> Series:
    """The bracket marks on the throughput plot: x = :func:`load_x`, y = requests/s."""
    return {
        label: [(x, s.throughput.requests_per_s)]
        for label, s in bracket_marks(summary)
        if (x := load_x(s)) is not None
    }


#: Legend label of the verdict's point: ``{}`` is the step's load (``c=16``).
VERDICT_LABEL = "verdict: {} (highest load meeting the SLA)"
#: ... of a run without SLA bounds (``Summary.sla_set`` false)
VERDICT_LABEL_NO_SLA = "verdict: {} (highest load run cleanly; no SLA set)"


def verdict_step(summary: Summary) -> StepSummary | None:
    """The step at the verdict's load (``verdict.max_passing``; the last run of that load),
    or None when no load met the SLA or no step of the curve ran at it."""
    v = summary.verdict
    if v is None or v.max_passing is None:
        return None
    at = [s for s in curve_steps(summary) if load_value(s) == v.max_passing]
    return at[-1] if at else None


def curve_verdict(summary: Summary, metric: str, stat: str) -> Series:
    """The verdict's point on the latency curve: x = output tokens/s, y = ``metric stat``."""
    s = verdict_step(summary)
    v = getattr(getattr(s, metric), stat) if s is not None else None
    if s is None or v is None:
        return {}
    label = (VERDICT_LABEL if summary.sla_set else VERDICT_LABEL_NO_SLA).format(point_label(s))
    return {label: [(s.throughput.output_tokens_per_s, float(v))]}


def curve_confidence(summary: Summary) -> float | None:
    """The confidence level of the curve's error bars: the steps' intervals' (they are
    computed at ``sla.confidence``), or None when no step has one."""
    for s in curve_steps(summary):
        for metric in ("ttft_ms", "tpot_ms", "itl_ms"):
            ci = getattr(getattr(s, metric), "ci", None)
            if ci is not None:
                return float(ci.confidence)
    return None


#: Legend label of the points of steps in which loadgen itself was saturated.
INCONCLUSIVE_LABEL = "SLA inconclusive (the step's reason says why)"


def _inconclusive(summary: Summary) -> list[StepSummary]:
    """Steps whose one verdict (``sla.verdict``) is inconclusive, whatever the cause."""
    return [s for s in curve_steps(summary) if s.sla.verdict == "inconclusive"]


def curve_inconclusive(summary: Summary, metric: str, stat: str) -> Series:
    """Steps whose verdict is inconclusive (loadgen saturated, too few requests, a bound
    inside its interval), at their place on the latency curve: x = output tokens/s,
    y = ``metric stat`` (ms)."""
    points = [
        (s.throughput.output_tokens_per_s, float(v))
        for s in _inconclusive(summary)
        if (v := getattr(getattr(s, metric), stat)) is not None
    ]
    return {INCONCLUSIVE_LABEL: points} if points else {}


def throughput_inconclusive(summary: Summary) -> Series:
    """The inconclusive steps on the throughput plot: x = :func:`load_x`, y = requests/s."""
    points = [
        (x, s.throughput.requests_per_s)
        for s in _inconclusive(summary)
        if (x := load_x(s)) is not None
    ]
    return {INCONCLUSIVE_LABEL: points} if points else {}


def thin_ticks(values: Sequence[float], min_gap: float = 0.06) -> list[float]:
    """The load values to tick on a log axis so that no two tick labels collide (16, 20
    and 24 on a 1..64 axis): a value is kept when it is at least ``min_gap`` of the axis
    (in log) from the one kept before it; the lightest and the heaviest always."""
    ordered = sorted({v for v in values if v > 0})
    if len(ordered) < 3:
        return ordered
    logs = {v: math.log2(v) for v in ordered}
    span = (logs[ordered[-1]] - logs[ordered[0]]) or 1.0
    kept = [ordered[0]]
    for v in ordered[1:]:
        if (logs[v] - logs[kept[-1]]) / span >= min_gap:
            kept.append(v)
    if kept[-1] != ordered[-1]:
        if len(kept) > 1 and (logs[ordered[-1]] - logs[kept[-1]]) / span < min_gap:
            kept.pop()
        kept.append(ordered[-1])
    return kept


def load_axis_label(summary: Summary) -> str:
    """The x label of plots against load, from the first step that is not a probe."""
    steps = [s for s in summary.steps if s.role == "step"] or summary.steps
    mode = steps[0].load.mode if steps else "concurrency"
    return _AXIS_LABELS.get(mode, _AXIS_LABELS["rate"])


def tail_stat(summary: Summary, metric: str) -> str:
    """The tail statistic shown for ``metric``: the highest percentile the SLA bounds it
    by (``p90`` for ``ttft_ms: {p90: 250}``), so its line and its bound are drawn together;
    the p99 when the SLA bounds no percentile of it above the median."""
    bounds = summary.sla.model_dump().get(metric) or {}
    stated = [k for k in bounds if k in PERCENTILE_OF and PERCENTILE_OF[k] > 50]
    return max(stated, key=PERCENTILE_OF.__getitem__, default=CURVE_STATS[-1])


def curve_panels(summary: Summary) -> tuple[tuple[tuple[str, tuple[str, ...]], ...], ...]:
    """:data:`CURVE_PANELS` with each metric's tail the one :func:`tail_stat` picks."""
    return tuple(
        tuple((metric, (stats[0], tail_stat(summary, metric))) for metric, stats in panel)
        for panel in CURVE_PANELS
    )


def curve_series(summary: Summary) -> Series:
    """x = output tokens/s, y = the latency statistic (ms), for every stat of
    :func:`curve_panels`. Steps without the value (no successful request) are left out.
    """
    out: Series = {}
    for panel in curve_panels(summary):
        for metric, stats in panel:
            for stat in stats:
                points = [
                    (s.throughput.output_tokens_per_s, float(v))
                    for s in curve_steps(summary)
                    if (v := getattr(getattr(s, metric), stat)) is not None
                ]
                if points:
                    out[metric_label(metric, stat)] = points
    return out


def curve_intervals(summary: Summary, metric: str, stat: str) -> list[tuple[float, float, float]]:
    """Error bars for the latency curve: (output tokens/s, low, high) of ``metric stat``'s
    confidence interval (Distribution.ci), for the steps whose sample gives both ends."""
    out = []
    for s in curve_steps(summary):
        ci = getattr(getattr(s, metric), "ci", None)
        pair = getattr(ci, stat, None) if ci is not None else None
        if pair is not None and pair[0] is not None and pair[1] is not None:
            out.append((s.throughput.output_tokens_per_s, float(pair[0]), float(pair[1])))
    return out


def point_labels(summary: Summary, metric: str, stat: str) -> list[tuple[float, float, str]]:
    """(x, y, load label) of each step on the ``metric stat`` line of the curve."""
    return [
        (s.throughput.output_tokens_per_s, float(v), point_label(s))
        for s in curve_steps(summary)
        if (v := getattr(getattr(s, metric), stat)) is not None
    ]


def sla_bounds(summary: Summary) -> dict[str, float]:
    """The scenario's latency bounds by legend label: ``{"TTFT p99": 500.0, ...}``."""
    out: dict[str, float] = {}
    for metric, bounds in summary.sla.items():
        if isinstance(bounds, dict) and metric != "session_s":  # seconds, of whole sessions
            for stat, bound in bounds.items():
                if isinstance(bound, int | float):
                    out[metric_label(metric, stat)] = float(bound)
    return out


def throughput_series(summary: Summary) -> Series:
    """x = :func:`load_x`; y = requests/s, goodput requests/s, output tokens/s."""
    out: Series = {"throughput": [], "goodput": [], "output tokens/s": []}
    for s in curve_steps(summary):
        x = load_x(s)
        if x is None:
            continue
        t = s.throughput
        out["throughput"].append((x, t.requests_per_s))
        if t.goodput_requests_per_s is not None:
            out["goodput"].append((x, t.goodput_requests_per_s))
        out["output tokens/s"].append((x, t.output_tokens_per_s))
    return {k: v for k, v in out.items() if v}


def telemetry_series(summary: Summary) -> Series:
    """x = :func:`load_x`; y = each :data:`TELEMETRY_PANELS` value the steps carry."""
    out: Series = {}
    for s in curve_steps(summary):
        x, fields = load_x(s), telemetry_fields(s)
        if x is None:
            continue
        for _title, _unit, keys in TELEMETRY_PANELS:
            for key, label in keys:
                if key in fields:
                    out.setdefault(label, []).append((x, fields[key]))
    return out


def turn_series(summary: Summary, stat: str) -> Series:
    """x = the 0-based turn of a session, y = TTFT ``stat`` (ms) of that turn, per step.

    Only steps that ran sessions (``ttft_by_turn``); a turn without the value is left out.
    """
    out: Series = {}
    for s in curve_steps(summary):
        points = sorted(
            (float(turn), float(v))
            for turn, d in (s.ttft_by_turn or {}).items()
            if turn.isdigit() and (v := getattr(d, stat)) is not None
        )
        if points:
            out[point_label(s)] = points
    return out
