"""A recording pass-through proxy on 127.0.0.1: what really went over the wire to vLLM.

``Tap(upstream)`` listens on a port of its own and forwards every connection,
byte for byte, to ``upstream`` (``http://127.0.0.1:PORT``); it keeps both
directions of each connection. :meth:`Tap.exchanges` parses them afterwards
(HTTP/1.1, keep-alive, content-length requests, chunked or sized answers)
into one :class:`Exchange` per request, keyed by its ``x-request-id``.

The tests use it to check loadgen against the raw answers, with a parser of
their own (:func:`sse_events`): a validity rate recomputed from the tool calls
vLLM really sent, not from loadgen's reading of them. It adds a hop but no
parsing on the way, so it does not change what the server sends.

:func:`scrape` reads the server's ``/metrics`` as ``{name: value}`` (labels summed),
for the counters the tests compare before and after a run.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson

from tests.integration.rawserver import LoopServer

CHUNK = 1 << 16


@dataclass(frozen=True, slots=True)
class Exchange:
    """One request and the server's answer to it, as bytes on the wire."""

    method: str
    target: str
    headers: dict[str, str]  # the request's, names lower-cased
    body: bytes
    status: int
    answer: bytes  # the answer's body, chunked framing removed

    @property
    def request_id(self) -> str:
        return self.headers.get("x-request-id", "")

    def json_body(self) -> Any:
        return orjson.loads(self.body)


class Tap(LoopServer):
    def __init__(self, upstream: str) -> None:
        super().__init__()
        parts = urlsplit(upstream)
        self._host, self._port = parts.hostname or "127.0.0.1", parts.port or 80
        self._conns: list[tuple[bytearray, bytearray]] = []

    def __enter__(self) -> Tap:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(self._host, self._port)
        sent, got = bytearray(), bytearray()
        self._conns.append((sent, got))

        async def pump(
            src: asyncio.StreamReader, dst: asyncio.StreamWriter, keep: bytearray
        ) -> None:
            with contextlib.suppress(ConnectionError):
                while data := await src.read(CHUNK):
                    keep += data
                    dst.write(data)
                    await dst.drain()
            with contextlib.suppress(ConnectionError, OSError):
                dst.close()

        await asyncio.gather(pump(reader, up_writer, sent), pump(up_reader, writer, got))

    def exchanges(self) -> dict[str, Exchange]:
        """Every complete request/answer pair seen so far, by ``x-request-id``."""
        out: dict[str, Exchange] = {}
        for sent, got in list(self._conns):
            requests, answers = _requests(bytes(sent)), _answers(bytes(got))
            for (method, target, headers, body), (status, answer) in zip(
                requests, answers, strict=False
            ):
                ex = Exchange(method, target, headers, body, status, answer)
                out[ex.request_id] = ex
        return out


def _head(data: bytes, at: int) -> tuple[str, dict[str, str], int] | None:
    """The start line, the headers and where the body begins; None if incomplete."""
    end = data.find(b"\r\n\r\n", at)
    if end < 0:
        return None
    lines = data[at:end].decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return lines[0], headers, end + 4


def _requests(data: bytes) -> list[tuple[str, str, dict[str, str], bytes]]:
    out, at = [], 0
    while (head := _head(data, at)) is not None:
        start, headers, at = head
        n = int(headers.get("content-length", "0"))
        if at + n > len(data):
            break
        method, target, _ = start.split(" ", 2)
        out.append((method, target, headers, data[at : at + n]))
        at += n
    return out


def _answers(data: bytes) -> list[tuple[int, bytes]]:
    out, at = [], 0
    while (head := _head(data, at)) is not None:
        start, headers, at = head
        status = int(start.split(" ", 2)[1])
        if "chunked" in headers.get("transfer-encoding", ""):
            body = bytearray()
            while True:
                eol = data.find(b"\r\n", at)
                if eol < 0:
                    return out
                size = int(data[at:eol].split(b";")[0], 16)
                at = eol + 2
                if size == 0:
                    at = data.find(b"\r\n", at) + 2  # no trailers from uvicorn: the blank line
                    break
                body += data[at : at + size]
                at += size + 2
            out.append((status, bytes(body)))
        else:
            n = int(headers.get("content-length", "0"))
            out.append((status, data[at : at + n]))
            at += n
    return out


def sse_events(answer: bytes) -> list[dict[str, Any]]:
    """The JSON ``data:`` payloads of an event stream (``[DONE]`` left out)."""
    out = []
    for line in answer.split(b"\n"):
        if line.startswith(b"data:"):
            payload = line[5:].strip()
            if payload and payload != b"[DONE]":
                out.append(orjson.loads(payload))
    return out


def scrape(url: str) -> dict[str, float]:
    """``/metrics`` summed over labels: ``{name: value}``."""
    out: dict[str, float] = {}
    for line in httpx.get(f"{url}/metrics", timeout=30).text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name_labels, _, value = line.rpartition(" ")
        name = name_labels.split("{", 1)[0]
        out[name] = out.get(name, 0.0) + float(value)
    return out
