from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from loadgen.cli import main
from loadgen.compare.match import matched_steps
from loadgen.compare.runs import load_runs
from loadgen.metrics.step import summarize_step
from loadgen.records import Record
from loadgen.report.documents.comparison import (
    comparison_tables,
    format_table,
    overlay_series,
    throughput_overlay,
)
from loadgen.scenario import SlaSpec
from loadgen.summary import Summary

from .conftest import MS, SLA, T0, make_records


def _runs(make_run: Callable[..., Path], data: tuple[Summary, list[Record]]) -> tuple[Path, Path]:
    """Run A, and run B: A with the c=4 step's TTFT 20 ms longer (40..59 ms) and c=16 missing."""
    summary, records = data
    a = make_run("A", summary, records)
    slow = make_records(1, 20, 40.0, 3.0, T0 + 5_000 * MS)
    slower = summary.model_copy(deep=True)
    slower.steps[1] = summarize_step(1, summary.steps[1].load, slow, SlaSpec.model_validate(SLA))
    del slower.steps[2]
    b = make_run("B", slower, [r for r in records if r.step not in (1, 2)] + slow)
    return a, b


def test_tables_match_steps_by_load(
    make_run: Callable[..., Path], run_data: tuple[Summary, list[Record]]
) -> None:
    a, b = _runs(make_run, run_data)
    runs = load_runs([a, b])
    matches = matched_steps(runs)
    assert [label for label, _ in matches] == ["concurrency 1", "concurrency 4", "concurrency 32"]
    tables = dict(comparison_tables(runs))
    ttft = tables["TTFT p99 (ms)"]
    assert ttft.header == ("load", "A (ms)", "B (ms)", "Δ B (%)")
    assert ttft.rows[0] == ("concurrency 1", "28.81", "28.81", "+0.0%")
    assert ttft.rows[1] == ("concurrency 4", "38.81", "58.81", "+51.5%")
    assert ttft.rows[2] == ("concurrency 32", "–", "–", "–")
    text = format_table(ttft)
    assert text.splitlines()[2].split() == ["concurrency", "4", "38.81", "58.81", "+51.5%"]


def test_overlay_series(
    make_run: Callable[..., Path], run_data: tuple[Summary, list[Record]]
) -> None:
    a, b = _runs(make_run, run_data)
    runs = load_runs([a, b])
    series = overlay_series(runs, "ttft_ms")
    assert set(series) == {"A p50", "A p99", "B p50", "B p99"}
    assert [y for _, y in series["B p99"]] == pytest.approx([28.81, 58.81])
    assert [x for x, _ in throughput_overlay(runs)["A"]] == [1.0, 4.0, 16.0, 32.0]


def test_compare_command_exit_codes(
    make_run: Callable[..., Path],
    run_data: tuple[Summary, list[Record]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The first lines are one conclusion per gate; a p99 of 20 requests is not tested."""
    a, b = _runs(make_run, run_data)
    out = tmp_path / "cmp"
    gates = ["--fail-if", "ttft_ms.p50 > +10%", "--fail-if", "ttft_ms.p99 > +10%"]
    with pytest.raises(SystemExit) as info:
        main(["compare", str(a), str(b), "--out", str(out), *gates])
    assert info.value.code == 1
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0].startswith("ttft_ms.p50 > +10%: REGRESSION (concurrency 1: within the bound; ")
    assert "concurrency 4: regression, +67.80%, 95% CI" in lines[0]
    assert lines[1].startswith("ttft_ms.p99 > +10%: inconclusive (")
    assert "concurrency 4: too few requests, +51.53%; concurrency 32: not checked)" in lines[1]
    assert "ttft_ms.p50 > +10% at concurrency 4: 29.5 -> 49.5 (+67.80%, 95% CI" in captured.out
    assert "REGRESSION, beyond the bound by 57.80%" in captured.out
    assert (
        "ttft_ms.p99 > +10% at concurrency 4: 38.81 -> 58.81 (+51.53%): beyond the bound, "
        "inconclusive: the baseline has 20 requests, too few to test a p99 (about 101 would); "
        "not failed"
    ) in captured.out
    assert "regression: 1 gate check(s) failed" in captured.err
    assert {p.name for p in out.iterdir()} >= {
        "comparison.md", "comparison.html", "compare_ttft_ms.png", "compare_throughput.png"
    }  # fmt: skip
    md = (out / "comparison.md").read_text()
    assert "| concurrency 4 | 38.81 | 58.81 | +51.5% |" in md
    assert "ttft_ms.p50 > +10%: REGRESSION (" in md
    # the other way round: B is the baseline, A is faster: no regression, exit 0
    main(["compare", str(b), str(a), "--out", str(out), *gates])
    printed = capsys.readouterr().out
    assert printed.startswith("ttft_ms.p50 > +10%: no regression (")
    assert "within the bound" in printed


def test_the_comparison_goes_beside_the_first_run(
    make_run: Callable[..., Path],
    run_data: tuple[Summary, list[Record]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    a, b = _runs(make_run, run_data)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    main(["compare", str(a), str(b)])
    beside = a.resolve().parent / "compare-A-vs-B"
    assert (beside / "comparison.md").is_file()
    assert list(elsewhere.iterdir()) == []
    assert capsys.readouterr().out.rstrip().endswith(f"comparison: {beside}")


def test_gate_does_not_fail_on_noise(
    make_run: Callable[..., Path],
    run_data: tuple[Summary, list[Record]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """B's summary says p50 +20%, but its requests are A's: the CI includes 0, exit 0."""
    summary, records = run_data
    a = make_run("A", summary, records)
    noisy = summary.model_copy(deep=True)
    noisy.steps[0].ttft_ms.p50 = (summary.steps[0].ttft_ms.p50 or 0) * 1.2
    b = make_run("B", noisy, records)
    main(
        ["compare", str(a), str(b), "--out", str(tmp_path / "c"), "--fail-if", "ttft_ms.p50 > 10%"]
    )
    out = capsys.readouterr().out
    assert "at concurrency 1: 19.5 -> 23.4 (+20.00%, 95% CI" in out
    assert "beyond the bound but not significant (CI includes 0): not failed" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["--fail-if", "ttft_ms.p99 > lots"],
        ["--fail-if", "nope.p99 > 10%"],
    ],
)
def test_compare_bad_input_exits_2_with_one_line(
    make_run: Callable[..., Path],
    run_data: tuple[Summary, list[Record]],
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
) -> None:
    a, b = _runs(make_run, run_data)
    with pytest.raises(SystemExit) as info:
        main(["compare", str(a), str(b), *argv])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("loadgen: --fail-if ")


def test_compare_and_report_need_results_dirs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (["compare", str(tmp_path)], ["compare", str(tmp_path), str(tmp_path / "x")],
                 ["report", str(tmp_path / "missing")]):  # fmt: skip
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2
        assert capsys.readouterr().err.count("\n") == 1


def test_report_command_rebuilds(results_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["report", str(results_dir)])
    printed = capsys.readouterr().out.split()
    assert str(results_dir / "report.html") in printed
    assert (results_dir / "steps.csv").read_text().startswith("step,load_mode,load_value,")


def test_trace_steps_match_by_time_scale(
    make_run: Callable[..., Path], rich_data: tuple[Summary, list[Record]]
) -> None:
    from loadgen.summary import LoadPoint

    summary, records = rich_data
    summary.steps[0].ttft_of = "answer"
    a = make_run("A", summary, records)
    other = summary.model_copy(deep=True)
    other.steps[0].load = LoadPoint(mode="trace", time_scale=1.0)
    b = make_run("B", other, records)
    runs = load_runs([a, b])
    assert runs[0].samples is not None and runs[0].samples.answer_steps == frozenset({0})
    assert [label for label, _ in matched_steps(runs)] == ["trace x0.5"]
    trace = summary.steps[1]
    overlay = throughput_overlay(runs)
    assert overlay["A"][-1] == (
        trace.throughput.requests_per_s,
        trace.throughput.output_tokens_per_s,
    )


def test_compare_command_refuses_mixed_profiles_unless_told(
    make_run: Callable[..., Path],
    run_data: tuple[Summary, list[Record]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    summary, records = run_data
    a = make_run("A", summary, records)
    vllm = summary.model_copy(deep=True)
    vllm.metrics_profile = "vllm"
    b = make_run("B", vllm, records)
    out = tmp_path / "cmp"
    with pytest.raises(SystemExit) as info:
        main(["compare", str(a), str(b), "--out", str(out)])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "profile" in err
    main(["compare", str(a), str(b), "--out", str(out), "--allow-profile-mismatch"])
    assert f"comparison: {out}" in capsys.readouterr().out
