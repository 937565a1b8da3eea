"""The mock's simulated network path (--network-delay-ms D): the option, the delay line,
the truth's stamps, and one delayed stream over 127.0.0.1."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from typing import Any

import pytest
from mockhttp import MockProc, chat_body, fetch_sync, read_truth

from loadgen.mock.config import settings_from_argv
from loadgen.mock.netdelay import DelayedConn, DelayLine
from loadgen.mock.truth import at_socket

# durations held to tight bounds: run apart from the parallel tests (-m timing)
pytestmark = pytest.mark.timing

MS = 1_000_000


def test_the_option_parses_and_bad_values_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert settings_from_argv([]).network_delay_ms == 0.0  # the default: no delay
    assert settings_from_argv(["--network-delay-ms", "12.5"]).network_delay_ms == 12.5
    for bad in ("-1", "abc", "nan", "inf", "60001"):
        with pytest.raises(SystemExit) as exc:
            settings_from_argv(["--network-delay-ms", bad])
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert "--network-delay-ms" in err
        assert f"expected milliseconds in 0..60000, got {bad!r}" in err


class FakeTransport:
    """Records when each action reached it."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, str, bytes]] = []

    def write(self, data: bytes) -> None:
        self.seen.append((time.perf_counter_ns(), "write", data))

    def close(self) -> None:
        self.seen.append((time.perf_counter_ns(), "close", b""))

    def abort(self) -> None:
        self.seen.append((time.perf_counter_ns(), "abort", b""))

    def is_closing(self) -> bool:
        return False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default


class FakeConn:
    def __init__(self) -> None:
        self.transport: Any = None
        self.got: list[tuple[int, bytes, int]] = []
        self.lost = 0

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def data_received_at(self, data: bytes, now: int) -> None:
        self.got.append((time.perf_counter_ns(), data, now))

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = time.perf_counter_ns()


def run_line(delay_ms: float, body: Callable[[DelayLine, FakeConn, FakeTransport], Any]) -> None:
    async def main() -> None:
        line = DelayLine(int(delay_ms * MS), asyncio.get_running_loop())
        conn, inner = FakeConn(), FakeTransport()
        shim = DelayedConn(conn, line)
        shim.connection_made(inner)
        try:
            await body(line, conn, inner)
        finally:
            line.close()

    asyncio.run(main())


def test_writes_leave_one_delay_late_in_order_with_their_gaps_kept() -> None:
    async def body(line: DelayLine, conn: FakeConn, inner: FakeTransport) -> None:
        asked = []
        for k in range(4):  # 0, 10, 20, 30 ms apart, as a pacer would write them
            asked.append(time.perf_counter_ns())
            conn.transport.write(b"%d" % k)
            await asyncio.sleep(0.010)
        conn.transport.close()
        conn.transport.write(b"after close")  # dropped, as a closing transport's
        await asyncio.sleep(0.040)
        assert [kind for _, kind, _ in inner.seen] == ["write"] * 4 + ["close"]
        assert [data for _, _, data in inner.seen[:4]] == [b"0", b"1", b"2", b"3"]
        for (at, _, _), sent in zip(inner.seen, asked, strict=False):
            assert at - sent >= 25 * MS  # never early
        # How late, and the gaps kept, are timing: checked over real sockets on
        # 127.0.0.1 (tests/integration/test_network_delay.py), not on a fake transport.
        assert conn.transport.is_closing()

    run_line(25.0, body)


def test_what_arrives_reaches_the_server_one_delay_after_its_stamp() -> None:
    async def body(line: DelayLine, conn: FakeConn, inner: FakeTransport) -> None:
        shim = DelayedConn(conn, line)
        stamp = time.perf_counter_ns()
        shim.data_received_at(b"GET", stamp)
        shim.data_received_at(b" /", stamp + 1)
        shim.connection_lost(None)  # after the data that came before it
        await asyncio.sleep(0.005)
        if time.perf_counter_ns() < stamp + 20 * MS:  # a busy machine may sleep longer
            assert conn.got == [] and conn.lost == 0  # still on its way
        await asyncio.sleep(0.040)
        assert [data for _, data, _ in conn.got] == [b"GET", b" /"]
        assert [now for _, _, now in conn.got] == [stamp + 20 * MS, stamp + 1 + 20 * MS]
        assert conn.got[0][0] >= stamp + 20 * MS
        assert conn.lost >= conn.got[1][0]

    run_line(20.0, body)


def test_the_truth_line_moves_to_the_socket() -> None:
    server = {"recv_ns": 100, "token_ns": [150, 160], "end_ns": 170, "status": 200}
    assert at_socket(server, 30) == {
        "recv_ns": 70,
        "token_ns": [180, 190],
        "token_user_ns": [180, 190],
        "end_ns": 200,
        "status": 200,
        "network_delay_ns": 30,
    }
    assert server["recv_ns"] == 100  # the server's own record is left alone
    # the kernel's transmit stamp of a write is the socket's already: only user stamps move
    stamped = {**server, "token_ns": [215, 160], "token_user_ns": [150, 160]}
    moved = at_socket(stamped, 30)
    assert moved["token_ns"] == [215, 190] and moved["token_user_ns"] == [180, 190]


def histogram_mean(metrics: str, name: str) -> float:
    total = re.search(rf"^{name}_sum{{[^}}]*}} (\S+)$", metrics, re.M)
    count = re.search(rf"^{name}_count{{[^}}]*}} (\S+)$", metrics, re.M)
    assert total and count
    return float(total.group(1)) / float(count.group(1))


def test_a_delayed_stream_over_loopback(start_mock: Callable[..., MockProc], tmp_path: Any) -> None:
    """TTFT 20 ms, ITL 10 ms, D 30 ms: the client's first token about 80 ms after its
    send, the server's TTFT histogram 20 ms; the truth's stamps the socket's."""
    truth = tmp_path / "truth.jsonl"
    args = ("--ttft-ms", "20", "--itl-ms", "10", "--network-delay-ms", "30")
    mock = start_mock(*args, "--truth", str(truth))
    reply = fetch_sync(
        mock.port, "POST", "/v1/chat/completions", chat_body(max_tokens=4),
        headers={"x-request-id": "r1"},
    )  # fmt: skip
    assert reply.status == 200 and reply.complete
    assert len(reply.json_events()) == 6  # the role's event, 4 tokens, usage
    first_read = (reply.reads[0][0] - reply.sent_ns) / MS
    assert first_read >= 60.0  # the head waits for the request's way in and its way out
    metrics = fetch_sync(mock.port, "GET", "/metrics").body.decode()
    ttft = histogram_mean(metrics, "vllm:time_to_first_token_seconds") * 1000
    e2e = histogram_mean(metrics, "vllm:e2e_request_latency_seconds") * 1000
    assert 20.0 <= ttft < 30.0  # the server's own: the path left out
    assert 50.0 <= e2e < 60.0  # 20 + 3 * 10 ms
    mock.stop()
    (row,) = read_truth(truth)
    assert row["network_delay_ns"] == 30 * MS
    assert row["token_ns"][0] - row["recv_ns"] >= (20 + 2 * 30) * MS  # the socket's TTFT
    assert row["token_ns"][0] - reply.sent_ns >= 80 * MS
