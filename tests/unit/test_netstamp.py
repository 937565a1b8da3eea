"""Kernel receive stamps: the socket option, the control message, the wall-to-monotonic offset.

The offset is checked against clocks the test drives; the option and the
message against a real socket pair, where the kernel gives stamps (Linux).
"""

from __future__ import annotations

import socket
import struct
import sys
import threading
import time

import pytest

from loadgen.netstamp import (
    ANC_SIZE,
    MAX_AGE_NS,
    SO_TIMESTAMPNS,
    TOLERANCE_NS,
    WallOffset,
    enable,
    kernel_ns,
)

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux stamps only")
S_NS = 1_000_000_000


class Clocks:
    """A monotonic and a wall clock that read what the test says, in order."""

    def __init__(self, mono: list[int], wall: list[int]) -> None:
        self.mono_reads, self.wall_reads = list(mono), list(wall)

    def mono(self) -> int:
        return self.mono_reads.pop(0)

    def wall(self) -> int:
        return self.wall_reads.pop(0)


def test_a_control_message_gives_its_stamp() -> None:
    payload = struct.pack("@qq", 1_700_000_000, 123_456_789)
    assert kernel_ns([(socket.SOL_SOCKET, 35, payload)]) == 1_700_000_000_123_456_789
    assert kernel_ns([]) is None  # no stamp: the caller stamps the read itself
    assert kernel_ns([(socket.SOL_SOCKET, 35, payload[:8])]) is None  # not a timespec


@linux
def test_an_enabled_socket_gets_the_kernels_stamp_of_each_read() -> None:
    a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    with a, b:
        b.bind(("127.0.0.1", 0))
        assert enable(b)
        before = time.time_ns()
        a.sendto(b"x", b.getsockname())
        data, anc, _flags, _addr = b.recvmsg(16, ANC_SIZE)
        after = time.time_ns()
        stamp = kernel_ns(anc)
    assert data == b"x" and stamp is not None
    assert before - 1_000_000 <= stamp <= after  # CLOCK_REALTIME, when the byte came


def test_where_no_stamps_can_be_had_enable_says_so() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        assert enable(sock) is (SO_TIMESTAMPNS is not None)


def test_a_closed_socket_is_not_enabled() -> None:
    a, b = socket.socketpair()
    a.close()
    b.close()
    assert not enable(a)


def test_the_offset_is_that_of_the_tightest_bracket() -> None:
    # five brackets (monotonic before and after a wall read): gaps 10, 6, 2, 6, 9
    mono = [100, 110, 200, 206, 300, 302, 400, 406, 500, 509]
    clocks = Clocks(mono, [5_000, 6_000, 7_001, 8_000, 9_000])
    offset = WallOffset(clocks.mono, clocks.wall)
    assert offset.value == 7_001 - 301  # the wall read of the 2 ns bracket, less its middle


class Host:
    """The two clocks of a host whose wall clock is ``step`` ahead of its monotonic one."""

    def __init__(self, now: int, step: int) -> None:
        self.now, self.step = now, step

    def mono(self) -> int:
        return self.now

    def wall(self) -> int:
        return self.now + self.step


def test_a_stamp_becomes_monotonic_time() -> None:
    host = Host(now=3 * S_NS, step=5 * S_NS)
    offset = WallOffset(host.mono, host.wall)
    assert offset.value == 5 * S_NS
    two_ms_ago = host.wall() - 2_000_000
    assert offset.to_monotonic(two_ms_ago, host.now) == host.now - 2_000_000


def test_a_stamp_a_step_makes_implausible_is_now() -> None:
    host = Host(now=20 * S_NS, step=5 * S_NS)
    offset = WallOffset(host.mono, host.wall)
    now, wall = host.now, host.wall()
    assert offset.to_monotonic(wall + 1, now) == now  # in the future
    assert offset.to_monotonic(wall - MAX_AGE_NS - 1, now) == now  # too far back
    assert offset.to_monotonic(wall - MAX_AGE_NS, now) == now - MAX_AGE_NS  # just not


def test_a_wall_clock_step_is_measured_again() -> None:
    host = Host(now=S_NS, step=5 * S_NS)
    offset = WallOffset(host.mono, host.wall)
    host.step += TOLERANCE_NS  # slewing, within the tolerance: the kept offset stays
    ms_ago = host.wall() - 1_000_000
    assert offset.to_monotonic(ms_ago, host.now) == host.now - 1_000_000 + TOLERANCE_NS
    assert offset.value == 5 * S_NS
    host.step += 60 * S_NS  # a step of a minute (settimeofday): measured again
    assert offset.to_monotonic(host.wall() - 500, host.now) == host.now - 500
    assert offset.value == host.step


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="SO_TIMESTAMPING is Linux's")
def test_a_send_is_stamped_by_the_kernel_at_its_last_byte() -> None:
    """tx_arm, one 3 MB send on loopback, tx_stamps: the stamp of its last byte (key n - 1)
    comes, in CLOCK_REALTIME between the send's start and now; tx_disarm leaves none."""
    from loadgen.netstamp import TX_SENT, tx_arm, tx_disarm, tx_stamps

    server = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(server.getsockname())
    peer, _ = server.accept()
    try:
        assert tx_arm(client)
        n = 3_000_000
        before = time.time_ns()
        sender = threading.Thread(target=client.sendall, args=(b"x" * n,))
        sender.start()
        got = 0
        while got < n:
            got += len(peer.recv(1 << 20))
        sender.join()
        stamps: list[tuple[int, int, int]] = []
        deadline = time.monotonic() + 5
        while not any(k == n - 1 for _, k, _ in stamps) and time.monotonic() < deadline:
            stamps += tx_stamps(client)
        last = [(kind, wall) for kind, key, wall in stamps if key == n - 1]
        assert last and last[0][0] == TX_SENT, stamps
        assert before <= last[0][1] <= time.time_ns()
        tx_disarm(client)
        client.sendall(b"more")
        assert peer.recv(16) == b"more" and tx_stamps(client) == []
    finally:
        for s in (client, peer, server):
            s.close()
