"""One h1 connection: its state moves, its parsing, its reuse decisions.

A :class:`Connection` is fed bytes as reads would bring them (:meth:`Connection.feed`);
its socket is one end of a socket pair that nothing writes to.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable, Iterator

import pytest

from loadgen.client.h1 import connection as h1_connection
from loadgen.client.h1.body import refused
from loadgen.client.h1.connection import (
    IDLE_MARGIN_MAX_NS,
    MAX_HEADER_BYTES,
    TRANSITIONS,
    Connection,
    Event,
    Exchange,
    State,
    advance,
    keep_alive,
)
from loadgen.client.h1.polls import Polls
from loadgen.client.transport import ReadLag, TransportError

S, E = State, Event
OK = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
S_NS = 1_000_000_000
#: a connection that sent a request and read the reads given
Answered = Callable[..., tuple[Connection, Exchange]]


class _Pool:
    """The owner a connection asks (``H1Transport`` in a run): it pools nothing."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.read_lag = ReadLag()
        self.polls = Polls()  # not installed: no floor of its own (0)

    def release(self, conn: Connection) -> None:
        pass

    def forget(self, conn: Connection) -> None:
        pass


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


@pytest.fixture
def connect(loop: asyncio.AbstractEventLoop) -> Iterator[Callable[[], Connection]]:
    """New connections on socket pairs, closed (with the loop's readers) at the end."""
    made: list[tuple[Connection, socket.socket, socket.socket]] = []

    def new() -> Connection:
        ours, theirs = socket.socketpair()
        ours.setblocking(False)
        conn = Connection(ours, ("localhost", 80, False), _Pool(loop))
        made.append((conn, ours, theirs))
        return conn

    yield new
    for conn, ours, theirs in made:
        if conn.reading:
            loop.remove_reader(conn.fd)
        ours.close()
        theirs.close()


@pytest.fixture
def answered(connect: Callable[[], Connection]) -> Answered:
    def answer(*reads: bytes) -> tuple[Connection, Exchange]:
        """A connection that sent a request and read ``reads`` (stamped 1, 2, ...); each
        read must parse."""
        core = connect()
        ex = core.start()
        for stamp, data in enumerate(reads, 1):
            assert core.feed(data, stamp) is None
        return core, ex

    return answer


# -- the table


@pytest.mark.parametrize(
    ("state", "event", "then"),
    [
        (S.NEW, E.SEND, S.HEAD),
        (S.IDLE, E.SEND, S.HEAD),
        (S.HEAD, E.INTERIM, S.INTERIM),
        (S.INTERIM, E.END, S.HEAD),
        (S.HEAD, E.HEAD, S.BODY),
        (S.BODY, E.END, S.DONE),
        (S.BODY, E.LET_GO, S.DRAINING),
        (S.DRAINING, E.END, S.DONE),
        (S.DONE, E.POOL, S.IDLE),
        (S.BODY, E.CLOSE, S.CLOSED_IN_BODY),
        *((s, E.CLOSE, S.CLOSED) for s in (S.NEW, S.HEAD, S.INTERIM, S.DONE, S.DRAINING, S.IDLE)),
    ],
)
def test_each_move_of_the_table(state: State, event: Event, then: State) -> None:
    assert advance(state, event) is then


def test_the_table_has_those_moves_only() -> None:
    assert len(TRANSITIONS) == 9 + 1 + 6
    for state in (S.CLOSED, S.CLOSED_IN_BODY):  # the end: nothing moves a closed connection
        assert not [event for (s, event) in TRANSITIONS if s is state]
    with pytest.raises(RuntimeError, match="no SEND in BODY"):  # one request at a time
        advance(S.BODY, E.SEND)
    with pytest.raises(RuntimeError, match="no POOL in BODY"):  # only a complete answer pools
        advance(S.BODY, E.POOL)


# -- parsing


def test_a_framed_answer_in_one_read_is_complete_and_kept_alive(
    answered: Answered,
) -> None:
    core, ex = answered(OK)
    assert core.state is S.DONE
    assert (ex.status, ex.pieces, ex.framed, ex.keep_alive) == (200, [(1, b"hello", 0)], True, True)
    assert ex.received == len(OK) and core.head_in() and not refused(ex)
    assert core.after_caller() is S.IDLE


def test_each_read_of_the_body_is_one_piece_with_its_stamp(
    answered: Answered,
) -> None:
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    core, ex = answered(head, b"3\r\nabc\r\n", b"2\r\nde\r\n1\r\nf\r\n", b"0\r\n\r\n")
    # one piece a read: the read's stamp, and how much earlier its first bytes may have
    # come (after the previous read's stamp)
    assert ex.pieces == [(2, b"abc", 1), (3, b"def", 1)]
    assert core.state is S.DONE and ex.framed


def test_a_read_may_be_early_only_back_to_the_send_or_the_previous_read(
    connect: Callable[[], Connection],
) -> None:
    core = connect()
    ex = core.start()
    ex.sent = 100
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    assert core.feed(head + b"1\r\na\r\n", 130) is None  # back to the send: 30
    assert core.feed(b"1\r\nb\r\n", 150) is None  # back to the previous read: 20
    assert core.feed(b"1\r\nc\r\n", 150) is None  # the same moment: none
    assert ex.pieces == [(130, b"a", 30), (150, b"b", 20), (150, b"c", 0)]


def test_interim_answers_are_skipped(answered: Answered) -> None:
    core, ex = answered(b"HTTP/1.1 100 Continue\r\n\r\n")
    assert core.state is S.HEAD and ex.status == 0 and not core.head_in()
    early = b"HTTP/1.1 103 Early Hints\r\nContent-Length: 0\r\nLink: </a.css>\r\n\r\n"
    assert core.feed(early + b"HTTP/1.1 201 Created\r\nConnection: close\r\n\r\nab", 2) is None
    assert core.state is S.BODY and ex.status == 201
    assert not ex.framed  # the 103's Content-Length was the 103's
    assert ex.pieces == [(2, b"ab", 1)]


def test_bytes_after_the_complete_answer_spoil_only_the_connection(
    answered: Answered,
) -> None:
    core, ex = answered()
    error = core.feed(OK + b"HTTP/1.1 200 OK\r\n", 1)
    assert error is not None and error.kind == "protocol_error"
    core.end(error, by_server=True)
    assert core.state is S.CLOSED and ex.error is None and ex.pieces == [(1, b"hello", 0)]


def test_a_header_block_that_does_not_end_is_too_large(answered: Answered) -> None:
    core, ex = answered(b"HTTP/1.1 200 OK\r\n")
    line = b"X-Filler: " + b"a" * 1000 + b"\r\n"
    errors = [core.feed(line, 2) for _ in range(MAX_HEADER_BYTES // len(line) + 1)]
    assert errors[:-1] == [None] * (len(errors) - 1)
    assert errors[-1] is not None and errors[-1].kind == "headers_too_large"
    assert ex.received > MAX_HEADER_BYTES


def test_many_headers_in_one_read_are_too_large(connect: Callable[[], Connection]) -> None:
    core = connect()
    core.start()
    block = b"HTTP/1.1 200 OK\r\n" + b"X-A: b\r\n" * (MAX_HEADER_BYTES // 8 + 1) + b"\r\n"
    error = core.feed(block, 1)
    assert error is not None and error.kind == "headers_too_large"


def test_a_caller_far_behind_pauses_the_connection_and_draining_it_resumes(
    answered: Answered, loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(h1_connection, "PAUSE_BYTES", 4)
    core, ex = answered(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nabc")
    assert core.reading
    assert core.feed(b"def", 2) is None
    assert not core.reading and ex.buffered == 6

    async def take() -> list[tuple[int, bytes, int]]:
        return [piece async for piece in ex.chunks()]

    assert loop.run_until_complete(take()) == [(1, b"abc", 0), (2, b"def", 1)]
    assert core.reading and ex.buffered == 0


# -- the close


def test_a_body_the_servers_close_ends_is_complete(answered: Answered) -> None:
    core, ex = answered(b"HTTP/1.1 200 OK\r\n\r\nall of it")
    assert core.state is S.BODY and not ex.framed
    core.end(None, by_server=True)
    assert core.state is S.CLOSED and ex.error is None and core.head_in()


@pytest.mark.parametrize(
    ("reads", "by_server", "state", "message"),
    [
        ((), True, S.CLOSED, "the server closed the connection before the response headers"),
        ((b"HTTP/1.1 200",), True, S.CLOSED, "the server closed the connection before the"),
        ((OK[:-2],), True, S.CLOSED_IN_BODY, "the server closed the connection mid-body"),
        ((b"HTTP/1.1 200 OK\r\n\r\nab",), False, S.CLOSED_IN_BODY, "loadgen closed the conn"),
    ],
)
def test_an_unfinished_answer_fails_when_the_connection_goes(
    answered: Answered,
    reads: tuple[bytes, ...],
    by_server: bool,
    state: State,
    message: str,
) -> None:
    core, ex = answered(*reads)
    core.end(None, by_server)
    assert core.state is state and core.closed
    assert ex.error is not None and ex.error.kind == "disconnected"
    assert message in ex.error.detail
    assert core.head_in() is (state is S.CLOSED_IN_BODY)  # the head came before the close
    assert core.after_caller() is S.CLOSED


def test_the_error_a_connection_broke_with_is_the_answers(
    answered: Answered,
) -> None:
    core, ex = answered(b"HTTP/1.1 200 OK\r\n")
    broke = TransportError("disconnected", "reset")
    core.end(broke, by_server=True)
    assert ex.error is broke and core.state is S.CLOSED


def test_the_caller_sees_the_pieces_then_the_error_of_a_body_cut_short(
    answered: Answered,
    loop: asyncio.AbstractEventLoop,
) -> None:
    core, ex = answered(OK[:-2])
    core.end(None, by_server=True)  # before the caller waited for the head: it still gets it

    async def read() -> list[bytes]:
        await ex.wait_headers()
        out = []
        with pytest.raises(TransportError, match="mid-body"):
            async for _, data, _ in ex.chunks():
                out.append(data)
        return out

    assert loop.run_until_complete(read()) == [b"hel"]


def test_a_close_before_the_head_fails_the_wait_for_it(
    answered: Answered, loop: asyncio.AbstractEventLoop
) -> None:
    core, ex = answered()

    async def wait() -> None:
        waiting = asyncio.ensure_future(ex.wait_headers())
        await asyncio.sleep(0)
        core.end(None, by_server=True)
        ex.wake()
        await waiting

    with pytest.raises(TransportError, match="before the response headers"):
        loop.run_until_complete(wait())


# -- reuse


@pytest.mark.parametrize(
    ("header", "then"),
    [
        (b"", S.IDLE),
        (b"Connection: close\r\n", S.CLOSED),
        (b"Keep-Alive: timeout=5, max=0\r\n", S.CLOSED),  # no further request taken
        (b"Keep-Alive: timeout=5, max=1\r\n", S.IDLE),
    ],
)
def test_a_complete_answer_decides_reuse(answered: Answered, header: bytes, then: State) -> None:
    answer = b"HTTP/1.1 200 OK\r\n" + header + b"Content-Length: 0\r\n\r\n"
    core, _ = answered(answer)
    assert core.state is S.DONE
    assert core.after_caller() is then


def test_keep_alive_max_counts_down_with_each_request(answered: Answered) -> None:
    core, _ = answered(b"HTTP/1.1 200 OK\r\nKeep-Alive: max=2\r\nContent-Length: 0\r\n\r\n")
    assert core.keep_left == 2 and not core.spent()
    for _ in range(2):
        core.pool(0)
        core.start()
        assert core.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 1) is None
    assert core.keep_left == 0 and core.spent()
    assert core.after_caller() is S.CLOSED


@pytest.mark.parametrize("timeout_s", [1, 2, 5])
def test_a_connection_idle_near_the_announced_timeout_expires(
    answered: Answered, timeout_s: int
) -> None:
    answer = f"HTTP/1.1 200 OK\r\nKeep-Alive: timeout={timeout_s}\r\nContent-Length: 0\r\n\r\n"
    core, _ = answered(answer.encode())
    core.pool(now=10 * S_NS)
    assert core.state is S.IDLE and core.ex is None and core.idle_since == 10 * S_NS
    margin = min(timeout_s * S_NS // 4, IDLE_MARGIN_MAX_NS)
    limit = 10 * S_NS + timeout_s * S_NS - margin
    assert not core.expired(limit - 1)
    assert core.expired(limit)


def test_without_a_timeout_a_connection_never_expires(answered: Answered) -> None:
    core, _ = answered(OK)
    core.pool(0)
    assert not core.expired(10**15)


def test_an_unread_framed_body_is_drained_an_unframed_one_closed(
    answered: Answered,
) -> None:
    framed, _ = answered(OK[:-2])
    assert framed.after_caller() is S.DRAINING
    unframed, _ = answered(b"HTTP/1.1 200 OK\r\n\r\nab")
    assert unframed.after_caller() is S.CLOSED  # it ends only at the close


def test_a_drained_body_is_dropped_and_its_end_completes_the_answer(
    answered: Answered,
) -> None:
    core, ex = answered(OK[:-2])
    core.pause()  # the caller was behind
    core.drain()
    assert core.state is S.DRAINING and ex.pieces == [] and core.reading
    assert core.feed(b"lo", 2) is None
    assert core.state is S.DONE and ex.pieces == []
    assert core.after_caller() is S.IDLE


def test_a_request_cut_short_by_a_refusal_is_never_reused(
    answered: Answered,
) -> None:
    core, ex = answered(b"HTTP/1.1 413 Too Large\r\nContent-Length: 0\r\n\r\n")
    assert refused(ex) and core.state is S.DONE and ex.keep_alive
    ex.cut = True
    assert core.after_caller() is S.CLOSED


@pytest.mark.parametrize("trailing", [False, True])
def test_bytes_past_the_answers_last_event_end_the_connections_reuse(
    answered: Answered, trailing: bool
) -> None:
    """Issue #20: ``[DONE]``, more data, then a second answer: what came after the last
    event could pass for the next request's answer. Bytes after it in the read the caller
    took (``trailing``), or body bytes that come while the rest is drained, close it."""
    core, ex = answered(OK[:-2])
    ex.pieces.clear()  # the caller took them
    ex.end_of_answer(trailing)
    if trailing:
        assert core.after_caller() is S.CLOSED
        return
    assert core.after_caller() is S.DRAINING
    core.drain()
    assert core.feed(b"lo", 2) is None  # body bytes past the end
    assert core.state is S.DONE and ex.stray
    assert core.after_caller() is S.CLOSED


def test_a_clean_end_of_answer_keeps_the_connection(answered: Answered) -> None:
    core, ex = answered(OK)
    ex.pieces.clear()
    ex.end_of_answer(False)
    assert core.after_caller() is S.IDLE


def test_pieces_left_unread_past_the_end_of_answer_close_it(
    answered: Answered,
) -> None:
    core, ex = answered(OK)
    ex.end_of_answer(False)  # the caller stopped before a piece it had not read
    assert ex.pieces and core.after_caller() is S.CLOSED


def test_an_answer_under_300_does_not_refuse(answered: Answered) -> None:
    core, ex = answered(b"HTTP/1.1 100 Continue\r\n\r\n")
    assert not refused(ex)  # no answer yet
    assert core.feed(b"HTTP/1.1 204 No Content\r\n\r\n", 2) is None
    assert not refused(ex) and core.state is S.DONE


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        (b"timeout=5, max=100", (5, 100)),
        (b"max=0", (None, 0)),
        (b'TIMEOUT = "7"', (7, None)),
        (b"timeout=-1, max=1e9, other=3", (None, None)),
        (b"timeout=99999999999999999999", (None, None)),
        (b"", (None, None)),
    ],
)
def test_keep_alive_header_values_are_read_with_care(
    value: bytes, parsed: tuple[int | None, int | None]
) -> None:
    assert keep_alive(value) == parsed
