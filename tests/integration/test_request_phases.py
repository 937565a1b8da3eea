"""Request phases (connect, TLS handshake, first byte, headers) against a server that
delays each by a known amount, over real sockets on 127.0.0.1.

The server (``phase_server.py``) runs in a process of its own and stamps in the
client's clock (CLOCK_MONOTONIC): a phase's stamp is checked against the moment the
server did what ends it, and its duration against the delay.
The accept is delayed the only way a TCP connect waits on the server: a full accept
queue (``listen(0)`` and one connection left unaccepted), so the kernel drops the
client's SYN until its retransmission after the initial RTO (1 s on Linux).
"""

from __future__ import annotations

import asyncio
import csv
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loadgen.client import ADAPTERS, Requester, RequestTimeouts, make_transport
from loadgen.client.transport import TlsOptions, Transport
from loadgen.records import Record
from loadgen.workload.plan import RequestSpec

# durations held to tight bounds: run apart from the parallel tests (-m timing)
pytestmark = pytest.mark.timing

MS = 1_000_000
#: how far a client stamp may lie after the server's act that it stamps (the kernel's
#: receive stamp of loopback bytes: well under a millisecond; slack for a busy host)
LATE = 5 * MS

SERVER = Path(__file__).with_name("phase_server.py")


class PhaseServer:
    """``phase_server.py`` in a process of its own; its stamps once it is stopped."""

    def __init__(self, tls: tuple[Path, Path] | None = None, **settings: float) -> None:
        self.tls = tls is not None
        config = {**settings, "tls": [str(p) for p in tls] if tls else None}
        self.proc = subprocess.Popen(
            [sys.executable, str(SERVER), json.dumps(config)], stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout is not None
        what, port = self.proc.stdout.readline().split()
        assert what == "port", what
        self.port = int(port)
        self.stamps: dict[str, list[int]] = {}

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def stop(self) -> dict[str, list[int]]:
        """End the server; what it did, by kind, in order."""
        if self.proc.poll() is None:
            self.proc.terminate()
        out, _ = self.proc.communicate(timeout=10)
        for line in out.splitlines():
            what, ns = line.split()
            self.stamps.setdefault(what, []).append(int(ns))
        return self.stamps


@pytest.fixture
def servers() -> Iterator[list[PhaseServer]]:
    made: list[PhaseServer] = []
    yield made
    for s in made:
        s.stop()


def send_in_turn(url: str, n: int, kind: str = "h1", tls: TlsOptions | None = None) -> list[Record]:
    """``n`` requests one after the other through one transport (one kept-alive connection)."""

    async def main() -> list[Record]:
        transport: Transport = make_transport(kind, limit=4, connect_timeout_s=5, tls=tls)
        requester = Requester(
            transport,
            ADAPTERS["openai-completions"],
            base_url=url,
            model="m",
            extra_body={},
            headers={},
            timeouts=RequestTimeouts.from_seconds(10, 10, 20),
            run_id="t",
        )
        spec = RequestSpec(index=0, prompt="hi", prompt_tokens=1, max_tokens=1)
        out = [await requester.send(spec, 0) for _ in range(n)]
        await requester.aclose()
        return out

    return asyncio.run(main())


def assert_stamps(got: int | None, server_ns: int, early: int = MS // 5) -> None:
    """A client stamp of what the server did at ``server_ns``: not before it, just after."""
    assert got is not None
    assert server_ns - early <= got <= server_ns + LATE, (got - server_ns) / MS


def assert_lasted(start: int | None, end: int | None, delay_s: float) -> None:
    """A phase as long as the delay that made it, give or take a busy host's few ms."""
    assert start is not None and end is not None
    took_ms = (end - start) / MS
    assert delay_s * 1e3 - 0.5 <= took_ms <= delay_s * 1e3 + 15, took_ms


def test_first_byte_and_headers_lag_by_the_server_delays_on_new_and_reused(
    servers: list[PhaseServer],
) -> None:
    server = PhaseServer(first_s=0.030, head_s=0.040, token_s=0.025)
    servers.append(server)

    new, reused = send_in_turn(server.url, 2)
    stamps = server.stop()

    assert new.ok and reused.ok, (new.error_detail, reused.error_detail)
    assert (new.new_connection, reused.new_connection) == (True, False)
    assert len(stamps["accepted"]) == 1  # the second went out on the kept-alive one
    assert new.connect_start_ns is not None and new.connect_ns is not None
    assert new.start_ns <= new.connect_start_ns <= new.connect_ns <= new.sent_ns
    assert (new.connect_ns - new.connect_start_ns) < 5 * MS  # nothing delays this connect
    assert new.tls_ns is None  # plain http
    assert reused.connect_start_ns is reused.connect_ns is reused.tls_ns is None
    for i, rec in enumerate((new, reused)):
        assert_stamps(rec.first_byte_ns, stamps["status_line"][i])
        assert_stamps(rec.headers_ns, stamps["head"][i])
        assert_lasted(rec.sent_ns, rec.first_byte_ns, 0.030)
        assert_lasted(rec.first_byte_ns, rec.headers_ns, 0.040)
        assert_lasted(rec.headers_ns, rec.first_token_ns, 0.025)


def test_the_tls_handshake_lasts_the_servers_delay_and_is_not_on_a_reused_connection(
    servers: list[PhaseServer], tls_files: tuple[Path, Path]
) -> None:
    server = PhaseServer(tls=tls_files, tls_s=0.060, first_s=0.010)
    servers.append(server)

    new, reused = send_in_turn(server.url, 2, tls=TlsOptions(ca_file=str(tls_files[0])))
    stamps = server.stop()

    assert new.ok and reused.ok, (new.error_detail, reused.error_detail)
    assert (new.new_connection, reused.new_connection) == (True, False)
    assert_lasted(new.connect_ns, new.tls_ns, 0.060)
    # the server's handshake ends as it reads the client's Finished, after the client's
    assert_stamps(new.tls_ns, stamps["handshaken"][0], early=LATE)
    assert new.tls_ns is not None and new.tls_ns <= new.sent_ns
    assert reused.tls_ns is None and reused.connect_ns is None
    assert_lasted(reused.sent_ns, reused.first_byte_ns, 0.010)


def test_a_connect_waits_for_the_accept_queue_to_have_room(servers: list[PhaseServer]) -> None:
    server = PhaseServer(backlog=0, block_s=0.3)
    servers.append(server)

    (rec,) = send_in_turn(server.url, 1)
    stamps = server.stop()

    assert rec.ok, rec.error_detail
    assert rec.connect_start_ns is not None and rec.connect_ns is not None
    took_ms = (rec.connect_ns - rec.connect_start_ns) / MS
    # the dropped SYN is sent again after the kernel's initial RTO (1 s), once there is room
    assert 300 <= took_ms <= 1500, took_ms
    # the client is connected on the SYN-ACK; the server's accept returns on the last ACK
    assert_stamps(rec.connect_ns, stamps["accepted"][0], early=LATE)


@pytest.mark.parametrize("kind", ["aiohttp", "httpx"])
def test_the_other_transports_say_whether_the_connection_was_new(
    servers: list[PhaseServer], kind: str
) -> None:
    server = PhaseServer()
    servers.append(server)

    recs = send_in_turn(server.url, 3, kind)
    stamps = server.stop()

    assert all(r.ok for r in recs), [r.error_detail for r in recs]
    assert recs[0].new_connection is True
    # each request the server saw on a connection of its own said so, and no other
    assert sum(bool(r.new_connection) for r in recs) == len(stamps["accepted"])
    for rec in recs:
        assert rec.first_byte_ns is None  # neither sees the socket's reads
        if not rec.new_connection:
            assert rec.connect_start_ns is rec.connect_ns is None
        elif kind == "httpx":  # httpcore's trace stamps the connect
            assert rec.connect_start_ns is not None and rec.connect_ns is not None
            assert rec.headers_ns is not None  # httpx: sent_ns is start_ns (no write hook)
            assert rec.start_ns <= rec.connect_start_ns <= rec.connect_ns <= rec.headers_ns
        else:  # aiohttp's connector stamps nothing
            assert rec.connect_ns is None


def test_a_run_against_the_mock_opens_one_connection_a_stream_and_says_so(
    run: Any, scenario: Any
) -> None:
    sc = scenario(load={"concurrency": [2], "requests_per_step": 8, "warmup_requests": 0})
    summary, records, out = run(sc, reports=True)

    assert all(r.ok for r in records)
    opened = [r for r in records if r.new_connection]
    assert len(opened) == 2  # keep-alive: one connection a stream, each opened once
    assert all(r.new_connection is False for r in records if r not in opened)
    assert all(r.connect_ns is not None and r.tls_ns is None for r in opened)
    phases = summary.steps[0].phases
    assert phases is not None
    assert (phases.new.requests, phases.reused.requests, phases.unknown) == (2, 6, 0)
    took = sorted((r.connect_ns or 0) - (r.connect_start_ns or 0) for r in opened)
    assert phases.new.connect_ms_p50 == pytest.approx(sum(took) / 2 / MS, abs=1e-3)
    with (out / "steps.csv").open(newline="") as fh:
        cells = next(csv.DictReader(fh))
    assert (cells["conn_new_requests"], cells["conn_reused_requests"]) == ("2", "6")
