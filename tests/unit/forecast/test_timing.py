"""Estimated step lengths: from the mock's timing model on `url: mock`, else from the SLA bounds."""

from __future__ import annotations

import pytest

from loadgen.forecast import StepShape, from_bounds, on_mock
from loadgen.forecast.timing import bound_e2e_s
from loadgen.mock import Settings
from loadgen.mock.model import closed_loop
from loadgen.scenario import SlaSpec

E2E_1S = SlaSpec.model_validate({"e2e_ms": {"p99": 1000, "p50": 400}})


def test_a_requests_bound_step_takes_its_requests_over_the_users_at_the_e2e_bound() -> None:
    shape = StepShape("concurrency", users=4, requests=100, output_tokens=11)
    est = from_bounds(shape, E2E_1S)
    assert est.seconds == pytest.approx(25.0) and est.requests == 100 and not est.at_least
    warm = from_bounds(StepShape("concurrency", 4, 100, warmup=6, output_tokens=11), E2E_1S)
    assert warm.seconds == pytest.approx(25.0 + 2 * 1.0)  # 6 warm-up requests, 4 at a time


def test_the_longest_request_is_the_e2e_bound_or_ttft_plus_a_tpot_per_further_token() -> None:
    assert bound_e2e_s(E2E_1S, 128) == pytest.approx(1.0)
    sla = SlaSpec.model_validate({"ttft_ms": {"p99": 500}, "tpot_ms": {"p99": 40, "p50": 20}})
    assert bound_e2e_s(sla, 128) == pytest.approx(0.5 + 0.04 * 127)
    assert bound_e2e_s(SlaSpec.model_validate({"ttft_ms": {"p99": 500}}), 128) is None


def test_a_duration_holds_at_least_users_times_duration_over_e2e() -> None:
    shape = StepShape("concurrency", users=8, requests=None, duration_s=10.0, output_tokens=11)
    est = from_bounds(shape, SlaSpec.model_validate({"e2e_ms": {"p90": 2000}}))
    assert est.seconds == pytest.approx(12.0)  # the duration, then its in-flight requests
    assert est.requests == pytest.approx(8 * 10 / 2 + 8)


def test_without_bounds_only_what_the_plan_fixes_is_known() -> None:
    none = SlaSpec()
    timed = from_bounds(StepShape("concurrency", 8, None, duration_s=10.0), none)
    assert (timed.seconds, timed.requests, timed.at_least) == (10.0, None, True)
    counted = from_bounds(StepShape("concurrency", 8, 100), none)
    assert counted.seconds is None and counted.requests == 100
    open_loop = from_bounds(StepShape("rate", 0, 40, arrivals=44, span_s=9.5), none)
    assert (open_loop.seconds, open_loop.at_least) == (9.5, True)


def test_on_the_mock_a_closed_loop_runs_at_the_engine_models_throughput() -> None:
    st = closed_loop(Settings(), 16, 160, 16)
    shape = StepShape("concurrency", 16, 160, prompt_tokens=160, output_tokens=16)
    assert on_mock(shape, Settings()).seconds == pytest.approx(160 / st.throughput_rps)
    timed = StepShape("concurrency", 16, None, duration_s=5.0, prompt_tokens=160, output_tokens=16)
    est = on_mock(timed, Settings())
    assert est.requests == pytest.approx(st.throughput_rps * 5.0 + 16)
    assert est.seconds == pytest.approx(5.0 + st.e2e_s)


def test_replicas_share_the_users() -> None:
    shape = StepShape("concurrency", 64, 640, prompt_tokens=160, output_tokens=16)
    one, two = on_mock(shape, Settings()), on_mock(shape, Settings(), replicas=2)
    assert one.seconds is not None and two.seconds is not None
    assert two.seconds == pytest.approx(one.seconds / 2, rel=0.05)  # 32 users each, batch full


def test_an_open_loop_takes_its_span_or_past_capacity_its_backlog() -> None:
    cap = closed_loop(Settings(), 10**6, 160, 16).throughput_rps  # ~45 req/s

    def arrivals(n: int) -> StepShape:
        return StepShape("rate", 0, n, arrivals=n, span_s=10.0, prompt_tokens=160, output_tokens=16)

    light = on_mock(arrivals(50), Settings())
    assert light.seconds is not None and 10.0 < light.seconds < 11.0
    heavy = on_mock(arrivals(1000), Settings())
    assert heavy.seconds is not None and heavy.seconds > 1000 / cap
