"""The agent's connection limits, over real sockets on 127.0.0.1 (ephemeral ports).

Header read timeout and connection cap run in-process; the fd limit runs the agent
as a subprocess with a low RLIMIT_NOFILE. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import os
import resource
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

from loadgen.gpu_agent.fake_nvml import FakeNvml
from loadgen.gpu_agent.listener import Limits
from loadgen.gpu_agent.ring import Ring, SamplingThread
from loadgen.gpu_agent.sampler import Sampler
from loadgen.gpu_agent.server import AgentState, Serving, build_app, start_server

ROOT = Path(__file__).resolve().parents[2]
OUT_OF_FDS = b"out of file descriptors"
HEAD = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


def _serve(limits: Limits, body: Callable[[Serving], Awaitable[None]]) -> None:
    sampler = Sampler(FakeNvml(1))
    ring = Ring(10)
    thread = SamplingThread(ring, [sampler.sample], 10**9)
    thread.tick()
    state = AgentState(ring, thread, sampler, 0.1, 1.0, False, True, None)

    async def run() -> None:
        serving = await start_server(build_app(state), "127.0.0.1", 0, limits)
        try:
            await asyncio.wait_for(body(serving), timeout=20)
        finally:
            await serving.close()

    asyncio.run(run())


async def _until(check: Callable[[], bool], timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


async def _read_all(reader: asyncio.StreamReader) -> bytes:
    return await asyncio.wait_for(reader.read(), timeout=5)  # until the server closes


async def _response(reader: asyncio.StreamReader) -> bytes:
    """One whole response (head and Content-Length body) from a kept-alive connection."""
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=5)
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    return head + await asyncio.wait_for(reader.readexactly(length), timeout=5)


def test_slow_request_head_is_dropped_prompt_one_is_served() -> None:
    async def body(serving: Serving) -> None:
        # A head that never ends: dropped after the timeout, with no answer.
        started = time.monotonic()  # before the server can start its timer
        reader, writer = await asyncio.open_connection("127.0.0.1", serving.port)
        writer.write(HEAD[:20])
        assert await _read_all(reader) == b""
        assert 1.0 <= time.monotonic() - started < 5
        writer.close()
        # Heads sent in two parts well within the timeout, twice on one connection.
        reader, writer = await asyncio.open_connection("127.0.0.1", serving.port)
        for split in (20, len(HEAD) - 2):  # the second splits the blank line itself
            writer.write(HEAD[:split])
            await asyncio.sleep(0.02)
            writer.write(HEAD[split:])
            assert (await _response(reader)).startswith(b"HTTP/1.1 200")
        # The next request on the same kept-alive connection starts but never ends.
        writer.write(HEAD[:20])
        await asyncio.wait_for(reader.read(), timeout=5)
        assert serving.listener.counters.dropped_slow == 2
        writer.close()

    _serve(Limits(max_connections=8, header_timeout_s=1.0), body)


def test_connections_beyond_the_cap_get_a_fast_503() -> None:
    async def body(serving: Serving) -> None:
        counters = serving.listener.counters
        idle = [await asyncio.open_connection("127.0.0.1", serving.port) for _ in range(2)]
        await _until(lambda: counters.open == 2)
        base = f"http://127.0.0.1:{serving.port}"
        async with httpx.AsyncClient(base_url=base, timeout=5) as client:
            started = time.monotonic()
            busy = await client.get("/health")
            assert busy.status_code == 503 and busy.headers["Retry-After"] == "1"
            assert busy.json() == {"error": "too many connections"}
            assert time.monotonic() - started < 3
            idle[0][1].close()
            await _until(lambda: counters.open == 1)
            assert (await client.get("/health")).status_code == 200
        assert counters.refused_busy == 1
        idle[1][1].close()

    _serve(Limits(max_connections=2, header_timeout_s=10), body)


def _low_fd_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (40, 40))


class _Stderr:
    """The agent's stderr, read unbuffered with a bounded wait."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stderr is not None
        self.fd = proc.stderr.fileno()
        self.text = b""

    def wait_for(self, needle: bytes, count: int, timeout_s: float = 10) -> None:
        deadline = time.monotonic() + timeout_s
        while self.text.count(needle) < count:
            ready, _, _ = select.select([self.fd], [], [], max(deadline - time.monotonic(), 0))
            assert ready, f"{needle!r} not seen {count} times on stderr: {self.text!r}"
            chunk = os.read(self.fd, 4096)
            assert chunk, f"the agent closed stderr: {self.text!r}"
            self.text += chunk


def _fill(port: int, count: int) -> list[socket.socket]:
    return [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(count)]


def test_at_the_fd_limit_recovers_and_exits_on_sigterm_within_1s() -> None:
    args = ["--port", "0", "--fake-nvml", "1", "--max-connections", "1000"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "loadgen.gpu_agent", *args, "--header-timeout-s", "60"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_low_fd_limit,
    )
    clients: list[socket.socket] = []
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 15)
        assert ready, "agent did not start"
        port = int(proc.stdout.readline().strip().rsplit(b":", 1)[1])
        stderr = _Stderr(proc)
        clients = _fill(port, 60)  # more than its 40 fds: the agent runs out
        stderr.wait_for(OUT_OF_FDS, 1)
        for c in clients:
            c.close()
        # It answers again once clients leave (it may run out once more on the way).
        health = httpx.get(f"http://127.0.0.1:{port}/health", timeout=5)
        episodes = health.json()["connections"]["out_of_fds"]
        assert episodes >= 1
        clients = _fill(port, 60)
        stderr.wait_for(OUT_OF_FDS, episodes + 1)
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=5) == 0
        assert time.monotonic() - started < 1.0
    finally:
        for c in clients:
            c.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=5)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
