"""Requester over several base URLs: each request goes where the router says, and says so."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from loadgen.client import ADAPTERS, HttpRequest, Requester, RequestTimeouts, TransportError
from loadgen.records import Record
from loadgen.workload.plan import RequestSpec
from tests.unit.client.test_request_reasoning import ScriptedResponse, sse

DONE = [(1_000, sse({"choices": [{"text": "a", "finish_reason": "stop"}]}, b"[DONE]"))]


class UrlTransport:
    """Answers every request with one token; refuses to connect to URLs in ``down``."""

    read_lag = None

    def __init__(self, down: tuple[str, ...] = ()) -> None:
        self.urls: list[str] = []
        self.down = down

    @asynccontextmanager
    async def open(self, request: HttpRequest) -> AsyncIterator[ScriptedResponse]:
        self.urls.append(request.url)
        if request.url.startswith(self.down):
            raise TransportError("connect_error", "refused")
        yield ScriptedResponse([(off, data, 0) for off, data in DONE])

    async def aclose(self) -> None:
        pass


def requester(transport: UrlTransport, urls: str | list[str], routing: str) -> Requester:
    return Requester(
        transport,
        ADAPTERS["openai-completions"],
        base_url=urls,
        model="m",
        extra_body={},
        headers={},
        timeouts=RequestTimeouts.from_seconds(30, 30, 60),
        run_id="t",
        routing=routing,
    )


def spec(i: int, session: int | None = None, turn: int | None = None) -> RequestSpec:
    return RequestSpec(
        index=i, prompt="hi", prompt_tokens=1, max_tokens=2, session=session, turn=turn
    )


def send_all(r: Requester, specs: list[RequestSpec]) -> list[Record]:
    async def go() -> list[Record]:
        return [await r.send(s, 0) for s in specs]

    return asyncio.run(go())


def test_round_robin_sends_to_each_url_in_turn_and_records_it() -> None:
    t = UrlTransport()
    r = requester(t, ["http://a:1/", "http://b:2/llm"], "round_robin")
    recs = send_all(r, [spec(i) for i in range(5)])
    assert [x.endpoint for x in recs] == [0, 1, 0, 1, 0]
    assert all(x.ok for x in recs)
    assert t.urls == [
        "http://a:1/v1/completions",
        "http://b:2/llm/v1/completions",
        "http://a:1/v1/completions",
        "http://b:2/llm/v1/completions",
        "http://a:1/v1/completions",
    ]
    assert r.router is not None and r.router.in_flight == [0, 0]


def test_a_failed_request_still_leaves_the_flight() -> None:
    t = UrlTransport(down=("http://b:2",))
    r = requester(t, ["http://a:1", "http://b:2"], "least_in_flight")
    recs = send_all(r, [spec(i) for i in range(4)])
    assert [(x.endpoint, x.error_kind) for x in recs] == [
        (0, None),
        (1, "connect_error"),
        (0, None),
        (1, "connect_error"),
    ]
    assert r.router is not None and r.router.in_flight == [0, 0]


def test_sessions_stay_on_one_endpoint() -> None:
    t = UrlTransport()
    r = requester(t, ["http://a:1", "http://b:2", "http://c:3"], "session")
    specs = [spec(10 * s + k, session=s, turn=k) for k in range(3) for s in range(4)]
    recs = send_all(r, specs)
    where = {}
    for x in recs:
        assert where.setdefault(x.session, x.endpoint) == x.endpoint
    assert where == {0: 0, 1: 1, 2: 2, 3: 0}


def test_one_url_names_no_endpoint() -> None:
    t = UrlTransport()
    r = requester(t, "http://a:1", "least_in_flight")
    assert r.router is None
    recs = send_all(r, [spec(0), spec(1)])
    assert [x.endpoint for x in recs] == [None, None]
    assert t.urls == ["http://a:1/v1/completions"] * 2


class StalledTransport(UrlTransport):
    """Connects, then never answers."""

    @asynccontextmanager
    async def open(self, request: HttpRequest) -> AsyncIterator[ScriptedResponse]:
        self.urls.append(request.url)
        await asyncio.Event().wait()
        yield ScriptedResponse([])  # pragma: no cover - never reached


def test_a_cancelled_request_leaves_the_flight_too() -> None:
    r = requester(StalledTransport(), ["http://a:1", "http://b:2"], "least_in_flight")

    async def go() -> None:
        task = asyncio.create_task(r.send(spec(0), 0))
        await asyncio.sleep(0.01)
        assert r.router is not None and r.router.in_flight == [1, 0]
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    asyncio.run(go())
    assert r.router is not None and r.router.in_flight == [0, 0]
    assert [(x.endpoint, x.error_kind) for x in r.cancelled] == [(0, "cancelled")]
