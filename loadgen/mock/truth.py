"""Ground-truth file: one JSON line per request, written off the hot path.

Owns ``--truth FILE``. Records are encoded when a request ends and buffered;
a timer flushes the buffer every ``FLUSH_S`` seconds and ``close`` flushes the
rest. Line format (docs/mock.md): ``request_id``, ``path``, ``recv_ns``,
``token_ns``, ``prompt_tokens``, ``cached_tokens``, ``output_tokens``, ``reasoning_tokens``,
``status``, ``fault``, ``end_ns``. With ``--network-delay-ms`` the stamps are moved
from the server's clock to the socket's, the client's end of the simulated path
(``recv_ns`` one delay earlier, ``token_ns`` and ``end_ns`` one later), and each line
says ``network_delay_ns``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

__all__ = ["FLUSH_S", "TruthWriter", "at_socket"]

FLUSH_S = 0.2


def at_socket(record: dict[str, Any], delay_ns: int) -> dict[str, Any]:
    """A line's stamps at the mock's socket, ``delay_ns`` from the server on a simulated path:
    the request reached the socket one delay before the server, each write left it one
    delay after the server made it."""
    return {
        **record,
        "recv_ns": record["recv_ns"] - delay_ns,
        "token_ns": [t + delay_ns for t in record["token_ns"]],
        "end_ns": record["end_ns"] + delay_ns,
        "network_delay_ns": delay_ns,
    }


class TruthWriter:
    """Appends truth records to a file, in batches."""

    def __init__(self, path: str, loop: asyncio.AbstractEventLoop, delay_ns: int = 0):
        self.file = open(path, "ab")  # noqa: SIM115 - closed by close()
        self.loop = loop
        self.delay_ns = delay_ns  # --network-delay-ms: the server's clock is this far on
        self.buffer: list[bytes] = []
        self.handle: asyncio.TimerHandle | None = None

    def add(self, record: dict[str, Any]) -> None:
        """Queue one request's line; its stamps are the server's (recv_ns, token_ns, end_ns)."""
        if self.delay_ns:
            record = at_socket(record, self.delay_ns)
        self.buffer.append(orjson.dumps(record) + b"\n")
        if self.handle is None:
            self.handle = self.loop.call_later(FLUSH_S, self.flush)

    def flush(self) -> None:
        self.handle = None
        if self.buffer:
            self.file.write(b"".join(self.buffer))
            self.buffer.clear()
            self.file.flush()

    def close(self) -> None:
        if self.handle is not None:
            self.handle.cancel()
        self.flush()
        self.file.close()
