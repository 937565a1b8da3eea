"""The mock's transmit stamps: matching stamps to writes, a stamped socket kept alive
when stamps come late, and the truth file's ``token_ns`` taken from them."""

from __future__ import annotations

import asyncio
import socket
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import uvloop
from mockhttp import MockProc, completion_body, fetch_sync, read_truth

from loadgen.mock.sock import listen
from loadgen.mock.txlog import TxLog
from tests.mock.test_sock import Recorder, until

linux = pytest.mark.skipif(sys.platform != "linux", reason="transmit stamps are Linux's")


def identity(wall: int) -> int:
    return wall


def test_each_write_takes_the_stamp_of_its_last_byte() -> None:
    """Writes ending at 10, 20, 30 bytes; the kernel stamped bytes 9 and 29 (the second
    write shared a segment with the third: the later key stands for both)."""
    log = TxLog()
    log.ends += [10, 20, 30, -1]  # the last wrote nothing (the connection was closing)
    log.add(9, 1000)
    log.add(29, 3000)
    log.add(29, 3500)  # a repeat (a retransmission): the first stamp stays
    assert log.lookup([0, 1, 2, 3], identity, dead=False) == (True, [1000, 3000, 3000, None])
    log.ends.append(40)
    assert log.lookup([4], identity, dead=False) == (False, [None])  # its stamp is due
    assert log.lookup([5], identity, dead=False) == (False, [None])  # not written yet
    assert log.lookup([4, 5], identity, dead=True) == (True, [None, None])  # none will come
    log.forget(3)
    assert log.base == 3 and log.keys == [29] and log.lookup([2], identity, True)[1] == [None]


def test_tokens_of_one_write_share_its_stamp_exactly() -> None:
    """One conversion per stamp: a clock-offset reading that moves between conversions
    must not tell apart tokens that went out in one write."""
    log = TxLog()
    log.ends += [10, 10, 20]
    log.add(9, 1000)
    log.add(19, 2000)
    drift = iter(range(100))
    settled, out = log.lookup([0, 0, 0, 2], lambda wall: wall + next(drift), dead=False)
    assert settled and out[0] == out[1] == out[2] != out[3]


def test_keys_are_unwrapped_past_32_bits() -> None:
    log = TxLog()
    start = (1 << 32) - 8
    log.ends += [start + 4, start + 12]
    log.stamped = start  # as if 4 GiB had gone before
    log.add((start + 3) & 0xFFFFFFFF, 1)
    log.add((start + 11) & 0xFFFFFFFF, 2)  # 3 once wrapped
    assert log.keys == [start + 3, start + 11]
    assert log.lookup([0, 1], identity, dead=False) == (True, [1, 2])


@linux
def test_late_stamps_keep_the_connection_read_and_every_write_stamped() -> None:
    """The client reads nothing for a while, so the kernel holds most of 4 MB back and
    stamps it later: the error queue's EPOLLERR must not stop the loop (uvloop) from
    reading the connection, and every write gets its stamp, in order, after its send."""
    release = threading.Event()
    got: list[int] = []

    def client(port: int) -> None:
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
            release.wait(10)
            time.sleep(0.2)  # the server's writes wait in its socket meanwhile
            total = 0
            while total < 4 * 1024 * 1024:
                total += len(s.recv(1 << 20))
            got.append(total)
            s.sendall(b"ping")
            s.recv(1)  # until the server closes

    async def main() -> tuple[list[int], tuple[bool, list[int | None]] | None, list[bytes]]:
        made: list[Recorder] = []
        listener = await listen(lambda: made.append(Recorder()) or made[-1], "127.0.0.1", 0, 16,
                                tx=True)  # fmt: skip
        thread = threading.Thread(target=client, args=(listener.sockets[0].getsockname()[1],))
        thread.start()
        await until(lambda: bool(made) and made[0].transport is not None)
        transport = made[0].transport
        assert transport is not None
        before = []
        for _ in range(64):
            before.append(time.perf_counter_ns())
            transport.write(b"x" * 65536)
        release.set()
        await until(lambda: bool(made[0].reads), timeout_s=10)  # the ping: still read
        stamps = transport.tx_ns(list(range(64)))
        transport.close()
        await asyncio.to_thread(thread.join)
        listener.close()
        return before, stamps, [data for data, _ in made[0].reads]

    before, stamps, reads = uvloop.run(main())
    assert got == [4 * 1024 * 1024] and reads == [b"ping"]
    assert stamps is not None
    settled, tx = stamps
    assert settled and None not in tx, tx
    sent = [t for t in tx if t is not None]
    assert sent == sorted(sent)
    assert all(b <= t < b + 10_000_000_000 for b, t in zip(before, sent, strict=True))
    assert sent[-1] - before[-1] > 100_000_000  # the last left after the client's pause


@linux
def test_truth_token_stamps_are_the_kernels_and_follow_the_clock_reads(
    start_mock: Callable[..., MockProc], tmp_path: Path
) -> None:
    """Each token's stamp is the kernel's (``token_stamp``), taken when its write left:
    after the user-space read just before the write, and not long after it on an idle
    path (here: under 1 s, a generous bound for a shared machine), in order."""
    truth = tmp_path / "truth.jsonl"
    mock = start_mock("--ttft-ms", "5", "--itl-ms", "2", "--truth", str(truth))
    for i in range(3):
        fetch_sync(mock.port, "POST", "/v1/completions", completion_body(max_tokens=12),
                   headers={"x-request-id": f"r{i}"})  # fmt: skip
    mock.stop()
    rows = read_truth(truth)
    assert len(rows) == 3
    for row in rows:
        assert row["token_stamp"] == "kernel"
        kernel, user = row["token_ns"], row["token_user_ns"]
        assert len(kernel) == len(user) == row["output_tokens"] > 0
        assert all(0 <= k - u < 1_000_000_000 for k, u in zip(kernel, user, strict=True))
        assert kernel == sorted(kernel) and row["recv_ns"] < kernel[0]


@linux
def test_stopping_with_a_stamped_connection_open_is_clean(
    start_mock: Callable[..., MockProc], tmp_path: Path
) -> None:
    """The listener (and its watcher of stamped sockets) closes before the open
    connections are aborted: no traceback, exit 0, the truth line written."""
    truth = tmp_path / "truth.jsonl"
    mock = start_mock("--ttft-ms", "1", "--itl-ms", "1", "--truth", str(truth))
    body = b'{"model": "m", "prompt": "hi", "max_tokens": 3, "stream": true}'
    head = (f"POST /v1/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\n\r\n").encode()  # fmt: skip
    with socket.create_connection(("127.0.0.1", mock.port)) as s:
        s.sendall(head + body)
        seen = b""
        while b"0\r\n\r\n" not in seen:
            seen += s.recv(65536)
        assert mock.stop() == 0  # the keep-alive connection still open
    assert "Traceback" not in mock.log()
    (row,) = read_truth(truth)
    assert row["token_stamp"] == "kernel" and len(row["token_ns"]) == 3
