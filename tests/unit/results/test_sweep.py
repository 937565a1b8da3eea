"""Sweep strategies as pure functions of the steps so far."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import TypeAdapter

from loadgen.metrics.sla import decide
from loadgen.results.sweep import Point, make_sweep, verdict
from loadgen.scenario import LoadSpec
from loadgen.summary import (
    Distribution,
    LoadPoint,
    RequestCounts,
    SlaCheck,
    SlaResult,
    StepSummary,
    Throughput,
    Verdict,
)


def load_spec(**fields: object) -> LoadSpec:
    """A ``load`` section as the scenario file would give it (the mode picks the model)."""
    return TypeAdapter(LoadSpec).validate_python(fields)


def step(
    index: int, p: Point, *, passed: bool, ttft_p99: float = 10.0, errors: float = 0.0
) -> StepSummary:
    lp = LoadPoint(mode=p.mode, concurrency=int(p.value) if p.mode == "concurrency" else None)
    check = SlaCheck(
        metric="ttft_ms",
        stat="p99",
        bound=100.0,
        value=ttft_p99,
        margin=100 - ttft_p99,
        passed=passed,
        verdict="met" if passed else "missed",
    )
    s = StepSummary(
        index=index,
        load=lp,
        requests=RequestCounts(total=10, ok=10, error_rate=errors),
        ttft_ms=Distribution(count=10, p99=ttft_p99),
        throughput=Throughput(requests_per_s=p.value, goodput_requests_per_s=p.value / 2),
        sla=SlaResult(passed=passed, checks=[check]),
    )
    decide(s.sla, s.requests.ok)
    return s


def drive(
    load: LoadSpec, passes: Callable[[float], tuple[bool, float]]
) -> tuple[list[float], Verdict]:
    sweep = make_sweep(load)
    seen: list[float] = []
    i = 0
    while (p := sweep.next_point()) is not None:
        ok, ttft = passes(p.value)
        sweep.observe(p, step(i, p, passed=ok, ttft_p99=ttft))
        seen.append(p.value)
        i += 1
    return seen, verdict(sweep)


def test_list_runs_every_value_and_reports_the_highest_passing() -> None:
    load = load_spec(concurrency=[1, 2, 4, 8], requests_per_step=10)
    seen, v = drive(load, lambda c: (c <= 4, 10.0 if c <= 4 else 150.0))
    assert seen == [1, 2, 4, 8]
    assert v.max_passing == 4 and v.stopped_early is None
    assert v.text == "max concurrency meeting the SLA: 4; goodput there: 2.00 req/s"


def test_list_stops_early_when_far_past_the_bound() -> None:
    load = load_spec(concurrency=[1, 2, 4, 8, 16], requests_per_step=10)
    seen, v = drive(load, lambda c: (c <= 2, 10.0 if c <= 2 else 900.0))
    assert seen == [1, 2, 4]
    assert v.stopped_early == "step 2: ttft_ms.p99 900.0 is over 4x its bound 100"


def test_no_early_stop_note_on_the_last_step() -> None:
    load = load_spec(concurrency=[1, 2], requests_per_step=10)
    seen, v = drive(load, lambda c: (c <= 1, 10.0 if c <= 1 else 900.0))
    assert seen == [1, 2] and v.stopped_early is None


def test_sla_search_bisects_to_the_tolerance() -> None:
    load = load_spec(sweep="sla-search", concurrency=[1, 64], requests_per_step=10)
    seen, v = drive(load, lambda c: (c <= 23, 10.0 if c <= 23 else 900.0))
    assert seen[:2] == [1, 64]
    assert v.max_passing == 23 and v.bracket == [23, 24]
    assert len(seen) <= 2 + 6  # log2(64) bisections


def test_sla_search_when_even_the_lowest_fails() -> None:
    load = load_spec(sweep="sla-search", rate=[1, 10], requests_per_step=10, mode="rate")
    seen, v = drive(load, lambda r: (False, 150.0))
    assert seen == [1]
    assert v.max_passing is None
    assert (
        v.text == "no rate met the SLA; stopped early: the lowest load (1) does not meet the SLA: "
        "ttft_ms.p99 150 > 100"
    )


def test_auto_probes_then_spreads_rates() -> None:
    load = load_spec(sweep="auto", probe_concurrency=32, auto_points=4, requests_per_step=10)
    sweep = make_sweep(load)
    probe = sweep.next_point()
    assert probe == Point("concurrency", 32, role="probe")
    sweep.observe(probe, step(0, Point("rate", 20.0), passed=True))  # the probe measured 20 req/s
    rates = [sweep.next_point() for _ in range(4)]
    assert [p.value for p in rates if p] == [5.0, 10.0, 15.0, 20.0]
    assert sweep.next_point() is None


def test_trace_verdict_is_the_fastest_passing_replay() -> None:
    load = load_spec(mode="trace", trace="t.jsonl", time_scale=[1.0, 0.5, 0.25])
    sweep = make_sweep(load)
    seen = []
    i = 0
    while (p := sweep.next_point()) is not None:
        assert p.mode == "trace"
        sweep.observe(p, step(i, p, passed=p.value >= 0.5))
        seen.append(p.value)
        i += 1
    v = verdict(sweep)
    assert seen == [1.0, 0.5, 0.25]
    assert v.max_passing == 0.5
    assert v.text.startswith("fastest replay meeting the SLA: time scale 0.5 (2x the recorded")


def test_an_inconclusive_step_never_passes_and_the_verdict_names_it() -> None:
    load = load_spec(concurrency=[1, 2, 4], requests_per_step=10)
    sweep = make_sweep(load)
    i = 0
    while (p := sweep.next_point()) is not None:
        s = step(i, p, passed=p.value < 4)
        if p.value == 2:  # the bounds held, but within loadgen's own error: inconclusive
            for c in s.sla.checks:
                c.verdict, c.client_error = "inconclusive", True
            s.sla = SlaResult(passed=False, checks=s.sla.checks)
            decide(s.sla, s.requests.ok)
        sweep.observe(p, s)
        i += 1
    v = verdict(sweep)
    assert v.max_passing == 1 and v.inconclusive_steps == [1]
    assert v.text == (
        "max concurrency meeting the SLA: 1; goodput there: 0.50 req/s; "
        "inconclusive: step 1 (a bound within loadgen's own error of the value)"
    )


def test_a_step_too_small_to_decide_is_not_a_pass_and_the_verdict_says_how_many_would() -> None:
    """A p99 within its bound by the point estimate, but its interval open above:
    inconclusive (too few requests), never the answer; the verdict groups such steps
    and says how many requests per step would decide them."""
    load = load_spec(concurrency=[1, 2, 4], requests_per_step=10)
    sweep = make_sweep(load)
    i = 0
    while (p := sweep.next_point()) is not None:
        s = step(i, p, passed=True)
        if p.value >= 2:
            c = s.sla.checks[0]
            c.verdict, c.interval, c.requests_needed = "inconclusive", [9.0, None], 368
            c.reason = "10 requests cannot decide a p99 at 95%; about 368 would"
            decide(s.sla, s.requests.ok)
        sweep.observe(p, s)
        i += 1
    v = verdict(sweep)
    assert [s.sla.verdict for _, s in sweep.done] == ["met", "inconclusive", "inconclusive"]
    assert sweep.done[1][1].sla.cause == "few_requests"
    assert sweep.done[1][1].sla.reason == (
        "ttft_ms.p99: 10 requests cannot decide a p99 at 95%; about 368 would"
    )
    assert v.max_passing == 1 and v.inconclusive_steps == [1, 2]
    assert v.text.endswith(
        "inconclusive: steps 1, 2 (too few requests: about 368 per step would decide)"
    )
