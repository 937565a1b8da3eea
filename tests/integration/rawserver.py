"""A raw TCP server on 127.0.0.1 in its own thread and event loop, for hostile-server tests.

Subclasses write ``_handle`` (the bytes the misbehaving server sends); this owns the
plumbing every such test needs: a port picked by the kernel, a thread that serves until
:meth:`stop`, and a ready signal so a test never races the bind.
"""

from __future__ import annotations

import asyncio
import threading


class LoopServer:
    """Serves ``_handle`` for each connection on 127.0.0.1:``port`` between start and stop."""

    def __init__(self) -> None:
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self._thread.start()
        assert self._ready.wait(10)

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _serve(self) -> None:
        server = self._loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()
        server.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError
