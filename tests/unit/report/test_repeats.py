"""Run-to-run spread of repeats, on tiny hand-made sweeps whose figures are worked out here."""

from __future__ import annotations

import math
from pathlib import Path

from loadgen.compare.repeats import REPEAT_METRICS, RepeatSpread, Spread, repeat_dirs, spread
from loadgen.report.repeats import render_console, render_markdown, write_spread
from loadgen.summary import Distribution, StepSummary, Summary

from .conftest import bare_step, bare_summary

DIRS = ["r/repeat-1", "r/repeat-2", "r/repeat-3"]


def sweep(ttft: float, rps: float, second: int = 4, steps: int = 2) -> Summary:
    """Concurrency 1 (TTFT p99 ``ttft``, ``rps`` req/s) then ``second`` (TTFT p99 20 ms)."""
    first = bare_step(0, "concurrency", 1, ttft)
    first.throughput.requests_per_s = rps
    first.throughput.output_tokens_per_s = 10 * rps
    rest = [bare_step(i, "concurrency", second * i, 20.0) for i in range(1, steps)]
    return bare_summary([first, *rest])


def by_metric(step_metrics: list[Spread]) -> dict[str, Spread]:
    return {m.metric: m for m in step_metrics}


def test_spread_by_hand() -> None:
    s = spread([sweep(10.0, 9.0), sweep(12.0, 10.0), sweep(14.0, 14.0)], DIRS)
    assert (s.repeats, s.dirs) == (3, DIRS)
    assert [(st.index, st.label) for st in s.steps] == [(0, "concurrency 1"), (1, "concurrency 4")]
    first = by_metric(s.steps[0].metrics)
    # e2e is in no step of these sweeps: not a row
    assert list(first) == [m for m in REPEAT_METRICS if not m.startswith("e2e_ms")]
    # TTFT p99 10, 12, 14: mean 12, deviations -2, 0, 2 -> variance 8 / (3 - 1) = 4
    assert first["ttft_ms.p99"] == Spread(
        metric="ttft_ms.p99", values=[10, 12, 14], mean=12, std=2, min=10, max=14, cv=2 / 12
    )
    # req/s 9, 10, 14: mean 11, deviations -2, -1, 3 -> variance 14 / 2 = 7
    rps = first["throughput.requests_per_s"]
    assert (rps.mean, rps.min, rps.max) == (11, 9, 14)
    assert math.isclose(rps.std or 0, math.sqrt(7)) and math.isclose(rps.cv or 0, math.sqrt(7) / 11)
    # the same in every repeat: no spread; a mean of 0 has no cv
    second = by_metric(s.steps[1].metrics)
    assert (second["ttft_ms.p99"].std, second["ttft_ms.p99"].cv) == (0, 0)
    assert (second["requests.error_rate"].std, second["requests.error_rate"].cv) == (0, None)


def test_one_repeat_has_no_spread() -> None:
    s = spread([sweep(10.0, 9.0)], DIRS[:1])
    m = by_metric(s.steps[0].metrics)["ttft_ms.p99"]
    assert (m.values, m.mean, m.std, m.min, m.max, m.cv) == ([10], 10, None, 10, 10, None)


def test_no_repeats() -> None:
    assert spread([], []) == RepeatSpread(repeats=0, dirs=[], steps=[])


def test_only_steps_every_repeat_ran_at_the_same_load() -> None:
    runs = [sweep(10.0, 9.0, steps=3), sweep(12.0, 9.0, second=8, steps=3), sweep(14.0, 9.0)]
    s = spread(runs, DIRS)
    # step 1 ran at concurrency 8 in one repeat, step 2 is missing from another
    assert [st.index for st in s.steps] == [0]


def test_a_metric_missing_from_one_repeat_is_left_out() -> None:
    runs = [sweep(10.0, 9.0), sweep(12.0, 9.0), sweep(14.0, 9.0)]
    for run, e2e in zip(runs, (30.0, 31.0, None), strict=True):
        step: StepSummary = run.steps[0]
        step.e2e_ms = Distribution(count=10, p50=e2e, p99=e2e)
    first = by_metric(spread(runs, DIRS).steps[0].metrics)
    assert "e2e_ms.p50" not in first and "ttft_ms.p99" in first
    runs[2].steps[0].e2e_ms = Distribution(count=10, p50=32.0, p99=32.0)
    assert by_metric(spread(runs, DIRS).steps[0].metrics)["e2e_ms.p50"].values == [30, 31, 32]


def test_renderings() -> None:
    s = spread([sweep(10.0, 9.0), sweep(12.0, 10.0), sweep(14.0, 14.0)], DIRS)
    md = render_markdown(s).splitlines()
    assert md[0] == "# Run-to-run spread over 3 repeats"
    assert "## step 0 · concurrency 1" in md and "## step 1 · concurrency 4" in md
    assert "| ttft_ms.p99 | 12 | 2 | 10 | 14 | 16.7% | 10, 12, 14 |" in md
    assert "| requests.error_rate | 0 | 0 | 0 | 0 | - | 0, 0, 0 |" in md
    one = render_markdown(spread([sweep(10.0, 9.0)], DIRS[:1])).splitlines()
    assert "| ttft_ms.p99 | 10 | - | 10 | 10 | - | 10 |" in one
    console = render_console(s).splitlines()
    assert console[0] == "spread over 3 repeats (mean ± std, cv):"
    # only the headline metrics (tokens/s = 10 x req/s; ITL p50 5 ms in every step)
    assert console[1] == (
        "  step 0 · concurrency 1: ttft_ms.p99 12 ± 2 (16.7%); itl_ms.p50 5 ± 0 (0.0%); "
        "throughput.output_tokens_per_s 110 ± 26.5 (24.1%)"
    )
    alone = render_console(spread([sweep(10.0, 9.0)], DIRS[:1])).splitlines()
    assert alone[1] == (
        "  step 0 · concurrency 1: ttft_ms.p99 10; itl_ms.p50 5; throughput.output_tokens_per_s 90"
    )


def test_repeat_dirs_and_written_files(tmp_path: Path) -> None:
    assert repeat_dirs(tmp_path, 3) == [
        tmp_path / "repeat-1",
        tmp_path / "repeat-2",
        tmp_path / "repeat-3",
    ]
    assert repeat_dirs(tmp_path, 0) == []
    s = spread([sweep(10.0, 9.0), sweep(12.0, 10.0)], DIRS[:2])
    written = write_spread(s, tmp_path)
    assert written == [tmp_path / "repeats.json", tmp_path / "repeats.md"]
    assert RepeatSpread.model_validate_json(written[0].read_text()) == s
    assert written[1].read_text() == render_markdown(s)
