"""Ground-truth file: one JSON line per request, written off the hot path.

Owns ``--truth FILE``. Records are queued when a request ends; a timer writes
them every ``FLUSH_S`` seconds and ``close`` writes the rest. Line format
(docs/mock.md): ``request_id``, ``path``, ``recv_ns``, ``token_ns``,
``token_user_ns``, ``token_stamp``, ``prompt_tokens``, ``cached_tokens``,
``output_tokens``, ``reasoning_tokens``, ``status``, ``fault``, ``end_ns``.

``token_ns`` is when each token's write left the socket: the kernel's transmit
stamp (``loadgen.mock.txlog``, through the connection's transport) where it has
one, else ``token_user_ns``, the clock read just before the write. A line waits
for its stamps (up to ``TX_WAIT_NS``; a kernel holding bytes back: a client not
reading) and is then written with what is known; ``token_stamp`` says which
kind its ``token_ns`` are: ``kernel`` (all), ``user`` (none: no transmit stamps
here), ``mixed``, or ``none`` (a line with no tokens). Invariant:
``len(token_ns) == len(token_user_ns)``.

With ``--network-delay-ms`` the stamps are moved from the server's clock to the
socket's, the client's end of the simulated path (``recv_ns`` one delay earlier,
user-space token stamps and ``end_ns`` one later; a kernel transmit stamp is
the socket's already), and each line says ``network_delay_ns``.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import orjson

from loadgen.mock.txlog import TxSource

__all__ = ["FLUSH_S", "TX_WAIT_NS", "TruthWriter", "at_socket", "with_tx"]

FLUSH_S = 0.2
#: How long a line waits for its transmit stamps before it is written with what is known.
TX_WAIT_NS = 2_000_000_000
_pc = time.perf_counter_ns


def at_socket(record: dict[str, Any], delay_ns: int) -> dict[str, Any]:
    """A line's stamps at the mock's socket, ``delay_ns`` from the server on a simulated path:
    the request reached the socket one delay before the server, each write left it one
    delay after the server made it."""
    user = record.get("token_user_ns", record["token_ns"])
    return {
        **record,
        "recv_ns": record["recv_ns"] - delay_ns,
        # a stamp that is the user-space one moves; a kernel transmit stamp is the socket's
        "token_ns": [
            t + delay_ns if t == u else t for t, u in zip(record["token_ns"], user, strict=True)
        ],
        "token_user_ns": [t + delay_ns for t in user],
        "end_ns": record["end_ns"] + delay_ns,
        "network_delay_ns": delay_ns,
    }


def with_tx(record: dict[str, Any], stamps: list[int | None] | None) -> dict[str, Any]:
    """``record`` (its ``token_ns`` the user-space stamps) with the kernel's transmit
    ``stamps`` of the same tokens (None: none for that token; None alone: no stamps)."""
    user: list[int] = record["token_ns"]
    if not user:
        return {**record, "token_user_ns": user, "token_stamp": "none"}
    if stamps is None:
        return {**record, "token_user_ns": user, "token_stamp": "user"}
    token_ns = [u if t is None else t for u, t in zip(user, stamps, strict=True)]
    known = sum(t is not None for t in stamps)
    kind = "kernel" if known == len(user) else "user" if known == 0 else "mixed"
    return {**record, "token_ns": token_ns, "token_user_ns": user, "token_stamp": kind}


class TruthWriter:
    """Appends truth records to a file, in batches, each once its transmit stamps are in."""

    def __init__(self, path: str, loop: asyncio.AbstractEventLoop, delay_ns: int = 0):
        self.file = open(path, "ab")  # noqa: SIM115 - closed by close()
        self.loop = loop
        self.delay_ns = delay_ns  # --network-delay-ms: the server's clock is this far on
        #: (queued at, record, its transport, its tokens' write ids)
        self.queue: list[tuple[int, dict[str, Any], TxSource | None, list[int]]] = []
        self.handle: asyncio.TimerHandle | None = None

    def add(
        self, record: dict[str, Any], tx: TxSource | None = None, ids: list[int] | None = None
    ) -> None:
        """Queue one request's line; its stamps are the server's (recv_ns, token_ns, end_ns),
        ``ids`` the write of each token on transport ``tx`` (for its transmit stamp)."""
        self.queue.append((_pc(), record, tx, ids or []))
        if self.handle is None:
            self.handle = self.loop.call_later(FLUSH_S, self.flush)

    def _line(
        self, item: tuple[int, dict[str, Any], TxSource | None, list[int]], now: int, last: bool
    ) -> bytes | None:
        queued, record, tx, ids = item
        found = None if tx is None else tx.tx_ns(ids)
        if found is not None and not found[0] and not last and now - queued < TX_WAIT_NS:
            return None  # a stamp is still due
        record = with_tx(record, None if found is None else found[1])
        if self.delay_ns:
            record = at_socket(record, self.delay_ns)
        return orjson.dumps(record) + b"\n"

    def flush(self, last: bool = False) -> None:
        """Write every queued line whose stamps are in (``last``: every line)."""
        self.handle = None
        now = _pc()
        lines: list[bytes] = []
        waiting = []
        for item in self.queue:
            line = self._line(item, now, last)
            if line is None:
                waiting.append(item)
            else:
                lines.append(line)
        self.queue = waiting
        if lines:
            self.file.write(b"".join(lines))
            self.file.flush()
        if waiting:
            self.handle = self.loop.call_later(FLUSH_S, self.flush)

    def close(self) -> None:
        if self.handle is not None:
            self.handle.cancel()
            self.handle = None
        self.flush(last=True)
        self.file.close()
