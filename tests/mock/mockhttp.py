"""A small raw-socket HTTP/1.1 client for testing the mock server.

Written apart from loadgen.client on purpose: the server's tests must not lean
on the client they will later check. Every read is stamped with
``perf_counter_ns()`` before it is parsed; chunked bodies keep their framing so
tests can look at how the server cut them.
"""

from __future__ import annotations

import asyncio
import os
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson


@dataclass
class Reply:
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)
    reads: list[tuple[int, bytes]] = field(default_factory=list)
    complete: bool = False
    error: str | None = None
    sent_ns: int = 0

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)

    def events(self) -> list[bytes]:
        """SSE payloads (after ``data:``), in order."""
        blocks = self.body.split(b"\n\n")
        return [block[5:].strip() for block in blocks if block.startswith(b"data:")]

    def json_events(self) -> list[Any]:
        return [orjson.loads(e) for e in self.events() if e != b"[DONE]"]

    def json(self) -> Any:
        return orjson.loads(self.body)


class Conn:
    """One keep-alive connection."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader = reader
        self.writer = writer
        self.buf = b""

    @classmethod
    async def open(cls, port: int) -> Conn:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        return cls(reader, writer)

    def close(self) -> None:
        self.writer.close()

    async def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
        raw_body: bytes | None = None,
    ) -> Reply:
        data = raw_body if raw_body is not None else (b"" if body is None else orjson.dumps(body))
        lines = [f"{method} {path} HTTP/1.1", "host: 127.0.0.1", f"content-length: {len(data)}"]
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        reply = Reply(sent_ns=time.perf_counter_ns())
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + data)
        try:
            await self._read_reply(reply)
        except (ConnectionResetError, BrokenPipeError):
            reply.error = "reset"
        except EOFError:
            reply.error = "eof"
        return reply

    async def _more(self, reply: Reply) -> None:
        data = await self.reader.read(65536)
        now = time.perf_counter_ns()
        if not data:
            raise EOFError
        reply.reads.append((now, data))
        self.buf += data

    async def _read_reply(self, reply: Reply) -> None:
        while b"\r\n\r\n" not in self.buf:
            await self._more(reply)
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        reply.status = int(lines[0].split(" ")[1])
        for line in lines[1:]:
            name, _, value = line.partition(":")
            reply.headers[name.strip().lower()] = value.strip()
        if reply.headers.get("transfer-encoding") == "chunked":
            await self._read_chunks(reply)
        else:
            length = int(reply.headers.get("content-length", "0"))
            while len(self.buf) < length:
                await self._more(reply)
            reply.chunks.append(self.buf[:length])
            self.buf = self.buf[length:]
            reply.complete = True

    async def _read_chunks(self, reply: Reply) -> None:
        while True:
            while b"\r\n" not in self.buf:
                await self._more(reply)
            size_line, rest = self.buf.split(b"\r\n", 1)
            size = int(size_line, 16)
            while len(rest) < size + 2:
                await self._more(reply)
                size_line, rest = self.buf.split(b"\r\n", 1)
            if size == 0:
                self.buf = rest[2:]
                reply.complete = True
                return
            reply.chunks.append(rest[:size])
            self.buf = rest[size + 2 :]


async def fetch(port: int, method: str, path: str, body: Any = None, **kw: Any) -> Reply:
    """One request on a fresh connection."""
    conn = await Conn.open(port)
    try:
        return await conn.request(method, path, body, **kw)
    finally:
        conn.close()


def fetch_sync(port: int, method: str, path: str, body: Any = None, **kw: Any) -> Reply:
    return asyncio.run(fetch(port, method, path, body, **kw))


class MockProc:
    """``python -m loadgen.mock`` as a child process, stopped by PID."""

    def __init__(self, args: list[str], stderr_path: Path):
        self.stderr_path = stderr_path
        self.stderr = open(stderr_path, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "loadgen.mock", "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=self.stderr,
        )
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], 15.0)
        line = self.proc.stdout.readline().decode() if ready else ""
        if not line.startswith("loadgen-mock listening on http://127.0.0.1:"):
            self.stop()
            raise RuntimeError(f"mock did not start: {line!r} {stderr_path.read_text()}")
        self.line = line
        self.port = int(line.strip().rsplit(":", 1)[1])

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, sig)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.stderr.close()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        return self.proc.returncode

    def log(self) -> str:
        if not self.stderr.closed:
            self.stderr.flush()
        return self.stderr_path.read_text()


def chat_body(words: int = 4, max_tokens: int = 8, **extra: Any) -> dict[str, Any]:
    content = " ".join(["word"] * words)
    return {
        "model": "m",
        "messages": [{"role": "user", "content": content}],
        "max_tokens": max_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
        "ignore_eos": True,
        **extra,
    }


def completion_body(words: int = 4, max_tokens: int = 8, **extra: Any) -> dict[str, Any]:
    return {
        "model": "m",
        "prompt": " ".join(["word"] * words),
        "max_tokens": max_tokens,
        "stream": True,
        "ignore_eos": True,
        **extra,
    }


def read_truth(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line]
