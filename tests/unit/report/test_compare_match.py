"""compare matches steps by the nearest load (a probe only with a probe) and refuses runs
measured under different metrics profiles; the samples behind the bootstrap follow the
run's profile."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from loadgen.cli import main
from loadgen.compare.gate import parse_gate
from loadgen.compare.match import matched_steps
from loadgen.compare.regression import run_gates
from loadgen.compare.resample import per_request as grouped
from loadgen.compare.runs import ProfileMismatchError, Run, load_runs, profiles_text
from loadgen.errors import ScenarioError
from loadgen.records import Record
from loadgen.report.blocks import Table
from loadgen.results.samples import read_run_samples
from loadgen.summary import Summary

from .conftest import MS, bare_step, bare_summary


def _run(name: str, summary: Summary) -> Run:
    return Run(name, Path(name), summary, None)


def _auto(rates: tuple[float, ...]) -> Summary:
    probe = bare_step(0, "concurrency", 64, 500.0, role="probe")
    return bare_summary([probe, *(bare_step(i + 1, "rate", r, 10.0) for i, r in enumerate(rates))])


def test_steps_match_the_nearest_load_within_the_tolerance() -> None:
    a, b = _auto((2.0, 4.0, 6.0)), _auto((6.3, 4.2, 2.05, 9.0))
    matches = matched_steps([_run("A", a), _run("B", b)])
    loads = [tuple(s.load.concurrency or s.load.rate for s in row if s) for _, row in matches]
    assert loads == [(64, 64), (2.0, 2.05), (4.0, 4.2), (6.0, 6.3)]
    assert matches[0][0] == "probe concurrency 64"
    assert matches[1][0] == "rate 2 req/s (poisson) ~ rate 2.05 req/s (poisson)"


def test_a_load_beyond_the_tolerance_is_not_matched() -> None:
    a, b = _auto((4.0,)), _auto((5.0,))
    runs = [_run("A", a), _run("B", b)]
    assert [label for label, _ in matched_steps(runs)] == ["probe concurrency 64"]
    widened = matched_steps(runs, tolerance=0.25)
    assert [label for label, _ in widened][1] == "rate 4 req/s (poisson) ~ rate 5 req/s (poisson)"


def test_a_probe_matches_only_a_probe() -> None:
    a = _auto((4.0,))
    b = bare_summary([bare_step(0, "concurrency", 64, 500.0), bare_step(1, "rate", 4.0, 10.0)])
    matches = matched_steps([_run("A", a), _run("B", b)])
    assert [label for label, _ in matches] == ["rate 4 req/s (poisson)"]


def test_each_step_is_matched_once() -> None:
    a = bare_summary([bare_step(i, "rate", r, 10.0) for i, r in enumerate((4.0, 4.1))])
    b = bare_summary([bare_step(0, "rate", 4.1, 10.0)])
    matches = matched_steps([_run("A", a), _run("B", b)])
    assert [(row[0].load.rate, row[1].load.rate) for _, row in matches] == [(4.1, 4.1)]


def _profiled(make_run: Callable[..., Path], run_data: tuple[Summary, list[Record]],
              profiles: tuple[str, str]) -> tuple[Path, Path]:  # fmt: skip
    summary, records = run_data
    started = [dataclasses.replace(r, start_ns=r.sent_ns - 3 * MS) for r in records]
    paths = []
    for name, profile in zip("AB", profiles, strict=True):
        s = summary.model_copy(deep=True)
        s.metrics_profile = profile
        paths.append(make_run(name, s, started))
    return paths[0], paths[1]


def test_compare_refuses_runs_under_different_profiles(
    make_run: Callable[..., Path], run_data: tuple[Summary, list[Record]]
) -> None:
    a, b = _profiled(make_run, run_data, ("loadgen", "vllm"))
    with pytest.raises(ProfileMismatchError) as info:
        load_runs([a, b])
    assert isinstance(info.value, ScenarioError)
    assert "A: loadgen, B: vllm" in str(info.value)
    assert "--allow-profile-mismatch" in str(info.value)
    runs = load_runs([a, b], allow_profile_mismatch=True)
    assert profiles_text(runs) == "A: loadgen, B: vllm"


def test_compare_command_exits_2_on_a_profile_mismatch(
    make_run: Callable[..., Path],
    run_data: tuple[Summary, list[Record]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    a, b = _profiled(make_run, run_data, ("aiperf", "loadgen"))
    with pytest.raises(SystemExit) as info:
        main(["compare", str(a), str(b)])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "different metrics profiles" in err


def test_the_bootstrap_resamples_the_profiles_values(
    make_run: Callable[..., Path], run_data: tuple[Summary, list[Record]], tmp_path: Path
) -> None:
    a, b = _profiled(make_run, run_data, ("vllm", "vllm"))
    runs = load_runs([a, b])
    summary = run_data[0]
    vllm = runs[0].samples
    assert vllm is not None and vllm.profile == "vllm"
    loadgen = read_run_samples(a, summary)  # the fixture's summary: profile loadgen
    assert loadgen is not None
    # vLLM's TTFT counts from the start, 3 ms before the send
    assert list(vllm.step(0).values("ttft_ms")) == pytest.approx(
        [t + 3.0 for t in loadgen.step(0).values("ttft_ms")]
    )
    aiperf = _profiled(make_run, run_data, ("aiperf", "aiperf"))
    per_request = load_runs(list(aiperf))[0].samples
    assert per_request is not None
    assert len(per_request.step(0).itl_ms) == 20 and len(loadgen.step(0).itl_ms) == 80
    # the bootstrap's units are requests: 20 either way, of 1 ITL value or of 4 gaps
    assert np.diff(grouped(per_request.step(0), "itl_ms").offsets).tolist() == [1] * 20
    assert np.diff(grouped(loadgen.step(0), "itl_ms").offsets).tolist() == [4] * 20
    results = run_gates([parse_gate("ttft_ms.p50 > +10%")], runs)
    assert results and all(r.ci is not None for r in results if r.change is not None)


def test_runs_allowed_across_profiles_are_not_bootstrapped(
    make_run: Callable[..., Path], run_data: tuple[Summary, list[Record]]
) -> None:
    a, b = _profiled(make_run, run_data, ("loadgen", "vllm"))
    runs = load_runs([a, b], allow_profile_mismatch=True)
    results = run_gates([parse_gate("ttft_ms.p99 > +1%")], runs)
    changed = [r for r in results if r.change is not None]
    assert changed and all(r.ci is None and r.significant is None for r in changed)


def test_the_overview_lists_steps_in_load_order() -> None:
    from loadgen.report.documents.markdown import build_document

    from .conftest import bare_step

    probe = bare_step(0, "concurrency", 64, 500.0, role="probe")
    steps = [probe, *(bare_step(i + 1, "rate", r, 10.0) for i, r in enumerate((6.0, 2.0, 4.0)))]
    overview = next(b for b in build_document(bare_summary(steps)) if isinstance(b, Table))
    assert [row[:2] for row in overview.rows] == [
        ("0", "probe: concurrency 64"),
        ("2", "rate 2 req/s (poisson)"),
        ("3", "rate 4 req/s (poisson)"),
        ("1", "rate 6 req/s (poisson)"),
    ]
