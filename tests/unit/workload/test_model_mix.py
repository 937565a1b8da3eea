"""target.models: each request's model, seeded, by weight, independent of the other draws."""

from __future__ import annotations

import itertools
import math

import pytest

from loadgen.scenario import Scenario
from loadgen.workload.model_mix import ModelPicker
from loadgen.workload.source import Workload
from loadgen.workload.step import ClosedSessionsPlan, plan_step

MIX = (("base", 3.0), ("sql-lora", 1.0))


def scenario(models: list[dict[str, object]] | None, **load: object) -> Scenario:
    target: dict[str, object] = {"url": "mock"}
    if models is not None:
        target["models"] = models
    return Scenario.model_validate(
        {
            "name": "mix",
            "target": target,
            "workload": {"seed": 7, "prompt_tokens": {"dist": "uniform", "min": 8, "max": 64}},
            "load": {"mode": "concurrency", "concurrency": [4], "requests_per_step": 50, **load},
        }
    )


def prepared(sc: Scenario) -> Workload:
    return Workload.prepare(sc.workload, chat=True, models=sc.target.mix)


def test_the_pick_is_a_pure_function_of_seed_step_and_index() -> None:
    a = ModelPicker(MIX, 7, 0, 1)
    b = ModelPicker(MIX, 7, 0, 1)
    forward = [a(i) for i in range(3000)]
    backward = [b(i) for i in reversed(range(3000))][::-1]  # another order, other blocks first
    assert forward == backward
    assert forward != [ModelPicker(MIX, 7, 1, 1)(i) for i in range(3000)]  # another step
    assert forward != [ModelPicker(MIX, 8, 0, 1)(i) for i in range(3000)]  # another seed


def test_weights_are_honoured_in_expectation() -> None:
    n = 20_000
    pick = ModelPicker(MIX, 0, 0, 1)
    lora = sum(pick(i) == "sql-lora" for i in range(n))
    sd = math.sqrt(n * 0.25 * 0.75)
    assert abs(lora - n / 4) < 5 * sd  # 3:1 within five standard deviations


def test_a_zero_weight_is_never_picked() -> None:
    pick = ModelPicker((("a", 1.0), ("off", 0.0), ("b", 1.0)), 0, 0, 1)
    assert "off" not in {pick(i) for i in range(5000)}


@pytest.mark.parametrize(
    "models", [(), (("a", 0.0),), (("a", -1.0), ("b", 2.0)), (("a", math.inf),)]
)
def test_bad_weights_are_refused(models: tuple[tuple[str, float], ...]) -> None:
    with pytest.raises(ValueError):
        ModelPicker(models, 0, 0, 1)


def test_a_mix_leaves_the_prompts_of_a_seed_as_they_were() -> None:
    plain, mixed = scenario(None), scenario([{"name": "base", "weight": 3}, {"name": "sql-lora"}])
    p = plan_step(prepared(plain), plain.load, "concurrency", 4, 0)
    m = plan_step(prepared(mixed), mixed.load, "concurrency", 4, 0)
    first = list(itertools.islice(p.requests, 200))
    second = list(itertools.islice(m.requests, 200))
    assert [s.prompt for s in first] == [s.prompt for s in second]
    assert [s.max_tokens for s in first] == [s.max_tokens for s in second]
    assert {s.model for s in first} == {None}
    assert {s.model for s in second} == {"base", "sql-lora"}
    # and a replan of the same step picks the same models
    again = plan_step(prepared(mixed), mixed.load, "concurrency", 4, 0)
    assert [s.model for s in itertools.islice(again.requests, 200)] == [s.model for s in second]


def test_open_loop_and_warmup_requests_name_a_model_too() -> None:
    sc = Scenario.model_validate(
        {
            "name": "mix",
            "target": {"url": "mock", "models": [{"name": "a"}, {"name": "b"}]},
            "load": {"mode": "rate", "rate": [5], "requests_per_step": 40, "warmup_requests": 3},
        }
    )
    plan = plan_step(prepared(sc), sc.load, "rate", 5, 0)
    assert plan.requests and all(s.model in ("a", "b") for s in plan.requests)
    closed = scenario([{"name": "a"}, {"name": "b"}], warmup_requests=5)
    plan = plan_step(prepared(closed), closed.load, "concurrency", 4, 0)
    assert len(plan.warmup) == 5 and all(s.model in ("a", "b") for s in plan.warmup)


def test_a_session_keeps_its_model_for_every_turn() -> None:
    sc = Scenario.model_validate(
        {
            "name": "mix",
            "target": {"url": "mock", "models": [{"name": "a"}, {"name": "b"}]},
            "workload": {"sessions": {"turns": {"dist": "fixed", "value": 3}}},
            "load": {"mode": "concurrency", "concurrency": [2], "requests_per_step": 30},
        }
    )
    w = prepared(sc)
    plan = plan_step(w, sc.load, "concurrency", 2, 0)
    assert isinstance(plan, ClosedSessionsPlan)
    sessions = list(itertools.islice(plan.sessions, 30))
    assert {s.model for s in sessions} == {"a", "b"}
    rng = plan.rng
    for s in sessions[:6]:
        turns = [w.turn_request(s, t, [], t, rng) for t in range(s.turns)]
        assert {r.model for r in turns} == {s.model}
