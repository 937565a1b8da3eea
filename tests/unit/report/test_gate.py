from __future__ import annotations

import numpy as np
import pytest

from loadgen.compare.gate import bootstrap_diff, conclusions, evaluate_gate, parse_gate, step_value
from loadgen.compare.resample import PerRequest, gate_interval, resampled, untestable
from loadgen.errors import ScenarioError
from loadgen.records import Record
from loadgen.results.samples import samples_from_records
from loadgen.summary import Summary


@pytest.mark.parametrize(
    ("text", "path", "op", "bound", "relative"),
    [
        ("ttft_ms.p99 > +10%", "ttft_ms.p99", ">", 10.0, True),
        ("throughput.output_tokens_per_s < -5%", "throughput.output_tokens_per_s", "<", -5.0, True),
        ("e2e_ms.mean > +20ms", "e2e_ms.mean", ">", 20.0, False),
        ("requests.error_rate>=0.01", "requests.error_rate", ">=", 0.01, False),
        ("telemetry.total.power_w.mean > 5%", "telemetry.total.power_w.mean", ">", 5.0, True),
        ("telemetry.server.preemptions > 0", "telemetry.server.preemptions", ">", 0.0, False),
        ("cost.usd_per_1000_requests > 5%", "cost.usd_per_1000_requests", ">", 5.0, True),
        ("ttft_from_scheduled_ms.p99 > 10%", "ttft_from_scheduled_ms.p99", ">", 10.0, True),
    ],
)
def test_parse(text: str, path: str, op: str, bound: float, relative: bool) -> None:
    g = parse_gate(text)
    assert (g.path, g.op, g.bound, g.relative) == (path, op, bound, relative)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("ttft_ms.p99 >> 10%", "expected FIELD OP BOUND"),
        ("ttft_ms.p99 > ten", "expected FIELD OP BOUND"),
        ("ttft.p99 > 10%", "unknown field 'ttft'"),
        ("ttft_ms.p98 > 10%", "unknown field 'ttft_ms.p98'"),
        ("ttft_ms > 10%", "is a group, not a number"),
        ("load.mode > 1", "is not a number"),
        ("telemetry.gpus.power_w.mean > 5%", "'telemetry.gpus' is a list, not a number"),
        ("telemetry.total.power_w.max > 5%", "unknown field 'telemetry.total.power_w.max'"),
        ("cost.usd_per_day > 5%", "unknown field 'cost.usd_per_day'"),
        ("throughput.requests_per_s > 5ms", "'ms' applies to latency fields"),
    ],
)
def test_bad_expressions_are_one_line(text: str, says: str) -> None:
    with pytest.raises(ScenarioError) as info:
        parse_gate(text)
    message = str(info.value)
    assert message.startswith(f"--fail-if {text!r}: ")
    assert says in message and "\n" not in message


def test_step_value(run_data: tuple[Summary, list[Record]]) -> None:
    summary, _ = run_data
    s0, dead = summary.steps[0], summary.steps[3]
    assert step_value(s0, "ttft_ms.p99") == s0.ttft_ms.p99
    assert step_value(s0, "telemetry.total.power_w.mean") == 150.0
    assert step_value(dead, "ttft_ms.p99") is None
    assert step_value(s0, "sla.passed") is None  # a bool is not a number


def test_bootstrap_is_seeded_and_separates_shift_from_noise() -> None:
    rng = np.random.default_rng(1)
    base = rng.normal(100, 10, 400).tolist()
    same = rng.normal(100, 10, 400).tolist()
    slower = (np.asarray(base) * 1.3).tolist()
    lo, hi = bootstrap_diff(base, same, "p50", seed=3)
    assert lo < 0 < hi
    assert bootstrap_diff(base, same, "p50", seed=3) == (lo, hi)
    lo, hi = bootstrap_diff(base, slower, "p99", seed=3)
    assert lo > 0
    lo, hi = bootstrap_diff(base, slower, "mean", seed=3)
    assert lo < 30 < hi  # the mean rose by 30 (+30% of ~100)


def test_evaluate_regression_and_significance(run_data: tuple[Summary, list[Record]]) -> None:
    summary, records = run_data
    samples = samples_from_records(records)
    a, b = summary.steps[0], summary.steps[2]  # TTFT 10..29 ms vs 60..79 ms
    r = evaluate_gate(parse_gate("ttft_ms.p50 > +10%"), "c=1", (a, b), (samples, samples))
    assert r.change == pytest.approx((69.5 - 19.5) / 19.5 * 100)
    assert r.exceeded and r.significant and r.failed and r.status == "regression"
    assert r.ci is not None and r.ci[0] > 10
    assert "REGRESSION" in r.message() and "c=1" in r.message()
    ok = evaluate_gate(parse_gate("ttft_ms.p50 > +10%"), "c=1", (b, a), (samples, samples))
    assert not ok.exceeded and not ok.failed and "within the bound" in ok.message()
    noise = evaluate_gate(parse_gate("ttft_ms.p50 > +1%"), "c=1", (a, a), (samples, samples))
    assert not noise.failed
    absolute = evaluate_gate(parse_gate("e2e_ms.mean > +20ms"), "c=1", (a, b), (None, None))
    assert absolute.change == pytest.approx(58.0)  # TTFT +50 ms, 4 gaps +2 ms each
    assert absolute.significant is None and absolute.failed
    assert "significance not tested" in absolute.message()


def test_not_significant_does_not_fail(run_data: tuple[Summary, list[Record]]) -> None:
    """Two runs whose p50 differ by 20% on paper, but the samples overlap: not a regression."""
    summary, records = run_data
    a = summary.steps[0]
    b = a.model_copy(deep=True)
    b.ttft_ms.p50 = (a.ttft_ms.p50 or 0) * 1.2
    samples = samples_from_records(records)
    r = evaluate_gate(parse_gate("ttft_ms.p50 > +10%"), "c=1", (a, b), (samples, samples))
    assert r.exceeded and r.significant is False and not r.failed
    assert "not significant" in r.message()


def test_missing_values_are_not_checked(run_data: tuple[Summary, list[Record]]) -> None:
    summary, _ = run_data
    a, dead = summary.steps[0], summary.steps[3]
    r = evaluate_gate(parse_gate("ttft_ms.p99 > +10%"), "c=32", (a, dead), (None, None))
    assert not r.failed and "not checked" in r.message()


def test_too_few_requests_for_a_p99_is_inconclusive_not_a_regression(
    run_data: tuple[Summary, list[Record]],
) -> None:
    """20 requests a side: a p99 is about their maximum, so it is not tested, and a step
    beyond the bound is "too few requests", not failed; the p50 of the same runs is tested."""
    summary, records = run_data
    samples = samples_from_records(records)
    a, b = summary.steps[0], summary.steps[2]
    r = evaluate_gate(parse_gate("ttft_ms.p99 > +10%"), "c=1", (a, b), (samples, samples))
    assert r.exceeded and not r.failed and r.ci is None and r.status == "too few requests"
    assert r.untested == "the baseline has 20 requests, too few to test a p99 (about 101 would)"
    assert "inconclusive" in r.message() and "REGRESSION" not in r.message()
    within = evaluate_gate(parse_gate("ttft_ms.p99 > +10%"), "c=4", (b, a), (samples, samples))
    assert conclusions([r, within]) == [
        "ttft_ms.p99 > +10%: inconclusive (c=1: too few requests, +173.55%; c=4: within the bound)"
    ]


def test_untestable_sizes() -> None:
    rng = np.random.default_rng(0)
    assert untestable(PerRequest.single(rng.random(100)), 99.0, "p99") is not None
    assert untestable(PerRequest.single(rng.random(101)), 99.0, "p99") is None
    assert untestable(PerRequest.single(rng.random(19)), None, "mean") == (
        "19 requests, too few to test a mean (about 20 would)"
    )
    wide = untestable(PerRequest.single(rng.random(500)), 99.9, "p99_9")
    assert wide == "500 requests, too few to test a p99.9 (about 1001 would)"
    # 60 requests of 50 gaps, one request far slower: the pooled p99 is that one request's
    offsets = np.arange(0, 3001, 50)
    values = np.ones(3000)
    values[:50] = 10.0
    one_slow = untestable(PerRequest(values, offsets), 99.0, "p99")
    assert one_slow == "60 requests, too few to test a p99 (about 120 would)"


@pytest.mark.parametrize("q", [None, 50.0, 99.0])
def test_a_resample_is_the_statistic_of_the_drawn_requests_pooled(q: float | None) -> None:
    rng = np.random.default_rng(4)
    counts = rng.integers(0, 6, 30)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    values = rng.normal(size=int(offsets[-1])).round(1)  # ties too
    got = resampled(PerRequest(values, offsets), q, 40, np.random.default_rng(5))
    draws = np.random.default_rng(5).integers(0, len(counts), (40, len(counts)))
    pooled = [np.concatenate([values[offsets[i] : offsets[i + 1]] for i in row]) for row in draws]
    want = [p.mean() if q is None else np.percentile(p, q) for p in pooled]
    assert got == pytest.approx(want)


def _twin(rng: np.random.Generator, requests: int = 100, gaps: int = 10) -> PerRequest:
    """A step's ITL: each request's gaps share its own level (a busy batch slows them all)."""
    level = rng.lognormal(0.0, 0.3, requests)
    counts = rng.integers(gaps // 2, gaps * 3 // 2 + 1, requests)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    values = np.repeat(level, counts) * rng.lognormal(0.0, 0.1, int(offsets[-1]))
    return PerRequest(values, offsets)


@pytest.mark.parametrize("stat", ["mean", "p99"])
def test_twin_samples_are_called_different_about_5_percent_of_the_time(stat: str) -> None:
    """A/A on simulated data: two samples of one distribution, 150 seeded trials. The gate's
    test (blocks of whole requests resampled) calls them different (95% CI excludes 0) in
    about 5% of trials, a regression (the CI above 0) in about 2.5%; resampling the pooled
    gaps one by one (the gate before issue 19) calls them different in about half."""
    rng = np.random.default_rng(19)
    trials, different, regression, old, tested = 150, 0, 0, 0, 0
    q = None if stat == "mean" else 99.0
    for seed in range(trials):
        a, b = _twin(rng), _twin(rng)
        lo, hi = bootstrap_diff(a.values, b.values, stat, resamples=200, seed=seed)
        old += not lo <= 0 <= hi
        ci, _why = gate_interval(a, b, stat, q, resamples=200, seed=seed)
        if ci is None:
            continue
        tested += 1
        different += not ci[0] <= 0 <= ci[1]
        regression += ci[0] > 0
    assert tested >= 0.8 * trials
    assert different / trials <= 0.08 and regression / trials <= 0.05
    assert old / trials >= 0.4


def test_blocks_are_runs_of_consecutive_requests() -> None:
    side = PerRequest(np.arange(10.0), np.array([0, 1, 3, 6, 6, 8, 9, 10]))  # 7 requests
    assert side.blocks(3).offsets.tolist() == [0, 6, 9, 10]  # requests 0-2, 3-5, 6
    assert side.blocks(7) is side
