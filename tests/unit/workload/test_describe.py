"""`loadgen workload`: what a scenario would send, printed without sending it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from loadgen.cli import main
from loadgen.scenario import load_scenario
from loadgen.workload import Workload, plan_step

SCENARIOS = Path(__file__).resolve().parents[3] / "scenarios"


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(args)
        raise SystemExit(0)
    out = capsys.readouterr()
    return int(exc.value.code or 0), out.out, out.err


def test_counts_and_percentiles_match_the_plan(capsys: pytest.CaptureFixture[str]) -> None:
    path = SCENARIOS / "long-tail-lengths.yaml"
    code, out, _ = run_cli(["workload", str(path)], capsys)
    assert code == 0
    sc = load_scenario(path)
    specs = plan_step(Workload.prepare(sc.workload, chat=True), sc.load, "concurrency", 4, 0)
    measured = [next(specs.requests) for _ in range(64)]
    prompts = sorted(s.prompt_tokens for s in specs.warmup + measured)
    assert "step 0: concurrency 4" in out and "step 1: concurrency 16" in out
    assert "requests: 64 measured, 4 warm-up, 0 ramp-up" in out
    first = out.split("step 1:")[0]
    total = f"{sum(prompts):,} prompt"
    assert total in first
    line = next(x for x in first.splitlines() if x.strip().startswith("prompt tokens:"))
    assert f"min {prompts[0]}, max {prompts[-1]}" in line
    bars = [x for x in first.splitlines() if re.match(r"\s+\[\s*\d+,", x)]
    assert len(bars) == 16  # two histograms of 8 bins
    assert sum(int(b.split(")")[1].split()[0]) for b in bars[:8]) == 68


def test_the_same_seed_prints_the_same_workload(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(SCENARIOS / "multi-turn.yaml")
    _, one, _ = run_cli(["workload", path], capsys)
    _, two, _ = run_cli(["workload", path], capsys)
    assert one == two
    assert "sessions: 16, " in one and "think time: mean" in one


def test_a_trace_prints_its_arrival_profile(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["workload", str(SCENARIOS / "trace-replay.yaml")], capsys)
    assert code == 0
    assert "step 0: trace at time scale 2 (2x slower)" in out
    assert "step 1: trace at time scale 1 (as recorded)" in out
    spans = re.findall(r"arrivals: 240 over ([0-9.]+) s", out)
    assert len(spans) == 2 and abs(float(spans[0]) - 2 * float(spans[1])) < 0.02
    assert len(re.findall(r"req/s #+", out)) >= 10
    assert "recorded: 240 requests over" in out
    assert "shared prefixes: 100% of requests share a 512-token hash block" in out


def test_an_agent_trace_prints_its_agents(capsys: pytest.CaptureFixture[str]) -> None:
    """scenarios/data/mini-agent-otlp.json: three coding tasks (5, 4 and 6 calls) and two
    research tasks (4 calls of the main agent, two sub-agents of 2 calls each)."""
    code, out, _ = run_cli(["workload", str(SCENARIOS / "agent-trace.yaml")], capsys)
    assert code == 0
    assert "recorded: 31 requests over" in out and "sessions: 5" in out
    assert "agents: 5 tasks, 4 sub-agents (depth up to 1), calls per task p50 6, max 8" in out
    assert "linked: 26 of 31 calls wait for earlier calls to end" in out  # all but 5 firsts


def test_a_bad_dataset_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text('{"prompt": "hi"}\n{"prompt": \n')
    sc = tmp_path / "s.yaml"
    sc.write_text(
        "workload: {dataset: {path: d.jsonl}}\nload: {concurrency: [1], requests_per_step: 2}\n"
    )
    code, out, err = run_cli(["workload", str(sc)], capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert f"{data}:2:" in err and "JSON" in err


def test_a_field_of_another_mode_is_rejected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sc = tmp_path / "s.yaml"
    sc.write_text("load: {concurrency: [1], requests_per_step: 2, arrival: gamma}\n")
    code, _, err = run_cli(["workload", str(sc)], capsys)
    assert code == 2
    expected = "load.arrival: unknown field for mode concurrency; it is a field of mode rate"
    assert err.strip() == f"loadgen: {sc}: {expected}"
