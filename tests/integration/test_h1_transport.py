"""loadgen's own HTTP/1.1 transport against a scripted server over real sockets.

The server runs in a thread of its own with blocking sockets, so the client's
event loop can be held up (as a busy loop is) while the server writes, which
is what shows that a chunk's stamp is the kernel's arrival time, not the time
the loop got round to reading it.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import threading
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest
import uvloop

from loadgen.client import make_transport
from loadgen.client.h1 import H1Transport
from loadgen.client.h1 import connection as h1_connection
from loadgen.client.transport import HttpRequest, TlsOptions, Transport, TransportError

# durations held to tight bounds: run apart from the parallel tests (-m timing)
pytestmark = pytest.mark.timing

MS = 1_000_000
Script = Callable[[socket.socket, int], None]  # (connection, request number) -> answer


class ScriptServer:
    """Accepts connections on 127.0.0.1 and answers each request with ``script``."""

    def __init__(self, script: Script, tls: ssl.SSLContext | None = None) -> None:
        self.script = script
        self.tls = tls
        self.accepted = 0
        self.requests = 0
        self.heads: list[bytes] = []
        self.body_sizes: list[int] = []
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        scheme = "https" if self.tls else "http"
        return f"{scheme}://127.0.0.1:{self.port}/v1/completions"

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.accepted += 1
            threading.Thread(target=self._conn, args=(conn,), daemon=True).start()

    def _conn(self, conn: socket.socket) -> None:
        with conn:
            try:
                if self.tls is not None:
                    conn = self.tls.wrap_socket(conn, server_side=True)
                self._answer(conn)
            except OSError:  # the script or the client closed it
                return

    def _answer(self, conn: socket.socket) -> None:
        buf = b""
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        while not self.stop.is_set():
            while b"\r\n\r\n" not in buf:
                data = conn.recv(65536)
                if not data:
                    return
                buf += data
            head, _, rest = buf.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            while len(rest) < length:
                rest += conn.recv(65536)
            buf = rest[length:]
            self.heads.append(head)
            self.body_sizes.append(length)
            self.requests += 1
            self.script(conn, self.requests)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=2)
        self.sock.close()


@pytest.fixture
def serve() -> Any:
    servers: list[ScriptServer] = []

    def start(script: Script, tls: ssl.SSLContext | None = None) -> ScriptServer:
        servers.append(ScriptServer(script, tls))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def run(coro: Coroutine[Any, Any, Any]) -> Any:
    return uvloop.run(asyncio.wait_for(coro, 20))


def request(url: str, **headers: str) -> HttpRequest:
    return HttpRequest(url, b'{"prompt": "hi"}', {"Content-Type": "application/json", **headers})


def chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


CHUNKED_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
)


def two_events_30_ms_apart(written: list[tuple[int, int]]) -> Script:
    """An answer whose second event is written 30 ms after the first.

    Notes the clock just before that write and just after the end of the body that follows
    it: the server thread may be descheduled anywhere in between, and a read that takes both
    carries the later one's stamp, so the arrival lies between the two.
    """

    def script(conn: socket.socket, _: int) -> None:
        conn.sendall(CHUNKED_HEAD + chunk(b"data: 1\n\n"))
        time.sleep(0.03)
        before = time.perf_counter_ns()
        conn.sendall(chunk(b"data: 2\n\n"))
        conn.sendall(b"0\r\n\r\n")
        written.append((before, time.perf_counter_ns()))

    return script


async def fetch(transport: Transport, url: str) -> tuple[int, bytes, list[int]]:
    async with transport.open(request(url)) as resp:
        body, stamps = b"", []
        async for ns, data, _ in resp.chunks():
            body += data
            stamps.append(ns)
        return resp.status, body, stamps


def fetch_in_turn(
    url: str, n: int, new: Callable[[], Transport] | None = None
) -> list[tuple[int, bytes, list[int]]]:
    """``n`` requests one after the other through one transport (h1 unless ``new`` says)."""

    async def main() -> list[tuple[int, bytes, list[int]]]:
        transport = new() if new else H1Transport(limit=4, connect_timeout_s=5)
        out = [await fetch(transport, url) for _ in range(n)]
        await transport.aclose()
        return out

    return run(main())


def assert_stamped_during(stamp: int, write: tuple[int, int]) -> None:
    """The arrival stamp lies within the server's send call, give or take a millisecond."""
    before, after = write
    late, took = (stamp - before) / MS, (after - before) / MS
    assert before - 0.2 * MS < stamp < after + 1 * MS, (late, took)


async def second_event_read_late(transport: H1Transport, url: str) -> tuple[int, int]:
    """Read the first event, hold the loop up 100 ms, read the second: (its stamp, read time)."""
    async with transport.open(request(url)) as resp:
        it = resp.chunks()
        await it.__anext__()
        time.sleep(0.1)  # noqa: ASYNC251 - the loop is stuck while the second event arrives
        read_ns = time.perf_counter_ns()
        stamp, data, _ = await it.__anext__()
        assert data.startswith(b"data: 2")
        async for _ in it:
            pass
    return stamp, read_ns


def test_a_chunk_is_stamped_when_it_arrived_not_when_the_loop_read_it(serve: Any) -> None:
    written: list[tuple[int, int]] = []
    script = two_events_30_ms_apart(written)

    server = serve(script)

    async def main() -> tuple[int, int]:
        transport = H1Transport(limit=4, connect_timeout_s=5)
        out = await second_event_read_late(transport, server.url)
        await transport.aclose()
        return out

    stamp, read_ns = run(main())
    # stamped within a millisecond of the server's write, though read some 70 ms later
    assert_stamped_during(stamp, written[0])
    assert read_ns - stamp > 50 * MS


def test_bodies_framed_by_length_chunks_or_the_close(serve: Any) -> None:
    answers = {
        1: b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello",
        2: CHUNKED_HEAD + chunk(b"a") + chunk(b"bc") + b"0\r\n\r\n",
        3: b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nuntil the end",
    }

    def script(conn: socket.socket, n: int) -> None:
        conn.sendall(answers[n])
        if n == 3:
            conn.shutdown(socket.SHUT_WR)

    server = serve(script)

    results = fetch_in_turn(server.url, 3)
    assert [(status, body) for status, body, _ in results] == [
        (200, b"hello"),
        (200, b"abc"),
        (200, b"until the end"),
    ]
    assert server.accepted == 1  # the first two answers left the connection open for the next


def test_a_pooled_connection_the_server_closed_is_not_reused(serve: Any) -> None:
    def script(conn: socket.socket, n: int) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
        time.sleep(0.01)
        conn.close()  # an idle keep-alive timeout, as uvicorn's after 5 s

    server = serve(script)

    async def main() -> list[tuple[int, bytes, list[int]]]:
        transport = H1Transport(limit=4, connect_timeout_s=5)
        out = []
        for _ in range(3):
            out.append(await fetch(transport, server.url))
            await asyncio.sleep(0.05)
        await transport.aclose()
        return out

    assert [r[:2] for r in run(main())] == [(200, b"ok")] * 3
    assert server.accepted == 3


@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        (b"", "disconnected"),  # closed before the headers
        (CHUNKED_HEAD + chunk(b"data: 1\n\n"), "disconnected"),  # closed mid-body
        (b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc", "disconnected"),
        (b"SSH-2.0-OpenSSH\r\n\r\n", "protocol_error"),
    ],
)
def test_broken_answers_are_transport_errors(serve: Any, answer: bytes, kind: str) -> None:
    def script(conn: socket.socket, _: int) -> None:
        conn.sendall(answer)
        conn.close()

    server = serve(script)

    async def main() -> TransportError:
        transport = H1Transport(limit=4, connect_timeout_s=5)
        with pytest.raises(TransportError) as info:
            await fetch(transport, server.url)
        await transport.aclose()
        return info.value

    assert run(main()).kind == kind


def test_a_refused_connection_is_a_connect_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, never listening: refused

    async def main() -> TransportError:
        transport = H1Transport(limit=4, connect_timeout_s=5)
        with pytest.raises(TransportError) as info:
            await fetch(transport, f"http://127.0.0.1:{port}/")
        await transport.aclose()
        return info.value

    assert run(main()).kind == "connect_error"


def test_a_header_with_a_line_break_is_refused(serve: Any) -> None:
    server = serve(lambda conn, _: conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"))

    async def main() -> TransportError:
        transport = H1Transport(limit=4, connect_timeout_s=5)
        with pytest.raises(TransportError) as info:
            async with transport.open(request(server.url, **{"x-a": "1\r\nx-injected: 1"})):
                pass
        await transport.aclose()
        return info.value

    assert run(main()).kind == "protocol_error"
    assert server.requests == 0


def test_a_slow_reader_pauses_the_socket_and_loses_nothing(
    serve: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(h1_connection, "PAUSE_BYTES", 64 * 1024)
    pieces = [bytes([65 + i % 26]) * 4096 for i in range(512)]  # 2 MiB

    def script(conn: socket.socket, _: int) -> None:
        conn.sendall(CHUNKED_HEAD + b"".join(chunk(p) for p in pieces) + b"0\r\n\r\n")

    server = serve(script)

    async def main() -> bytes:
        transport = H1Transport(limit=4, connect_timeout_s=5)
        body = b""
        async with transport.open(request(server.url)) as resp:
            async for _, data, _ in resp.chunks():
                body += data
                await asyncio.sleep(0.001)
        await transport.aclose()
        return body

    assert run(main()) == b"".join(pieces)


def test_a_cancelled_request_does_not_leave_its_connection_in_the_pool(serve: Any) -> None:
    def script(conn: socket.socket, n: int) -> None:
        if n == 1:
            conn.sendall(CHUNKED_HEAD + chunk(b"data: 1\n\n"))
            time.sleep(0.3)  # then the client gives up
            return
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")

    server = serve(script)

    async def main() -> tuple[int, bytes, list[int]]:
        transport = H1Transport(limit=4, connect_timeout_s=5)
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.1):
                await fetch(transport, server.url)
        out = await fetch(transport, server.url)
        await transport.aclose()
        return out

    assert run(main())[:2] == (200, b"ok")
    assert server.accepted == 2


def test_closing_the_transport_fails_an_answer_still_coming(serve: Any) -> None:
    def script(conn: socket.socket, _: int) -> None:
        conn.sendall(CHUNKED_HEAD + chunk(b"data: 1\n\n"))
        time.sleep(1.0)  # the rest never comes before the close

    server = serve(script)

    async def main() -> list[bytes]:
        transport = H1Transport(limit=4, connect_timeout_s=5)
        got = []
        async with transport.open(request(server.url)) as resp:
            with pytest.raises(TransportError, match="loadgen closed the connection mid-body"):
                async for _, data, _ in resp.chunks():
                    got.append(data)
                    asyncio.get_running_loop().call_soon(asyncio.ensure_future, transport.aclose())
        return got

    assert run(main()) == [b"data: 1\n\n"]  # before: the reader waited for ever


def test_interim_answers_are_skipped_and_stray_bytes_spoil_only_the_connection(
    serve: Any,
) -> None:
    answers = {
        1: b"HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n"
        b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nfirst",
        2: b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n",  # + stray
        3: b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nthird",
    }
    server = serve(lambda conn, n: conn.sendall(answers[n]))

    results = fetch_in_turn(server.url, 3)
    assert [r[:2] for r in results] == [(200, b"first"), (200, b"ok"), (200, b"third")]
    assert server.accepted == 2  # the connection that carried stray bytes was not reused


def test_a_connection_is_reused_when_the_closing_chunk_comes_after_done(serve: Any) -> None:
    def script(conn: socket.socket, _: int) -> None:
        conn.sendall(CHUNKED_HEAD + chunk(b"data: 1\n\n") + chunk(b"data: [DONE]\n\n"))
        time.sleep(0.02)  # uvicorn writes the closing chunk on its own
        conn.sendall(b"0\r\n\r\n")

    server = serve(script)

    async def main() -> None:
        transport = H1Transport(limit=4, connect_timeout_s=5)
        for _ in range(3):
            async with transport.open(request(server.url)) as resp:
                async for _, data, _ in resp.chunks():
                    if data.endswith(b"[DONE]\n\n"):
                        break  # as the Requester does: the stream is over for it
            await asyncio.sleep(0.05)
        await transport.aclose()

    run(main())
    assert server.requests == 3
    assert server.accepted == 1


def test_the_callers_host_and_user_agent_win_and_content_length_is_ours(serve: Any) -> None:
    server = serve(lambda conn, _: conn.sendall(b"HTTP/1.1 204 No Content\r\n\r\n"))
    headers = {"Host": "api.example", "user-agent": "probe/1", "Content-Length": "999"}

    async def main() -> int:
        transport = H1Transport(limit=4, connect_timeout_s=5)
        async with transport.open(request(server.url, **headers)) as resp:
            status = resp.status
        await transport.aclose()
        return status

    assert run(main()) == 204
    lines = [line.lower() for line in server.heads[0].split(b"\r\n")[1:]]
    assert [line for line in lines if line.startswith(b"host:")] == [b"host: api.example"]
    assert [line for line in lines if line.startswith(b"user-agent:")] == [b"user-agent: probe/1"]
    assert [line for line in lines if line.startswith(b"content-length:")] == [
        b"content-length: 16"
    ]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (b"HTTP/1.1 101 Switching Protocols\r\nupgrade: h2c\r\n\r\n", "protocol_error"),
        (b"HTTP/1.1 200 OK\r\ntransfer-encoding: identity\r\n\r\nto the close", "body"),
    ],
)
def test_upgrades_fail_and_non_chunked_codings_end_at_the_close(
    serve: Any, answer: bytes, expected: str
) -> None:
    def script(conn: socket.socket, _: int) -> None:
        conn.sendall(answer)
        conn.shutdown(socket.SHUT_WR)

    server = serve(script)

    async def main() -> str:
        transport = H1Transport(limit=4, connect_timeout_s=5)
        try:
            _, body, _ = await fetch(transport, server.url)
        except TransportError as exc:
            return exc.kind
        finally:
            await transport.aclose()
        return "body" if body == b"to the close" else repr(body)

    assert run(main()) == expected


def test_tls_chunks_are_stamped_on_arrival_and_the_connection_is_kept(
    serve: Any, tls_certificate: tuple[Path, ssl.SSLContext]
) -> None:
    cert, server_tls = tls_certificate
    written: list[tuple[int, int]] = []
    script = two_events_30_ms_apart(written)

    server = serve(script, server_tls)

    async def main() -> list[tuple[int, int]]:
        transport = H1Transport(limit=4, connect_timeout_s=5, tls=TlsOptions(ca_file=str(cert)))
        out = []
        for _ in range(3):
            out.append(await second_event_read_late(transport, server.url))
            await asyncio.sleep(0.05)  # TLS 1.3 session tickets may land on the idle connection
        await transport.aclose()
        return out

    for (stamp, read_ns), write in zip(run(main()), written, strict=True):
        assert_stamped_during(stamp, write)
        assert read_ns - stamp > 50 * MS
    assert server.accepted == 1


@pytest.mark.parametrize(
    ("options", "expected"), [(TlsOptions(), "connect_error"), (TlsOptions(verify=False), "ok")]
)
def test_tls_certificates_are_checked_unless_told_not_to(
    serve: Any, tls_certificate: tuple[Path, ssl.SSLContext], options: TlsOptions, expected: str
) -> None:
    server = serve(lambda conn, _: conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"),
                   tls_certificate[1])  # fmt: skip

    async def main() -> str:
        transport = H1Transport(limit=4, connect_timeout_s=5, tls=options)
        try:
            status, body, _ = await fetch(transport, server.url)
        except TransportError as exc:
            assert "certificate" in exc.detail.lower(), exc.detail
            return exc.kind
        finally:
            await transport.aclose()
        return "ok" if (status, body) == (200, b"ok") else f"{status} {body!r}"

    assert run(main()) == expected


@pytest.mark.parametrize("kind", ["h1", "aiohttp", "httpx"])
def test_every_transport_takes_the_tls_options(
    serve: Any, tls_certificate: tuple[Path, ssl.SSLContext], kind: str
) -> None:
    cert, server_tls = tls_certificate
    server = serve(lambda conn, _: conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"),
                   server_tls)  # fmt: skip

    async def main() -> tuple[int, bytes]:
        transport = make_transport(
            kind, limit=4, connect_timeout_s=5, tls=TlsOptions(ca_file=str(cert))
        )
        async with transport.open(request(server.url)) as resp:
            body = b"".join([data async for _, data, _ in resp.chunks()])
            status = resp.status
        await transport.aclose()
        return status, body

    assert run(main()) == (200, b"ok")


def test_reads_held_up_by_a_busy_loop_show_as_read_lag(serve: Any) -> None:
    def script(conn: socket.socket, _: int) -> None:
        conn.sendall(CHUNKED_HEAD)
        time.sleep(0.01)
        conn.sendall(chunk(b"data: 1\n\n") + b"0\r\n\r\n")

    server = serve(script)

    async def main() -> tuple[int, int, int]:
        transport = H1Transport(limit=4, connect_timeout_s=5)
        async with transport.open(request(server.url)) as resp:
            transport.read_lag.take()  # the headers' read was prompt: not what this is about
            time.sleep(0.05)  # noqa: ASYNC251 - the loop is busy while the body arrives
            async for _ in resp.chunks():
                pass
        await transport.aclose()
        return transport.read_lag.take()

    reads, p99, top = run(main())
    assert reads >= 1
    assert p99 >= 20 * MS and top >= 20 * MS  # the body waited in the socket, the loop held


@pytest.mark.parametrize("kind", ["h1", "httpx"])
def test_a_limit_of_0_means_no_limit_and_connections_are_kept(serve: Any, kind: str) -> None:
    """Rate runs without max_concurrency give the transport limit 0."""
    server = serve(lambda conn, _: conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"))

    unlimited = lambda: make_transport(kind, limit=0, connect_timeout_s=5)  # noqa: E731
    results = fetch_in_turn(server.url, 3, unlimited)
    assert [r[:2] for r in results] == [(200, b"ok")] * 3
    assert server.accepted == 1


@pytest.mark.parametrize("tls", [False, True])
def test_a_request_larger_than_the_socket_takes_goes_out_whole(
    serve: Any, tls_certificate: tuple[Path, ssl.SSLContext], tls: bool
) -> None:
    cert, server_tls = tls_certificate
    server = serve(lambda conn, _: conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"),
                   server_tls if tls else None)  # fmt: skip
    big = HttpRequest(server.url, b"x" * 8_000_000, {"Content-Type": "application/json"})

    async def main() -> list[tuple[int, bytes]]:
        transport = H1Transport(limit=4, connect_timeout_s=5, tls=TlsOptions(ca_file=str(cert)))
        out = []
        for _ in range(2):
            async with transport.open(big) as resp:
                out.append((resp.status, b"".join([data async for _, data, _ in resp.chunks()])))
        await transport.aclose()
        return out

    assert run(main()) == [(200, b"ok")] * 2
    assert server.body_sizes == [8_000_000] * 2 and server.accepted == 1


def test_the_address_that_answered_is_tried_first_next_time(serve: Any) -> None:
    """``localhost`` may resolve to ::1 first while the server listens on 127.0.0.1 only."""
    answer = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
    server = serve(lambda conn, _: conn.sendall(answer))
    url = server.url.replace("127.0.0.1", "localhost")

    async def main() -> list[Any]:
        transport = H1Transport(limit=4, connect_timeout_s=5)
        v4 = (socket.AF_INET, socket.SOCK_STREAM, 6, ("127.0.0.1", server.port))
        v6 = (socket.AF_INET6, socket.SOCK_STREAM, 6, ("::1", server.port, 0, 0))
        transport._addrs[("localhost", server.port, False)] = [v6, v4]  # as a resolver may give
        for _ in range(2):
            await fetch(transport, url)
        order = transport._addrs[("localhost", server.port, False)]
        await transport.aclose()
        return order

    assert run(main())[0][0] == socket.AF_INET
    assert server.accepted == 2


@pytest.mark.parametrize("then_close", [True, False])
def test_an_answer_before_the_whole_request_is_kept(then_close: bool) -> None:
    """A server refusing a body too large answers before reading it all."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def refuse() -> None:
        conn, _ = listener.accept()
        with conn:
            head = b""
            while b"\r\n\r\n" not in head:
                head += conn.recv(65536)
            conn.sendall(b"HTTP/1.1 413 Payload Too Large\r\ncontent-length: 9\r\n\r\ntoo large")
            if not then_close:
                time.sleep(0.5)  # neither reading the body nor closing

    thread = threading.Thread(target=refuse, daemon=True)
    thread.start()
    big = HttpRequest(f"http://127.0.0.1:{port}/v1/completions", b"x" * 64_000_000, {})

    async def main() -> tuple[int, bytes, int]:
        transport = H1Transport(limit=4, connect_timeout_s=5)
        async with transport.open(big) as resp:
            status, body = resp.status, await resp.read_prefix(100)
        pooled = sum(len(idle) for idle in transport._idle.values())
        await transport.aclose()
        return status, body, pooled

    try:
        assert run(main()) == (413, b"too large", 0)  # answered, and never reused
    finally:
        thread.join(5)
        listener.close()


def test_an_early_200_still_gets_the_whole_request() -> None:
    """A server may stream its headers before it has read the body: nothing is cut off."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    size = 64_000_000
    got: list[int] = []

    def answer_early() -> None:
        conn, _ = listener.accept()
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            conn.sendall(CHUNKED_HEAD)  # headers first, then read the body
            n = len(data.partition(b"\r\n\r\n")[2])
            while n < size:
                n += len(conn.recv(1 << 20))
            got.append(n)
            conn.sendall(chunk(b"hello") + b"0\r\n\r\n")

    thread = threading.Thread(target=answer_early, daemon=True)
    thread.start()
    big = HttpRequest(f"http://127.0.0.1:{port}/v1/completions", b"x" * size, {})

    async def main() -> tuple[int, bytes]:
        transport = H1Transport(limit=4, connect_timeout_s=5)
        async with transport.open(big) as resp:
            out = resp.status, b"".join([data async for _, data, _ in resp.chunks()])
        await transport.aclose()
        return out

    try:
        assert run(main()) == (200, b"hello")
        assert got == [size]
    finally:
        thread.join(5)
        listener.close()


def test_concurrent_connects_agree_on_the_address_that_answered(serve: Any) -> None:
    server = serve(lambda conn, _: conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"))
    key = ("127.0.0.1", server.port, False)
    bad = (socket.AF_INET, socket.SOCK_STREAM, 6, ("127.0.0.2", server.port))  # refused
    good = (socket.AF_INET, socket.SOCK_STREAM, 6, ("127.0.0.1", server.port))

    async def main() -> tuple[list[tuple[int, bytes, list[int]]], Any]:
        transport = H1Transport(limit=8, connect_timeout_s=5)
        transport._addrs[key] = [bad, good]
        out = await asyncio.gather(*(fetch(transport, server.url) for _ in range(6)))
        order = transport._addrs[key]
        await transport.aclose()
        return out, order

    results, order = run(main())
    assert [r[:2] for r in results] == [(200, b"ok")] * 6
    assert order == [good, bad]
