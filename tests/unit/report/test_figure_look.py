"""The plots read at a glance (#19): checked on the laid-out matplotlib objects.

Point labels never overlap or touch the axes' border (their text boxes as matplotlib
lays them out), the verdict's point is starred, the error bars and the timeline's
shading are explained in a legend, the CDF is on a tail scale with the SLA's bound,
and 12 steps get 12 colours told apart.
"""

from __future__ import annotations

import itertools
import math

import pytest
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from loadgen.records import Record
from loadgen.report.plots import cdf_figure, load_figures, timeline_figure
from loadgen.report.plots import series as plots
from loadgen.report.plots.figstyle import STEP_COLOURS
from loadgen.results.samples import samples_from_records
from loadgen.summary import Distribution, StepSummary, Summary, Verdict

from .conftest import MS, T0, bare_step, bare_summary, make_records

#: The demo's sweep (scenarios/demo.yaml on the mock, 2 cores): concurrency, output tok/s,
#: TTFT p50, p99, TPOT p50, p99, ITL p50, p99 (ms). c=16, 32 and 64 sit within 31 tok/s.
DEMO = (
    (1, 150.1, 16.78, 19.28, 6.5, 6.51, 6.5, 7.18),
    (2, 253.3, 21.13, 31.12, 7.13, 7.31, 7.0, 13.05),
    (4, 445.9, 22.91, 44.39, 8.29, 8.61, 8.0, 17.32),
    (8, 630.3, 30.17, 71.52, 10.75, 11.36, 9.99, 22.11),
    (16, 807.8, 41.13, 152.06, 15.41, 16.56, 13.99, 26.7),
    (32, 838.6, 969.3, 1336.75, 15.78, 17.01, 14.01, 32.14),
    (64, 829.5, 2980.37, 3716.9, 15.9, 16.79, 14.01, 33.39),
)


def _dist(p50: float, p99: float, ci: bool) -> Distribution:
    intervals = {
        "confidence": 0.95, "mean": [p50, p99], "p50": [0.9 * p50, 1.1 * p50],
        "p90": [p50, p99], "p95": [p50, None], "p99": [0.95 * p99, None], "p99_9": [p99, None],
    }  # fmt: skip
    return Distribution(count=60, p50=p50, p99=p99, ci=intervals if ci else None)  # type: ignore[arg-type]


def demo_summary(ci: bool = True, max_passing: float | None = 16) -> Summary:
    steps = []
    for i, (c, tok, *lat) in enumerate(DEMO):
        s = bare_step(i, "concurrency", c, lat[1])
        s.throughput.output_tokens_per_s = tok
        s.ttft_ms, s.tpot_ms, s.itl_ms = (
            _dist(lat[k], lat[k + 1], ci) for k in (0, 2, 4)
        )  # fmt: skip
        steps.append(s)
    verdict = Verdict(mode="concurrency", max_passing=max_passing)
    summary = bare_summary(steps, verdict)
    summary.sla = {"ttft_ms": {"p99": 400.0}, "tpot_ms": {"p99": 60.0}}  # type: ignore[assignment]
    return summary


def _label_boxes(fig: Figure, ax: Axes) -> dict[str, Bbox]:
    """The point labels' text boxes as drawn (the text alone, not a leader line)."""
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    return {t.get_text(): Text.get_window_extent(t, renderer) for t in ax.texts}


def assert_labels_clear(fig: Figure) -> list[list[str]]:
    """No two point labels of an axes overlap, each lies inside its axes, off the border;
    the labels drawn, per axes."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    fig.canvas.draw()
    drawn = []
    for ax in fig.axes:
        frame = ax.get_window_extent()
        boxes = _label_boxes(fig, ax)
        for (a, box_a), (b, box_b) in itertools.combinations(boxes.items(), 2):
            assert not box_a.overlaps(box_b), (a, b, box_a, box_b)
        for name, box in boxes.items():
            inside = (
                box.x0 > frame.x0 and box.x1 < frame.x1 and box.y0 > frame.y0 and box.y1 < frame.y1
            )
            assert inside, (name, box, frame)
        drawn.append(sorted(boxes))
    return drawn


def test_demo_labels_at_the_knee_are_all_drawn_clear_of_each_other_and_the_border() -> None:
    drawn = assert_labels_clear(load_figures.draw_curve(demo_summary()))
    every = sorted(f"c={c}" for c, *_ in DEMO)
    assert drawn == [every, every]  # c=16, 32 and 64 within 31 tok/s, each labelled


def test_a_crowded_knee_leaves_labels_out_rather_than_overlap_them() -> None:
    steps = [bare_step(i, "concurrency", c, 10.0 * (i + 1)) for i, c in enumerate((1, 2, 4, 8))]
    for i, c in enumerate((16, 20, 24, 28, 32, 48, 64, 96, 128, 192, 256)):
        s = bare_step(4 + i, "concurrency", c, 100.0 + i)
        s.throughput.output_tokens_per_s = 400.0 + i
        steps.append(s)
    summary = bare_summary(steps, Verdict(mode="concurrency", max_passing=8))
    drawn = assert_labels_clear(load_figures.draw_curve(summary))[0]
    assert {"c=1", "c=8", "c=256"} <= set(drawn)  # the verdict's and both ends first
    assert len(drawn) < len(steps)


def _line(ax: Axes, label: str) -> object:
    return next(x for x in ax.get_lines() if x.get_label() == label)


def test_the_verdict_point_is_starred_on_both_panels_in_the_legend() -> None:
    fig = load_figures.draw_curve(demo_summary())
    label = plots.VERDICT_LABEL.format("c=16")
    assert label == "verdict: c=16 (highest load meeting the SLA)"
    ttft, tpot = (_line(ax, label) for ax in fig.axes)
    assert list(ttft.get_xdata()) == [807.8] and list(ttft.get_ydata()) == [152.06]  # type: ignore[attr-defined]
    assert list(tpot.get_ydata()) == [16.56]  # type: ignore[attr-defined]
    for ax in fig.axes:
        legend = ax.get_legend()
        assert legend is not None and label in [t.get_text() for t in legend.get_texts()]
    none = load_figures.draw_curve(demo_summary(max_passing=None))
    assert not any(line.get_label().startswith("verdict") for line in none.axes[0].get_lines())


def _legend_texts(ax: Axes) -> list[str]:
    legend = ax.get_legend()
    return [t.get_text() for t in legend.get_texts()] if legend is not None else []


def test_the_error_bars_are_explained_in_the_legend() -> None:
    fig = load_figures.draw_curve(demo_summary())
    for ax in fig.axes:
        assert "error bars: 95% confidence interval" in _legend_texts(ax)
        assert ax.collections  # the bars themselves
    bare = load_figures.draw_curve(demo_summary(ci=False))
    assert not any("error bars" in t for t in _legend_texts(bare.axes[0]))


def _samples(summary: Summary, n: int = 40) -> list[Record]:
    return [
        r
        for s in summary.steps
        for r in make_records(
            s.index, n, 5.0 * (s.index + 1), 1.0 + s.index, T0 + s.index * 10_000 * MS
        )
    ]


def test_the_cdf_is_on_a_tail_scale_with_the_sla_bound(
    run_data: tuple[Summary, list[Record]],
) -> None:
    summary, records = run_data  # SLA: TTFT p50 <= 50 ms, TPOT p50 <= 10 ms, no ITL bound
    fig = cdf_figure.draw_cdf(summary, samples_from_records(records))
    ttft, itl = fig.axes
    for ax in (ttft, itl):
        ticks = dict(
            zip([t.get_text() for t in ax.get_yticklabels()], ax.get_yticks(), strict=True)
        )
        assert list(ticks)[:4] == ["p50", "p90", "p99", "p99.9"]
        assert [ticks[k] for k in ("p50", "p90", "p99", "p99.9")] == pytest.approx(
            [math.log10(2), 1, 2, 3]
        )
    c1 = _line(ttft, "c=1")
    n = 20  # the c=1 step's requests: TTFT 10, 11, ... 29 ms
    expected = [-math.log10(1 - (i - 0.5) / n) for i in range(1, n + 1)]
    assert list(c1.get_ydata()) == pytest.approx(expected)  # type: ignore[attr-defined]
    assert list(c1.get_xdata()) == pytest.approx([10.0 + j for j in range(n)])  # type: ignore[attr-defined]
    sla = _line(ttft, "SLA TTFT p50 ≤ 50 ms")
    assert list(sla.get_xdata()) == [50.0, 50.0]  # type: ignore[attr-defined]
    assert not any(line.get_label().startswith("SLA") for line in itl.get_lines())
    assert ttft.get_ylim()[1] >= 3  # p99.9 is on the scale even for 20 requests


def _lab(rgb: tuple[float, ...]) -> tuple[float, float, float]:
    """sRGB (0..1) -> CIE L*a*b* (D65)."""
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb[:3]]
    m = ((0.4124, 0.3576, 0.1805), (0.2126, 0.7152, 0.0722), (0.0193, 0.1192, 0.9505))
    xyz = [
        sum(a * b for a, b in zip(row, lin, strict=True)) / w
        for row, w in zip(m, (0.9505, 1, 1.089), strict=True)
    ]
    f = [v ** (1 / 3) if v > 0.008856 else 7.787 * v + 16 / 116 for v in xyz]
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def test_twelve_steps_get_twelve_colours_told_apart() -> None:
    from matplotlib.colors import to_rgb

    loads = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)
    summary = bare_summary([bare_step(i, "concurrency", c, 10.0) for i, c in enumerate(loads)])
    fig = cdf_figure.draw_cdf(summary, samples_from_records(_samples(summary, 10)))
    steps = [line for line in fig.axes[0].get_lines() if line.get_label().startswith("c=")]
    colours = [to_rgb(line.get_color()) for line in steps]  # type: ignore[arg-type]
    assert len(steps) == 12 and len(set(colours)) == 12
    labs = [_lab(c) for c in colours]
    assert min(math.dist(a, b) for a, b in itertools.combinations(labs, 2)) >= 20  # viridis: ~8
    assert len(STEP_COLOURS) == 12


def test_the_timeline_legend_explains_its_shading() -> None:
    step: StepSummary = bare_step(0, "concurrency", 4, 10.0)
    step.started_ns, step.ended_ns = T0 + 1_000 * MS, T0 + 9_000 * MS
    step.steady_started_ns, step.steady_ended_ns = T0 + 2_000 * MS, T0 + 8_000 * MS
    summary = bare_summary([step])
    samples = samples_from_records(make_records(0, 5, 1.0, 2.0, T0 + 1_000 * MS))
    fig = timeline_figure.draw_timeline(summary, samples, [])
    assert len(fig.legends) == 1
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert texts == list(timeline_figure.SHADING_LABELS)
    assert "grey" in texts[0] and "steady" in texts[1]
    handles = fig.legends[0].legend_handles
    steady = next(p for p in fig.axes[0].patches if p.get_gid() == "steady")
    assert handles[1].get_facecolor()[:3] == steady.get_facecolor()[:3]  # type: ignore[union-attr]


def test_tail_points_keep_the_largest_value_on_the_scale() -> None:
    pts = [(1.0, 0.25), (2.0, 0.5), (3.0, 0.75), (4.0, 1.0)]
    ys = [y for _, y in cdf_figure.tail_points(pts)]
    assert ys == pytest.approx([-math.log10(1 - f) for f in (0.125, 0.375, 0.625, 0.875)])
    assert cdf_figure.tail_y(0.99) == pytest.approx(2.0)
