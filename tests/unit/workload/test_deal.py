"""deal: worker shares of one step's plan add up to exactly the plan."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from pydantic import TypeAdapter

from loadgen.scenario import LoadSpec, WorkloadSpec
from loadgen.workload import ClosedSessionsPlan, Workload, plan_step
from loadgen.workload.deal import deal, shares, workers_for


def prepare(**workload: Any) -> Workload:
    return Workload.prepare(WorkloadSpec.model_validate(workload), chat=False)


def load(**fields: Any) -> LoadSpec:
    return TypeAdapter(LoadSpec).validate_python(fields)


@pytest.mark.parametrize(("total", "n"), [(8, 2), (7, 3), (5, 5), (100, 7), (3, 1)])
def test_shares_differ_by_at_most_one_and_add_up(total: int, n: int) -> None:
    parts = shares(total, n)
    assert sum(parts) == total and max(parts) - min(parts) <= 1 and len(parts) == n


@pytest.mark.parametrize(("arrival", "n"), [("poisson", 2), ("gamma", 3), ("constant", 4)])
def test_open_loop_shares_merge_into_the_planned_arrivals(arrival: str, n: int) -> None:
    spec = load(
        mode="rate",
        rate=[50],
        arrival=arrival,
        burstiness=0.5 if arrival == "gamma" else 1.0,
        requests_per_step=300,
        warmup_requests=7,
        ramp_up_s=1,
        max_concurrency=10,
    )
    workload = prepare(prompt_tokens={"dist": "uniform", "min": 4, "max": 40})
    whole = plan_step(workload, spec, "rate", 50, 2)
    merged: list[tuple[int, int, str]] = []
    limits = []
    for k in range(n):
        # every worker plans the step itself: the plan is deterministic
        mine = deal(plan_step(workload, spec, "rate", 50, 2), k, n)
        assert len(mine.offsets_ns) == len(mine.requests)
        merged += [
            (o, s.index, str(s.prompt)) for o, s in zip(mine.offsets_ns, mine.requests, strict=True)
        ]
        limits.append(mine.max_concurrency)
    intended = [
        (o, s.index, str(s.prompt)) for o, s in zip(whole.offsets_ns, whole.requests, strict=True)
    ]
    assert sorted(merged) == sorted(intended)
    # the merged inter-arrival times are the intended ones
    gaps = [b[0] - a[0] for a, b in itertools.pairwise(sorted(merged))]
    assert gaps == [b - a for a, b in itertools.pairwise(whole.offsets_ns)]
    assert sum(x or 0 for x in limits) == 10


def test_closed_loop_splits_users_and_counts_and_deals_disjoint_requests() -> None:
    spec = load(concurrency=[7], requests_per_step=100, warmup_requests=9)
    workload = prepare()
    whole = plan_step(workload, spec, "concurrency", 7, 0)
    n = 3
    parts = [deal(plan_step(workload, spec, "concurrency", 7, 0), k, n) for k in range(n)]
    assert [p.concurrency for p in parts] == [3, 2, 2]
    assert sum(p.measured or 0 for p in parts) == 100
    assert sorted(s.index for p in parts for s in p.warmup) == [s.index for s in whole.warmup]
    drawn = [[next(p.requests).index for _ in range(20)] for p in parts]
    assert sorted(itertools.chain(*drawn)) == [next(whole.requests).index for _ in range(60)]


def test_closed_loop_sessions_are_dealt_whole() -> None:
    spec = load(concurrency=[4], requests_per_step=40, warmup_requests=4)
    workload = prepare(sessions={"turns": {"dist": "fixed", "value": 3}})
    whole = plan_step(workload, spec, "concurrency", 4, 0)
    assert isinstance(whole, ClosedSessionsPlan)
    parts = [deal(plan_step(workload, spec, "concurrency", 4, 0), k, 2) for k in range(2)]
    firsts = []
    for p in parts:
        assert isinstance(p, ClosedSessionsPlan)
        firsts += [next(p.sessions).index for _ in range(5)]
    assert sorted(firsts) == sorted(next(whole.sessions).index for _ in range(10))
    assert sum(len(p.warmup) for p in parts) == len(whole.warmup)


def test_a_step_uses_no_more_workers_than_it_has_users_or_slots() -> None:
    workload = prepare()
    closed = plan_step(workload, load(concurrency=[2], requests_per_step=5), "concurrency", 2, 0)
    assert workers_for(closed, 4) == 2
    rate = load(mode="rate", rate=[5], requests_per_step=5, max_concurrency=3)
    assert workers_for(plan_step(workload, rate, "rate", 5, 0), 8) == 3
    free = load(mode="rate", rate=[5], requests_per_step=5)
    assert workers_for(plan_step(workload, free, "rate", 5, 0), 8) == 8
    with pytest.raises(ValueError):
        deal(closed, 2, 2)
