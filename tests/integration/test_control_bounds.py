"""Requests outside the load path are bounded in size and in time, whatever the server does.

The probes (issue #20): an endless ``/tokenize`` body grew loadgen to 9 GB
before a single request was sent; ``/tokenize`` answering one byte every 5 s
hung pre-flight forever (httpx's timeout is per read); an endless ``/metrics``
ended the run in a MemoryError traceback at 5.7 GB. Here a raw asyncio server
on 127.0.0.1 (its own thread, an ephemeral port) plays each abuse against each
caller: pre-flight (``/health``, ``/v1/models``), calibration (``/tokenize``),
the prefix-cache scrape and the telemetry collector's scrapes and agent polls.
Every server connection stops by itself (``SERVE_BYTES`` or ``SERVE_S``), and
the assertions are: the client let go long before that, in bounded time, and
said so in one line naming the URL (no password) and the limit.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import orjson
import pytest

from loadgen import control
from loadgen.client.transport import TlsOptions
from loadgen.control import ControlError, Limit, fetch
from loadgen.target import preflight, scrape, tokenize
from loadgen.telemetry import TelemetryCollector
from tests.integration.rawserver import LoopServer

# durations held to tight bounds: run apart from the parallel tests (-m timing)
pytestmark = pytest.mark.timing

#: what one server connection sends at most, and how long it lasts at most
SERVE_BYTES = 128 * 1024 * 1024
SERVE_S = 30.0
#: the server wrote this much or less before the client let go: it stopped early
#: (its cap plus what the loopback's socket buffers hold, far from SERVE_BYTES)
STOPPED_EARLY = 48 * 1024 * 1024
HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: %s\r\n"
FILL = b"1," * 32768  # 64 KiB of a JSON array (or Prometheus-ish text) that never closes

Abuse = Callable[[asyncio.StreamWriter], Awaitable[int]]


async def endless(writer: asyncio.StreamWriter) -> int:
    """A close-delimited body that never ends (up to ``SERVE_BYTES``)."""
    writer.write(HEAD % b"application/json" + b"\r\n[")
    written = 0
    while written < SERVE_BYTES:
        writer.write(FILL)
        written += len(FILL)
        await writer.drain()
    return written


async def endless_chunked(writer: asyncio.StreamWriter) -> int:
    """A chunked body of 64 KiB chunks that never ends."""
    writer.write(HEAD % b"text/plain" + b"transfer-encoding: chunked\r\n\r\n")
    written = 0
    chunk = b"%x\r\n%s\r\n" % (len(FILL), FILL)
    while written < SERVE_BYTES:
        writer.write(chunk)
        written += len(chunk)
        await writer.drain()
    return written


async def huge_length(writer: asyncio.StreamWriter) -> int:
    """``Content-Length: 10 GB``, then the body."""
    writer.write(HEAD % b"application/json" + b"content-length: 10000000000\r\n\r\n")
    return await endless(writer)


async def drip(writer: asyncio.StreamWriter) -> int:
    """The status line and the rest one byte at a time, 0.2 s apart: each read is quick."""
    written = 0
    for byte in HEAD % b"application/json" + b"content-length: 2\r\n\r\n{}":
        writer.write(bytes([byte]))
        written += 1
        await writer.drain()
        await asyncio.sleep(0.2)
    return written


@dataclass
class Served:
    """What the server did for each request: (path, bytes written, seconds until it stopped)."""

    requests: list[tuple[str, int, float]] = field(default_factory=list)


class HostileServer(LoopServer):
    """Plays ``abuses[path]`` for a request of that path; anything else is a 404."""

    def __init__(self, abuses: dict[str, Abuse]) -> None:
        super().__init__()
        self.abuses = abuses
        self.served = Served()

    def __enter__(self) -> HostileServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(10)
        self._thread.join(10)

    async def _stop(self) -> None:
        """Cancel what is still serving (a drip whose client left), then stop the loop."""
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._loop.call_soon(self._loop.stop)

    def url(self, userinfo: str = "") -> str:
        return f"http://{userinfo}127.0.0.1:{self.port}"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        started, written, path = time.monotonic(), 0, ""
        try:
            async with asyncio.timeout(SERVE_S):
                head = await reader.readuntil(b"\r\n\r\n")
                path = head.split(b" ", 2)[1].decode().split("?")[0]
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        await reader.readexactly(int(value))
                abuse = self.abuses.get(path)
                if abuse is None:
                    writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                    await writer.drain()
                else:
                    written = await abuse(writer)
        except (TimeoutError, ConnectionError, asyncio.IncompleteReadError):
            pass  # the client let go: what each test wants
        finally:
            writer.transport.abort()
            if path in self.abuses:
                self.served.requests.append((path, written, time.monotonic() - started))


@pytest.fixture
def short_deadlines(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each caller's deadline at 1.5 s (the sizes as they are), so a drip test is quick."""
    for module, name in (
        (preflight, "HEALTH"),
        (preflight, "MODELS"),
        (tokenize, "TOKENIZE"),
        (scrape, "METRICS"),
    ):
        monkeypatch.setattr(module, name, getattr(module, name).within(1.5))


def _stopped_early(server: HostileServer) -> None:
    assert server.served.requests, "the server saw no request"
    for path, written, _ in server.served.requests:
        assert written < STOPPED_EARLY, f"{path}: the client read {written} bytes"


# -- the client itself


@pytest.mark.parametrize("abuse", [endless, endless_chunked, huge_length])
def test_an_answer_past_the_cap_is_cut_off_in_one_line(abuse: Abuse) -> None:
    limit = Limit("/tokenize", 1024 * 1024, 10.0)
    with HostileServer({"/tokenize": abuse}) as server:
        started = time.monotonic()
        with pytest.raises(ControlError) as caught:
            fetch("POST", server.url("user:s3cret@") + "/tokenize", limit, json={"prompt": "x"})
        assert time.monotonic() - started < 5
    err = caught.value
    assert err.kind == "too_large" and err.limit_hit
    line = str(err)
    assert "\n" not in line and "s3cret" not in line
    assert line.startswith(f"http://127.0.0.1:{server.port}/tokenize: ")
    assert "past 1 MiB (the most /tokenize answers may take)" in line
    _stopped_early(server)


def test_a_drip_is_cut_off_at_the_total_deadline_not_per_read() -> None:
    limit = Limit("/health", 1024, 1.0)
    with HostileServer({"/health": drip}) as server:
        started = time.monotonic()
        with pytest.raises(ControlError) as caught:
            fetch("GET", server.url() + "/health", limit)
        elapsed = time.monotonic() - started
    assert caught.value.kind == "deadline"
    assert "no whole answer within 1 s (the deadline for /health requests)" in str(caught.value)
    assert 0.9 < elapsed < 4  # each byte came 0.2 s after the last: no per-read timeout fires


def test_an_answer_within_its_limits_comes_back_whole() -> None:
    async def small(writer: asyncio.StreamWriter) -> int:
        writer.write(HEAD % b"application/json" + b'content-length: 11\r\n\r\n{"count":7}')
        return 11

    with HostileServer({"/tokenize": small}) as server:
        reply = fetch("POST", server.url() + "/tokenize", control.TOKENIZE, json={"a": 1})
        missing = fetch("GET", server.url() + "/nothing", control.HEALTH)
    assert (reply.status, reply.json()) == (200, {"count": 7})
    assert missing.status == 404


def test_nothing_listening_is_a_connect_error_in_words() -> None:
    with pytest.raises(ControlError) as caught:
        fetch("GET", "http://127.0.0.1:1/health", control.HEALTH)
    assert caught.value.kind == "connect" and not caught.value.limit_hit
    assert "refused the connection" in str(caught.value)


# -- its callers


@pytest.mark.parametrize("abuse", [endless, drip])
def test_calibration_against_an_endless_or_dripping_tokenize(
    abuse: Abuse, short_deadlines: None, capsys: pytest.CaptureFixture[str]
) -> None:
    with HostileServer({"/tokenize": abuse}) as server:
        started = time.monotonic()
        got = tokenize.calibrate(server.url("u:pw-SECRET@"), "m", False, {}, TlsOptions())
        elapsed = time.monotonic() - started
    assert got is None  # the word approximation stays
    assert elapsed < 8
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pw-SECRET" not in err
    assert err.startswith(f"warning: http://127.0.0.1:{server.port}/tokenize: ")
    assert ("past 1 MiB" if abuse is endless else "within 1.5 s") in err
    assert "prompt lengths stay the word approximation" in err
    _stopped_early(server)


def test_preflight_against_a_dripping_health_and_endless_models(short_deadlines: None) -> None:
    with HostileServer({"/health": drip, "/v1/models": endless}) as server:
        started = time.monotonic()
        check = preflight.check_target(server.url(), "m", "openai-chat", {}, 0.0)
        elapsed = time.monotonic() - started
    assert not check.healthy and check.models is None
    assert elapsed < 8
    health, models = check.warnings
    assert "/health gave no usable answer: no whole answer within 1.5 s" in health
    assert "/v1/models: the answer went on past 8 MiB" in models
    assert "the served models are not known" in models
    _stopped_early(server)


def test_the_step_boundary_scrape_against_an_endless_metrics(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with HostileServer({"/metrics": endless_chunked}) as server:
        started = time.monotonic()
        got = scrape.fetch_metrics(server.url(), {}, TlsOptions())
        elapsed = time.monotonic() - started
    assert got is None and elapsed < 8
    err = capsys.readouterr().err
    assert "/metrics: the answer went on past 16 MiB" in err
    assert f"; {scrape.LEFT_OUT}" in err and err.count("warning:") == 1
    _stopped_early(server)


@pytest.fixture
def collect(tmp_path: Path) -> Iterator[Callable[..., TelemetryCollector]]:
    started: list[TelemetryCollector] = []

    def make(agents: list[str], server: str | None) -> TelemetryCollector:
        collector = TelemetryCollector(agents, server, tmp_path / "t.jsonl", interval_s=0.2)
        collector.start()
        started.append(collector)
        return collector

    yield make
    for collector in started:
        collector.stop()


def test_telemetry_scrapes_and_agent_polls_are_bounded(
    collect: Callable[..., TelemetryCollector], caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    """An endless /metrics and an agent whose /clock drips: gaps, a warning each, no traceback."""
    abuses: dict[str, Abuse] = {"/metrics": endless, "/clock": drip}
    with caplog.at_level(logging.WARNING, "loadgen.telemetry"), HostileServer(abuses) as server:
        collector = collect([server.url("a:agent-SECRET@")], server.url() + "/metrics")
        time.sleep(2.5)
        stats = collector.step_stats(0, 2**62, 10)
        collector.stop()
    gaps = {g.kind: g for g in stats.gaps}
    lines = [orjson.loads(x) for x in (tmp_path / "t.jsonl").read_bytes().splitlines()]
    scrapes = [x["error"] for x in lines if x.get("kind") == "server_metrics"]
    # each scrape is cut at the cap (a very busy machine may reach the 1 s deadline first)
    assert any("past 16 MiB (the most /metrics answers may take)" in e for e in scrapes)
    agent = gaps["agent"]
    assert agent.source == server.url() and "agent-SECRET" not in agent.error
    assert "no whole answer within 1 s (the deadline for agent requests)" in agent.error
    warned = [r.getMessage() for r in caplog.records if r.name == "loadgen.telemetry"]
    assert len(warned) == 2  # once a source, not once a poll
    assert not any("Traceback" in w or "agent-SECRET" in w for w in warned)
    _stopped_early(server)
