"""Which percentile bounds a request count can confirm, from the confidence module's own math."""

from __future__ import annotations

import pytest

from loadgen.forecast import fewest_to_confirm, shortfalls
from loadgen.metrics.confidence import Interval, quantile_interval, quantile_ranks, verdict
from loadgen.scenario import SlaSpec


@pytest.mark.parametrize(("p", "fewest"), [(90, 36), (95, 72), (99, 368)])
def test_the_fewest_requests_are_where_the_interval_gets_an_upper_end(p: int, fewest: int) -> None:
    assert fewest_to_confirm(p, 0.95) == fewest
    assert quantile_ranks(fewest, p / 100)[1] == fewest  # the largest value bounds it
    assert quantile_ranks(fewest - 1, p / 100)[1] is None  # one fewer: open above


def test_at_the_fewest_a_far_bound_is_met_and_one_fewer_is_inconclusive() -> None:
    """What the run would say with values far within a p90 bound of 100."""
    n = fewest_to_confirm(90, 0.95)
    for size, expected in ((n, "met"), (n - 1, "inconclusive")):
        ci = quantile_interval([10.0] * size, 0.9)
        assert verdict(Interval(ci.low, ci.high, 0.95), 100.0) == expected


def test_more_confidence_takes_more_requests() -> None:
    assert fewest_to_confirm(99, 0.99) > fewest_to_confirm(99, 0.95) > fewest_to_confirm(90, 0.95)


def test_shortfalls_name_each_percentile_bound_too_few_requests_cannot_confirm() -> None:
    sla = SlaSpec.model_validate(
        {"ttft_ms": {"p99": 400, "p90": 200, "mean": 100}, "tpot_ms": {"p90": 50}}
    )
    short = shortfalls(sla, 100)
    assert [(s.label, s.needed, s.requests) for s in short] == [("ttft_ms.p99 <= 400", 368, 100)]
    assert shortfalls(sla, 368) == []
    assert {s.label for s in shortfalls(sla, 35)} == {
        "ttft_ms.p99 <= 400",
        "ttft_ms.p90 <= 200",
        "tpot_ms.p90 <= 50",
    }  # the mean's bound is never listed


def test_itl_counts_gaps_so_fewer_requests_decide_it() -> None:
    sla = SlaSpec.model_validate({"itl_ms": {"p99": 30}, "confidence": 0.95})
    assert shortfalls(sla, 20, gaps_per_request=19) == []  # 380 gaps
    (short,) = shortfalls(sla, 10, gaps_per_request=19)  # 190 gaps
    assert short.needed == 20  # ceil(368 / 19)
