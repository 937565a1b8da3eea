"""Ground-truth file: one JSON line per request, written off the hot path.

Owns ``--truth FILE``. Records are encoded when a request ends and buffered;
a timer flushes the buffer every ``FLUSH_S`` seconds and ``close`` flushes the
rest. Line format (docs/mock.md): ``request_id``, ``path``, ``recv_ns``,
``token_ns``, ``prompt_tokens``, ``cached_tokens``, ``output_tokens``, ``reasoning_tokens``,
``status``, ``fault``, ``end_ns``. Imports only the standard library and orjson.
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

__all__ = ["FLUSH_S", "TruthWriter"]

FLUSH_S = 0.2


class TruthWriter:
    """Appends truth records to a file, in batches."""

    def __init__(self, path: str, loop: asyncio.AbstractEventLoop):
        self.file = open(path, "ab")  # noqa: SIM115 - closed by close()
        self.loop = loop
        self.buffer: list[bytes] = []
        self.handle: asyncio.TimerHandle | None = None

    def add(self, record: dict[str, Any]) -> None:
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
