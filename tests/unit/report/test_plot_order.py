"""Curves read right: points in load order, an sla-search's bracket marked, an auto sweep's
probe kept apart, a log TTFT CDF, the metrics profile named.

Checked through the data handed to matplotlib, not pixels.
"""

from __future__ import annotations

from loadgen.records import Record
from loadgen.report.plots import cdf_figure, load_figures, sample_series, timeline_figure
from loadgen.report.plots import series as plots
from loadgen.results.samples import samples_from_records
from loadgen.summary import Summary, Verdict

from .conftest import MS, T0, bare_step, bare_summary, make_records


def _sla_search() -> Summary:
    """Bisection order 1 -> 64 -> 32 -> 16 -> 24; 16 passes, 24 fails (the bracket)."""
    loads = [(1, 10.0), (64, 900.0), (32, 400.0), (16, 60.0), (24, 150.0)]
    steps = [bare_step(i, "concurrency", c, t) for i, (c, t) in enumerate(loads)]
    verdict = Verdict(mode="concurrency", sweep="sla-search", max_passing=16, bracket=[16, 24])
    return bare_summary(steps, verdict)


def _line(ax: object, label: str) -> object:
    return next(x for x in ax.get_lines() if x.get_label() == label)  # type: ignore[attr-defined]


def test_sla_search_points_are_joined_in_load_order() -> None:
    summary = _sla_search()
    assert [x for x, _ in plots.throughput_series(summary)["throughput"]] == [1, 16, 24, 32, 64]
    assert [t for *_, t in plots.point_labels(summary, "ttft_ms", "p99")] == [
        "c=1", "c=16", "c=24", "c=32", "c=64",
    ]  # fmt: skip
    assert [y for _, y in plots.curve_series(summary)["TTFT p99"]] == [10, 60, 150, 400, 900]
    fig = load_figures.draw_curve(summary)
    assert list(_line(fig.axes[0], "TTFT p99").get_ydata()) == [10, 60, 150, 400, 900]  # type: ignore[attr-defined]
    fig = load_figures.draw_throughput(summary)
    assert list(_line(fig.axes[0], "throughput (req/s)").get_xdata()) == [1, 16, 24, 32, 64]  # type: ignore[attr-defined]


def test_sla_search_bracket_is_marked() -> None:
    summary = _sla_search()
    assert [(label, s.load.concurrency) for label, s in plots.bracket_marks(summary)] == [
        ("SLA passes (c=16)", 16),
        ("SLA fails (c=24)", 24),
    ]
    assert plots.curve_bracket(summary, "ttft_ms", "p99") == {
        "SLA passes (c=16)": [(160.0, 60.0)],
        "SLA fails (c=24)": [(200.0, 150.0)],
    }
    fig = load_figures.draw_curve(summary)
    assert list(_line(fig.axes[0], "SLA fails (c=24)").get_ydata()) == [150.0]  # type: ignore[attr-defined]
    fig = load_figures.draw_throughput(summary)
    assert list(_line(fig.axes[0], "SLA passes (c=16)").get_xdata()) == [16.0]  # type: ignore[attr-defined]
    # a list sweep has no bracket
    assert plots.bracket_marks(bare_summary(summary.steps)) == []


def test_auto_sweep_probe_is_not_a_point_of_the_rate_curve() -> None:
    probe = bare_step(0, "concurrency", 64, 500.0, role="probe")
    steps = [probe, *(bare_step(i + 1, "rate", r, 20.0 * r) for i, r in enumerate((6.0, 2.0, 4.0)))]
    summary = bare_summary(steps, Verdict(mode="rate", sweep="auto", saturation_rps=8.0))
    assert [x for x, _ in plots.throughput_series(summary)["throughput"]] == [2.0, 4.0, 6.0]
    assert [t for *_, t in plots.point_labels(summary, "ttft_ms", "p99")] == [
        "2 r/s", "4 r/s", "6 r/s",
    ]  # fmt: skip
    assert plots.point_label(probe) == "probe c=64"
    fig = load_figures.draw_throughput(summary)
    assert fig.axes[0].get_xlabel() == "offered rate (req/s)"
    assert 64 not in list(_line(fig.axes[0], "throughput (req/s)").get_xdata())  # type: ignore[attr-defined]


def _records() -> list[Record]:
    return make_records(0, 20, 1.0, 2.0, T0) + make_records(1, 20, 500.0, 2.0, T0 + 5000 * MS)


def test_ttft_cdf_has_a_log_x_axis_and_itl_keeps_a_linear_one() -> None:
    steps = [bare_step(0, "concurrency", 1, 20.0), bare_step(1, "concurrency", 64, 519.0)]
    summary = bare_summary(steps)
    fig = cdf_figure.draw_cdf(summary, samples_from_records(_records()))
    assert fig.axes[0].get_xscale() == "log"
    assert fig.axes[0].get_xlabel() == "TTFT (ms, log scale)"
    assert fig.axes[1].get_xscale() == "linear"


def test_cdf_lines_are_in_load_order() -> None:
    steps = [bare_step(0, "concurrency", 64, 519.0), bare_step(1, "concurrency", 1, 20.0)]
    series = sample_series.cdf_series(
        bare_summary(steps), samples_from_records(_records()), "ttft_ms"
    )
    assert list(series) == ["c=1", "c=64"]


def test_every_plot_names_the_metrics_profile() -> None:
    summary = _sla_search()
    summary.metrics_profile = "vllm"
    samples = samples_from_records(make_records(0, 5, 1.0, 2.0, T0))
    drawn = [
        load_figures.draw_curve(summary),
        load_figures.draw_throughput(summary),
        cdf_figure.draw_cdf(summary, samples),
        timeline_figure.draw_timeline(summary, samples, []),
    ]
    for fig in drawn:
        assert fig.get_suptitle().endswith("metrics profile: vllm")


def test_load_ticks_do_not_collide() -> None:
    steps = [bare_step(i, "concurrency", c, 10.0) for i, c in enumerate((1, 16, 20, 24, 64))]
    fig = load_figures.draw_throughput(bare_summary(steps))
    ticks = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert ticks == ["1", "16", "24", "64"]  # 20 would sit on 16 and 24
    assert plots.thin_ticks([1, 2, 4, 8, 16, 20, 24, 32, 64]) == [1, 2, 4, 8, 16, 24, 32, 64]
    assert plots.thin_ticks([1, 62, 64]) == [1, 64]


def test_an_inconclusive_step_is_marked_on_the_curves_and_in_the_overview() -> None:
    from loadgen.metrics.sla import decide
    from loadgen.report.blocks import INCONCLUSIVE, Heading, Table
    from loadgen.report.documents.markdown import build_document

    summary = _sla_search()
    from loadgen.summary import SlaCheck

    unsure = summary.steps[1]  # c=64: a bound within loadgen's own error of its value
    unsure.sla.checks = [
        SlaCheck(
            metric="ttft_ms",
            stat="p99",
            bound=905.0,
            value=900.0,
            margin=5.0,
            passed=True,
            verdict="inconclusive",
            client_band=[900.0, 910.0],
            client_error=True,
            reason="loadgen's readings may be up to 10 ms early here",
        )
    ]
    decide(unsure.sla, unsure.requests.ok)
    assert unsure.sla.verdict == "inconclusive" and unsure.sla.cause == "client_error"
    label = plots.INCONCLUSIVE_LABEL
    assert plots.curve_inconclusive(summary, "ttft_ms", "p99") == {label: [(200.0, 900.0)]}
    assert plots.throughput_inconclusive(summary) == {label: [(64.0, 20.0)]}
    assert list(_line(load_figures.draw_curve(summary).axes[0], label).get_ydata()) == [900.0]  # type: ignore[attr-defined]
    assert list(_line(load_figures.draw_throughput(summary).axes[0], label).get_xdata()) == [64.0]  # type: ignore[attr-defined]
    overview = next(b for b in build_document(summary) if isinstance(b, Table))
    assert [row[-1] for row in overview.rows if row[0] == "1"] == [INCONCLUSIVE]
    headings = [b.text for b in build_document(summary) if isinstance(b, Heading)]
    assert sum(h.endswith("— SLA inconclusive") for h in headings) == 1


def test_the_timeline_shades_the_steady_window() -> None:
    step = bare_step(0, "concurrency", 4, 10.0)
    step.started_ns, step.ended_ns = T0 + 1_000 * MS, T0 + 9_000 * MS
    step.steady_started_ns, step.steady_ended_ns = T0 + 2_000 * MS, T0 + 8_000 * MS
    summary = bare_summary([step])
    assert sample_series.steady_spans(summary, T0) == [(2.0, 8.0, "c=4")]
    samples = samples_from_records(make_records(0, 5, 1.0, 2.0, T0 + 1_000 * MS))
    fig = timeline_figure.draw_timeline(summary, samples, [])
    shaded = [p for p in fig.axes[0].patches if p.get_gid() == "steady"]
    assert len(shaded) == 1 and "steady window" in fig.legends[0].get_texts()[1].get_text()
