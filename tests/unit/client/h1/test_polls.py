"""The loop's polls, stamped: the earliest the bytes a pass reads can have come.

Another process writes to one end of a socket pair while the loop waits on the
other (a process, not a thread: a thread may hold the GIL as the poll returns):
the floor the poll notes is never after the write (it bounds every read's
bytes), and on an idle loop it is within a couple of milliseconds of it (a
read's slack is then small). A loop held busy while the bytes come gets a floor
from before the hold. Real sockets, real clocks: timing tests.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import threading
import time

import pytest
import uvloop

from loadgen.client.h1.polls import Polls

pytestmark = pytest.mark.timing

MS = 1_000_000
#: writes one byte to the socket pair's end it is handed, 30 ms in; prints the clock
#: just before and after (CLOCK_MONOTONIC: the same clock in every process)
WRITER = (
    "import socket, sys, time; s = socket.socket(fileno=int(sys.argv[1])); time.sleep(0.03);"
    "a = time.perf_counter_ns(); s.send(b'x'); b = time.perf_counter_ns(); print(a, b)"
)


def _read_once(loop: asyncio.AbstractEventLoop, hold_s: float = 0.0) -> tuple[int, int, int]:
    """(before, after) another process's write 30 ms in, and the floor the poll noted for
    the read of it; with ``hold_s``, the loop is busy that long from 10 ms in."""
    a, b = socket.socketpair()
    polls = Polls.of(loop)
    got: list[int] = []
    done = loop.create_future()

    def on_readable() -> None:
        a.recv(64)
        got.append(polls.floor_ns)
        loop.remove_reader(a.fileno())
        done.set_result(None)

    async def main() -> None:
        loop.add_reader(a.fileno(), on_readable)
        if hold_s:  # busy from the next pass, while the child writes
            loop.call_soon(time.sleep, hold_s)
        await asyncio.wait_for(done, 10)

    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(b.fileno())],
        pass_fds=[b.fileno()],
        stdout=subprocess.PIPE,
    )
    try:
        loop.run_until_complete(main())
    finally:
        out, _ = writer.communicate(timeout=10)
        a.close()
        b.close()
    before_after = [int(x) for x in out.split()]
    return before_after[0], before_after[1], got[0]


def test_an_idle_loops_floor_is_just_before_the_bytes_came() -> None:
    loop = asyncio.new_event_loop()
    try:
        floors = [_read_once(loop) for _ in range(5)]
    finally:
        loop.close()
    for _, after, floor in floors:
        assert floor <= after  # never after the bytes came
    # tight on an idle loop (the thread's waits for a core are measured, not guessed)
    assert min(before - floor for before, _, floor in floors) < 2 * MS


def test_a_busy_loops_floor_is_from_before_it_was_held() -> None:
    loop = asyncio.new_event_loop()
    try:
        before, _, floor = _read_once(loop, hold_s=0.3)  # the child writes during the hold
    finally:
        loop.close()
    assert floor <= before  # the bytes came during the hold: the floor is older


def test_with_another_thread_running_the_floor_stays_before_the_bytes() -> None:
    """A thread running Python meanwhile may hold the GIL as the poll returns, and the
    wait for it looks like sleep: the poll then takes the previous pass's start."""
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            sum(range(1000))

    loop = asyncio.new_event_loop()
    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        floors = [_read_once(loop) for _ in range(3)]
    finally:
        stop.set()
        spinner.join()
        loop.close()
    for _, after, floor in floors:
        assert floor <= after


def test_a_loop_without_a_selector_to_wrap_has_no_floor() -> None:
    loop = uvloop.new_event_loop()
    try:
        assert Polls.of(loop).floor_ns == 0
        _, _, floor = _read_once(loop)
        assert floor == 0
    finally:
        loop.close()
