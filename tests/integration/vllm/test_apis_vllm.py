"""The Responses and Messages APIs, tool calls, structured output and a LoRA mix, on real vLLM.

One server (``vllm_features``: hermes tool parser, a random LoRA adapter
``sql-lora``, the Responses store, compact structured output) serves every
test here. Where a claim is about what vLLM sent, the requests go through a
recording proxy (``tap.Tap``) and the raw answers are read with a parser of
the test's own, not loadgen's.

- Responses and Messages (and chat beside them, as the baseline): every
  record ok, output tokens equal the server's usage (events may be fewer:
  vLLM coalesces; the step counts the mismatches, never as errors), and the
  server's own ``/metrics`` saw the same requests, tokens and first tokens,
  its TTFT never longer than loadgen's.
- Responses sessions, ``state: client`` (the whole conversation each turn) and
  ``server`` (``previous_response_id``, the store): the server rebuilds the
  conversation, and usage counts it.
- ``tool_choice: required``: the validity rate loadgen reports is the rate of
  the raw answers, validated here; with strict tools every call vLLM finished
  is valid, without them a tiny random model's arguments mostly are not.
- ``response_format: json_schema`` on chat (``response_format``) and on Messages
  (``output_config.format``): loadgen's verdict on every answer is the test's own;
  most are valid, and the same Messages request without the format is not JSON at
  all (so vLLM applied it, it did not ignore it).
- ``target.models`` 3:1 of the base model and the LoRA adapter: broken down
  per model, every adapter request served by the adapter.
"""

from __future__ import annotations

import json
import math
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import jsonschema
import pytest

from loadgen.records import Record, read_records
from loadgen.run import RunOptions, run_scenario
from loadgen.scenario import Scenario
from loadgen.summary import StepSummary, Summary
from tests.integration.vllm.tap import Exchange, Tap, scrape, sse_events

if TYPE_CHECKING:  # the fixture's type; conftest is not imported at run time
    from conftest import VllmServer

pytestmark = pytest.mark.vllm

Build = Callable[..., Scenario]
Result = tuple[Summary, list[Record]]
DATA = Path(__file__).parents[3] / "scenarios" / "data"
TOOLS = DATA / "tools.json"
SCHEMA = DATA / "answer-schema.json"
MS = 1e6
OUTPUT_TOKENS = 32
#: vLLM 0.32's /v1/responses tokenizes the rendered chat template with
#: add_special_tokens=True: the template's BOS and the tokenizer's (chat and
#: /tokenize say one token less for the same messages). loadgen plans the
#: length as chat counts it, so usage says this much more.
RESPONSES_EXTRA_TOKENS = 1
LORA_NAME = "sql-lora"  # conftest.LORA_NAME: vllm_features serves the adapter as this


def run_in(out: Path, sc: Scenario) -> Result:
    summary = run_scenario(sc, RunOptions(out_dir=out, quiet=True, reports=False))
    return summary, list(read_records(out / "records.jsonl"))


def target(url: str, api: str, model: str | None = "tiny-llama", **extra: Any) -> dict[str, Any]:
    out = {
        "url": url,
        "api": api,
        "timeouts_s": {"first_token": 60, "idle": 30, "total": 120},
        **extra,
    }
    if model is not None:
        out["model"] = model
    return out


def fixed(n: int) -> dict[str, Any]:
    return {"dist": "fixed", "value": n}


def closed(concurrency: int, requests: int) -> dict[str, Any]:
    return {"mode": "concurrency", "concurrency": [concurrency], "requests_per_step": requests}


def grew(before: dict[str, float], after: dict[str, float], name: str) -> float:
    return after.get(name, 0.0) - before.get(name, 0.0)


def scrape_after(url: str, before: dict[str, float], requests: int) -> dict[str, float]:
    """``/metrics`` once the server has counted ``requests`` more successes (at most 10 s:
    its counters are updated beside the last event, not necessarily before it is read)."""
    deadline = time.monotonic() + 10
    while True:
        after = scrape(url)
        if grew(before, after, "vllm:request_success_total") >= requests:
            return after
        if time.monotonic() > deadline:
            return after
        time.sleep(0.1)


def assert_ok_and_honest(step: StepSummary, records: list[Record], n: int) -> None:
    """Every request ok and timed in order; tokens from usage, event counts kept beside them."""
    assert step.requests.total == n and step.requests.ok == n, step.requests
    assert step.ttft_ms.count == n and step.e2e_ms.count == n
    for r in records:
        assert r.ok and r.error_kind is None and r.http_status == 200, r
        assert r.first_token_ns is not None and r.last_token_ns is not None
        assert r.start_ns <= r.sent_ns < r.first_token_ns <= r.last_token_ns <= r.end_ns
        assert len(r.token_ns) == r.output_events >= 1
        assert r.output_tokens_server is not None
        assert r.output_events <= r.output_tokens_server  # merged, never split
    tokens = step.tokens
    assert tokens.server_counts == n
    assert tokens.output_total == sum(r.output_tokens_server or 0 for r in records)
    assert tokens.output_events_total == sum(r.output_events for r in records)
    assert tokens.count_mismatches == sum(r.count_mismatch for r in records)


@pytest.mark.parametrize("api", ["openai-chat", "openai-responses", "anthropic-messages"])
def test_counts_equal_usage_and_the_servers_metrics(
    api: str, vllm_features: VllmServer, scenario: Build, tmp_path: Path
) -> None:
    """Chat is the baseline: Responses and Messages are held to exactly what it is held to."""
    n = 12
    sc = scenario(
        target=target(vllm_features.url, api, extra_body={"ignore_eos": True}),
        workload={"prompt_tokens": fixed(16), "output_tokens": fixed(OUTPUT_TOKENS)},
        load=closed(4, n),
    )
    before = scrape(vllm_features.url)
    summary, records = run_in(tmp_path, sc)
    after = scrape_after(vllm_features.url, before, n)
    assert summary.api == api
    step = summary.steps[0]
    assert_ok_and_honest(step, records, n)
    assert all(r.output_tokens_server == OUTPUT_TOKENS for r in records)
    assert all(r.finish_reason == "length" for r in records)
    assert all(r.prompt_tokens_server for r in records)
    if api == "openai-responses":
        assert all((r.response_id or "").startswith("resp_") for r in records)
    print(
        f"{api}: {step.tokens.output_events_total} events for {step.tokens.output_total} tokens,"
        f" {step.tokens.count_mismatches} of {n} requests merged some"
    )
    # the server saw these requests and no other (this module's server is ours alone)
    assert grew(before, after, "vllm:request_success_total") == n
    assert grew(before, after, "vllm:generation_tokens_total") == n * OUTPUT_TOKENS
    prompt = sum(r.prompt_tokens_server or 0 for r in records)
    assert grew(before, after, "vllm:prompt_tokens_total") == prompt
    assert grew(before, after, "vllm:time_to_first_token_seconds_count") == n
    # vLLM times the first token from the request's arrival, inside what loadgen times from
    # its last byte sent to the first token read
    server_ttft_ms = grew(before, after, "vllm:time_to_first_token_seconds_sum") * 1e3
    ours_ms = sum((r.first_token_ns or 0) - r.sent_ns for r in records) / MS
    assert 0 < server_ttft_ms <= ours_ms, (server_ttft_ms, ours_ms)
    assert step.ttft_ms.mean is not None and step.e2e_ms.mean is not None
    assert 0 < step.ttft_ms.mean <= step.e2e_ms.mean


def session_scenario(url: str, model_dir: Path, state: str) -> Scenario:
    return Scenario.model_validate(
        {
            "name": f"sessions-{state}",
            "target": target(url, "openai-responses", extra_body={"ignore_eos": True}),
            "workload": {
                "tokenizer": str(model_dir),
                "prompt_tokens": fixed(12),
                "output_tokens": fixed(6),
                "sessions": {"turns": fixed(3), "state": state},
            },
            "load": closed(2, 4),  # 4 conversations, 12 requests
        }
    )


@pytest.mark.parametrize("state", ["client", "server"])
def test_responses_sessions(state: str, vllm_features: VllmServer, tmp_path: Path) -> None:
    """4 conversations of 3 turns: client state sends the whole conversation, server state
    only the new message and the previous answer's id, and vLLM's usage counts the same
    conversation either way (the stored one for server state)."""
    with Tap(vllm_features.url) as tap:
        summary, records = run_in(
            tmp_path, session_scenario(tap.root, vllm_features.model_dir, state)
        )
        wire = tap.exchanges()
    assert summary.steps[0].requests.ok == 12, [r.error_detail for r in records]
    sessions: dict[int, list[Record]] = {}
    for r in records:
        assert r.ok and r.session is not None and r.turn is not None
        sessions.setdefault(r.session, []).append(r)
    assert len(sessions) == 4
    for turns in sessions.values():
        turns.sort(key=lambda r: r.turn or 0)
        assert [r.turn for r in turns] == [0, 1, 2]
        for prev, r in zip([None, *turns], turns, strict=False):
            body = wire[r.request_id].json_body()
            assert isinstance(body["input"], list)
            roles = [item.get("role") for item in body["input"]]
            if prev is None or state == "client":
                assert "previous_response_id" not in body
                assert roles == ["user", "assistant"] * (r.turn or 0) + ["user"]
            else:
                assert body["previous_response_id"] == prev.response_id
                assert roles == ["user"]  # only the new message went over the wire
            # usage counts the whole conversation, stored or sent
            assert r.prompt_tokens_server == r.prompt_tokens_requested + RESPONSES_EXTRA_TOKENS
            if prev is not None:
                assert r.prompt_tokens_requested > prev.prompt_tokens_requested + 12


def tool_calls_of(events: list[dict[str, Any]]) -> tuple[list[tuple[str, str]], str | None]:
    """The (name, arguments) of each tool call in a chat stream, and the finish reason."""
    calls: dict[int, list[str]] = {}
    finish = None
    for event in events:
        for choice in event.get("choices") or ():
            finish = choice.get("finish_reason") or finish
            for call in (choice.get("delta") or {}).get("tool_calls") or ():
                name_args = calls.setdefault(call.get("index", 0), ["", ""])
                fn = call.get("function") or {}
                name_args[0] += fn.get("name") or ""
                name_args[1] += fn.get("arguments") or ""
    return [(calls[i][0], calls[i][1]) for i in sorted(calls)], finish


def valid_calls(calls: list[tuple[str, str]], tools: dict[str, dict[str, Any]]) -> bool:
    """At least one call (tool_choice required), each to a tool offered, its arguments
    a JSON object valid for that tool's parameters."""
    if not calls:
        return False
    for name, arguments in calls:
        if name not in tools:
            return False
        try:
            args = json.loads(arguments)
        except ValueError:
            return False
        if not isinstance(args, dict) or not jsonschema.Draft202012Validator(tools[name]).is_valid(
            args
        ):
            return False
    return True


def answer_text(events: list[dict[str, Any]]) -> str:
    """A chat stream's answer text (its ``content`` deltas)."""
    return "".join(
        (choice.get("delta") or {}).get("content") or ""
        for event in events
        for choice in event.get("choices") or ()
    )


def messages_text(events: list[dict[str, Any]]) -> str:
    """A Messages stream's answer text (its ``text_delta`` deltas)."""
    return "".join(
        (event.get("delta") or {}).get("text") or ""
        for event in events
        if event.get("type") == "content_block_delta"
        and (event.get("delta") or {}).get("type") == "text_delta"
    )


def checked_against_the_wire(
    summary: Summary,
    records: list[Record],
    wire: dict[str, Exchange],
    mine: Callable[[Exchange], bool],
) -> int:
    """loadgen's verdict on each answer is this test's own on the raw answer; the count."""
    n = len(records)
    assert summary.steps[0].requests.ok == n, [r.error_detail for r in records]
    verdicts = {r.request_id: mine(wire[r.request_id]) for r in records}
    for r in records:
        assert r.valid_output is verdicts[r.request_id], (r.invalid_detail, wire[r.request_id])
        assert (r.invalid_detail is None) == r.valid_output
    valid = sum(verdicts.values())
    v = summary.steps[0].output_validity
    assert v is not None and (v.checked, v.valid) == (n, valid)
    assert v.rate == pytest.approx(valid / n)
    return valid


@pytest.mark.parametrize("strict", [True, False])
def test_tool_choice_required_validity_is_what_vllm_sent(
    strict: bool, vllm_features: VllmServer, scenario: Build, tmp_path: Path
) -> None:
    n = 16
    tools = {t["name"]: t["parameters"] for t in json.loads(TOOLS.read_text())}
    with Tap(vllm_features.url) as tap:
        sc = scenario(
            target=target(tap.root, "openai-chat"),
            workload={
                "prompt_tokens": fixed(16),
                "output_tokens": fixed(256 if strict else 96),
                "tools": {"file": str(TOOLS), "strict": strict},
                "tool_choice": "required",
            },
            load=closed(4, n),
        )
        summary, records = run_in(tmp_path, sc)
        wire = tap.exchanges()
    for r in records:
        sent = wire[r.request_id].json_body()
        assert sent["tool_choice"] == "required"
        assert [t["function"].get("strict") for t in sent["tools"]] == [strict] * len(tools)

    def mine(ex: Exchange) -> bool:
        return valid_calls(tool_calls_of(sse_events(ex.answer))[0], tools)

    valid = checked_against_the_wire(summary, records, wire, mine)
    finished = [r for r in records if r.finish_reason == "tool_calls"]
    v = summary.steps[0].output_validity
    assert v is not None and v.finish_tool_calls == len(finished)
    print(
        f"tool_choice required, strict {strict}: {valid} of {n} valid; {len(finished)} "
        f"finished their calls, {n - len(finished)} cut at max_tokens; "
        f"first invalid: {v.example}"
    )
    if strict:
        # vLLM's structural tag holds a strict tool's arguments to its parameters: every
        # call it finished is valid; most of the rest ran out of max_tokens (a random model
        # writes blanks between JSON tokens, which that grammar allows) and are invalid
        # (an answer vLLM ended with finish_reason tool_calls but no call in it is invalid
        # for both: no call under required)
        assert any(r.tool_calls for r in finished)
        assert all(r.valid_output for r in finished if r.tool_calls)
    else:  # the arguments are any JSON value then: far from every answer valid
        assert valid < n and v.rate < 1.0 and v.example


#: each API's answer text in its stream, and where the schema goes in its body
FORMATS: dict[str, tuple[Callable[[list[dict[str, Any]]], str], Callable[[Any], Any]]] = {
    "openai-chat": (answer_text, lambda body: body["response_format"]["json_schema"]["schema"]),
    "anthropic-messages": (messages_text, lambda body: body["output_config"]["format"]["schema"]),
}


def bounded_schema(tmp_path: Path) -> tuple[dict[str, Any], Path]:
    """The shipped answer schema with its strings bounded: unbounded, a random model's
    strings run to max_tokens (answers cut short, invalid as sent)."""
    schema = json.loads(SCHEMA.read_text())
    schema["properties"]["topics"]["items"]["maxLength"] = 12
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema))
    return schema, path


@pytest.mark.parametrize("api", list(FORMATS))
def test_json_schema_answers_are_valid(
    api: str, vllm_features: VllmServer, scenario: Build, tmp_path: Path
) -> None:
    n = 12
    schema, path = bounded_schema(tmp_path)
    text_of, schema_sent = FORMATS[api]
    with Tap(vllm_features.url) as tap:
        sc = scenario(
            target=target(tap.root, api),
            workload={
                "prompt_tokens": fixed(16),
                "output_tokens": fixed(160),
                "response_format": {"json_schema": str(path)},
            },
            load=closed(4, n),
        )
        summary, records = run_in(tmp_path, sc)
        wire = tap.exchanges()

    def mine(ex: Exchange) -> bool:
        try:
            answer = json.loads(text_of(sse_events(ex.answer)))
        except ValueError:
            return False
        return jsonschema.Draft202012Validator(schema).is_valid(answer)

    for r in records:
        assert schema_sent(wire[r.request_id].json_body()) == schema
    valid = checked_against_the_wire(summary, records, wire, mine)
    v = summary.steps[0].output_validity
    assert v is not None
    print(f"{api} json_schema: {valid} of {n} valid; first invalid: {v.example}")
    # Most are valid. Those that are not, vLLM really sent invalid: cut at max_tokens, or
    # (xgrammar lets them through) a raw control character inside a string, which JSON
    # forbids unescaped (seen: U+001C in 1 of 16 answers)
    assert valid >= n // 2
    for r in records:
        if not r.valid_output:
            text = text_of(sse_events(wire[r.request_id].answer))
            cut = r.finish_reason == "length"
            assert cut or any(ord(c) < 0x20 for c in text), text


def test_messages_without_output_config_are_not_json(
    vllm_features: VllmServer, tmp_path: Path
) -> None:
    """The control for the Messages case above: the same random model, asked the same
    without ``output_config``, writes no JSON at all, so the valid answers there were
    vLLM's constraint, not chance (nor a field it ignored)."""
    schema, _ = bounded_schema(tmp_path)
    texts = []
    for i in range(4):
        body: dict[str, Any] = {
            "model": "tiny-llama",
            "max_tokens": 160,
            "messages": [{"role": "user", "content": f"answer {i} in json please"}],
        }
        plain = httpx.post(f"{vllm_features.url}/v1/messages", json=body, timeout=120)
        assert plain.status_code == 200, plain.text
        texts.append("".join(b.get("text", "") for b in plain.json()["content"]))
        body["output_config"] = {"format": {"type": "json_schema", "schema": schema}}
        shaped = httpx.post(f"{vllm_features.url}/v1/messages", json=body, timeout=120)
        assert shaped.status_code == 200, shaped.text
        shaped_text = "".join(b.get("text", "") for b in shaped.json()["content"])
        assert shaped_text.lstrip().startswith("{"), shaped_text
    for text in texts:
        try:
            json.loads(text)
        except ValueError:
            continue
        raise AssertionError(f"an unconstrained answer was JSON: {text!r}")
    print(f"without output_config, 4 of 4 answers not JSON, e.g. {texts[0][:60]!r}")


def test_a_mix_of_the_base_model_and_a_lora_adapter(
    vllm_features: VllmServer, scenario: Build, tmp_path: Path
) -> None:
    n = 32
    served = httpx.get(f"{vllm_features.url}/v1/models", timeout=30).json()["data"]
    (lora,) = [m for m in served if m.get("parent") == "tiny-llama"]  # the adapter
    assert lora["id"] == LORA_NAME and lora["root"].endswith("tiny-llama-lora")
    models = [{"name": "tiny-llama", "weight": 3}, {"name": LORA_NAME, "weight": 1}]
    with Tap(vllm_features.url) as tap:
        tgt = target(tap.root, "openai-chat", model=None, extra_body={"ignore_eos": True})
        sc = Scenario.model_validate(
            {
                "name": "mix",
                "target": {**tgt, "models": models},
                "workload": {"seed": 5, "prompt_tokens": fixed(16), "output_tokens": fixed(8)},
                "load": closed(4, n),
            }
        )
        before = scrape(vllm_features.url)
        summary, records = run_in(tmp_path, sc)
        after = scrape_after(vllm_features.url, before, n)
        wire = tap.exchanges()
    assert summary.models == ["tiny-llama", LORA_NAME]
    step = summary.steps[0]
    assert step.requests.ok == n, [r.error_detail for r in records]
    assert step.models is not None
    by_name = {m.model: m for m in step.models}
    assert list(by_name) == ["tiny-llama", LORA_NAME]
    sent = Counter(r.model for r in records)
    for name, m in by_name.items():
        assert m.requests.total == m.requests.ok == sent[name] > 0
        assert m.ttft_ms.count == sent[name]
    assert abs(sent[LORA_NAME] - n / 4) < 4 * math.sqrt(n * 0.25 * 0.75)
    for r in records:  # the name on the wire, and vLLM answered as that model
        assert wire[r.request_id].json_body()["model"] == r.model
        first = sse_events(wire[r.request_id].answer)[0]
        assert first["model"] == r.model
        assert r.output_tokens_server == 8
    assert grew(before, after, "vllm:request_success_total") == n
    assert "vllm:lora_requests_info" in after
