"""An undecided bound says why (too few requests, or too close); a cut step has no Little's law."""

from __future__ import annotations

from loadgen.metrics import StepColumns, summarize_step
from loadgen.results.outcome import judge
from loadgen.scenario import SlaSpec
from loadgen.summary import ClockAnchor, LoadPoint, Summary
from tests.unit.metrics.test_columns import random_step

LOAD = LoadPoint(mode="concurrency", concurrency=4)


def step_of(n: int, sla: dict[str, object]) -> object:
    ok = [r for r in random_step(1, 4 * n, open_loop=False) if r.ok and not r.warmup][:n]
    return summarize_step(0, LOAD, StepColumns.of(ok), SlaSpec.model_validate(sla))


def test_too_few_requests_for_a_p99_is_the_reason_not_a_close_call() -> None:
    step = step_of(20, {"ttft_ms": {"p99": 1e6}})  # every value far under the bound
    (check,) = step.sla.checks  # type: ignore[attr-defined]
    assert check.passed and check.verdict == "inconclusive"
    n = step.requests.ok  # type: ignore[attr-defined]
    assert 10 < n <= 20 and check.requests_needed is not None and check.requests_needed > n
    assert check.reason == (
        f"{n} requests cannot decide a p99 at 95%; about {check.requests_needed:,} would"
    )
    summary = Summary(
        loadgen_version="0", name="t", run_id="r", target_url="http://x", api="openai-chat",
        model="m",
        clock_anchor=ClockAnchor(monotonic_ns=0, wall_ns=0), steps=[step],
    )  # fmt: skip
    failure = judge(summary, fail_on_sla=False, strict=True)
    assert failure is not None and f"{n} requests cannot decide a p99" in str(failure)
    assert "too close to call" not in str(failure)


def test_a_value_at_the_bound_is_too_close_to_call() -> None:
    step = step_of(300, {"ttft_ms": {"p50": 1e6}})
    median = step.ttft_ms.p50  # type: ignore[attr-defined]
    step = step_of(300, {"ttft_ms": {"p50": median}})
    (check,) = step.sla.checks  # type: ignore[attr-defined]
    assert check.verdict == "inconclusive"
    assert check.reason is not None and "too close to call" in check.reason


def test_an_interrupted_step_gets_no_littles_law_check() -> None:
    """Its cut requests ended when the user stopped it: in-flight x latency means nothing."""
    ok = [r for r in random_step(2, 80, open_loop=False) if r.ok and not r.warmup]
    spec = SlaSpec()
    whole = summarize_step(0, LOAD, StepColumns.of(ok), spec, mean_in_flight=4.0)
    assert whole.little is not None
    cut = summarize_step(0, LOAD, StepColumns.of(ok), spec, mean_in_flight=4.0, interrupted=True)
    assert cut.little is None and cut.interrupted
