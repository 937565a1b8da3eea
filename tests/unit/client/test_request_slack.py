"""A read's slack on the record: which token events may have come before their stamp.

A token event that shares its read with a later event has the read's stamp, though it
may have come as early as the read's slack before; the read's last event, ended with
the read, is exact where the transport stamps a read's last bytes (the kernel's
receive stamp), and is not where the loop stamps as it reads.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from loadgen.client import ADAPTERS, HttpRequest, Requester, RequestTimeouts
from loadgen.clock import now_ns
from loadgen.records import Record
from tests.unit.client.test_request_reasoning import ScriptedResponse, delta, spec, sse

MS = 1_000_000
DONE_EVENT = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}


class SlackTransport:
    """Answers with ``(offset, bytes, slack)`` reads, stamped ``offset`` after a moment
    50 ms before the request (so every read has come by the time it is read)."""

    read_lag = None

    def __init__(self, script: list[tuple[int, bytes, int]], exact: bool) -> None:
        self.script = script
        self.exact_stamps = exact

    @asynccontextmanager
    async def open(self, request: HttpRequest) -> AsyncIterator[ScriptedResponse]:
        base = now_ns() - 50 * MS
        yield ScriptedResponse([(base + off, data, s) for off, data, s in self.script])

    async def aclose(self) -> None:
        pass


def send(script: list[tuple[int, bytes, int]], *, exact: bool) -> Record:
    requester = Requester(
        SlackTransport(script, exact),
        ADAPTERS["openai-chat"],
        base_url="http://x",
        model="m",
        extra_body={},
        headers={},
        timeouts=RequestTimeouts.from_seconds(30, 30, 60),
        run_id="t",
    )
    return asyncio.run(requester.send(spec(), 0))


ONE_EACH = [
    (10 * MS, sse(delta(content="a")), 10 * MS),
    (20 * MS, sse(delta(content="b")), 10 * MS),
    (30 * MS, sse(delta(content="c"), DONE_EVENT, b"[DONE]"), 10 * MS),
]
#: the loop was away: "b" and "c" came in one read, 25 ms after the first
PILED = [
    (10 * MS, sse(delta(content="a")), 10 * MS),
    (35 * MS, sse(delta(content="b"), delta(content="c"), DONE_EVENT, b"[DONE]"), 25 * MS),
]


def test_token_events_with_reads_of_their_own_have_exact_stamps() -> None:
    rec = send(ONE_EACH, exact=True)
    assert rec.ok and len(rec.token_ns) == 3
    # "c" shared its read with the events after it, which may have come later
    assert rec.token_slack_ns == [0, 0, 10 * MS]
    assert rec.end_ns == rec.token_ns[-1] and rec.end_slack_ns == 0  # the last read's stamp


def test_a_token_event_that_ended_its_read_is_exact() -> None:
    alone = [*ONE_EACH[:2], (30 * MS, sse(delta(content="c")), 10 * MS)]
    alone.append((40 * MS, sse(DONE_EVENT, b"[DONE]"), 10 * MS))
    rec = send(alone, exact=True)
    assert rec.ok and rec.token_slack_ns is None


def test_a_token_event_that_shared_its_read_has_the_reads_slack() -> None:
    rec = send(PILED, exact=True)
    assert rec.ok and len(rec.token_ns) == 3
    assert rec.token_ns[1] == rec.token_ns[2]  # one read, one stamp
    assert rec.token_slack_ns == [0, 25 * MS, 25 * MS]


def test_stamps_the_loop_takes_are_all_as_late_as_the_loop_ran() -> None:
    rec = send(PILED, exact=False)
    assert rec.token_slack_ns == [10 * MS, 25 * MS, 25 * MS]
    # the last read may have come as much before its stamp as its other bytes
    assert rec.end_slack_ns == rec.end_ns - (rec.token_ns[-1] - 25 * MS)
