"""workload.cancel: which requests the client aborts and where, seeded per request index on
its own stream, marked on every kind of plan, leaving every other draw as it was."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from loadgen.scenario import LoadSpec, WorkloadSpec
from loadgen.scenario.cancel_spec import CancelSpec
from loadgen.workload import ClosedSessionsPlan, RequestSpec, Workload, plan_step
from loadgen.workload.cancel import CancelPicker
from loadgen.workload.deal import deal

TOKENS = {"share": 0.25, "after_tokens": {"dist": "uniform", "min": 3, "max": 9}}
SECONDS = {"share": 0.5, "after_s": {"dist": "uniform", "min": 0.5, "max": 1.5}}


def picker(cancel: dict[str, Any], seed: int = 7, step: int = 0) -> CancelPicker:
    return CancelPicker(CancelSpec.model_validate(cancel), seed, step)


def prepare(cancel: dict[str, Any] | None, **workload: Any) -> Workload:
    fields = {"seed": 5, "prompt_tokens": {"dist": "uniform", "min": 4, "max": 40}, **workload}
    if cancel is not None:
        fields["cancel"] = cancel
    return Workload.prepare(WorkloadSpec.model_validate(fields), chat=True)


def load(**fields: Any) -> LoadSpec:
    return TypeAdapter(LoadSpec).validate_python(fields)


def stops(specs: list[RequestSpec]) -> list[tuple[int | None, int | None]]:
    return [(s.cancel_after_tokens, s.cancel_after_ns) for s in specs]


def test_the_pick_is_a_pure_function_of_seed_step_and_index() -> None:
    a, b = picker(TOKENS), picker(TOKENS)
    forward = [a(i) for i in range(3000)]
    backward = [b(i) for i in reversed(range(3000))][::-1]  # other blocks drawn first
    assert forward == backward
    assert forward != [picker(TOKENS, step=1)(i) for i in range(3000)]
    assert forward != [picker(TOKENS, seed=8)(i) for i in range(3000)]
    # seed 0 is a seed like any other
    assert [picker(TOKENS, seed=0)(i) for i in range(50)] == [
        picker(TOKENS, seed=0)(i) for i in range(50)
    ]


def test_the_share_is_honoured_and_points_come_from_the_distribution() -> None:
    n = 20_000
    pick = picker(TOKENS, seed=0)
    got = [pick(i) for i in range(n)]
    cut = [g for g in got if g is not None]
    sd = math.sqrt(n * 0.25 * 0.75)
    assert abs(len(cut) - n / 4) < 5 * sd
    assert {t for t, _ in cut} == set(range(3, 10))  # uniform [3, 9], every value drawn
    assert {ns for _, ns in cut} == {None}


def test_after_s_is_in_nanoseconds_since_the_send() -> None:
    pick = picker(SECONDS)
    cut = [s for s in (pick(i) for i in range(2000)) if s is not None]
    assert {t for t, _ in cut} == {None}
    ns = [v for _, v in cut if v is not None]
    assert len(ns) == len(cut) and min(ns) >= 0.5e9 and max(ns) <= 1.5e9
    assert len(set(ns)) == len(ns)  # drawn per request


def test_share_1_aborts_every_request() -> None:
    pick = picker({"share": 1, "after_tokens": {"dist": "fixed", "value": 2}})
    assert {pick(i) for i in range(3000)} == {(2, None)}


def test_cancel_leaves_the_prompts_of_a_seed_as_they_were() -> None:
    sc = load(mode="concurrency", concurrency=[4], requests_per_step=50, warmup_requests=3)
    plain = plan_step(prepare(None), sc, "concurrency", 4, 0)
    cut = plan_step(prepare(TOKENS), sc, "concurrency", 4, 0)
    first = list(itertools.islice(plain.requests, 400))
    second = list(itertools.islice(cut.requests, 400))
    assert [s.prompt for s in first] == [s.prompt for s in second]
    assert [s.max_tokens for s in first] == [s.max_tokens for s in second]
    assert [s.prompt for s in plain.warmup] == [s.prompt for s in cut.warmup]
    assert set(stops(first)) == {(None, None)}
    # each request carries exactly its index's pick
    pick = picker(TOKENS, seed=5)
    assert stops(second) == [pick(s.index) or (None, None) for s in second]
    assert stops(cut.warmup) == [pick(s.index) or (None, None) for s in cut.warmup]
    assert 0 < sum(s.cancel_after_tokens is not None for s in second) < 400


def test_open_loop_and_offline_requests_are_marked() -> None:
    w = prepare(TOKENS)
    pick = picker(TOKENS, seed=5, step=2)
    rate = plan_step(w, load(mode="rate", rate=[20], requests_per_step=300), "rate", 20, 2)
    assert stops(rate.requests) == [pick(s.index) or (None, None) for s in rate.requests]
    off = plan_step(w, load(mode="offline", requests_per_step=300), "offline", 0, 2)
    assert stops(off.requests) == stops(rate.requests)  # the same indices


def test_a_trace_replay_is_marked(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    rows = [{"timestamp": i * 10, "input_length": 30, "output_length": 9} for i in range(200)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    spec = load(mode="trace", trace=str(path), time_scale=[1.0])
    w = prepare(TOKENS)
    plan = plan_step(w, spec, "trace", 1.0, 0)
    pick = picker(TOKENS, seed=5)
    assert stops(plan.requests) == [pick(s.index) or (None, None) for s in plan.requests]
    assert any(s.cancel_after_tokens for s in plan.requests)


def test_worker_shares_abort_the_same_requests_as_one_process() -> None:
    w = prepare(TOKENS)
    spec = load(mode="rate", rate=[50], requests_per_step=300)
    whole = plan_step(w, spec, "rate", 50, 0)
    dealt = [deal(plan_step(w, spec, "rate", 50, 0), k, 3) for k in range(3)]
    merged = sorted((s for p in dealt for s in p.requests), key=lambda s: s.index)
    assert stops(merged) == stops(whole.requests)


def test_session_turns_are_drawn_per_turn_and_carried_to_the_turn_request() -> None:
    sessions = {"turns": {"dist": "fixed", "value": 4}}
    w = prepare(TOKENS, sessions=sessions)
    spec = load(mode="concurrency", concurrency=[2], requests_per_step=30)
    plan = plan_step(w, spec, "concurrency", 2, 0)
    assert isinstance(plan, ClosedSessionsPlan)
    got = list(itertools.islice(plan.sessions, 400))
    pick = picker(TOKENS, seed=5)
    assert [s.cancel for s in got] == [pick.turns(s.index, 4) for s in got]
    turns = [t for s in got for t in s.cancel]
    share = sum(t is not None for t in turns) / len(turns)
    assert 0.2 < share < 0.3  # 1,600 turns at 0.25
    s = next(s for s in got if any(s.cancel))
    t = next(i for i, c in enumerate(s.cancel) if c is not None)
    req = w.turn_request(s, t, [], 0, plan.rng)
    assert (req.cancel_after_tokens, req.cancel_after_ns) == s.cancel[t]
    plain = plan_step(prepare(None, sessions=sessions), spec, "concurrency", 2, 0)
    assert isinstance(plain, ClosedSessionsPlan)
    assert [p.user_tokens for p in itertools.islice(plain.sessions, 400)] == [
        s.user_tokens for s in got
    ]


@pytest.mark.parametrize("share", [0, -0.1, 1.01])
def test_a_share_outside_0_1_is_refused(share: float) -> None:
    with pytest.raises(ValueError, match="share"):
        CancelSpec.model_validate({"share": share, "after_tokens": {"dist": "fixed", "value": 2}})


def test_a_datasets_requests_are_marked() -> None:
    data = Path(__file__).parents[3] / "scenarios" / "data" / "mini-chat.jsonl"
    w = prepare(TOKENS, dataset={"path": str(data)})
    spec = load(mode="concurrency", concurrency=[2], requests_per_step=50)
    plan = plan_step(w, spec, "concurrency", 2, 0)
    got = list(itertools.islice(plan.requests, 300))
    pick = picker(TOKENS, seed=5)
    assert stops(got) == [pick(s.index) or (None, None) for s in got]
    assert any(s.cancel_after_tokens for s in got)
