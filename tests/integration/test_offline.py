"""load.mode offline (MLPerf Offline): the whole batch at once, the maximum throughput."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from loadgen.errors import ScenarioError
from loadgen.scenario import Scenario, parse_scenario

from .conftest import most_in_flight


def test_offline_sends_the_batch_at_once_and_reports_its_throughput(
    run: Callable[..., tuple], scenario: Callable[..., Scenario]
) -> None:
    sc = scenario(
        target={
            "extra_body": {"ignore_eos": True},
            "mock": {"args": ["--ttft-ms", "5", "--itl-ms", "2"]},
        },
        workload={"output_tokens": {"dist": "fixed", "value": 20}},
        load={"mode": "offline", "requests_per_step": 60, "max_concurrency": [8, 60]},
    )
    summary, records, _ = run(sc)
    capped, free = summary.steps
    assert capped.load.mode == "offline" and capped.load.max_concurrency == 8
    assert free.load.max_concurrency == 60
    for step in summary.steps:
        assert step.requests.ok == 60
        rows = [r for r in records if r.step == step.index]
        assert len({r.scheduled_ns for r in rows}) == 1  # one moment for the whole batch
        assert step.latency_from == "sent"  # each request's latency from its own send
        assert step.queue_wait_ms is not None
    assert most_in_flight([r for r in records if r.step == 0]) == 8
    assert capped.queue_wait_ms is not None and capped.queue_wait_ms.max > 0
    best = max(summary.steps, key=lambda s: s.throughput.output_tokens_per_s)
    assert summary.verdict is not None and summary.verdict.text.startswith("offline throughput:")
    assert summary.verdict.output_tokens_per_s == best.throughput.output_tokens_per_s


@pytest.mark.parametrize(
    ("load", "message"),
    [
        ("{mode: offline, max_concurrency: [4]}", "needs `requests_per_step`"),
        ("{mode: offline, duration_s: 10}", "needs `requests_per_step`"),
        ("{mode: offline, requests_per_step: 10, duration_s: 5}", "give `requests_per_step` only"),
        ("{mode: offline, requests_per_step: 10, rate: [1]}", "rate"),
        ("{mode: offline, requests_per_step: 10, max_concurrency: [0]}", "max_concurrency"),
    ],
)
def test_offline_scenario_errors_name_the_field(load: str, message: str) -> None:
    text = f"name: x\ntarget: {{url: mock, model: m}}\nload: {load}\n"
    with pytest.raises(ScenarioError, match=message):
        parse_scenario(text, "s.yaml")
