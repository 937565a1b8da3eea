"""Sweeps against the mock engine, whose capacity is known.

The engine runs at most ``max_num_seqs`` sequences at a time (16 in the default
profile, 8 with the knobs below); every request beyond waits for a free slot,
so output tok/s rises up to that concurrency and then stays flat, while TTFT
stays at about one engine step and then jumps by whole request durations.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from loadgen.records import Record
from loadgen.scenario import Scenario
from loadgen.summary import Summary

# durations held to tight bounds: run apart from the parallel tests (-m timing)
pytestmark = pytest.mark.timing

RunFixture = Callable[[Scenario], tuple[Summary, list[Record], Path]]
Make = Callable[..., Scenario]

ENGINE = [
    *("--max-num-seqs", "8", "--step-base-ms", "4", "--decode-ms-per-seq", "0.25"),
    *("--prefill-ms-per-token", "0.005"),
]


def engine_scenario(scenario: Make, load: dict[str, Any], **extra: Any) -> Scenario:
    return scenario(
        target={"extra_body": {"ignore_eos": True}, "mock": {"args": ENGINE}},
        workload={"output_tokens": {"dist": "fixed", "value": 24}},
        load=load,
        **extra,
    )


def test_closed_loop_sweep_of_the_default_profile_shows_the_curve(
    run: RunFixture, scenario: Make
) -> None:
    """1, 2, 4, ... 128 against the default profile (tiny-cpu: 16 sequences at a time)."""
    levels = [1, 2, 4, 8, 16, 32, 64, 128]
    sc = scenario(
        target={"extra_body": {"ignore_eos": True}},  # the mock's defaults: engine, tiny-cpu
        workload={"output_tokens": {"dist": "fixed", "value": 24}},
        load={
            "concurrency": levels,
            "requests_per_step": None,
            "duration_s": 1.5,
            "warmup_requests": 16,
        },
        telemetry={"server_metrics": "target", "interval_s": 0.1},
    )
    summary, _, _ = run(sc)
    steps = {s.load.concurrency: s for s in summary.steps}
    assert all(s.requests.total >= s.load.concurrency for s in summary.steps)
    assert sorted(steps) == levels
    tput = {c: s.throughput.output_tokens_per_s for c, s in steps.items()}
    ttft = {c: s.ttft_ms.p99 or 0.0 for c, s in steps.items()}
    print({c: (round(tput[c]), round(ttft[c], 1)) for c in levels})
    for lo, hi in [(1, 2), (2, 4), (4, 8), (8, 16)]:
        assert tput[hi] > 1.25 * tput[lo]  # rising while the batch fills
    for c in (32, 64, 128):
        assert 0.75 * tput[16] < tput[c] < 1.25 * tput[16]  # flat past max_num_seqs
    assert max(ttft[c] for c in (1, 2, 4, 8, 16)) < 60.0  # flat below the knee
    assert ttft[32] > 3 * ttft[16]  # then steep: a queue forms
    assert ttft[64] > 1.5 * ttft[32] and ttft[128] > 1.5 * ttft[64]
    # the server's own /metrics agree with the load
    for c, s in steps.items():
        server = s.telemetry.server if s.telemetry is not None else None
        assert server is not None, f"no /metrics scrapes in step c={c}"
        running, waiting = server.running, server.waiting
        assert running is not None and waiting is not None, (c, server)
        assert running.max <= 16
        if c <= 16:  # all run; a request waits only until the next engine step
            # The step's window includes its drain (in-flight requests finishing after
            # the 1.5 s, fewer running each moment): at c=4 that pulled the mean to 0.72c
            # once in a full suite. Below 0.6c would mean requests were not all running.
            assert running.mean >= 0.6 * c, (c, running)
            assert waiting.mean < 0.25 * c, (c, waiting)
        if c >= 32:  # the engine is full and the rest queue
            assert running.max == 16
            assert waiting.mean >= (c - 16) / 2, (c, waiting)


def test_sla_search_finds_the_knee(run: RunFixture, scenario: Make) -> None:
    sc = engine_scenario(
        scenario,
        {
            "sweep": "sla-search",
            "concurrency": [1, 32],
            "search_tolerance": 1,
            "requests_per_step": 80,
            "warmup_requests": 32,
        },
        # a p95, which 80 requests can decide at 95% (72 would with none beyond the bound;
        # a p99 needs 368): the answer is the highest load met with confidence
        sla={"ttft_ms": {"p95": 60}},
    )
    summary, _, _ = run(sc)
    v = summary.verdict
    assert v is not None and v.sweep == "sla-search"
    tried = [s.load.concurrency for s in summary.steps]
    print(tried, v.text)
    assert tried[:2] == [1, 32]
    assert v.max_passing == 8
    assert v.bracket == [8, 9]
    assert "max concurrency meeting the SLA: 8 (95% confidence)" in v.text
    assert len(tried) <= 8


def test_auto_sweep_probes_then_runs_rates(run: RunFixture, scenario: Make) -> None:
    sc = engine_scenario(
        scenario,
        {
            "sweep": "auto",
            "probe_concurrency": 16,
            "auto_points": 3,
            "requests_per_step": 24,
            "warmup_requests": 8,
        },
    )
    summary, _, _ = run(sc)
    probe, *rates = summary.steps
    assert probe.role == "probe" and probe.load.mode == "concurrency"
    assert [s.load.mode for s in rates] == ["rate"] * 3
    top = probe.throughput.requests_per_s
    got = [s.load.rate for s in rates]
    assert got == [round(top * k / 3, 4) for k in (1, 2, 3)]
    assert summary.verdict is not None and summary.verdict.saturation_rps == top
    # the open-loop steps ran on a schedule: both stamps kept
    assert all(s.ttft_from_scheduled_ms is not None for s in rates)
