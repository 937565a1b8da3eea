"""Idle kept-alive connections cannot starve the authorised pollers of a real agent process.

The probe (issue #20): 300 connections to an agent with a token, each sending
one ``GET /health`` (public, no token) and then staying open, kept alive. They
held its 256-connection cap, so every authorised poll (``/clock``,
``/samples`` with the bearer token) was answered ``503`` for the whole 30 s of
the probe (aiohttp's keep-alive timeout is 75 s). Here the agent runs as a
subprocess (fake NVML, an ephemeral port, stopped by PID); the idle ones are
raw sockets. A poller now takes the place of the connection idle longest;
a connection that sent no request at all is still the header timeout's
business (``test_agent_limits``), and beyond the cap with none idle it is
still a fast 503.
"""

from __future__ import annotations

import contextlib
import socket
import time

import httpx

from tests.conftest import Spawn

TOKEN = "flood-test-token"
HEALTH = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
IDLE = 300


def _one_health(port: int) -> socket.socket | None:
    """A connection that asked /health once and stays open; None if it was refused."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(HEALTH)
    head = b""
    while b"\r\n\r\n" not in head:
        data = sock.recv(65536)
        if not data:
            break
        head += data
    if not head.startswith(b"HTTP/1.1 200"):
        sock.close()
        return None
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n\r\n", 1)[0].split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    body = head.split(b"\r\n\r\n", 1)[1]
    while len(body) < length:
        data = sock.recv(65536)
        assert data, "the agent closed mid-answer"
        body += data
    return sock


def test_idle_kept_alive_connections_do_not_starve_authorised_polls(agent_proc: Spawn) -> None:
    _, url = agent_proc("--fake-nvml", "1", "--token-env", "AGENT_T", env={"AGENT_T": TOKEN})
    port = int(url.rsplit(":", 1)[1])
    idle: list[socket.socket] = []
    try:
        for _ in range(IDLE):
            sock = _one_health(port)
            if sock is not None:
                idle.append(sock)
        assert len(idle) >= 256  # the cap is full of idle connections
        time.sleep(1.0)  # they are idle now: their answers are long out
        auth = {"Authorization": f"Bearer {TOKEN}"}
        statuses = []
        with httpx.Client(base_url=url, headers=auth, timeout=5) as client:
            deadline = time.monotonic() + 2.0
            while time.monotonic() < deadline:  # polls, as the collector's (every 0.1 s)
                statuses.append(client.get("/clock").status_code)
                statuses.append(client.get("/samples", params={"since": 0}).status_code)
                time.sleep(0.1)
            assert statuses and set(statuses) == {200}, statuses  # before: all 503
            health = client.get("/health").json()["connections"]
        assert health["evicted_idle"] >= 1 and health["open"] <= 256
        # an idle connection that was evicted was closed cleanly (EOF), not reset
        closed = 0
        for sock in idle:
            sock.settimeout(0.0)
            with contextlib.suppress(BlockingIOError):  # still open: not evicted
                closed += sock.recv(1) == b""
        assert 1 <= closed <= health["evicted_idle"]
    finally:
        for sock in idle:
            sock.close()
