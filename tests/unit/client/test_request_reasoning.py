"""The Requester splits reasoning from answer: stamps, counts and the kept answer text.

Through ``Requester.send`` with a scripted transport (chunks and their arrival
stamps given): the stamping itself is tested over real sockets in
tests/integration; here the bookkeeping of what each event was.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import orjson

from loadgen.client import ADAPTERS, Requester, RequestTimeouts
from loadgen.client.transport import HttpRequest
from loadgen.clock import now_ns
from loadgen.records import Record
from loadgen.workload.plan import RequestSpec

MS = 1_000_000


class ScriptedResponse:
    status = 200
    sent_ns = None
    reconnects = 0
    retry_start_ns = None

    def __init__(self, chunks: list[tuple[int, bytes, int]]) -> None:
        self._chunks = chunks

    async def chunks(self) -> AsyncIterator[tuple[int, bytes, int]]:
        for chunk in self._chunks:
            yield chunk

    async def read_prefix(self, limit: int) -> bytes:
        return b""

    def end_of_answer(self, trailing: bool) -> None:
        pass


class ScriptedTransport:
    """Answers every request with the same chunks, stamped ``base + offset``."""

    read_lag = None

    def __init__(self, offsets_and_data: list[tuple[int, bytes]]) -> None:
        self.script = offsets_and_data
        self.sent: list[dict[str, Any]] = []

    @asynccontextmanager
    async def open(self, request: HttpRequest) -> AsyncIterator[ScriptedResponse]:
        self.sent.append(orjson.loads(request.body))
        base = now_ns()
        yield ScriptedResponse([(base + off, data, 0) for off, data in self.script])

    async def aclose(self) -> None:
        pass


def sse(*events: object) -> bytes:
    return b"".join(
        b"data: " + (e if isinstance(e, bytes) else orjson.dumps(e)) + b"\n\n" for e in events
    )


def delta(**d: object) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": d, "finish_reason": None}]}


USAGE = {
    "choices": [],
    "usage": {
        "prompt_tokens": 5,
        "completion_tokens": 5,
        "completion_tokens_details": {"reasoning_tokens": 3},
    },
}

#: vLLM with a reasoning parser: opener, 3 reasoning events, 2 answer events, usage, [DONE]
REASONING_STREAM = [
    (1 * MS, sse(delta(role="assistant", content=""))),
    (10 * MS, sse(delta(reasoning_content="Let"), delta(reasoning_content=" me"))),
    (20 * MS, sse(delta(reasoning_content=" think"))),
    (30 * MS, sse(delta(content="Hello"))),
    (40 * MS, sse(delta(content=" world"), USAGE, b"[DONE]")),
]


def send(script: list[tuple[int, bytes]], spec: RequestSpec, *, stream: bool = True) -> Record:
    transport = ScriptedTransport(script)
    requester = Requester(
        transport,
        ADAPTERS["openai-chat"],
        base_url="http://x",
        model="m",
        extra_body={},
        headers={},
        timeouts=RequestTimeouts.from_seconds(30, 30, 60),
        run_id="t",
        stream=stream,
    )
    return asyncio.run(requester.send(spec, 0))


def spec(**kw: Any) -> RequestSpec:
    return RequestSpec(index=0, prompt="hi", prompt_tokens=1, max_tokens=5, **kw)


def test_reasoning_then_answer() -> None:
    rec = send(REASONING_STREAM, spec())
    assert rec.ok, rec.error_detail
    t0 = rec.token_ns[0] - 10 * MS  # the script's zero: the first token event came at 10 ms
    assert rec.first_token_ns == rec.first_reasoning_ns == t0 + 10 * MS
    assert rec.first_answer_ns == t0 + 30 * MS
    assert (rec.output_events, rec.reasoning_events) == (5, 3)
    assert (rec.output_tokens_server, rec.reasoning_tokens_server) == (5, 3)
    assert rec.output_chars == len("Hello world")  # answer characters only
    assert rec.answer_text is None  # not asked for
    assert len(rec.token_ns) == 5


def test_answer_text_is_kept_on_request_without_the_reasoning() -> None:
    rec = send(REASONING_STREAM, spec(keep_text=True, session=4, turn=2, ramp=True))
    assert rec.answer_text == "Hello world"
    assert (rec.session, rec.turn, rec.ramp) == (4, 2, True)


def test_a_plain_stream_has_its_first_token_as_first_answer() -> None:
    script = [(10 * MS, sse(delta(content="Hi"))), (20 * MS, sse(delta(content="!"), b"[DONE]"))]
    rec = send(script, spec(keep_text=True))
    assert rec.ok
    assert rec.first_answer_ns == rec.first_token_ns == rec.token_ns[0]
    assert rec.first_reasoning_ns is None and rec.reasoning_events == 0
    assert rec.answer_text == "Hi!"


def test_a_stream_cut_short_keeps_the_answer_so_far() -> None:
    rec = send([(10 * MS, sse(delta(content="Hal")))], spec(keep_text=True))
    assert rec.error_kind == "incomplete_stream"
    assert rec.answer_text == "Hal"


def test_non_streaming_answer() -> None:
    body = {
        "choices": [
            {"message": {"role": "assistant", "reasoning_content": "hm", "content": "Yes."}}
        ],
        "usage": {
            "prompt_tokens": 3,
            "completion_tokens": 4,
            "completion_tokens_details": {"reasoning_tokens": 2},
        },
    }
    rec = send([(10 * MS, orjson.dumps(body))], spec(keep_text=True), stream=False)
    assert rec.ok
    assert rec.first_answer_ns == rec.first_token_ns is not None
    assert rec.reasoning_tokens_server == 2 and rec.answer_text == "Yes."


def test_the_body_carries_the_message_list() -> None:
    transport = ScriptedTransport(REASONING_STREAM)
    messages = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    requester = Requester(
        transport,
        ADAPTERS["openai-chat"],
        base_url="http://x",
        model="m",
        extra_body={},
        headers={},
        timeouts=RequestTimeouts.from_seconds(30, 30, 60),
        run_id="t",
    )
    s = RequestSpec(index=0, prompt=messages, prompt_tokens=2, max_tokens=5)
    assert asyncio.run(requester.send(s, 0)).ok
    assert transport.sent[0]["messages"] == messages


# Several events in one read are parsed together (one JSON array); a bad one among
# them must still leave every event before it counted, as one-by-one parsing would.


def test_a_read_of_many_events_counts_each_and_ends_at_done() -> None:
    words = [delta(content=f"w{i}") for i in range(40)]
    rec = send(
        [(1 * MS, sse(delta(role="assistant", content=""), *words, USAGE, b"[DONE]"))], spec()
    )
    assert (
        rec.ok
        and rec.output_events == 40
        and rec.output_chars == len("".join(f"w{i}" for i in range(40)))
    )
    assert len(rec.token_ns) == 40 and rec.output_tokens_server == 5


def test_a_bad_event_inside_a_read_keeps_the_events_before_it() -> None:
    chunk = sse(delta(content="a"), delta(content="b"), b"{not json", delta(content="c"))
    rec = send([(1 * MS, chunk)], spec())
    assert not rec.ok and rec.error_kind == "malformed_event"
    assert rec.output_events == 2 and "not json" in (rec.error_detail or "")


def test_a_line_holding_two_values_is_not_taken_for_two_events() -> None:
    two = orjson.dumps(delta(content="x")) + b"," + orjson.dumps(delta(content="y"))
    rec = send([(1 * MS, sse(delta(content="a"), two))], spec())
    assert rec.error_kind == "malformed_event" and rec.output_events == 1


def test_events_after_the_end_of_the_stream_are_not_read() -> None:
    rec = send([(1 * MS, sse(delta(content="a"), b"[DONE]", b"{not json"))], spec())
    assert rec.ok and rec.output_events == 1
