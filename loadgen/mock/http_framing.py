"""HTTP/1.1 response framing and the error bodies of the real servers.

Owns the bytes that go on the wire outside the token events: status lines and
headers, chunked transfer-encoding frames, and the JSON error shapes of vLLM
(``{"error": {...}}``), FastAPI (``{"detail": ...}``) and TGI
(``{"error": ..., "error_type": ...}``).
"""

from __future__ import annotations

import orjson

__all__ = [
    "CHUNK_END",
    "REASONS",
    "HttpError",
    "chunk",
    "fastapi_error",
    "response_head",
    "simple_response",
    "tgi_error",
    "unchunk",
    "vllm_error",
]

REASONS = {
    200: "OK",
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    411: "Length Required",
    413: "Content Too Large",
    422: "Unprocessable Entity",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    503: "Service Unavailable",
}

SSE_TYPE = b"text/event-stream; charset=utf-8"
JSON_TYPE = b"application/json"
CHUNK_END = b"0\r\n\r\n"

_VLLM_TYPES = {
    400: "BadRequestError",
    404: "NotFoundError",
    429: "TooManyRequestsError",
    500: "InternalServerError",
    503: "ServiceUnavailableError",
}


class HttpError(Exception):
    """A request the server answers with an error status and a ready body."""

    def __init__(self, status: int, body: bytes, headers: tuple[tuple[bytes, bytes], ...] = ()):
        super().__init__(status)
        self.status = status
        self.body = body
        self.headers = headers


def response_head(
    status: int,
    content_type: bytes,
    *,
    length: int | None,
    keep_alive: bool,
    extra: tuple[tuple[bytes, bytes], ...] = (),
) -> bytes:
    """Status line and headers; ``length=None`` means a chunked body."""
    lines = [
        b"HTTP/1.1 %d %s" % (status, REASONS.get(status, "Unknown").encode()),
        b"server: loadgen-mock",
        b"content-type: " + content_type,
    ]
    if length is None:
        lines.append(b"transfer-encoding: chunked")
    else:
        lines.append(b"content-length: %d" % length)
    if not keep_alive:
        lines.append(b"connection: close")
    lines.extend(name + b": " + value for name, value in extra)
    return b"\r\n".join(lines) + b"\r\n\r\n"


def chunk(data: bytes) -> bytes:
    """One chunk of a chunked body."""
    return b"%x\r\n%s\r\n" % (len(data), data)


def unchunk(data: bytes) -> tuple[bytes, bool]:
    """Payload of whole chunk frames, and whether the terminating chunk was among them."""
    out: list[bytes] = []
    i = 0
    while i < len(data):
        j = data.index(b"\r\n", i)
        size = int(data[i:j], 16)
        if size == 0:
            return b"".join(out), True
        out.append(data[j + 2 : j + 2 + size])
        i = j + 4 + size
    return b"".join(out), False


def simple_response(
    status: int,
    body: bytes,
    *,
    keep_alive: bool,
    content_type: bytes = JSON_TYPE,
    extra: tuple[tuple[bytes, bytes], ...] = (),
) -> bytes:
    """A complete response with a Content-Length body."""
    head = response_head(status, content_type, length=len(body), keep_alive=keep_alive, extra=extra)
    return head + body


def vllm_error(status: int, message: str, param: str | None = None) -> HttpError:
    """vLLM's OpenAI-server error: ``{"error": {"message", "type", "param", "code"}}``."""
    kind = _VLLM_TYPES.get(status, "InternalServerError")
    body = {"error": {"message": message, "type": kind, "param": param, "code": status}}
    return HttpError(status, orjson.dumps(body))


def fastapi_error(status: int, detail: str) -> HttpError:
    """FastAPI's default error for unknown paths and methods: ``{"detail": ...}``."""
    return HttpError(status, orjson.dumps({"detail": detail}))


def tgi_error(status: int, message: str, error_type: str) -> HttpError:
    """TGI's router error: ``{"error": ..., "error_type": ...}``."""
    return HttpError(status, orjson.dumps({"error": message, "error_type": error_type}))
