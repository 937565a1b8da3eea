"""The Responses and Messages APIs end to end against the mock over real sockets.

Token counts equal the server's usage; TTFT and ITL agree with the mock's
``--truth`` file within the bound chat is held to (tests/integration/
test_ground_truth.py: its helpers, one run); reasoning tokens are told
apart; Responses sessions keep the conversation on the client or on the
server (``previous_response_id``), and the mock counts the stored context.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from loadgen.records import Record
from loadgen.scenario import Scenario
from tests.integration.conftest import Runner, make_scenario
from tests.integration.test_ground_truth import Agreement

# durations held to tight bounds: run apart from the parallel tests (-m timing)
pytestmark = pytest.mark.timing

APIS = ("openai-responses", "anthropic-messages")


def truth_of(path: Path) -> dict[str, dict[str, Any]]:
    return {row["request_id"]: row for row in map(orjson.loads, path.read_bytes().splitlines())}


def timed(run: Runner, api: str, truth_path: Path, concurrency: int, requests: int) -> Any:
    """One run (reasoning on); its readings against the truth."""
    args = ["--ttft-ms", "20", "--itl-ms", "8", "--reasoning-tokens", "3"]
    sc = make_scenario(
        target={
            "api": api,
            "extra_body": {"ignore_eos": True},
            "mock": {"args": [*args, "--truth", str(truth_path)]},
        },
        workload={"output_tokens": {"dist": "uniform", "min": 8, "max": 24}},
        load={
            "concurrency": [concurrency],
            "requests_per_step": requests,
            "warmup_requests": concurrency,
        },
    )
    summary, records, _ = run(sc)
    assert summary.steps[0].requests.failed == 0
    truth = truth_of(truth_path)
    found = Agreement()
    for r in (r for r in records if not r.warmup):
        t = truth[r.request_id]
        assert r.ok and r.output_tokens_server == r.output_events == len(t["token_ns"])
        assert r.prompt_tokens_server == t["prompt_tokens"] == r.prompt_tokens_requested
        # at most 3 reasoning tokens, and one answer token at least (Messages' lengths are
        # natural: vLLM's /v1/messages has no ignore_eos)
        assert r.reasoning_events == t["reasoning_tokens"] == min(3, r.output_events - 1)
        if api == "openai-responses":  # Messages' usage has no reasoning count
            assert r.output_events == r.max_tokens
            assert r.reasoning_tokens_server == 3
            assert r.response_id is not None and r.response_id.startswith("resp_")
        assert r.first_token_ns is not None and r.first_answer_ns is not None
        if r.reasoning_events:
            assert r.first_token_ns == r.first_reasoning_ns < r.first_answer_ns
        found.add(r.first_token_ns, r.sent_ns, r.token_ns, t, r.token_slack_ns)
    return found


@pytest.mark.parametrize("api", APIS)
def test_counts_and_timing_match_the_mock_truth(api: str, tmp_path: Path) -> None:
    run = Runner(tmp_path)
    truth = tmp_path / "truth.jsonl"
    timed(run, api, truth, 8, 160).check(f"{api} c=8")


@pytest.mark.parametrize("api", APIS)
def test_not_streamed(api: str, tmp_path: Path) -> None:
    sc = make_scenario(
        target={"api": api, "stream": False, "extra_body": {"ignore_eos": True}},
        load={"concurrency": [2], "requests_per_step": 6},
    )
    summary, records, _ = Runner(tmp_path)(sc)
    assert summary.steps[0].requests.failed == 0
    for r in records:
        assert r.ok and r.output_tokens_server is not None and r.output_tokens_server >= 1
        assert r.prompt_tokens_server == r.prompt_tokens_requested == 16
        assert r.output_chars > 0


@pytest.mark.parametrize("api", APIS)
def test_mid_stream_error_event_is_a_stream_error(api: str, tmp_path: Path) -> None:
    sc = make_scenario(
        target={"api": api, "mock": {"args": ["--fault", "error_event=1"]}},
        load={"concurrency": [1], "requests_per_step": 3},
    )
    _, records, _ = Runner(tmp_path)(sc)
    assert [r.error_kind for r in records] == ["stream_error"] * 3
    assert all("injected fault error_event" in (r.error_detail or "") for r in records)


def sessions(state: str, truth: Path) -> Scenario:
    return make_scenario(
        target={
            "api": "openai-responses",
            "extra_body": {"ignore_eos": True},
            "mock": {"args": ["--truth", str(truth)]},
        },
        workload={
            "prompt_tokens": {"dist": "fixed", "value": 12},
            "output_tokens": {"dist": "fixed", "value": 6},
            "sessions": {"turns": {"dist": "fixed", "value": 3}, "state": state},
        },
        load={"concurrency": [2], "requests_per_step": 4},
    )


def by_turn(records: list[Record], truth: dict[str, Any]) -> dict[int, list[dict[str, Any]]]:
    out: dict[int, list[dict[str, Any]]] = {}
    for r in records:
        assert r.ok and r.turn is not None
        out.setdefault(r.turn, []).append(truth[r.request_id])
    return out


def test_responses_sessions_client_and_server_state(tmp_path: Path) -> None:
    """The same conversations; the server-state turns send only the new message, and the
    mock counts the stored conversation as prompt tokens, as the client-state turns send."""
    run = Runner(tmp_path)
    got: dict[str, tuple[list[Record], dict[str, Any]]] = {}
    for state in ("client", "server"):
        truth_path = tmp_path / f"truth-{state}.jsonl"
        summary, records, _ = run(sessions(state, truth_path))
        assert summary.steps[0].requests.failed == 0
        got[state] = (records, truth_of(truth_path))
    client, server = (by_turn(*got[s]) for s in ("client", "server"))
    assert sorted(client) == sorted(server) == [0, 1, 2]
    for turn in (0, 1, 2):
        c = sorted(t["prompt_tokens"] for t in client[turn])
        s = sorted(t["prompt_tokens"] for t in server[turn])
        assert c == s  # the server rebuilt the same context the client sent
        assert all("context_tokens" not in t for t in client[turn])
        sent = [t["prompt_tokens"] - t.get("context_tokens", 0) for t in server[turn]]
        if turn == 0:
            assert sent == s
        else:  # only the new user message went over the wire
            assert all(n == 12 for n in sent) and max(sent) < min(c)
    records = got["server"][0]
    for r in records:  # the planned length counts the conversation, as usage does
        assert r.prompt_tokens_server == r.prompt_tokens_requested


def test_an_unknown_previous_response_id_is_404(tmp_path: Path) -> None:
    sc = make_scenario(
        target={"api": "openai-responses", "extra_body": {"previous_response_id": "resp_x"}},
        load={"concurrency": [1], "requests_per_step": 2},
    )
    _, records, _ = Runner(tmp_path)(sc)
    assert [r.error_kind for r in records] == ["http_404", "http_404"]
    assert "Response with id 'resp_x' not found." in (records[0].error_detail or "")


def test_messages_carry_the_anthropic_headers(tmp_path: Path, monkeypatch: Any) -> None:
    from loadgen.scenario import load_scenario
    from loadgen.target.options import target_headers

    monkeypatch.setenv("LOADGEN_TEST_KEY", "sk-ant-test-0123456789")
    path = tmp_path / "s.yaml"
    path.write_text(
        "target: {url: 'http://127.0.0.1:9', api: anthropic-messages, model: m,"
        " api_key_env: LOADGEN_TEST_KEY, headers: {anthropic-version: '2024-01-01'}}\n"
        "load: {concurrency: [1], requests_per_step: 1}\n"
    )
    headers = target_headers(load_scenario(path))
    assert headers["x-api-key"] == "sk-ant-test-0123456789"
    assert headers["Authorization"] == "Bearer sk-ant-test-0123456789"
    assert headers["anthropic-version"] == "2024-01-01"  # the scenario's own header wins
