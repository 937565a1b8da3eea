"""`loadgen workload`'s forecast: what each step of a sweep can decide, and how long it takes.

The demo and the README's example are checked here too: every step's request
count can confirm every percentile bound they state.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from loadgen.cli import main
from loadgen.forecast import forecast, step_shape
from loadgen.forecast.decide import shortfalls
from loadgen.forecast.sweep import step_lines
from loadgen.scenario import Scenario, load_scenario
from loadgen.workload import Workload, plan_step

ROOT = Path(__file__).resolve().parents[3]


def prepared(sc: Scenario) -> Workload:
    return Workload.prepare(sc.workload, chat=sc.target.api == "openai-chat")


def scenario(**load: Any) -> Scenario:
    return Scenario.model_validate(
        {
            "name": "t",
            "target": {"url": "mock", "extra_body": {"ignore_eos": True}},
            "workload": {"output_tokens": {"dist": "fixed", "value": 16}},
            "load": {"mode": "concurrency", "concurrency": [1, 16], **load},
            "sla": {"ttft_ms": {"p99": 400}, "tpot_ms": {"p90": 60}},
        }
    )


def test_the_demo_decides_every_bound_at_every_step() -> None:
    sc = load_scenario(ROOT / "scenarios" / "demo.yaml")
    fc = forecast(sc, prepared(sc))
    assert len(fc.steps) == len(sc.load.points) >= 4
    stated = [stat for _, stat in sc.sla.ttft_ms.items() + sc.sla.tpot_ms.items()]
    assert stated and fc.fewest  # percentile bounds, each with the requests it takes
    for step in fc.steps:
        assert step.planned and step.shortfalls == [], step
    assert fc.complete and fc.seconds < 60  # the steps, on the mock's model


def test_the_readme_example_decides_every_bound_at_every_step(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = (ROOT / "README.md").read_text()
    block = re.search(r"```yaml\n(# my-endpoint\.yaml\n.*?)```", text, re.S)
    assert block is not None
    doc = yaml.safe_load(block.group(1))
    monkeypatch.setenv(doc["target"]["api_key_env"], "x")
    sc = Scenario.model_validate(doc)
    assert any(stat == "p99" for stat, _ in sc.sla.ttft_ms.items())
    fc = forecast(sc, prepared(sc))
    assert fc.steps and all(s.shortfalls == [] for s in fc.steps)


def test_a_short_duration_cannot_confirm_a_p99_and_says_how_many_could() -> None:
    """The old demo's shape: 3.5 s a step, ~9 requests at 1 user on the mock."""
    sc = scenario(duration_s=3.5)
    fc = forecast(sc, prepared(sc))
    one, sixteen = fc.steps
    assert not one.planned and one.estimate.requests is not None
    assert 5 < one.estimate.requests < 36  # 0.11 s a request
    assert [(s.label, s.needed) for s in one.shortfalls] == [
        ("ttft_ms.p99 <= 400", 368),
        ("tpot_ms.p90 <= 60", 36),
    ]
    assert sixteen.estimate.requests is not None and 36 < sixteen.estimate.requests < 368
    assert [(s.label, s.needed) for s in sixteen.shortfalls] == [("ttft_ms.p99 <= 400", 368)]


def test_a_planned_count_is_the_plans_own() -> None:
    sc = scenario(requests_per_step=50, warmup_requests=3)
    fc = forecast(sc, prepared(sc))
    assert [s.shape.requests for s in fc.steps] == [50, 50]
    assert [s.shape.warmup for s in fc.steps] == [3, 3]
    assert all(s.planned and [x.needed for x in s.shortfalls] == [368] for s in fc.steps)


def test_an_open_loop_counts_its_measured_arrivals() -> None:
    sc = Scenario.model_validate(
        {
            "name": "t",
            "target": {"url": "http://127.0.0.1:9", "model": "m"},
            "load": {"mode": "rate", "rate": [4], "requests_per_step": 30, "warmup_requests": 5},
            "sla": {"e2e_ms": {"p90": 2000}},
        }
    )
    wl = prepared(sc)
    shape = step_shape(plan_step(wl, sc.load, "rate", 4.0, 0), "rate")
    assert (shape.requests, shape.warmup, shape.arrivals) == (30, 5, 35)
    (step,) = forecast(sc, wl).steps
    assert [(s.requests, s.needed) for s in step.shortfalls] == [(30, 36)]  # a p90 takes 36
    assert step.estimate.seconds == pytest.approx(shape.span_s + 2.0)


def test_elsewhere_a_duration_is_judged_at_the_bounds_or_not_at_all() -> None:
    """Not the mock: a server within its bounds completes at least users * D / E2E."""
    doc: dict[str, Any] = {
        "name": "t",
        "target": {"url": "http://127.0.0.1:9", "model": "m"},
        "load": {"mode": "concurrency", "concurrency": [2], "duration_s": 10},
        "sla": {"ttft_ms": {"p99": 500}, "e2e_ms": {"p99": 1000}},
    }
    sc = Scenario.model_validate(doc)
    fc = forecast(sc, prepared(sc))
    (step,) = fc.steps
    assert step.estimate.requests == pytest.approx(2 * 10 / 1.0 + 2)
    lines = "\n".join(step_lines(step, fc))
    assert "estimate: at least 22 requests in at most 11 s" in lines
    assert "maybe too few: a server within its bounds completes at least 22" in lines
    doc["sla"] = {"ttft_ms": {"p99": 500}}  # nothing says how long a request takes
    sc = Scenario.model_validate(doc)
    fc = forecast(sc, prepared(sc))
    (step,) = fc.steps
    lines = "\n".join(step_lines(step, fc))
    assert "estimate: at least 10 s" in lines
    assert "as many as the server completes in time; confirming" in lines
    assert "ttft_ms.p99 <= 500: at least 368" in lines


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(args)
        raise SystemExit(0)
    out = capsys.readouterr()
    return int(exc.value.code or 0), out.out, out.err


def test_the_workload_command_warns_per_step_and_estimates_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "name: s\ntarget: {url: mock, extra_body: {ignore_eos: true}}\n"
        "workload: {output_tokens: {dist: fixed, value: 16}}\n"
        "load: {mode: concurrency, concurrency: [1, 16], requests_per_step: 50}\n"
        "sla: {ttft_ms: {p99: 400}, tpot_ms: {p90: 60}}\n"
    )
    code, out, err = run_cli(["workload", str(path)], capsys)
    assert code == 0 and err == ""
    steps = out.split("\nstep ")[1:]
    assert len(steps) == 2
    for text in steps:
        assert "too few: 50 requests cannot confirm ttft_ms.p99 <= 400 at 95%;" in text
        assert "at least 368 could" in text and "tpot_ms.p90" not in text
        assert re.search(r"estimate: about [0-9.]+ s \(the mock's tiny-cpu engine model\)", text)
    assert re.search(r"\nestimate: the 2 steps take about [0-9.]+ s", out)
    assert all(len(line) <= 80 for line in out.splitlines() if "estimate" in line or "few" in line)
    code, out, _ = run_cli(["workload", str(path), "--requests", "400"], capsys)
    assert code == 0 and "too few" not in out
    assert "decidable at 95%: every step has the requests that confirm its bounds met" in out


SHIPPED = sorted((ROOT / "scenarios").glob("*.yaml"))


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_every_shipped_scenario_can_decide_its_bounds(path: Path) -> None:
    """What scenarios/ offers is sized to decide: each step's requests (planned, or as the
    mock's model forecasts a timed step) can confirm every percentile bound stated."""
    sc = load_scenario(path, check_inputs=False)  # no API key, agent token or model folder
    planned = getattr(sc.load, "requests_per_step", None)
    sessions = sc.workload.sessions is not None or sc.workload.agent is not None
    if planned is not None and not sessions:  # with sessions it counts them, not requests
        assert shortfalls(sc.sla, planned) == [], path.name
        return
    fc = forecast(sc, prepared(sc))
    assert fc.steps and all(s.shortfalls == [] for s in fc.steps), path.name
