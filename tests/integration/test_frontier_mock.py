"""The frontier of a real run against the built-in mock: known token pacing, so a
known interactivity; cost.gpus divides the throughput; frontier.png is written."""

from __future__ import annotations

import statistics

import pytest

from loadgen.report.documents.writer import write_reports
from loadgen.report.plots.frontier_view import frontier_view
from tests.conftest import spawn_agent, stop_agent

from .conftest import Runner, make_scenario

# durations held to tight bounds: run apart from the parallel tests (-m timing)
pytestmark = pytest.mark.timing

ITL_MS = 10  # >= 8 ms: paced well above this VM's scheduling noise
OUTPUT = 8


def test_a_sweep_has_its_frontier_points_and_plot(run: Runner) -> None:
    scenario = make_scenario(
        target={"mock": {"args": ["--ttft-ms", "5", "--itl-ms", str(ITL_MS)]}},
        load={"mode": "concurrency", "concurrency": [1, 2], "requests_per_step": 12},
        workload={
            "prompt_tokens": {"dist": "fixed", "value": 16},
            "output_tokens": {"dist": "fixed", "value": OUTPUT},
        },
        cost={"usd_per_hour": 3.6, "gpus": 2},
    )
    summary, records, out = run(scenario)
    # 8 tokens, 7 gaps of 10 ms: 8 / 0.07 s = 114.3 tok/s per user (the mock paces by
    # deadlines from the start, so a late first token shortens the decode a little)
    paced = OUTPUT / ((OUTPUT - 1) * ITL_MS / 1000)
    for step in summary.steps:
        f = step.frontier
        assert f is not None and f.interactivity_tok_s is not None
        assert step.requests.ok == 12
        mine = [
            r.output_tokens / ((r.last_token_ns - r.first_token_ns) / 1e9)
            for r in records
            if r.step == step.index and r.ok and not r.warmup
            and r.first_token_ns is not None and r.last_token_ns is not None
            and r.last_token_ns > r.first_token_ns
        ]  # fmt: skip
        # A stream whose tokens all came in one read has no decode time and is left out
        # by definition: the mock paces by deadlines, so when a busy machine starves it
        # past them it writes the overdue tokens at once (one of 12 in a CI run).
        assert f.interactivity_requests == len(mine) >= 9
        assert f.interactivity_tok_s == pytest.approx(statistics.median(mine), rel=1e-12)
        assert 0.6 * paced < f.interactivity_tok_s < 1.25 * paced
        assert step.tpot_ms.p50 is not None
        assert f.tpot_tok_s == pytest.approx(1000 / step.tpot_ms.p50)
        assert (f.gpus, f.gpus_from) == (2, "cost.gpus")
        assert f.output_tokens_per_s_per_gpu == pytest.approx(
            step.throughput.output_tokens_per_s / 2
        )
        assert step.cost is not None
        assert f.usd_per_million_output_tokens == step.cost.usd_per_million_output_tokens
    view = frontier_view(summary)
    assert len(view.points) == 2 and view.best is not None
    written = {p.name for p in write_reports(out)}
    assert "frontier.png" in written
    assert "frontier: " in (out / "report.md").read_text()


def test_without_cost_gpus_the_gpus_are_those_the_telemetry_sampled(run: Runner) -> None:
    agent, url = spawn_agent("--fake-nvml", "2", "--interval-ms", "50")
    try:
        scenario = make_scenario(
            target={"mock": {"args": ["--ttft-ms", "5", "--itl-ms", str(ITL_MS)]}},
            load={"mode": "concurrency", "concurrency": [2], "requests_per_step": 12},
            workload={"output_tokens": {"dist": "fixed", "value": OUTPUT}},
            telemetry={"agents": [url], "interval_s": 0.1},
        )
        summary, _records, _out = run(scenario)
    finally:
        stop_agent(agent)
    (step,) = summary.steps
    f = step.frontier
    assert step.telemetry is not None and step.telemetry.total is not None
    assert f is not None and (f.gpus, f.gpus_from) == (2, "telemetry")
    assert f.output_tokens_per_s_per_gpu == pytest.approx(step.throughput.output_tokens_per_s / 2)
    assert f.usd_per_million_output_tokens is None  # no cost basis
