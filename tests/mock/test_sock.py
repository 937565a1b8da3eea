"""The mock's listener and transport over real sockets: kernel receive stamps, writes, close."""

from __future__ import annotations

import asyncio
import socket
import ssl
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import uvloop

from loadgen.mock.sock import Listener, SockTransport, listen

MS = 1_000_000


class Recorder:
    """A protocol that keeps what it is given."""

    def __init__(self) -> None:
        self.transport: SockTransport | None = None
        self.reads: list[tuple[bytes, int]] = []
        self.lost = asyncio.Event()

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def data_received_at(self, data: bytes, recv_ns: int) -> None:
        self.reads.append((data, recv_ns))

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost.set()


async def until(condition: Callable[[], bool], timeout_s: float = 5.0) -> None:
    """Poll ``condition`` (set by another thread or a loop callback) until it holds."""
    async with asyncio.timeout(timeout_s):
        while not condition():  # noqa: ASYNC110 - no event to wait on: it is set elsewhere
            await asyncio.sleep(0.001)


async def start(tls: ssl.SSLContext | None = None) -> tuple[Listener, list[Recorder], int]:
    made: list[Recorder] = []

    def factory() -> Recorder:
        made.append(Recorder())
        return made[-1]

    listener = await listen(factory, "127.0.0.1", 0, backlog=16, tls=tls)
    return listener, made, listener.sockets[0].getsockname()[1]


def test_a_request_is_stamped_when_it_reached_the_socket() -> None:
    sent: list[int] = []  # the clock just before and just after the send

    def client(port: int) -> None:
        with socket.create_connection(("127.0.0.1", port)) as s:
            time.sleep(0.05)
            sent.append(time.perf_counter_ns())
            s.sendall(b"GET / HTTP/1.1\r\n\r\n")
            sent.append(time.perf_counter_ns())
            time.sleep(0.2)

    async def main() -> tuple[int, int]:
        listener, made, port = await start()
        thread = threading.Thread(target=client, args=(port,))
        thread.start()
        await until(lambda: bool(made))
        time.sleep(0.15)  # noqa: ASYNC251 - the server's loop is busy while the request arrives
        read_ns = time.perf_counter_ns()
        await until(lambda: bool(made[0].reads))
        await asyncio.to_thread(thread.join)
        listener.close()
        return made[0].reads[0][1], read_ns

    stamp, read_ns = uvloop.run(main())
    before, after = sent
    late, took = (stamp - before) / MS, (after - before) / MS
    assert before - 0.2 * MS < stamp < after + 1 * MS, (late, took)
    assert read_ns - stamp > 50 * MS  # the loop only looked well after


def test_a_large_write_is_sent_whole_then_closed() -> None:
    payload = bytes(range(256)) * 160_000  # 40 MB: more than the socket takes at once
    got: list[bytes] = []

    def client(port: int) -> None:
        with socket.create_connection(("127.0.0.1", port)) as s:
            chunks = []
            time.sleep(0.1)  # let the server's socket fill up first
            while data := s.recv(65536):
                chunks.append(data)
            got.append(b"".join(chunks))

    async def main() -> tuple[bool, int]:
        listener, made, port = await start()
        thread = threading.Thread(target=client, args=(port,))
        thread.start()
        await until(lambda: bool(made) and made[0].transport is not None)
        transport = made[0].transport
        transport.write(payload[:1000])
        transport.write(payload[1000:])
        waiting = transport.get_write_buffer_size()
        transport.close()  # only once everything is out
        closing = transport.is_closing()
        await asyncio.wait_for(made[0].lost.wait(), 10)
        await asyncio.to_thread(thread.join)
        listener.close()
        return closing, waiting

    closing, waiting = uvloop.run(main())
    assert closing and waiting > 0  # part of it had to wait for the socket
    assert got == [payload]


def test_abort_drops_the_connection_and_tells_the_protocol() -> None:
    ended: list[bytes] = []

    def client(port: int) -> None:
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(b"x")
            ended.append(s.recv(10))

    async def main() -> None:
        listener, made, port = await start()
        thread = threading.Thread(target=client, args=(port,))
        thread.start()
        await until(lambda: bool(made) and bool(made[0].reads))
        assert made[0].transport is not None
        made[0].transport.abort()
        made[0].transport.write(b"too late")  # ignored, no error
        assert made[0].transport.get_extra_info("socket") is None  # closed: not to be touched
        await asyncio.wait_for(made[0].lost.wait(), 5)
        await asyncio.to_thread(thread.join)
        listener.close()

    uvloop.run(main())
    assert ended == [b""]


def test_abort_with_unsent_output_is_clean() -> None:
    """A client that stops reading, then the server aborts (as on SIGTERM): no crash."""
    stop = threading.Event()

    def client(port: int) -> None:
        with socket.create_connection(("127.0.0.1", port)):
            stop.wait(5)  # never reads

    async def main() -> int:
        listener, made, port = await start()
        thread = threading.Thread(target=client, args=(port,))
        thread.start()
        await until(lambda: bool(made) and made[0].transport is not None)
        transport = made[0].transport
        assert transport is not None
        transport.write(b"x" * 50_000_000)
        waiting = transport.get_write_buffer_size()
        transport.abort()
        await asyncio.wait_for(made[0].lost.wait(), 5)
        await asyncio.sleep(0.05)  # a loop pass after the close: where libuv would abort
        stop.set()
        await asyncio.to_thread(thread.join)
        listener.close()
        return waiting

    assert uvloop.run(main()) > 0


def test_over_tls_a_request_is_stamped_when_it_reached_the_socket(
    tls_certificate: tuple[Path, ssl.SSLContext],
) -> None:
    """Plain bytes reach the protocol with the encrypted bytes' arrival; answers go back."""
    cert, server_tls = tls_certificate
    shaken = threading.Event()
    sent: list[int] = []  # the clock just before and just after the send
    got: list[bytes] = []

    def client(port: int) -> None:
        context = ssl.create_default_context(cafile=str(cert))
        with (
            socket.create_connection(("127.0.0.1", port)) as raw,
            context.wrap_socket(raw, server_hostname="127.0.0.1", suppress_ragged_eofs=False) as s,
        ):
            shaken.set()
            time.sleep(0.05)
            sent.append(time.perf_counter_ns())
            s.sendall(b"GET / HTTP/1.1\r\n\r\n")
            sent.append(time.perf_counter_ns())
            chunks = []
            while data := s.recv(65536):  # until the server's close_notify
                chunks.append(data)
            got.append(b"".join(chunks))

    async def main() -> tuple[bytes, int, int]:
        listener, made, port = await start(server_tls)
        thread = threading.Thread(target=client, args=(port,))
        thread.start()
        await until(shaken.is_set)
        time.sleep(0.15)  # noqa: ASYNC251 - the server's loop is busy while the request arrives
        read_ns = time.perf_counter_ns()
        await until(lambda: bool(made[0].reads))
        transport = made[0].transport
        assert transport is not None
        transport.write(b"answer")
        transport.close()
        await asyncio.to_thread(thread.join)
        listener.close()
        data, stamp = made[0].reads[0]
        return data, stamp, read_ns

    data, stamp, read_ns = uvloop.run(main())
    assert data == b"GET / HTTP/1.1\r\n\r\n"
    before, after = sent
    late, took = (stamp - before) / MS, (after - before) / MS
    assert before - 0.2 * MS < stamp < after + 1 * MS, (late, took)
    assert read_ns - stamp > 50 * MS
    assert got == [b"answer"]


def test_a_failed_handshake_closes_only_that_connection(
    tls_certificate: tuple[Path, ssl.SSLContext],
) -> None:
    """An untrusting client, then one speaking plain HTTP, then a good one: no error escapes."""
    cert, server_tls = tls_certificate
    outcomes: list[str] = []

    def client(port: int, context: ssl.SSLContext | None) -> None:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
            if context is None:  # plain bytes to the https port: the server hangs up
                raw.sendall(b"GET / HTTP/1.1\r\n\r\n")
                try:
                    outcomes.append("closed" if raw.recv(10) == b"" else "answered")
                except ConnectionResetError:
                    outcomes.append("closed")
                return
            try:
                with context.wrap_socket(raw, server_hostname="127.0.0.1") as s:
                    s.sendall(b"ping")
                    outcomes.append(s.recv(10).decode())
            except ssl.SSLCertVerificationError:
                outcomes.append("refused")

    async def main() -> tuple[list[list[bytes]], list[dict[str, Any]]]:
        errors: list[dict[str, Any]] = []
        asyncio.get_running_loop().set_exception_handler(lambda _, ctx: errors.append(ctx))
        listener, made, port = await start(server_tls)
        clients = (ssl.create_default_context(), None, ssl.create_default_context(cafile=cert))
        for n, context in enumerate(clients, 1):
            thread = threading.Thread(target=client, args=(port, context))
            thread.start()
            await until(lambda: len(made) == n)  # noqa: B023 - awaited here, before n moves on
            if n == 3:
                await until(lambda: bool(made[2].reads))
                assert made[2].transport is not None
                made[2].transport.write(b"pong")
            await asyncio.to_thread(thread.join)
        await asyncio.wait_for(asyncio.gather(made[0].lost.wait(), made[1].lost.wait()), 5)
        listener.close()
        return [[data for data, _ in m.reads] for m in made], errors

    reads, errors = uvloop.run(main())
    assert reads == [[], [], [b"ping"]]
    assert outcomes == ["refused", "closed", "pong"]
    assert errors == []
