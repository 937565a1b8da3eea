"""frontier.png, the steps.csv columns and facts line, and ``loadgen compare``'s overlay
of two runs' fronts, read back from the data handed to matplotlib."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from loadgen.cli import main
from loadgen.compare.runs import load_runs
from loadgen.metrics.columns import StepColumns
from loadgen.metrics.frontier import frontier_point
from loadgen.records import Record
from loadgen.report.documents.writer import write_reports
from loadgen.report.frontier import step_text
from loadgen.report.plots import figures
from loadgen.report.plots.compare_frontier import FRONTS_FILE, compare_fronts
from loadgen.report.plots.frontier_figure import MISS_COLOUR, draw_frontier, draw_fronts
from loadgen.report.plots.frontier_view import PER_GPU, PER_RUN, frontier_view
from loadgen.report.step_table import steps_table
from loadgen.results.files import write_summary
from loadgen.summary import FrontierPoint, Summary

from .conftest import bare_step, bare_summary

#: (concurrency, tok/s per user, output tok/s per GPU, meets the SLA)
POINTS = (
    (1, 100.0, 50.0, True),
    (2, 90.0, 95.0, True),
    (4, 60.0, 180.0, True),
    (8, 55.0, 170.0, True),  # dominated by c=4: less of both
    (16, 30.0, 300.0, False),  # on the front, but it missed the SLA
)


def _summary(gpus: int | None = 2) -> Summary:
    steps = []
    for i, (c, x, y, meets) in enumerate(POINTS):
        step = bare_step(i, "concurrency", c, 20.0)
        step.sla.verdict = "met" if meets else "missed"
        step.frontier = FrontierPoint(
            interactivity_tok_s=x, interactivity_requests=10, tpot_tok_s=x * 1.1,
            output_tokens_per_s=y * 2, gpus=gpus, gpus_from="cost.gpus" if gpus else None,
            output_tokens_per_s_per_gpu=y if gpus else None,
            usd_per_million_output_tokens=1.5 if i == 0 else None,
        )  # fmt: skip
        steps.append(step)
    summary = bare_summary(steps)
    summary.sla = {"tpot_ms": {"p50": 25.0}}
    return summary


def _by_gid(fig: object) -> dict[str, object]:
    ax = fig.axes[0]  # type: ignore[attr-defined]
    return {line.get_gid(): line for line in ax.get_lines()}


def test_the_view_has_the_points_the_front_and_the_best_under_the_sla() -> None:
    view = frontier_view(_summary())
    assert view.points == tuple((x, y) for _, x, y, _ in POINTS)
    assert [view.label(i) for i in view.front] == ["c=16", "c=4", "c=2", "c=1"]
    assert view.best is not None and view.label(view.best) == "c=4"  # c=16 missed
    assert view.y_label == PER_GPU
    # without a GPU count the run's own throughput, for every point
    bare = frontier_view(_summary(gpus=None))
    assert bare.y_label == PER_RUN
    assert [y for _, y in bare.points] == [y * 2 for _, _, y, _ in POINTS]


def test_the_figure_draws_each_point_the_front_and_hollow_misses() -> None:
    fig = draw_frontier(_summary())
    lines = _by_gid(fig)
    meets, misses, front, best = (lines[g] for g in ("meets", "misses", "front", "best"))
    assert list(meets.get_xdata()) == [100.0, 90.0, 60.0, 55.0]  # type: ignore[attr-defined]
    assert list(meets.get_ydata()) == [50.0, 95.0, 180.0, 170.0]  # type: ignore[attr-defined]
    assert list(misses.get_xdata()) == [30.0]  # type: ignore[attr-defined]
    assert misses.get_markerfacecolor() == "none"  # type: ignore[attr-defined]
    assert misses.get_color() == MISS_COLOUR  # type: ignore[attr-defined]
    assert list(front.get_xdata()) == [30.0, 60.0, 90.0, 100.0]  # type: ignore[attr-defined]
    assert list(front.get_ydata()) == [300.0, 180.0, 95.0, 50.0]  # type: ignore[attr-defined]
    assert front.get_drawstyle() == "steps-pre"  # type: ignore[attr-defined]
    assert (list(best.get_xdata()), list(best.get_ydata())) == ([60.0], [180.0])  # type: ignore[attr-defined]
    assert best.get_label() == "best under the SLA: c=4"  # type: ignore[attr-defined]
    ax = fig.axes[0]
    assert ax.get_ylabel() == PER_GPU and ax.get_xlabel().startswith("interactivity")
    (shade,) = [p for p in ax.patches if p.get_gid() == "sla"]
    assert shade.get_x() + shade.get_width() == pytest.approx(1000.0 / 25.0)  # type: ignore[attr-defined]
    labels = {t.get_text() for t in ax.texts}
    assert labels and labels <= {f"c={c}" for c, *_ in POINTS}


def test_every_sweep_with_points_gets_frontier_png(
    tmp_path: Path, run_data: tuple[Summary, list[Record]]
) -> None:
    written, notes = figures.write_plots(_summary(), None, [], tmp_path / "plots")
    assert notes == [] and written["frontier"].name == "frontier.png"
    assert written["frontier"].read_bytes()[:4] == b"\x89PNG"
    summary = _summary()
    (tmp_path / "run").mkdir()
    write_summary(summary, tmp_path / "run" / "summary.json")
    write_reports(tmp_path / "run")
    md = (tmp_path / "run" / "report.md").read_text()
    assert "![frontier](plots/frontier.png)" in md
    assert (
        "- frontier: best under the SLA: c=4 (60.0 tok/s per user, 180 output tokens/s per GPU)"
        in md
    )
    plain, _ = figures.write_plots(run_data[0], None, [], tmp_path / "plain")
    assert "frontier" not in plain  # no step has a frontier point


def test_csv_columns_and_the_facts_line() -> None:
    summary = _summary()
    columns, rows = steps_table(summary)
    assert "frontier_interactivity_tok_s" in columns
    assert [r["frontier_output_tokens_per_s_per_gpu"] for r in rows] == [y for *_, y, _ in POINTS]
    assert rows[0]["frontier_gpus"] == 2
    assert step_text(summary.steps[0]) == (
        "frontier: 100.0 tok/s per user (1000/TPOT p50 110.0) · 50 output tok/s per GPU "
        "(2 GPUs, cost.gpus) · 1.50 USD per M output tokens"
    )
    bare = _summary(gpus=None).steps[1]
    assert step_text(bare) == "frontier: 90.0 tok/s per user (1000/TPOT p50 99.0)"


def _with_points(summary: Summary, records: list[Record], scale: float) -> Summary:
    """The summary with each step's point made from its own records (1 GPU), its
    throughput scaled by ``scale`` (a faster build of the same model)."""
    out = summary.model_copy(deep=True)
    for step in out.steps:
        cols = StepColumns.of([r for r in records if r.step == step.index])
        step.throughput.output_tokens_per_s *= scale
        step.frontier = frontier_point(step, cols, 1)
    return out


def test_compare_overlays_two_runs_fronts_and_names_each_best(
    make_run: Callable[..., Path],
    run_data: tuple[Summary, list[Record]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    summary, records = run_data
    a = make_run("A", _with_points(summary, records, 1.0), records)
    b = make_run("B", _with_points(summary, records, 2.0), records)
    runs = load_runs([a, b])
    views = compare_fronts([r.summary for r in runs])
    # c=32 failed every request: no point; c=1, 4 met the SLA, c=16 missed it
    assert [[v.label(i) for i in range(len(v.points))] for v in views] == [
        ["c=1", "c=4", "c=16"]
    ] * 2
    assert [
        y_b / y_a for (_, y_a), (_, y_b) in zip(views[0].points, views[1].points, strict=True)
    ] == pytest.approx([2.0] * 3)
    fig = draw_fronts(["A", "B"], views)
    ax = fig.axes[0]
    fronts = {ln.get_label(): ln for ln in ax.get_lines() if ln.get_gid() == "front"}
    assert set(fronts) == {"A: Pareto front", "B: Pareto front"}
    assert list(fronts["B: Pareto front"].get_ydata()) == pytest.approx(
        [2 * y for y in fronts["A: Pareto front"].get_ydata()]
    )
    assert fronts["A: Pareto front"].get_color() != fronts["B: Pareto front"].get_color()
    misses = {ln.get_label(): ln for ln in ax.get_lines() if ln.get_gid() == "misses"}
    b_miss = misses["B: misses the SLA"]  # c=16, hollow in B's colour
    assert b_miss.get_markerfacecolor() == "none"
    assert b_miss.get_color() == fronts["B: Pareto front"].get_color()
    bests = [ln.get_label() for ln in ax.get_lines() if ln.get_gid() == "best"]
    best_a = views[0].label(views[0].best)  # type: ignore[arg-type]
    assert bests == [f"A: best under the SLA: {best_a}", f"B: best under the SLA: {best_a}"]
    labels = {t.get_text() for t in ax.texts}  # the loads, where they fit
    assert labels and labels <= {"c=1", "c=4", "c=16"}
    out = tmp_path / "cmp"
    main(["compare", str(a), str(b), "--out", str(out)])
    printed = capsys.readouterr().out
    assert f"A: best under the SLA: {best_a} (" in printed and "B: best under the SLA:" in printed
    assert (out / FRONTS_FILE).read_bytes()[:4] == b"\x89PNG"
    md = (out / "comparison.md").read_text()
    assert FRONTS_FILE in md and f"- B: best under the SLA: {best_a} (" in md
