"""One bounded, time-limited client for every request outside the load path.

Pre-flight (``/health``, ``/v1/models``), calibration (``/tokenize``), the
prefix-cache and telemetry scrapes (``/metrics``) and the telemetry agents'
polls (``/clock``, ``/health``, ``/samples``) all go through here, never
through the load path's transports. Each request is of a kind, a
:class:`Limit`: the most bytes its answer's body may take (read as a stream,
stopped there; a ``Content-Length`` past it is refused before the body) and a
total deadline from the connect to the last byte. The deadline is not per
read: a server that drips a byte every few seconds is cut off at it.

A request that passes either limit, or fails on the way (refused, reset,
not HTTP), raises :class:`ControlError`: one line naming the URL (its
password left out, by :func:`loadgen.redact.redact_text`) and the limit hit.
Any status comes back as a :class:`Reply`; the caller decides what a 404 means.

:class:`ControlClient` is the asynchronous client (it keeps its connections,
for the telemetry thread's polls); :func:`fetch` is one request from
synchronous code, run on a short-lived thread with its own event loop, so it
works from inside a running loop (the prefix-cache scrape between steps) too.
"""

from __future__ import annotations

import asyncio
import ssl
import threading
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass, replace
from types import TracebackType
from typing import Any, Literal

import httpx
import orjson

from loadgen.redact import redact_text

__all__ = [
    "AGENT",
    "HEALTH",
    "METRICS",
    "MODELS",
    "SAMPLES",
    "TOKENIZE",
    "ControlClient",
    "ControlError",
    "Limit",
    "Reply",
    "connect_words",
    "fetch",
]

MiB = 1024 * 1024

Kind = Literal["too_large", "deadline", "connect", "transport"]


@dataclass(frozen=True, slots=True)
class Limit:
    """How big and how slow one kind of answer may be."""

    what: str  # the kind, in messages: "/metrics"
    max_bytes: int
    deadline_s: float

    def within(self, deadline_s: float) -> Limit:
        """The same size cap with another deadline (the telemetry poll's interval)."""
        return replace(self, deadline_s=deadline_s)


#: pre-flight's health poll (one try; ``target.wait_for_health_s`` repeats it)
HEALTH = Limit("/health", 1 * MiB, 5.0)
#: the served models (a router may list hundreds)
MODELS = Limit("/v1/models", 8 * MiB, 10.0)
#: one calibration prompt's token count
TOKENIZE = Limit("/tokenize", 1 * MiB, 10.0)
#: a Prometheus scrape (vLLM's histograms, per model and rank, take a few MiB)
METRICS = Limit("/metrics", 16 * MiB, 5.0)
#: a telemetry agent's ``/clock`` and ``/health``
AGENT = Limit("agent", 1 * MiB, 5.0)
#: a telemetry agent's ``/samples`` (a whole ring after a long gap: 600 s of 8 GPUs)
SAMPLES = Limit("agent /samples", 64 * MiB, 5.0)

#: control answers are read as they are: a compressed one could grow past its cap in one read
_IDENTITY = {"Accept-Encoding": "identity"}


class ControlError(Exception):
    """A control request that got no usable answer; ``str()`` is the one line to show.

    ``kind``: ``too_large`` (the answer passed ``max_bytes``), ``deadline`` (no
    whole answer in ``deadline_s``), ``connect`` (nothing listening, a name
    that does not resolve, TLS refused), ``transport`` (reset, not HTTP).
    ``detail`` is the line without the URL.
    """

    def __init__(self, kind: Kind, url: str, detail: str) -> None:
        self.kind = kind
        self.url = redact_text(url)
        self.detail = redact_text(detail)
        super().__init__(f"{self.url}: {self.detail}")

    @property
    def limit_hit(self) -> bool:
        """The answer was cut off by loadgen's own bound (not the server failing)."""
        return self.kind in ("too_large", "deadline")


@dataclass(frozen=True, slots=True)
class Reply:
    """A whole answer within its limit."""

    status: int
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def json(self) -> Any:
        """The body as JSON; ``ValueError`` when it is not."""
        return orjson.loads(self.body)


def _size(n: int) -> str:
    return f"{n / MiB:g} MiB" if n >= MiB else f"{n} bytes"


class ControlClient:
    """An asynchronous control client; use as ``async with ControlClient(...) as c``."""

    def __init__(
        self,
        headers: Mapping[str, str] | None = None,
        verify: ssl.SSLContext | bool = True,
        max_connections: int = 8,
    ) -> None:
        self._client = httpx.AsyncClient(
            headers={**_IDENTITY, **(headers or {})},
            verify=verify,
            limits=httpx.Limits(max_connections=max_connections),
            follow_redirects=False,  # a redirect's target must not get the credentials
        )

    async def __aenter__(self) -> ControlClient:
        await self._client.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._client.__aexit__(exc_type, exc, tb)

    async def request(
        self,
        method: str,
        url: str,
        limit: Limit,
        *,
        json: object = None,
        params: Mapping[str, str | int] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Reply:
        """One request within ``limit``; a :class:`ControlError` otherwise (never another)."""
        try:
            async with asyncio.timeout(limit.deadline_s):
                return await self._read(method, url, limit, json, params, headers)
        except TimeoutError:
            detail = (
                f"no whole answer within {limit.deadline_s:g} s"
                f" (the deadline for {limit.what} requests); stopped waiting"
            )
            raise ControlError("deadline", url, detail) from None
        except httpx.ConnectError as exc:
            raise ControlError("connect", url, connect_words(exc)) from None
        except (httpx.HTTPError, httpx.InvalidURL, httpx.StreamError, OSError, ValueError) as exc:
            text = str(exc)[:200] or type(exc).__name__
            raise ControlError("transport", url, f"{type(exc).__name__}: {text}") from None

    async def get(self, url: str, limit: Limit, **kwargs: Any) -> Reply:
        return await self.request("GET", url, limit, **kwargs)

    async def _read(
        self,
        method: str,
        url: str,
        limit: Limit,
        body: object,
        params: Mapping[str, str | int] | None,
        headers: Mapping[str, str] | None,
    ) -> Reply:
        # the deadline is the caller's timeout; httpx's own per-read one never comes first
        timeout = httpx.Timeout(limit.deadline_s + 1.0)
        content = None if body is None else orjson.dumps(body)
        extra = dict(headers or {})
        if content is not None:
            extra.setdefault("Content-Type", "application/json")
        async with self._client.stream(
            method, url, content=content, params=params, headers=extra, timeout=timeout
        ) as resp:
            declared = resp.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > limit.max_bytes:
                raise self._too_large(url, limit, f"says Content-Length {declared}")
            parts: list[bytes] = []
            size = 0
            async for chunk in resp.aiter_bytes():
                size += len(chunk)
                if size > limit.max_bytes:
                    raise self._too_large(url, limit, "went on")
                parts.append(chunk)
            return Reply(resp.status_code, b"".join(parts))

    @staticmethod
    def _too_large(url: str, limit: Limit, how: str) -> ControlError:
        detail = (
            f"the answer {how} past {_size(limit.max_bytes)}"
            f" (the most {limit.what} answers may take); stopped reading"
        )
        return ControlError("too_large", url, detail)


def fetch(
    method: str,
    url: str,
    limit: Limit,
    *,
    headers: Mapping[str, str] | None = None,
    verify: ssl.SSLContext | bool = True,
    json: object = None,
) -> Reply:
    """One control request from synchronous code; a :class:`ControlError` if it fails."""

    async def once() -> Reply:
        async with ControlClient(headers, verify, max_connections=1) as client:
            return await client.request(method, url, limit, json=json)

    return _on_own_thread(once())


def _on_own_thread(job: Coroutine[Any, Any, Reply]) -> Reply:
    """Run ``job`` on a new thread's event loop (the caller's thread may be inside one)."""
    box: list[Reply | BaseException] = []

    def run() -> None:
        try:
            box.append(asyncio.run(job))
        except BaseException as exc:  # handed to the caller's thread below
            box.append(exc)

    thread = threading.Thread(target=run, name="loadgen-control", daemon=True)
    thread.start()
    thread.join()  # the job's own deadline ends it; Ctrl-C interrupts the wait
    if not box:  # cannot happen: run() appends in every case
        raise ControlError("transport", "", "the control request's thread ended without a word")
    if isinstance(box[0], BaseException):
        raise box[0]
    return box[0]


def connect_words(exc: BaseException) -> str:
    """What a failed connect was, in words: refused, a name that does not resolve.

    The asynchronous client says only "All connection attempts failed"; the
    cause it wraps (``ConnectionRefusedError``, ``gaierror``) says what happened.
    """
    chain: list[BaseException] = []
    cause: BaseException | None = exc
    while cause is not None and len(chain) < 8:
        chain.append(cause)
        cause = cause.__cause__ or cause.__context__
    text = " ".join(str(e) for e in chain).lower()
    if any(isinstance(e, ConnectionRefusedError) for e in chain) or "errno 111" in text:
        return "refused the connection (nothing listening)"
    if "name or service not known" in text or "nodename nor servname" in text:
        return "has a host name that does not resolve"
    return f"could not be reached ({str(chain[-1])[:160]})"
