"""Length-prefixed frames between the parent and its workers, over asyncio streams.

A frame is what :class:`multiprocessing.connection.Connection` sends (a
4-byte big-endian length, then the bytes), so one end may still use the
blocking Connection before the event loop takes the socket over: an event
loop makes the socket non-blocking, after which only these stream helpers
may touch it.
"""

from __future__ import annotations

import asyncio
import os
import socket
import struct
from multiprocessing.connection import Connection

__all__ = ["frame", "open_stream", "read_frame"]

_HEADER = struct.Struct("!i")
_LONG = struct.Struct("!Q")


def frame(payload: bytes) -> bytes:
    """``payload`` with its length in front."""
    if len(payload) >= 0x7FFFFFFF:
        return _HEADER.pack(-1) + _LONG.pack(len(payload)) + payload
    return _HEADER.pack(len(payload)) + payload


async def read_frame(reader: asyncio.StreamReader) -> bytes:
    """The next frame's bytes (IncompleteReadError at the end of the stream)."""
    (size,) = _HEADER.unpack(await reader.readexactly(_HEADER.size))
    if size == -1:
        (size,) = _LONG.unpack(await reader.readexactly(_LONG.size))
    return await reader.readexactly(size)


async def open_stream(conn: Connection) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Streams over ``conn``'s socket; ``conn`` itself is closed (do not use it again)."""
    sock = socket.socket(fileno=os.dup(conn.fileno()))
    conn.close()
    return await asyncio.open_unix_connection(sock=sock, limit=1 << 20)
