"""plan_step: one step's plan as a pure function of the scenario, the load value and the seed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import TypeAdapter

from loadgen.scenario import LoadSpec, WorkloadSpec
from loadgen.workload import Workload, plan_step, ramped_offsets_ns
from loadgen.workload.step import ClosedPlan, ClosedSessionsPlan, OpenPlan

NS = 1_000_000_000


def prepare(**workload: Any) -> Workload:
    return Workload.prepare(WorkloadSpec.model_validate(workload), chat=False)


def load(**fields: Any) -> LoadSpec:
    return TypeAdapter(LoadSpec).validate_python(fields)


def test_closed_loop_warms_up_then_draws_numbered_requests() -> None:
    w = prepare(prompt_tokens={"dist": "uniform", "min": 4, "max": 40})
    plan = plan_step(
        w, load(concurrency=[8], requests_per_step=20, warmup_requests=3), "concurrency", 8, 0
    )
    assert isinstance(plan, ClosedPlan) and plan.concurrency == 8 and plan.measured == 20
    assert [s.index for s in plan.warmup] == [0, 1, 2] and all(s.warmup for s in plan.warmup)
    following = [next(plan.requests) for _ in range(70)]  # endless: the runner decides when to stop
    assert [s.index for s in following] == list(range(3, 73))
    assert not any(s.warmup or s.ramp for s in following)
    assert all(len(str(s.prompt).split()) == s.prompt_tokens for s in following)


def test_the_same_seed_and_step_give_the_same_plan_and_steps_differ() -> None:
    spec = load(concurrency=[1, 2], requests_per_step=5)

    def prompts(step: int, seed: int = 0) -> list[Any]:
        plan = plan_step(prepare(seed=seed), spec, "concurrency", 1, step)
        return [next(plan.requests).prompt for _ in range(5)]

    assert prompts(0) == prompts(0)
    assert prompts(0) != prompts(1)
    assert prompts(0) != prompts(0, seed=1)


def test_open_loop_counts_measured_arrivals_after_warm_up_and_ramp() -> None:
    spec = load(mode="rate", rate=[40], requests_per_step=100, warmup_requests=5, ramp_up_s=2)
    plan = plan_step(prepare(), spec, "rate", 40, 0)
    flags = [(s.warmup, s.ramp) for s in plan.requests]
    assert isinstance(plan, OpenPlan) and len(plan.offsets_ns) == len(plan.requests)
    assert sum(1 for f in flags if f == (False, False)) == 100
    assert flags[:5] == [(True, False)] * 5
    assert flags[-1] == (False, False)  # cut right after the 100th measured arrival
    ramp = [o for o, s in zip(plan.offsets_ns, plan.requests, strict=True) if s.ramp]
    assert all(o < 2 * NS for o in ramp)
    assert all(
        o >= 2 * NS for o, (wu, ra) in zip(plan.offsets_ns, flags, strict=True) if not (wu or ra)
    )
    # a linear ramp to 40 req/s holds 40 x 2 / 2 = 40 arrivals, give or take chance
    assert 25 <= len(ramp) + 5 <= 60
    assert plan.offsets_ns == sorted(plan.offsets_ns)


def test_open_loop_by_duration_schedules_the_window_after_the_ramp() -> None:
    spec = load(mode="rate", rate=[50], arrival="constant", duration_s=4, ramp_up_s=1)
    plan = plan_step(prepare(), spec, "rate", 50, 0)
    measured = [o for o, s in zip(plan.offsets_ns, plan.requests, strict=True) if not s.ramp]
    assert measured[0] >= NS
    assert abs(len(measured) - 200) <= 2  # 4 s at 50 req/s after the ramp
    assert measured[-1] <= 5 * NS


def test_ramp_is_a_time_change_of_the_steady_schedule() -> None:
    steady = [int(i * 0.1 * NS) for i in range(40)]  # 10 req/s
    ramped = ramped_offsets_ns(steady, 2.0)
    # before R/2 on the steady clock: t = sqrt(2 R u); after: u + R/2
    assert ramped[1] == round(np.sqrt(2 * 2.0 * 0.1) * NS)
    assert ramped[30] == steady[30] + NS
    counts = np.histogram(np.array(ramped) / NS, bins=[0, 0.5, 1.0, 1.5, 2.0])[0]
    assert list(counts) == sorted(counts)  # arrivals come faster as the ramp climbs
    assert ramped_offsets_ns(steady, 0) == steady


def test_sessions_are_planned_per_session() -> None:
    w = prepare(
        sessions={
            "turns": {"dist": "uniform", "min": 1, "max": 4},
            "think_time_s": {"dist": "fixed", "value": 0.5},
        },
        prompt_tokens={"dist": "fixed", "value": 7},
    )
    plan = plan_step(
        w, load(concurrency=[2], requests_per_step=3, warmup_requests=1), "concurrency", 2, 0
    )
    assert isinstance(plan, ClosedSessionsPlan) and len(plan.warmup) == 1
    s = next(plan.sessions)
    assert s.index == 1 and 1 <= s.turns <= 4
    assert s.user_tokens == (7,) * s.turns and s.think_ns == (500_000_000,) * s.turns
    first = w.turn_request(s, 0, [], 0, np.random.default_rng(0))
    assert first.session == 1 and first.turn == 0 and first.keep_text
    assert first.prompt == [{"role": "user", "content": first.prompt[0]["content"]}]  # type: ignore[index]
    assert len(first.prompt[0]["content"].split()) == 7  # type: ignore[index]


def test_trace_plan_scales_caps_and_windows(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    rows = [
        {"timestamp": i * 100, "input_length": 600, "output_length": 9, "hash_ids": [0, i]}
        for i in range(30)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    w = Workload.prepare(WorkloadSpec(), chat=False, trace=None)
    spec = load(
        mode="trace", trace=str(path), time_scale=[0.5], requests_per_step=20, window_s=[1.0, 3.0]
    )
    plan = plan_step(w, spec, "trace", 0.5, 0)
    assert isinstance(plan, OpenPlan)
    assert plan.offsets_ns == [i * 50_000_000 for i in range(20)]
    assert [s.max_tokens for s in plan.requests] == [9] * 20
    assert all(s.prompt_tokens == 600 for s in plan.requests)
    # hash block 0 is the same 512 words at the start of every prompt
    starts = {" ".join(str(s.prompt).split()[:512]) for s in plan.requests}
    assert len(starts) == 1


def test_a_missing_trace_or_dataset_is_one_line(tmp_path: Path) -> None:
    from loadgen.errors import ScenarioError

    with pytest.raises(ScenarioError, match=r"nope\.jsonl"):
        Workload.prepare(
            WorkloadSpec.model_validate({"dataset": {"path": str(tmp_path / "nope.jsonl")}}),
            chat=True,
        )
