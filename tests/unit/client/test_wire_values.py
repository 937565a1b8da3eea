"""Values from the wire are checked: hostile counts are ignored, oversized streams end one
request.

Through the adapters and ``Requester.send`` with a scripted transport: each
case is a row (ok and flagged, or with its own ``error_kind``), never an exception.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import orjson
import pytest

from loadgen.client import ADAPTERS, Requester, RequestTimeouts
from loadgen.client.adapters.base import MAX_COUNT, MalformedUsage, count
from loadgen.client.request import RequestLimits
from loadgen.records import ERROR_KINDS, Record
from loadgen.workload.plan import RequestSpec
from tests.unit.client.test_request_reasoning import ScriptedTransport

HOSTILE = ["12", [1], {"n": 1}, 1e308, 2**70, -1, True, 12.0, MAX_COUNT + 1]


def usage_event(completion: Any) -> bytes:
    obj = {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": completion}}
    return json.dumps(obj).encode()  # orjson cannot write 2**70


@pytest.mark.parametrize("value", [0, 1, MAX_COUNT, None])
def test_believable_counts_pass(value: int | None) -> None:
    assert count(value, "x") == value


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_counts_are_refused(value: Any) -> None:
    with pytest.raises(MalformedUsage, match="x: expected an integer"):
        count(value, "x")


@pytest.mark.parametrize("api", ["openai-completions", "openai-chat"])
@pytest.mark.parametrize("value", HOSTILE)
def test_openai_usage_is_checked_and_ignored_whole(api: str, value: Any) -> None:
    d = ADAPTERS[api].parse(usage_event(value))
    assert (d.prompt_tokens, d.completion_tokens) == (None, None)  # the good one goes too
    assert d.usage_ignored is not None and "usage.completion_tokens" in d.usage_ignored
    assert repr(value) not in d.usage_ignored  # the field and the type, not the value


@pytest.mark.parametrize(
    "usage",
    [5, "x", [1], {"completion_tokens": 1, "completion_tokens_details": [1]}],
)
def test_openai_usage_of_the_wrong_shape_is_ignored(usage: Any) -> None:
    d = ADAPTERS["openai-chat"].parse(orjson.dumps({"choices": [], "usage": usage}))
    assert d.usage_ignored is not None and d.completion_tokens is None


@pytest.mark.parametrize("value", HOSTILE)
def test_tgi_details_are_checked(value: Any) -> None:
    final = {"token": None, "generated_text": "x", "details": {"generated_tokens": value}}
    for d in (
        ADAPTERS["tgi"].parse(json.dumps(final).encode()),
        ADAPTERS["tgi"].parse_body(json.dumps(final).encode()),
    ):
        assert d.final and d.completion_tokens is None
        assert d.usage_ignored is not None and "details.generated_tokens" in d.usage_ignored


@pytest.mark.parametrize("details", [[1], "x", {"prefill": 3}])
def test_tgi_details_of_the_wrong_shape_are_ignored(details: Any) -> None:
    d = ADAPTERS["tgi"].parse(orjson.dumps({"generated_text": "x", "details": details}))
    assert d.final and d.usage_ignored is not None


def tok(text: str) -> bytes:
    return b"data: " + orjson.dumps({"choices": [{"text": text, "finish_reason": None}]}) + b"\n\n"


def send(
    chunks: list[bytes],
    *,
    max_tokens: int = 4,
    limits: RequestLimits | None = None,
    stream: bool = True,
) -> Record:
    transport = ScriptedTransport([(i, c) for i, c in enumerate(chunks)])
    requester = Requester(
        transport,
        ADAPTERS["openai-completions"],
        base_url="http://x",
        model="m",
        extra_body={},
        headers={},
        timeouts=RequestTimeouts.from_seconds(30, 30, 60),
        run_id="t",
        stream=stream,
        limits=limits,
    )
    spec = RequestSpec(index=0, prompt="hi", prompt_tokens=1, max_tokens=max_tokens)
    return asyncio.run(requester.send(spec, 0))


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_usage_is_ignored_and_the_stream_counted(value: Any) -> None:
    """Probe: a server whose usage block always held a string count failed every request
    (``malformed_usage``), and the run exited 3 "target unusable" though every stream had
    been timed. Now the measurement stands: the row is ok, flagged, counted from events."""
    rec = send([tok("a"), b"data: " + usage_event(value) + b"\n\n", b"data: [DONE]\n\n"])
    assert rec.ok, rec.error_detail
    assert rec.usage_ignored is not None and "usage.completion_tokens" in rec.usage_ignored
    assert (rec.output_tokens_server, rec.prompt_tokens_server) == (None, None)
    assert rec.output_events == rec.output_tokens == 1


def test_hostile_usage_in_a_whole_body_is_ignored() -> None:
    body = orjson.dumps(
        {"choices": [{"text": "a", "finish_reason": "length"}], "usage": {"completion_tokens": -3}}
    )
    rec = send([body], stream=False)
    assert rec.ok and rec.usage_ignored is not None
    assert rec.output_tokens_server is None and rec.finish_reason == "length"


def test_good_usage_is_kept() -> None:
    rec = send([tok("a"), b"data: " + usage_event(1) + b"\n\ndata: [DONE]\n\n"])
    assert rec.ok, rec.error_detail
    assert (rec.output_tokens_server, rec.prompt_tokens_server) == (1, 3)


def test_tokens_past_the_limit_end_the_request() -> None:
    limits = RequestLimits(tokens_factor=2, tokens_extra=1)  # 2 * 4 + 1 = 9 token events
    rec = send([tok("a")] * 100, limits=limits)
    assert (rec.ok, rec.error_kind) == (False, "too_many_tokens")
    assert rec.output_events == 10  # stopped at the first chunk past the limit
    assert rec.last_token_ns is not None


def test_tokens_at_the_limit_pass() -> None:
    rec = send([tok("a")] * 20 + [b"data: [DONE]\n\n"], max_tokens=1)  # 4 * 1 + 16 = 20
    assert rec.ok, rec.error_detail


def test_an_oversized_event_ends_the_request() -> None:
    limits = RequestLimits(event_bytes=1024)
    rec = send([tok("a"), b"data: " + b"x" * 800, b"x" * 800, tok("b")], limits=limits)
    assert (rec.ok, rec.error_kind) == (False, "event_too_large")
    assert rec.output_events == 1


def test_an_oversized_body_ends_the_request() -> None:
    rec = send([b"x" * 600, b"x" * 600], limits=RequestLimits(body_bytes=1000), stream=False)
    assert (rec.ok, rec.error_kind) == (False, "event_too_large")


def test_new_kinds_are_listed() -> None:
    assert {"malformed_event", "event_too_large", "too_many_tokens"} <= set(ERROR_KINDS)
    assert "malformed_usage" not in ERROR_KINDS  # a bad usage block is ignored, not a failure
