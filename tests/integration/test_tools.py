"""Tool calls and structured answers end to end against the mock, over real sockets.

tool_choice required: every answer is a call, every call valid, and the time to
the first tool-call fragment agrees with the mock's truth as TTFT does
(test_ground_truth.py's bound, one run). json_schema: every answer valid.
The mock's invalid_json fault: the rate drops, the first failure is the example,
and sla.valid_output_rate fails the step. Bad input is one line, exit 2.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from loadgen.records import Record
from loadgen.report.terminal.console import format_step
from loadgen.scenario import Scenario
from loadgen.summary import Summary
from tests.integration.test_ground_truth import Agreement

# durations held to tight bounds: run apart from the parallel tests (-m timing)
pytestmark = pytest.mark.timing

RunFixture = Callable[[Scenario], tuple[Summary, list[Record], Path]]
Make = Callable[..., Scenario]
DATA = Path(__file__).parents[2] / "scenarios" / "data"
TOOLS = str(DATA / "tools.json")
SCHEMA = str(DATA / "answer-schema.json")


def _tools_run(
    run: RunFixture,
    scenario: Make,
    args: list[str],
    requests: int,
    sla: dict[str, object] | None = None,
    reports: bool = False,
    **workload: object,
) -> tuple[Summary, list[Record], Path]:
    sc = scenario(
        target={"extra_body": {"ignore_eos": True}, "mock": {"args": args}},
        workload={"output_tokens": {"dist": "uniform", "min": 8, "max": 24}, **workload},
        load={"concurrency": [4], "requests_per_step": requests, "warmup_requests": 2},
        sla=sla or {},
    )
    return run(sc, reports=reports)


def test_tool_choice_required_every_answer_a_valid_call_timed_as_the_truth(
    run: RunFixture, scenario: Make, tmp_path: Path
) -> None:
    truth_path = tmp_path / "truth.jsonl"
    # 8 ms apart, as test_ground_truth's c=16 case: a read later than one gap (a busy
    # machine) gives two tokens one kernel stamp, so a shorter gap fails where the
    # client's timing is right
    args = ["--ttft-ms", "20", "--itl-ms", "8", "--truth", str(truth_path)]
    summary, records, _ = _tools_run(
        run, scenario, args, 60, tools={"file": TOOLS}, tool_choice="required"
    )
    measured = [r for r in records if not r.warmup]
    assert len(measured) == 60 and all(r.ok for r in measured)
    assert all(r.tool_calls == 1 and r.valid_output is True for r in measured)
    assert all(r.finish_reason == "tool_calls" for r in measured)
    assert all(r.tool_events == r.output_events == r.max_tokens for r in measured)
    v = summary.steps[0].output_validity
    assert v is not None and (v.checked, v.valid, v.rate, v.example) == (60, 60, 1.0, None)
    assert v.calls_per_answer == 1.0 and v.first_tool_ms is not None
    block = format_step(summary.steps[0]).splitlines()  # wrapped between phrases at 80
    at = next(i for i, line in enumerate(block) if "valid output: " in line)
    lines = block[at : at + 3]
    assert max(map(len, lines)) <= 80, lines
    assert " ".join(" ".join(lines).split()).startswith("valid output: 60 of 60 valid")
    truth = {}
    for line in truth_path.read_bytes().splitlines():
        row = orjson.loads(line)
        truth[row["request_id"]] = row
    found = Agreement()
    for r in measured:
        assert r.first_tool_ns is not None
        found.add(r.first_tool_ns, r.sent_ns, r.token_ns, truth[r.request_id], r.token_slack_ns)
    found.check("tools")


def test_json_schema_answers_are_all_valid(run: RunFixture, scenario: Make) -> None:
    summary, records, out = _tools_run(
        run, scenario, ["--ttft-ms", "5", "--itl-ms", "1"], 40,
        response_format={"json_schema": SCHEMA}, reports=True,
    )  # fmt: skip
    measured = [r for r in records if not r.warmup]
    assert all(r.ok and r.valid_output is True and r.tool_calls == 0 for r in measured)
    v = summary.steps[0].output_validity
    assert v is not None and (v.checked, v.valid) == (40, 40)
    assert "valid_output_rate" in (out / "steps.csv").read_text().splitlines()[0]


def test_broken_answers_are_counted_with_an_example_and_fail_the_sla(
    run: RunFixture, scenario: Make
) -> None:
    args = ["--ttft-ms", "5", "--itl-ms", "1", "--fault", "invalid_json=0.3", "--seed", "3"]
    summary, records, out = _tools_run(
        run, scenario, args, 80, tools={"count": 3, "parameters": 4}, tool_choice="required",
        sla={"valid_output_rate": 0.99}, reports=True,
    )  # fmt: skip
    measured = [r for r in records if not r.warmup]
    invalid = [r for r in measured if r.valid_output is False]
    assert all(r.ok for r in measured)  # a wrong answer is a valid HTTP answer
    assert 8 <= len(invalid) <= 45, len(invalid)
    step = summary.steps[0]
    v = step.output_validity
    assert v is not None and v.checked == 80 and v.valid == 80 - len(invalid)
    first = next(r for r in records if r.valid_output is False and not r.warmup)
    assert v.example == first.invalid_detail or v.example_request is not None
    assert v.example and ("not JSON" in v.example or "is not of type" in v.example)
    assert step.sla.verdict == "missed" and "valid output rate" in (step.sla.reason or "")
    report = (out / "report.md").read_text()
    assert "valid output" in report and "first invalid answer" in report


def _loadgen(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "loadgen", *args],
        cwd=cwd, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def _one_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stderr[-2000:]
    err = proc.stderr.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


BASE = """target: {{url: mock, api: {api}, model: m}}
workload:
{workload}
load: {{concurrency: [1], requests_per_step: 2}}
"""


def _scenario(tmp_path: Path, workload: str, api: str = "openai-chat", sla: str = "") -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(BASE.format(api=api, workload=workload) + sla)
    return path


def test_bad_input_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "bad-schema.json").write_text(json.dumps({"type": "objekt"}))
    path = _scenario(tmp_path, "  response_format: {json_schema: bad-schema.json}")
    err = _one_line(_loadgen(["workload", str(path)], tmp_path))
    assert "workload.response_format.json_schema" in err and "not a JSON schema" in err
    assert str(tmp_path / "bad-schema.json") in err
    tools = [{"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": 5}}}}]
    (tmp_path / "bad-tools.json").write_text(json.dumps(tools))
    err = _one_line(
        _loadgen(
            ["workload", str(_scenario(tmp_path, "  tools: {file: bad-tools.json}"))], tmp_path
        )
    )
    assert "workload.tools.file" in err and "tool 0 (f): parameters: not a JSON schema" in err
    err = _one_line(
        _loadgen(["run", str(_scenario(tmp_path, "  tools: {file: gone.json}"))], tmp_path)
    )
    assert "workload.tools.file" in err and str(tmp_path / "gone.json") in err
    assert "no such file" in err
    path = _scenario(tmp_path, "  tools: {count: 2}", api="openai-completions")
    err = _one_line(_loadgen(["run", str(path)], tmp_path))
    apis = "openai-chat | openai-responses | anthropic-messages"
    assert f"workload.tools needs target.api {apis}, not openai-completions" in err
    path = _scenario(
        tmp_path, "  prompt_tokens: {dist: fixed, value: 4}", sla="sla: {valid_output_rate: 0.99}\n"
    )
    err = _one_line(_loadgen(["run", str(path)], tmp_path))
    assert (
        "sla.valid_output_rate" in err and "needs workload.tools or workload.response_format" in err
    )
    path = _scenario(tmp_path, "  tools: {count: 2}\n  tool_choice: nope")
    err = _one_line(_loadgen(["workload", str(path)], tmp_path))
    assert "workload.tool_choice: no tool named 'nope'" in err
