"""Issue #20's wire probes: what a server sends is checked once, counted right, never raised.

Each test runs a whole scenario against a small raw-asyncio server on
127.0.0.1 (an ephemeral port, a thread of its own, every connection bounded
by a 30 s timeout, stopped when the test ends). Unlike the server of
test_hostile_server.py it keeps connections alive when asked, so the
stale-connection cases (a 408 on an idle connection, bytes past the answer)
can be played. Each docstring names the probe and what it did before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from loadgen.client.sse import BOM
from loadgen.records import Record
from loadgen.results.rebuild import rebuild_summary
from loadgen.scenario import Scenario
from loadgen.summary import Summary
from tests.integration.conftest import Runner, make_scenario
from tests.integration.rawserver import LoopServer

#: (n-th completion request, its index on its connection, writer) -> keep the connection?
Answer = Callable[[int, int, asyncio.StreamWriter], Awaitable[bool]]
NS_PER_S = 1_000_000_000


def sse_head(keep: bool = False, length: int | None = None) -> bytes:
    conn = b"keep-alive" if keep else b"close"
    framing = b"" if length is None else b"content-length: %d\r\n" % length
    return b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: %s\r\n%s\r\n" % (
        conn,
        framing,
    )


def chat_token(content: bytes = b'"a"', finish: bytes = b"null") -> bytes:
    return (
        b'data: {"choices":[{"delta":{"content":' + content + b'},"finish_reason":' + finish
        + b"}]}\n\n"
    )  # fmt: skip


def text_token(text: str = "a") -> bytes:
    return b'data: {"choices":[{"text":"%s","finish_reason":null}]}\n\n' % text.encode()


DONE = b"data: [DONE]\n\n"


class WireServer(LoopServer):
    """Answers ``/health`` and ``/v1/models``; each completion request is ``answer``'s."""

    def __init__(self, answer: Answer) -> None:
        super().__init__()
        self.answer = answer
        self.completions = 0
        self.connections = 0

    def __enter__(self) -> str:
        self.start()
        return self.root

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            async with asyncio.timeout(30):
                for on_conn in range(1000):
                    if not await self._one(reader, writer, on_conn):
                        break
        except (TimeoutError, ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.transport.abort()

    async def _one(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, on_conn: int
    ) -> bool:
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        await reader.readexactly(length)
        path = head.split(b" ", 2)[1]
        if path.startswith((b"/v1/completions", b"/v1/chat/completions")):
            n = self.completions
            self.completions += 1
            keep = await self.answer(n, on_conn, writer)
        else:
            body = b'{"data":[{"id":"m"}]}' if path == b"/v1/models" else b""
            code = b"404 Not Found" if path not in (b"/health", b"/v1/models") else b"200 OK"
            writer.write(b"HTTP/1.1 %s\r\ncontent-length: %d\r\n\r\n%s" % (code, len(body), body))
            keep = True
        await writer.drain()
        return keep


def run_against(
    runner: Runner,
    answer: Answer,
    requests: int,
    *,
    api: str = "openai-completions",
    target: dict[str, Any] | None = None,
    workload: dict[str, Any] | None = None,
) -> tuple[Summary, list[Record], Path, WireServer]:
    server = WireServer(answer)
    with server as url:
        sc: Scenario = make_scenario(
            target={
                "url": url,
                "api": api,
                "timeouts_s": {"first_token": 10, "idle": 10, "total": 20},
                **(target or {}),
            },
            workload={
                "calibrate": False,
                "output_tokens": {"dist": "fixed", "value": 8},
                **(workload or {}),
            },
            load={"concurrency": [1], "requests_per_step": requests, "stop_early": None},
        )
        summary, records, out = runner(sc)
    return summary, records, out, server


@pytest.fixture
def runner(tmp_path: Path) -> Runner:
    return Runner(tmp_path)


def measured(records: list[Record]) -> list[Record]:
    return sorted((r for r in records if not r.warmup), key=lambda r: r.id)


@pytest.mark.parametrize("content", [b'["a", "b"]', b"5"])
def test_chat_content_that_is_not_text_with_sessions_is_a_row(
    runner: Runner, content: bytes
) -> None:
    """Probe: ``delta.content`` a list (or a number) with ``workload.sessions``: an
    ExceptionGroup traceback, exit 1, records.jsonl empty though the server answered (the
    text was joined after the request's ``try``). Now each such answer is a
    ``malformed_event`` row (ending its session), and the good ones are measured."""

    async def answer(n: int, _: int, w: asyncio.StreamWriter) -> bool:
        w.write(sse_head() + chat_token() + chat_token(content if n % 2 else b'"b"') + DONE)
        return False

    sessions = {"sessions": {"turns": {"dist": "fixed", "value": 2}}}
    summary, records, _, _ = run_against(runner, answer, 6, api="openai-chat", workload=sessions)
    rows = measured(records)
    assert rows and summary.steps
    bad = [r for r in rows if not r.ok]
    assert bad and {r.error_kind for r in bad} == {"malformed_event"}, [r.error_detail for r in bad]
    assert all("delta.content" in (r.error_detail or "") for r in bad)
    assert any(r.ok for r in rows)
    assert all(r.answer_text is None or type(r.answer_text) is str for r in rows)


def test_a_finish_reason_that_is_an_object_is_a_malformed_event(runner: Runner) -> None:
    """Probe: ``finish_reason: {"a": [1]}``: the run completed, but loadgen's own reader then
    skipped every row it wrote (a finish reason must be a string) and ``loadgen report``
    rebuilt 0 steps, exit 0. Now the value is checked at the wire: a ``malformed_event``
    row the reader reads back, and the rebuilt summary has its step."""

    async def answer(n: int, _: int, w: asyncio.StreamWriter) -> bool:
        w.write(sse_head() + chat_token() + chat_token(finish=b'{"a": [1]}') + DONE)
        return False

    _summary, records, out, _ = run_against(runner, answer, 4, api="openai-chat")
    assert len(records) == 4  # every row read back, none skipped
    assert {r.error_kind for r in records} == {"malformed_event"}
    assert all("finish_reason" in (r.error_detail or "") for r in records)
    rebuilt = rebuild_summary(out)
    assert len(rebuilt.steps) == 1 and rebuilt.steps[0].requests.errors == {"malformed_event": 4}


@pytest.mark.parametrize(
    ("api", "event"),
    [
        ("openai-chat", chat_token(b"5")),
        ("openai-completions", b'data: {"choices":{"text":"a"}}\n\n'),
        ("openai-chat", b'data: {"choices":{"0":{"delta":{"content":"a"}}}}\n\n'),
    ],
)
def test_values_of_the_wrong_type_are_malformed_events_not_our_bug(
    runner: Runner, api: str, event: bytes
) -> None:
    """Probe: ``delta.content: 5``, or ``choices`` an object: classed ``client_error:
    TypeError`` (loadgen's own bug) instead of ``malformed_event``."""

    async def answer(n: int, _: int, w: asyncio.StreamWriter) -> bool:
        w.write(sse_head() + event + DONE)
        return False

    summary, _records, _, _ = run_against(runner, answer, 3, api=api)
    assert summary.steps[0].requests.errors == {"malformed_event": 3}


def test_an_error_frame_mid_stream_fails_the_request(runner: Runner) -> None:
    """Probe: an SSE ``event: error`` frame after 3 of 8 tokens (servers send one when the
    engine fails), then ``[DONE]``: 20 of 20 were counted ok with 3 tokens. Now each is a
    failed ``stream_error`` row with the server's message."""

    async def answer(n: int, _: int, w: asyncio.StreamWriter) -> bool:
        frame = b'event: error\ndata: {"message": "engine failed: CUDA OOM", "code": 500}\n\n'
        w.write(sse_head() + text_token() * 3)
        await w.drain()
        w.write(frame + DONE)
        return False

    summary, records, _, _ = run_against(runner, answer, 20)
    assert summary.steps[0].requests.ok == 0
    assert summary.steps[0].requests.errors == {"stream_error": 20}
    for r in records:
        assert r.error_detail == "engine failed: CUDA OOM" and r.output_events == 3


def test_a_bom_before_the_first_event_keeps_the_first_token(runner: Runner) -> None:
    """Probe: a UTF-8 BOM before the first ``data:`` (the SSE standard strips one): the first
    token was dropped, so TTFT was one token late. The server waits 0.5 s after the first
    token: the first token's stamp must be that long before the second's."""

    async def answer(n: int, _: int, w: asyncio.StreamWriter) -> bool:
        w.write(sse_head() + BOM + text_token())
        await w.drain()
        await asyncio.sleep(0.5)
        w.write(text_token() * 7 + DONE)
        return False

    _summary, records, _, _ = run_against(runner, answer, 2)
    for r in records:
        assert r.ok, r.error_detail
        assert r.output_events == 8
        assert r.first_token_ns is not None and r.first_token_ns == r.token_ns[0]
        assert r.token_ns[1] - r.token_ns[0] >= 0.4 * NS_PER_S  # the first is the early one


def _framed_answer(tokens: int = 8) -> bytes:
    body = text_token() * tokens + DONE
    return sse_head(keep=True, length=len(body)) + body


@pytest.mark.parametrize("transport", ["h1", "aiohttp", "httpx"])
def test_a_408_on_a_reused_connection_is_sent_again(runner: Runner, transport: str) -> None:
    """Probe: a server that answers a kept-alive connection's next request with ``408`` and
    ``Connection: close`` (its idle timer fired as the request came): 1-4 of 200 failed
    ``http_408``. It is the stale-connection case of a silent close: sent once more on a
    fresh connection, counted as a reconnect. Here every reuse gets the 408."""

    timed_out = 0

    async def answer(n: int, on_conn: int, w: asyncio.StreamWriter) -> bool:
        nonlocal timed_out
        if on_conn:
            timed_out += 1
            w.write(
                b"HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"
            )
            return False
        w.write(_framed_answer())
        return True

    summary, records, _, _ = run_against(runner, answer, 10, target={"transport": transport})
    rows = measured(records)
    assert all(r.ok for r in rows), [(r.error_kind, r.error_detail) for r in rows if not r.ok]
    assert all(r.output_events == 8 for r in rows)
    assert sum(r.reconnects for r in records) == timed_out  # each 408 sent once more
    assert summary.steps[0].requests.reconnects == sum(r.reconnects for r in rows)
    # h1 pools the retry's connection, aiohttp's retry connection is never kept (the next
    # request opens one), httpx closes a stream left at [DONE] (it never reuses one)
    least = {"h1": len(rows) - 1, "aiohttp": len(rows) // 2 - 1, "httpx": 0}[transport]
    assert timed_out >= least


def test_a_usage_block_with_a_string_count_keeps_the_measurement(runner: Runner) -> None:
    """Probe: a server whose usage block always held ``"completion_tokens": "8"`` failed every
    request (``malformed_usage``): exit 3 "target unusable" though every stream had been
    timed. Now the bad usage is ignored, tokens are counted from the stream, the row says
    so (``usage_ignored``) and the step warns how many requests it was."""

    async def answer(n: int, _: int, w: asyncio.StreamWriter) -> bool:
        usage = b'data: {"choices":[],"usage":{"prompt_tokens":16,"completion_tokens":"8"}}\n\n'
        w.write(sse_head() + text_token() * 8 + usage + DONE)
        return False

    summary, records, _, _ = run_against(runner, answer, 6)
    step = summary.steps[0]
    assert step.requests.ok == 6 and not step.requests.errors
    for r in records:
        assert r.usage_ignored is not None and "usage.completion_tokens" in r.usage_ignored
        assert r.output_tokens_server is None and r.output_tokens == 8
    assert any("6 of 6 requests had unusable usage" in w for w in step.warnings), step.warnings
    assert step.tokens.output_total == 6 * 8


@pytest.mark.parametrize("together", [True, False])
def test_bytes_past_done_do_not_spoil_the_answer_or_the_next(
    runner: Runner, together: bool
) -> None:
    """Probe: ``[DONE]``, more data, then a second HTTP response on the socket: 2 of 20
    ``incomplete_stream`` with 0 events though the answer was whole (the next request on
    the connection read the stray answer as its own). Now the finished answer stands and
    a connection that sent past its answer is not reused."""

    stray = b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\ndata: {}\n\n"

    async def answer(n: int, _: int, w: asyncio.StreamWriter) -> bool:
        body = text_token() * 8 + DONE + text_token("more") * 2
        w.write(sse_head(keep=True, length=len(body)) + body)
        if not together:
            await w.drain()
            await asyncio.sleep(0.05)
        w.write(stray)
        return True

    _summary, records, _, server = run_against(runner, answer, 20)
    assert all(r.ok and r.output_events == 8 for r in records), [
        (r.error_kind, r.output_events) for r in records if not r.ok
    ]
    assert server.connections >= 20  # none reused


@pytest.mark.parametrize("transport", ["h1", "aiohttp", "httpx"])
def test_every_transport_counts_its_retry_as_a_reconnect(runner: Runner, transport: str) -> None:
    """Probe: a server that closes a kept-alive connection, without a word, when its next
    request comes: the h1 transport sent it again and counted a reconnect, aiohttp sent it
    again, and httpx did not (a ``disconnected`` row). Every transport now retries once on
    a fresh connection and counts it. Non-streaming answers, read to their end, so that
    httpx keeps the connection too."""
    dropped = 0

    async def answer(n: int, on_conn: int, w: asyncio.StreamWriter) -> bool:
        nonlocal dropped
        if on_conn:
            dropped += 1
            return False  # closed (aborted) with no answer
        body = (
            b'{"choices":[{"text":"abc","finish_reason":"length"}],"usage":{"completion_tokens":8}}'
        )
        w.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))
        return True

    target = {"transport": transport, "stream": False}
    summary, records, _, _ = run_against(runner, answer, 8, target=target)
    rows = measured(records)
    assert all(r.ok for r in rows), [(r.error_kind, r.error_detail) for r in rows if not r.ok]
    assert dropped >= 1
    assert sum(r.reconnects for r in records) == dropped
    assert summary.steps[0].requests.reconnects == sum(r.reconnects for r in rows)


@pytest.mark.parametrize("transport", ["h1", "aiohttp", "httpx"])
def test_a_redirect_is_the_answer_not_followed(runner: Runner, transport: str) -> None:
    """Probe: a ``307`` to another origin: aiohttp followed it and sent ``X-Api-Key`` there
    (it strips only ``Authorization``). No transport follows redirects now (h1 and httpx
    did not): the 3xx is the request's answer, an ``http_307`` row, and the other origin
    sees nothing."""

    async def elsewhere(n: int, _: int, w: asyncio.StreamWriter) -> bool:
        w.write(sse_head() + text_token() + DONE)
        return False

    other = WireServer(elsewhere)
    with other as other_url:

        async def answer(n: int, _: int, w: asyncio.StreamWriter) -> bool:
            w.write(
                b"HTTP/1.1 307 Temporary Redirect\r\nlocation: %s/v1/completions\r\n"
                b"content-length: 0\r\nconnection: close\r\n\r\n" % other_url.encode()
            )
            return False

        target = {"transport": transport, "headers": {"X-Api-Key": "k-SECRET"}}
        summary, records, _, _ = run_against(runner, answer, 3, target=target)
    assert other.completions == 0
    assert summary.steps[0].requests.errors == {"http_307": 3}
    assert all(r.http_status == 307 for r in records)
