"""Load-time warnings: a step that cannot reach its concurrency is said before the run."""

from __future__ import annotations

from typing import Any

from loadgen.scenario import Scenario
from loadgen.scenario.checks import load_warnings


def scenario(load: dict[str, Any], **workload: Any) -> Scenario:
    return Scenario.model_validate(
        {"name": "x", "target": {"url": "mock", "model": "m"}, "workload": workload, "load": load}
    )


def test_requests_below_a_concurrency_are_named() -> None:
    lines = load_warnings(scenario({"concurrency": [4, 32, 64], "requests_per_step": 32}))
    assert len(lines) == 1
    assert "load.requests_per_step 32 is below load.concurrency 64" in lines[0]
    assert "32," not in lines[0]  # 32 requests do reach concurrency 32


def test_sessions_are_counted_as_sessions() -> None:
    sc = scenario(
        {"concurrency": [8], "requests_per_step": 4},
        sessions={"turns": {"dist": "fixed", "value": 2}},
    )
    assert "that many sessions in flight" in load_warnings(sc)[0]


def test_a_step_that_reaches_its_load_or_runs_for_a_duration_is_quiet() -> None:
    assert load_warnings(scenario({"concurrency": [8], "requests_per_step": 8})) == []
    assert load_warnings(scenario({"concurrency": [64], "duration_s": 1})) == []
    assert load_warnings(scenario({"mode": "rate", "rate": [100], "requests_per_step": 5})) == []
