"""A large request body's send on h1: when its last byte left, not when it was handed off.

Owns ``LARGE_BODY`` and the two ways its ``sent`` stamp is taken once the rest
of the body is written (``H1Transport._send``): the kernel's transmit stamp of
the last byte sent alone (:func:`send_last`, ``SO_TIMESTAMPING`` through
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

__all__ = ["LARGE_BODY", "TX_KIND", "TX_WAIT_NS", "drained", "send_last", "unsent"]


#: a body this large may still sit in the kernel's send queue once written: its ``sent``
#: is the kernel's stamp of its last byte's transmission (:func:`send_last`; else it waits
#: for the queue to drain, Linux SIOCOUTQNSD), so TTFT counts from the last byte's
#: leaving, not from its hand-off (an 8 MB body on loopback: up to 7 ms apart)
LARGE_BODY = 1024 * 1024
_SIOCOUTQNSD = 0x894B  # bytes not yet sent (SIOCOUTQ also counts sent, unacked ones)


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
    ``H1Transport._send_rest``). The poll's lateness does not matter: the stamp is the
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
