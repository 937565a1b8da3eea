"""Verdicts a user can trust, against the built-in mock over real sockets.

- Coordinated omission: an open loop whose requests queue behind
  ``max_concurrency`` fails a TTFT bound measured from the intended send time;
  with ``sla.latency_from: sent`` it passes; the slot wait is the queue wait,
  never client send lag.
- The README demo decides: every step met or missed, none inconclusive, and
  none saturated.
- Saturation: a deliberately overloaded run (one core, 256 streams, 1 ms
  ITL) is flagged, and its step is inconclusive, never passing.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from loadgen.execute.monitor import SATURATION
from loadgen.forecast import forecast
from loadgen.scenario import Scenario
from loadgen.scenario.load import load_scenario
from loadgen.summary import Summary
from loadgen.workload import Workload
from tests.integration.conftest import Runner

# durations held to tight bounds: run apart from the parallel tests (-m timing)
pytestmark = pytest.mark.timing

ROOT = Path(__file__).parents[2]
#: 20 ms to the first token, 16 tokens 10 ms apart: ~170 ms a request, two at a time
#: serve ~12 req/s, so 20 req/s queue for slots.
QUEUEING = {
    "target": {"mock": {"args": ["--ttft-ms", "20", "--itl-ms", "10"]}},
    "load": {
        "mode": "rate",
        "rate": [20],
        "arrival": "constant",
        "max_concurrency": 2,
        "requests_per_step": 30,
    },
}


def test_queueing_behind_max_concurrency_fails_a_bound_from_the_intended_time(
    run: Runner, scenario: Callable[..., Scenario]
) -> None:
    summary, records, _ = run(scenario(**QUEUEING, sla={"ttft_ms": {"p99": 100}}))
    step = summary.steps[0]
    assert step.latency_from == "scheduled"
    assert step.ttft_ms.p99 is not None and step.ttft_ms.p99 > 100
    assert step.ttft_from_scheduled_ms is not None
    assert step.ttft_ms.p99 == pytest.approx(step.ttft_from_scheduled_ms.p99)
    assert step.ttft_from_sent_ms is not None and (step.ttft_from_sent_ms.p99 or 0) < 100
    assert not step.sla.passed and (step.sla.good_requests or 0) < step.requests.ok
    assert step.e2e_from_scheduled_ms is not None and step.e2e_from_sent_ms is not None
    assert (step.e2e_from_scheduled_ms.p99 or 0) > (step.e2e_from_sent_ms.p99 or 0)
    # the slot wait is the queue wait, not the client's lag: no saturation flag
    assert step.queue_wait_ms is not None and (step.queue_wait_ms.p99 or 0) > 100
    assert (step.client.send_lag_p99_ms or 0) < SATURATION["send_lag_p99_ms"]
    assert not step.client.saturated
    assert all(r.scheduled_ns is not None for r in records)


def test_latency_from_sent_passes_the_same_load(
    run: Runner, scenario: Callable[..., Scenario]
) -> None:
    # a p90 over 40 requests, which can be met at 95% (36 would do; a p99 needs 368)
    sla = {"ttft_ms": {"p90": 100}, "latency_from": "sent"}
    queueing = {**QUEUEING, "load": {**QUEUEING["load"], "requests_per_step": 40}}
    summary, _, _ = run(scenario(**queueing, sla=sla))
    step = summary.steps[0]
    assert step.latency_from == "sent"
    assert step.sla.verdict == "met" and step.sla.good_requests == step.requests.ok
    assert step.ttft_from_scheduled_ms is not None
    assert (step.ttft_from_scheduled_ms.p90 or 0) > 100  # still reported beside it
    assert summary.verdict is not None and summary.verdict.max_passing == 20


def test_the_readme_demo_decides_every_step_and_shows_the_knee(run: Runner) -> None:
    """scenarios/demo.yaml as shipped (~35 s): every step's bounds met or missed at its
    confidence, throughput flat and TTFT climbing past the mock's 16-sequence batch, each
    step about as long as forecast.

    On a quiet 2-core VM every reading is about exact. On a busy machine a step's
    readings may carry loadgen's own error (tokens read together): a step is then
    decided as on a quiet machine unless a bound lies within that error of its value,
    when it is inconclusive for that cause (docs/metrics.md, "Client error"); a
    saturated step keeps its warning and its verdict."""
    demo = load_scenario(ROOT / "scenarios" / "demo.yaml")
    summary, _, _ = run(demo)
    by_users = {s.load.concurrency: s for s in summary.steps}
    assert sorted(by_users) == [1, 4, 16, 64]
    expected = {1: "met", 4: "met", 16: "met", 64: "missed"}
    flagged = []
    for step in summary.steps:
        c = step.load.concurrency
        assert not step.client.saturated or step.client.warnings
        if step.sla.cause == "client_error":  # a busy machine: the one verdict says so
            assert step.sla.verdict == "inconclusive" and step.sla.reason is not None
            assert "loadgen's readings may be up to" in step.sla.reason
            flagged.append(step.index)
            continue
        assert [c.verdict for c in step.sla.checks if c.verdict == "inconclusive"] == []
        assert step.sla.verdict == expected[c], (c, step.sla.reason)
    assert summary.verdict is not None and summary.verdict.inconclusive_steps == flagged
    assert len(flagged) <= 1, summary.verdict.text
    if by_users[16].sla.verdict == "met":
        assert summary.verdict.max_passing == 16
    rate = {c: s.throughput.requests_per_s for c, s in by_users.items()}
    assert rate[16] > 3 * rate[1] and rate[64] < 1.3 * rate[16]  # rises, then flattens
    ttft = {c: s.ttft_ms.p90 or 0.0 for c, s in by_users.items()}
    assert ttft[64] > 4 * ttft[16]  # the queue for the batch's slots
    top = summary.steps[-1]
    assert top.throughput.window == "steady" and top.throughput_whole is not None
    fc = forecast(demo, Workload.prepare(demo.workload, chat=True))
    for planned, step in zip(fc.steps, summary.steps, strict=True):
        assert planned.estimate.seconds is not None
        assert 0.5 < step.duration_s / planned.estimate.seconds < 2.0, (planned, step.duration_s)


OVERLOAD = """
import sys
from pathlib import Path
from loadgen.run import RunOptions, run_scenario
from loadgen.scenario import Scenario
sc = Scenario.model_validate({
    "name": "overload",
    "target": {"url": "mock", "model": "m", "extra_body": {"ignore_eos": True},
               "mock": {"args": ["--ttft-ms", "20", "--itl-ms", "1"]}},
    "workload": {"prompt_tokens": {"dist": "fixed", "value": 16},
                 "output_tokens": {"dist": "uniform", "min": 8, "max": 24}},
    "load": {"mode": "concurrency", "concurrency": [256], "requests_per_step": 1280},
    "sla": {"ttft_ms": {"p99": 10000}},
})
run_scenario(sc, RunOptions(out_dir=Path(sys.argv[1]), quiet=True, reports=False))
"""


@pytest.mark.skipif(shutil.which("taskset") is None, reason="needs taskset")
def test_an_overloaded_run_is_flagged_and_still_decided_far_from_its_bound(
    tmp_path: Path,
) -> None:
    """One core for loadgen and the mock, 256 streams, a token every 1 ms: loadgen cannot
    keep up (its timing error against the truth grows to 8-23 ms), so the step is flagged
    saturated and its readings carry their error; its generous bound (10 s) lies far
    past that error, so the step is met, not erased to inconclusive."""
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = ["taskset", "-c", "0", sys.executable, "-c", OVERLOAD, str(out)]
    subprocess.run(cmd, check=True, timeout=180, env=env, cwd=ROOT)
    summary = Summary.model_validate(json.loads((out / "summary.json").read_bytes()))
    step = summary.steps[0]
    assert step.client.saturated and step.client.warnings, step.client
    error = step.client_error
    assert error is not None and error.itl_ms is not None and error.itl_ms.uncertain > 0
    assert all(c.passed for c in step.sla.checks)
    assert (step.sla.verdict, step.sla.cause) == ("met", "met"), step.sla.reason
    assert summary.verdict is not None and summary.verdict.inconclusive_steps == []
    assert summary.verdict.max_passing == 256


# -- verdicts with confidence: the same server, different sample sizes -------------------

FIXED_TTFT = {
    "mock": {"args": ["--ttft-ms", "20", "--itl-ms", "1"]},
    "extra_body": {"ignore_eos": True},
}


@pytest.mark.parametrize(
    ("requests", "bound", "verdict"),
    [(20, 200.0, "inconclusive"), (400, 200.0, "met"), (20, 10.0, "missed")],
)
def test_a_p99_bound_is_met_missed_or_inconclusive_by_sample_size(
    run: Runner, scenario: Callable[..., Scenario], requests: int, bound: float, verdict: str
) -> None:
    """TTFT is ~20 ms every time: p99 <= 200 cannot be confirmed from 20 requests (their
    p99 interval has no upper end, whatever the bound) but is from 400; p99 <= 10 is missed
    from 20 already (the mock never answers sooner than 20 ms).

    The bound of the met case is 10x the TTFT, not 1.5x: on a busy machine a few of 400
    requests can be descheduled past 30 ms, which made it inconclusive (#19); the claim
    under test is the sample size, not the timing."""
    sc = scenario(
        target=FIXED_TTFT,
        workload={"output_tokens": {"dist": "fixed", "value": 4}},
        load={"concurrency": [4], "requests_per_step": requests},
        sla={"ttft_ms": {"p99": bound}},
    )
    summary, _, _ = run(sc)
    step = summary.steps[0]
    (check,) = step.sla.checks
    assert check.verdict == verdict and step.sla.verdict == verdict
    assert check.interval is not None
    if verdict == "inconclusive":
        assert check.passed and check.interval[1] is None  # the point estimate alone passes
        # no value beyond the bound: decided once 0.99^N <= 0.025, N = 368
        assert check.requests_needed == math.ceil(math.log(0.025) / math.log(0.99))
        assert summary.verdict is not None and summary.verdict.max_passing is None
        assert summary.verdict.inconclusive_steps == [0]
        assert "step 0 (too few requests: about 368 per step would decide)" in (
            summary.verdict.text
        )
    else:
        assert check.requests_needed is None
