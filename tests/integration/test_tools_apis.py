"""Tool calls, JSON answers and images on the Responses and Messages APIs, end to end
against the mock over real sockets.

``tool_choice: required``: every answer one valid call, finish ``tool_calls`` on both APIs
(chat's word), and the time to the first tool-call fragment agrees with the mock's truth
as TTFT does (test_ground_truth.py's bound, one run). The invalid_json fault lowers
the validity rate on Responses and Messages. A JSON schema on Messages goes as
``output_config.format``: every answer valid, streamed or not. Images: the server's
prompt tokens include the images' tokens and equal the mock's truth. json_object on
anthropic-messages (which has no such format) is one line, exit 2.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from loadgen.records import Record
from loadgen.scenario import Scenario
from loadgen.summary import Summary
from tests.integration.test_ground_truth import Agreement
from tests.integration.test_tools import SCHEMA, TOOLS, _loadgen, _one_line, _scenario

# durations held to tight bounds: run apart from the parallel tests (-m timing)
pytestmark = pytest.mark.timing

RunFixture = Callable[[Scenario], tuple[Summary, list[Record], Path]]
Make = Callable[..., Scenario]
APIS = ("openai-responses", "anthropic-messages")


def _truth(path: Path) -> dict[str, dict[str, object]]:
    return {
        (row := orjson.loads(line))["request_id"]: row for line in path.read_bytes().splitlines()
    }


def _run(
    run: RunFixture,
    scenario: Make,
    api: str,
    args: list[str],
    requests: int,
    stream: bool = True,
    **workload: object,
) -> tuple[Summary, list[Record]]:
    target = {"api": api, "extra_body": {"ignore_eos": True}, "mock": {"args": args}}
    sc = scenario(
        target={**target, "stream": stream},
        workload={"output_tokens": {"dist": "uniform", "min": 8, "max": 24}, **workload},
        load={"concurrency": [4], "requests_per_step": requests, "warmup_requests": 2},
    )
    summary, records, _ = run(sc)
    return summary, [r for r in records if not r.warmup]


@pytest.mark.parametrize("api", APIS)
def test_required_calls_are_valid_and_timed_as_the_truth(
    run: RunFixture, scenario: Make, tmp_path: Path, api: str
) -> None:
    truth_path = tmp_path / "truth.jsonl"
    # test_responses_messages.py's pacing: these events are larger than chat's
    args = ["--ttft-ms", "20", "--itl-ms", "8", "--truth", str(truth_path)]
    summary, measured = _run(
        run, scenario, api, args, 60, tools={"file": TOOLS}, tool_choice="required"
    )
    assert len(measured) == 60 and all(r.ok for r in measured)
    assert all(r.tool_calls == 1 and r.valid_output is True for r in measured)
    assert all(r.finish_reason == "tool_calls" for r in measured)
    odd = [
        (r.tool_events, r.output_events, r.output_tokens_server, r.max_tokens, r.request_id)
        for r in measured
        if not r.tool_events == r.output_events == r.output_tokens_server
    ]
    assert not odd, odd
    if api == "openai-responses":  # Messages' lengths are natural (no ignore_eos)
        assert all(r.output_events == r.max_tokens for r in measured)
    v = summary.steps[0].output_validity
    assert v is not None and (v.checked, v.valid, v.rate, v.example) == (60, 60, 1.0, None)
    assert v.calls_per_answer == 1.0 and v.finish_tool_calls == 60
    truth = _truth(truth_path)
    found = Agreement()
    for r in measured:
        t = truth[r.request_id]
        token_ns = t["token_ns"]
        assert isinstance(token_ns, list) and isinstance(t["recv_ns"], int)
        assert r.first_tool_ns is not None and len(token_ns) == r.output_events
        found.add(r.first_tool_ns, r.sent_ns, r.token_ns, t, r.token_slack_ns)
    found.check(f"tools on {api}")


def test_responses_json_schema_and_broken_calls(run: RunFixture, scenario: Make) -> None:
    summary, measured = _run(
        run, scenario, "openai-responses", ["--ttft-ms", "5", "--itl-ms", "1"], 30,
        response_format={"json_schema": SCHEMA},
    )  # fmt: skip
    assert all(r.ok and r.valid_output is True for r in measured)
    v = summary.steps[0].output_validity
    assert v is not None and (v.checked, v.valid) == (30, 30)
    args = ["--ttft-ms", "5", "--itl-ms", "1", "--fault", "invalid_json=0.3", "--seed", "3"]
    summary, measured = _run(
        run, scenario, "openai-responses", args, 80, tools={"count": 3, "parameters": 4},
        tool_choice="required",
    )  # fmt: skip
    invalid = [r for r in measured if r.valid_output is False]
    assert all(r.ok for r in measured) and 8 <= len(invalid) <= 45, len(invalid)
    v = summary.steps[0].output_validity
    assert v is not None and v.checked == 80 and v.valid == 80 - len(invalid)
    assert v.example and ("not JSON" in v.example or "is not of type" in v.example)


@pytest.mark.parametrize("api", APIS)
def test_images_are_prompt_tokens_as_the_truth(
    run: RunFixture, scenario: Make, tmp_path: Path, api: str
) -> None:
    truth_path = tmp_path / "truth.jsonl"
    args = ["--ttft-ms", "5", "--itl-ms", "1", "--truth", str(truth_path),
            "--image-tokens-per-megapixel", "1000"]  # fmt: skip
    images = {"count": {"dist": "fixed", "value": 2}, "width": {"dist": "fixed", "value": 300},
              "height": {"dist": "fixed", "value": 200}}  # fmt: skip
    summary, measured = _run(
        run, scenario, api, args, 12, prompt_tokens={"dist": "fixed", "value": 16}, images=images
    )
    assert summary.steps[0].requests.failed == 0
    truth = _truth(truth_path)
    per_image = math.ceil(300 * 200 / 1e6 * 1000)
    for r in measured:
        assert (r.images, r.image_pixels) == (2, 2 * 300 * 200)
        assert r.prompt_tokens_server == 16 + 2 * per_image
        assert truth[r.request_id]["prompt_tokens"] == r.prompt_tokens_server


def test_messages_json_schema_answers_are_valid_and_the_fault_breaks_them(
    run: RunFixture, scenario: Make
) -> None:
    """output_config.format on Messages: the mock answers schema-valid JSON text
    (streamed as text_delta events, and whole when not streamed); invalid_json lowers the
    rate, with the first invalid answer as the example."""
    fast = ["--ttft-ms", "5", "--itl-ms", "1"]
    for stream in (True, False):
        summary, measured = _run(
            run, scenario, "anthropic-messages", fast, 30,
            response_format={"json_schema": SCHEMA}, stream=stream,
        )  # fmt: skip
        assert len(measured) == 30 and all(r.ok and r.valid_output is True for r in measured)
        assert all(r.tool_calls == 0 and r.finish_reason == "stop" for r in measured)
        if stream:  # one text_delta a token, as usage counts them
            assert all(r.output_events == r.output_tokens_server for r in measured)
        v = summary.steps[0].output_validity
        assert v is not None and (v.checked, v.valid, v.rate, v.example) == (30, 30, 1.0, None)
    args = [*fast, "--fault", "invalid_json=0.3", "--seed", "3"]
    summary, measured = _run(
        run, scenario, "anthropic-messages", args, 80, response_format={"json_schema": SCHEMA}
    )
    invalid = [r for r in measured if r.valid_output is False]
    assert all(r.ok for r in measured) and 8 <= len(invalid) <= 45, len(invalid)
    v = summary.steps[0].output_validity
    assert v is not None and v.checked == 80 and v.valid == 80 - len(invalid) and v.rate < 1
    assert v.example and v.example.startswith("the answer")
    assert v.example in {r.invalid_detail for r in invalid}


def test_json_object_on_messages_is_one_line(tmp_path: Path) -> None:
    path = _scenario(tmp_path, "  response_format: {type: json_object}", api="anthropic-messages")
    err = _one_line(_loadgen(["run", str(path)], tmp_path))
    assert "workload.response_format.type json_object" in err
    assert "anthropic-messages takes json_schema only" in err
    path = _scenario(tmp_path, "  audio: {seconds: {dist: fixed, value: 1}}", "openai-responses")
    err = _one_line(_loadgen(["run", str(path)], tmp_path))
    assert "workload.audio needs target.api" in err and "not openai-responses" in err
