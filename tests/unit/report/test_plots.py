from __future__ import annotations

import pytest

from loadgen.records import Record
from loadgen.report.plots import cdf_figure, figures, load_figures, sample_series, timeline_figure
from loadgen.report.plots import series as plots
from loadgen.results.samples import samples_from_records
from loadgen.summary import Summary

from .conftest import MS, T0


def _labels(ax: object) -> list[str]:
    return [line.get_label() for line in ax.get_lines()]  # type: ignore[attr-defined]


def test_curve_series_is_latency_against_output_tokens(
    run_data: tuple[Summary, list[Record]],
) -> None:
    summary, _ = run_data
    series = plots.curve_series(summary)
    assert set(series) == {"TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99", "ITL p50", "ITL p99"}
    ok = summary.steps[:3]  # the dead step has no latency and is left out
    assert series["TTFT p99"] == [(s.throughput.output_tokens_per_s, s.ttft_ms.p99) for s in ok]
    assert [y for _, y in series["TPOT p50"]] == [2.0, 3.0, 4.0]
    assert plots.sla_bounds(summary) == {"TTFT p50": 50.0, "TPOT p50": 10.0}
    labels = [t for _, _, t in plots.point_labels(summary, "ttft_ms", "p99")]
    assert labels == ["c=1", "c=4", "c=16"]


def test_curve_figure_holds_the_series_and_sla_lines(
    run_data: tuple[Summary, list[Record]],
) -> None:
    summary, _ = run_data
    fig = load_figures.draw_curve(summary)
    ax1, ax2 = fig.axes
    verdict = "verdict: c=4 (highest load meeting the SLA)"
    assert set(_labels(ax1)) == {"TTFT p50", "TTFT p99", "SLA TTFT p50 ≤ 50 ms", verdict}
    p99 = next(line for line in ax1.get_lines() if line.get_label() == "TTFT p99")
    assert list(p99.get_ydata()) == [s.ttft_ms.p99 for s in summary.steps[:3]]
    sla = next(line for line in ax1.get_lines() if line.get_label().startswith("SLA"))
    assert list(sla.get_ydata()) == [50.0, 50.0]
    assert set(_labels(ax2)) == {
        "TPOT p50",
        "TPOT p99",
        "ITL p50",
        "ITL p99",
        "SLA TPOT p50 ≤ 10 ms",
        verdict,
    }
    assert ax1.get_xlabel() == "output tokens/s" and ax1.get_ylabel() == "TTFT (ms)"
    # all three points share x = 50 tok/s: c=16's, at the top, finds no place off the legend
    assert {"c=1", "c=4"} <= {t.get_text() for t in ax1.texts} <= {"c=1", "c=4", "c=16"}


def test_throughput_series_and_figure(run_data: tuple[Summary, list[Record]]) -> None:
    summary, _ = run_data
    series = plots.throughput_series(summary)
    assert [x for x, _ in series["throughput"]] == [1.0, 4.0, 16.0, 32.0]
    assert series["goodput"][2] == (16.0, 0.0)
    fig = load_figures.draw_throughput(summary)
    assert _labels(fig.axes[0]) == ["throughput (req/s)", "goodput (req/s)"]
    assert _labels(fig.axes[1]) == ["output tokens/s"]
    assert fig.axes[0].get_xlabel() == "concurrency (requests in flight)"
    assert fig.axes[0].get_xscale() == "log"  # 1..32 spans 8x or more


def test_cdf_series_from_records(run_data: tuple[Summary, list[Record]]) -> None:
    summary, records = run_data
    samples = samples_from_records(records)
    ttft = sample_series.cdf_series(summary, samples, "ttft_ms")
    assert list(ttft) == ["c=1", "c=4", "c=16"]
    xs = [x for x, _ in ttft["c=1"]]
    assert xs == pytest.approx([10.0 + j for j in range(20)])
    assert ttft["c=1"][-1][1] == 1.0 and ttft["c=1"][0][1] == pytest.approx(0.05)
    itl = sample_series.cdf_series(summary, samples, "itl_ms")
    assert [x for x, _ in itl["c=4"]] == pytest.approx([3.0] * 80)  # 20 requests x 4 gaps
    small = sample_series.cdf_series(summary, samples, "ttft_ms", max_points=5)
    assert len(small["c=1"]) == 5 and small["c=1"][-1] == (pytest.approx(29.0), 1.0)
    fig = cdf_figure.draw_cdf(summary, samples)
    assert [x for x in _labels(fig.axes[0]) if x.startswith("c=")] == ["c=1", "c=4", "c=16"]


def test_timeline_in_flight_and_tokens(run_data: tuple[Summary, list[Record]]) -> None:
    summary, records = run_data
    samples = samples_from_records(records)
    series = sample_series.timeline_series(summary, samples, [])
    in_flight = series["in flight"]
    # one request at a time during step 0: time-mean in flight never exceeds 1
    assert max(y for x, y in in_flight if x < 4.9) <= 1.0 + 1e-9
    # total area = sum of request durations
    width = in_flight[1][0] - in_flight[0][0]
    busy = sum((r.end_ns - r.sent_ns) / 1e9 for r in records)
    assert sum(y for _, y in in_flight) * width == pytest.approx(busy, rel=1e-6)
    tokens = series["output tokens/s"]
    assert sum(y for _, y in tokens) * width == pytest.approx(5 * 60, rel=1e-6)
    assert sample_series.timeline_origin_ns(summary, samples) == T0
    spans = sample_series.step_spans(summary, T0)
    assert spans[1][0] == pytest.approx(5.0) and spans[1][2] == "c=4"


def test_timeline_with_telemetry(run_data: tuple[Summary, list[Record]]) -> None:
    summary, records = run_data
    rows = [
        {"type": "server", "t_ns": T0 + 2_000 * MS, "running": 3, "waiting": 1, "kv_usage": 0.5},
        {"type": "gpu", "source": "a", "gpu": 0, "t_ns": T0 + 1_000 * MS, "util_gpu_pct": 70.0},
        {"type": "gap", "t_ns": T0, "error": "x"},
    ]
    series = sample_series.timeline_series(summary, samples_from_records(records), rows)
    assert series["server waiting"] == [(2.0, 1.0)]
    assert series["KV cache usage"] == [(2.0, 50.0)]
    assert series["GPU0 util"] == [(1.0, 70.0)]
    fig = timeline_figure.draw_timeline(summary, samples_from_records(records), rows)
    ylabels = [ax.get_ylabel() for ax in fig.axes]
    assert ylabels == [
        "requests in flight",
        "output tokens/s",
        "server queue (requests)",
        "KV cache usage (%)",
        "GPU utilisation (%)",
    ]
    assert _labels(fig.axes[2]) == ["server running", "server waiting"]


def test_telemetry_series_vs_load(run_data: tuple[Summary, list[Record]]) -> None:
    summary, _ = run_data
    series = plots.telemetry_series(summary)
    assert series["GPU util mean"] == [(1.0, 40.0), (4.0, 80.0)]
    assert series["GPU memory peak"] == [(1.0, 8.0)]
    assert series["GPU power mean"] == [(1.0, 150.0)]
    fig = load_figures.draw_telemetry(summary)
    assert [ax.get_title() for ax in fig.axes] == ["GPU utilisation", "GPU memory", "GPU power"]
    assert _labels(fig.axes[0]) == ["GPU util mean", "GPU util max"]


def test_write_plots_skips_what_has_no_data(
    tmp_path: object, run_data: tuple[Summary, list[Record]]
) -> None:
    from pathlib import Path

    summary, _ = run_data
    out = Path(str(tmp_path)) / "plots"
    out.mkdir()
    (out / "latency_cdf.png").write_bytes(b"stale")
    written, notes = figures.write_plots(summary, None, [], out)
    assert notes == []
    assert set(written) == {"curve", "telemetry", "throughput"}
    assert not (out / "latency_cdf.png").exists()  # stale plot removed
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in written.values())


def test_turn_series_and_figure(
    rich_data: tuple[Summary, list[Record]], run_data: tuple[Summary, list[Record]]
) -> None:
    summary, _ = rich_data
    turns = summary.steps[0].ttft_by_turn or {}
    p50 = plots.turn_series(summary, "p50")
    assert list(p50) == ["c=4"]  # the trace step ran no sessions
    assert p50["c=4"] == [(0.0, 8.0), (1.0, 18.0), (2.0, 27.5)]
    p99 = plots.turn_series(summary, "p99")
    assert p99["c=4"] == [(float(t), turns[t].p99) for t in ("0", "1", "2")]
    fig = figures.draw_turns(summary)
    ax1, ax2 = fig.axes
    assert [ax.get_title() for ax in fig.axes] == ["TTFT p50 by turn", "TTFT p99 by turn"]
    (line,) = ax2.get_lines()
    assert line.get_label() == "c=4"
    assert list(line.get_xdata()) == [0.0, 1.0, 2.0]
    assert list(line.get_ydata()) == [turns[t].p99 for t in ("0", "1", "2")]
    assert list(ax1.get_lines()[0].get_ydata()) == [8.0, 18.0, 27.5]
    plain, _ = run_data
    assert plots.turn_series(plain, "p50") == {}


def test_turn_series_one_line_per_step(rich_data: tuple[Summary, list[Record]]) -> None:
    summary, _ = rich_data
    summary.steps[1].ttft_by_turn = {"1": summary.steps[0].ttft_ms, "0": summary.steps[0].ttft_ms}
    series = plots.turn_series(summary, "p50")
    assert list(series) == ["c=4", "trace x0.5"]
    assert [x for x, _ in series["trace x0.5"]] == [0.0, 1.0]  # in turn order
    assert _labels(figures.draw_turns(summary).axes[0]) == ["c=4", "trace x0.5"]


def test_trace_steps_are_placed_at_their_achieved_rate(
    rich_data: tuple[Summary, list[Record]],
) -> None:
    summary, _ = rich_data
    trace = summary.steps[1]
    summary.steps = [trace]
    assert plots.point_label(trace) == "trace x0.5"
    assert plots.load_x(trace) == trace.throughput.requests_per_s
    series = plots.throughput_series(summary)
    assert series["throughput"] == [
        (trace.throughput.requests_per_s, trace.throughput.requests_per_s)
    ]
    assert series["output tokens/s"][0][0] == trace.throughput.requests_per_s
    assert plots.load_axis_label(summary) == "achieved rate (req/s), trace replay"
    fig = load_figures.draw_throughput(summary)
    assert fig.axes[0].get_xlabel() == "achieved rate (req/s), trace replay"
    assert list(fig.axes[0].get_lines()[0].get_xdata()) == [trace.throughput.requests_per_s]
    # the latency-throughput curve: x stays output tokens/s, the point says the time scale
    assert plots.point_labels(summary, "ttft_ms", "p99") == [
        (trace.throughput.output_tokens_per_s, trace.ttft_ms.p99, "trace x0.5")
    ]
    # a trace step where nothing succeeded has no achieved rate: no point
    dead = trace.model_copy(update={"requests": trace.requests.model_copy(update={"ok": 0})})
    assert plots.load_x(dead) is None


def test_load_axis_label_skips_the_probe(run_data: tuple[Summary, list[Record]]) -> None:
    summary, _ = run_data
    from loadgen.summary import LoadPoint

    summary.steps[0].role = "probe"
    for step in summary.steps[1:]:
        step.load = LoadPoint(mode="rate", rate=2.0, arrival="poisson")
    assert plots.load_axis_label(summary) == "offered rate (req/s)"


def test_write_plots_draws_ttft_by_turn_for_sessions(
    tmp_path: object, rich_data: tuple[Summary, list[Record]]
) -> None:
    from pathlib import Path

    summary, _ = rich_data
    out = Path(str(tmp_path)) / "plots"
    written, notes = figures.write_plots(summary, None, [], out)
    assert notes == []
    assert written["turns"] == out / "ttft_by_turn.png"
    assert written["turns"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
