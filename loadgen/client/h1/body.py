"""A request's bytes on their way out on h1, and when their last byte left.

Owns :func:`send`: the request goes out through its connection's one write
path; if the socket takes only part of it, the rest waits, unless a refusal
(:func:`refused`: a 413 for a body too large, say) comes first, and then the
rest is dropped and the connection is never reused. ``sent`` is stamped as
the first byte is handed off, and again when the last byte left: for a
request the socket took only in part, the moment the rest was out; for a
body of ``LARGE_BODY`` or more, the kernel's transmit stamp of its last byte
sent alone (:func:`send_last`, ``SO_TIMESTAMPING`` through
``loadgen.netstamp``), else the moment the socket's send queue is empty
(:func:`drained`, Linux ``SIOCOUTQNSD``). Once a request, never per read.
"""

from __future__ import annotations

import asyncio
import socket
import sys

from loadgen.client.h1.connection import Connection, Exchange
from loadgen.client.transport import TransportError, describe
from loadgen.clock import from_kernel_ns, now_ns
from loadgen.netstamp import TX_SENT, tx_arm, tx_disarm, tx_stamps

__all__ = [
    "LARGE_BODY",
    "TX_KIND",
    "TX_WAIT_NS",
    "drained",
    "refused",
    "send",
    "send_last",
    "unsent",
]


#: a body this large may still sit in the kernel's send queue once written: its ``sent``
#: is the kernel's stamp of its last byte's transmission (:func:`send_last`; else it waits
#: for the queue to drain, Linux SIOCOUTQNSD), so TTFT counts from the last byte's
#: leaving, not from its hand-off (an 8 MB body on loopback: up to 7 ms apart)
LARGE_BODY = 1024 * 1024
_SIOCOUTQNSD = 0x894B  # bytes not yet sent (SIOCOUTQ also counts sent, unacked ones)


async def send(conn: Connection, ex: Exchange, payload: bytes) -> None:
    """Send the request ``payload`` on ``conn``, whose answer is ``ex``; stamp ``ex.sent``.

    Raises ``TransportError`` (``disconnected``) if the socket refuses, or the
    connection closes while the rest waits with no answer.
    """
    large = len(payload) >= LARGE_BODY
    # a large plain body: its last byte goes alone, stamped by the kernel (send_last)
    held = large and conn.tls is None and conn.writer is None and sys.platform == "linux"
    try:
        ex.sent = now_ns()
        pending = conn.write(conn.encrypt(payload[:-1] if held else payload))
    except OSError as exc:
        raise TransportError("disconnected", describe(exc)) from None
    if pending is not None:
        await _send_rest(conn, ex, pending)
    stamped = False
    if held and not ex.cut and not conn.closed:
        if conn.head_in():  # an early answer: it gets the whole body, no stamp
            if (pending := _write(conn, payload[-1:])) is not None:
                await _send_rest(conn, ex, pending)
        else:
            stamped = await send_last(conn, ex, payload[-1:])
    if large and not stamped and not conn.closed and not conn.head_in():
        await drained(conn, ex)


def _write(conn: Connection, data: bytes) -> asyncio.Task[None] | None:
    try:
        return conn.write(data)
    except OSError as exc:
        raise TransportError("disconnected", describe(exc)) from None


async def _send_rest(conn: Connection, ex: Exchange, pending: asyncio.Task[None]) -> None:
    """The socket took only part of the request: wait until the rest is out, or
    until a refusal comes first (a 413 for a body too large, say); then the rest
    is dropped and the connection is never reused. An early 1xx-2xx answer (a
    server streaming headers before it has read the body) gets the whole body."""
    while not pending.done() and not refused(ex) and ex.error is None:
        waiter = ex.waiter = conn.loop.create_future()
        try:  # neither wait's cancellation (a close) is ours
            await asyncio.wait({pending, waiter}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            ex.waiter = None
    if not pending.done():  # refused before it had the whole request
        conn.drop_unsent()
        pending.cancel()
        await asyncio.wait({pending})  # let the loop unregister it before any close
    elif not conn.head_in():
        if conn.closed:
            raise ex.error or TransportError("disconnected", "closed while sending")
        ex.sent = now_ns()  # the last byte left now, with no answer yet


def refused(ex: Exchange) -> bool:
    """The answer is in and says no: the rest of the request is not wanted."""
    return ex.status >= 300  # set only once the head is in


def unsent(sock: socket.socket) -> int:
    """Bytes of the socket's send queue not yet taken by the peer (0 where unknown)."""
    import fcntl
    import struct

    try:
        out = fcntl.ioctl(sock.fileno(), _SIOCOUTQNSD, b"\0\0\0\0")
    except OSError:
        return 0
    return int(struct.unpack("i", out)[0])


async def drained(conn: Connection, ex: Exchange) -> None:
    """Yield to the loop until the send queue is empty (or an answer or a close came);
    then the last byte has left: stamp ``sent``. No clock sleep: one loop turn a check."""
    if sys.platform != "linux":
        return
    while True:  # a kernel queue: no event to wait on
        if unsent(conn.sock) == 0 or conn.closed or conn.head_in():
            break
        await asyncio.sleep(0)
    if not conn.head_in():
        ex.sent = now_ns()


#: the kind of transmit stamp ``sent`` takes (loadgen.netstamp): TX_SENT, when the last
#: byte was handed to the device (on loopback: when the peer's kernel had it)
TX_KIND = TX_SENT
#: how long the last byte's stamp is waited for (the reader paused) before SIOCOUTQNSD;
#: a stamp that came later still would stop a uvloop watcher (the request then times out)
TX_WAIT_NS = 10_000_000_000


async def send_last(conn: Connection, ex: Exchange, last: bytes) -> bool:
    """Send a large body's ``last`` byte with the kernel asked to stamp it (SO_TIMESTAMPING),
    and take ``sent`` from that stamp: True if it came within ``TX_WAIT_NS``.

    The stamp is queued on the socket's error queue, whose EPOLLERR stops a uvloop
    (libuv) watcher for good: the connection reads nothing from the arming to the
    disarming, and the error queue is read by polling it each loop turn. Nothing is
    lost meanwhile: an answer waits in the socket with its kernel receive stamp, and
    none can come before the server has the last byte (a refusal has come before:
    ``_send_rest``). The poll's lateness does not matter: the stamp is the
    kernel's.
    Only this one send is stamped, so the first stamp of ``TX_KIND`` is its stamp.
    """
    reading = conn.reading
    conn.pause()
    armed = tx_arm(conn.sock, TX_KIND)
    found = False
    try:
        try:
            await conn.loop.sock_sendall(conn.sock, last)
        except OSError as exc:
            raise TransportError("disconnected", describe(exc)) from None
        ex.sent = now_ns()
        give_up = ex.sent + TX_WAIT_NS
        while armed and not found and now_ns() < give_up:
            for kind, _key, wall in tx_stamps(conn.sock):
                if kind == TX_KIND and not found:
                    ex.sent, found = from_kernel_ns(wall, now_ns()), True
            if not found:
                await asyncio.sleep(0)
    finally:
        if armed:
            tx_disarm(conn.sock)  # and drop any stamp still queued
        if reading:
            conn.resume()
    return found
