from __future__ import annotations

import numpy as np
import pytest

from loadgen.errors import ScenarioError
from loadgen.records import Record
from loadgen.report.gate import bootstrap_diff, evaluate_gate, parse_gate, step_value
from loadgen.report.samples import samples_from_records
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
    r = evaluate_gate(parse_gate("ttft_ms.p99 > +10%"), "c=1", (a, b), (samples, samples))
    assert r.change == pytest.approx((78.81 - 28.81) / 28.81 * 100)
    assert r.exceeded and r.significant and r.failed
    assert r.ci is not None and r.ci[0] > 10
    assert "REGRESSION" in r.message() and "c=1" in r.message()
    ok = evaluate_gate(parse_gate("ttft_ms.p99 > +10%"), "c=1", (b, a), (samples, samples))
    assert not ok.exceeded and not ok.failed and "within the bound" in ok.message()
    noise = evaluate_gate(parse_gate("ttft_ms.p50 > +1%"), "c=1", (a, a), (samples, samples))
    assert not noise.failed
    absolute = evaluate_gate(parse_gate("e2e_ms.mean > +20ms"), "c=1", (a, b), (None, None))
    assert absolute.change == pytest.approx(58.0)  # TTFT +50 ms, 4 gaps +2 ms each
    assert absolute.significant is None and absolute.failed
    assert "significance not tested" in absolute.message()


def test_not_significant_does_not_fail(run_data: tuple[Summary, list[Record]]) -> None:
    """Two runs whose p99 differ by 20% on paper, but the samples overlap: not a regression."""
    summary, records = run_data
    a = summary.steps[0]
    b = a.model_copy(deep=True)
    b.ttft_ms.p99 = (a.ttft_ms.p99 or 0) * 1.2
    samples = samples_from_records(records)
    r = evaluate_gate(parse_gate("ttft_ms.p99 > +10%"), "c=1", (a, b), (samples, samples))
    assert r.exceeded and r.significant is False and not r.failed
    assert "not significant" in r.message()


def test_missing_values_are_not_checked(run_data: tuple[Summary, list[Record]]) -> None:
    summary, _ = run_data
    a, dead = summary.steps[0], summary.steps[3]
    r = evaluate_gate(parse_gate("ttft_ms.p99 > +10%"), "c=32", (a, dead), (None, None))
    assert not r.failed and "not checked" in r.message()
