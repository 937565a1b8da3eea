"""Sweeps against the mock engine, whose capacity is known: 8 sequences at a time.

With ``--max-num-seqs 8`` every request beyond the eighth waits for a free slot,
so output tok/s rises up to 8 concurrent requests and then stays flat, while
TTFT stays at about one engine step up to 8 and then jumps by whole request
durations.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from loadgen.records import Record
from loadgen.scenario import Scenario
from loadgen.summary import Summary

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


def test_closed_loop_sweep_shows_the_knee(run: RunFixture, scenario: Make) -> None:
    levels = [1, 2, 4, 8, 16, 32]
    sc = engine_scenario(
        scenario,
        {"concurrency": levels, "requests_per_step": 48, "warmup_requests": 32},
        telemetry={"server_metrics": "target", "interval_s": 0.1},
    )
    summary, _, _ = run(sc)
    steps = {s.load.concurrency: s for s in summary.steps}
    assert sorted(steps) == levels
    tput = {c: s.throughput.output_tokens_per_s for c, s in steps.items()}
    ttft = {c: s.ttft_ms.p99 or 0.0 for c, s in steps.items()}
    print({c: (round(tput[c]), round(ttft[c], 1)) for c in levels})
    for lo, hi in [(1, 2), (2, 4), (4, 8)]:
        assert tput[hi] > 1.4 * tput[lo]  # rising while the batch fills
    for c in (16, 32):
        assert 0.75 * tput[8] < tput[c] < 1.25 * tput[8]  # flat past max_num_seqs
    assert max(ttft[c] for c in (1, 2, 4, 8)) < 40.0  # flat below the knee
    assert ttft[16] > 3 * ttft[8]  # then steep: a queue forms
    assert ttft[32] > 1.5 * ttft[16]
    # the server's own /metrics agree with the load
    for c, s in steps.items():
        server = (s.telemetry or {}).get("server")
        assert server, f"no /metrics scrapes in step c={c}"
        running, waiting = server["running"], server["waiting"]
        assert running["max"] <= 8
        if c <= 4:  # a new request waits at most until the next engine step
            assert waiting["max"] <= 1 and waiting["mean"] < 0.25
        if c >= 16:
            assert running["max"] == 8
            assert waiting["max"] >= c - 8 - 2  # the rest wait (scrapes may fall between)


def test_sla_search_finds_the_knee(run: RunFixture, scenario: Make) -> None:
    sc = engine_scenario(
        scenario,
        {
            "sweep": "sla-search",
            "concurrency": [1, 32],
            "search_tolerance": 1,
            "requests_per_step": 40,
            "warmup_requests": 32,
        },
        sla={"ttft_ms": {"p99": 60}},
    )
    summary, _, _ = run(sc)
    v = summary.verdict
    assert v is not None and v.sweep == "sla-search"
    tried = [s.load.concurrency for s in summary.steps]
    print(tried, v.text)
    assert tried[:2] == [1, 32]
    assert v.max_passing == 8
    assert v.bracket == [8, 9]
    assert "max concurrency meeting the SLA: 8" in v.text
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
