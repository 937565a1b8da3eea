"""Answers the mock gives before any response header: injected refusals and resets.

Owns :func:`pre_header_fault` (the ``reset`` fault: an RST instead of an
answer; ``http500`` / ``http503`` / ``http429``: the engine's error body with
that status, ``Retry-After`` on a 429) and :func:`record_refusal`, the truth
file's line for a request that got no stream (a refused body or a pre-header
fault).
"""

from __future__ import annotations

import socket
import struct
import time
from typing import Any

from loadgen.mock.http import HttpConn, Request
from loadgen.mock.http_framing import tgi_error, vllm_error
from loadgen.mock.request import API_TGI, GenSpec
from loadgen.mock.request_apis import API_MESSAGES, anthropic_error
from loadgen.mock.truth import TruthWriter

__all__ = ["pre_header_fault", "record_refusal"]


def pre_header_fault(
    conn: HttpConn,
    req: Request,
    spec: GenSpec,
    rid: str | None,
    fault: str,
    retry_after_s: int,
    truth: TruthWriter | None,
) -> None:
    """Answer ``req`` with the fault ``fault`` (one of faults.PRE_HEADER) instead of a stream."""
    if fault == "reset":
        sock = conn.transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        conn.transport.abort()
        record_refusal(truth, req, rid, 0, fault, spec.prompt_tokens)
        return
    status = int(fault[4:])
    message = f"injected fault {fault} (loadgen-mock)"
    exc = tgi_error(status, message, "overloaded") if spec.api == API_TGI else None
    if spec.api == API_MESSAGES:
        exc = anthropic_error(status, message)
    exc = exc or vllm_error(status, message)
    extra: tuple[tuple[bytes, bytes], ...] = ()
    if status == 429:
        extra = ((b"retry-after", str(retry_after_s).encode()),)
    record_refusal(truth, req, rid, status, fault, spec.prompt_tokens)
    conn.send_simple(status, exc.body, extra=extra)


def record_refusal(
    truth: TruthWriter | None,
    req: Request,
    rid: str | None,
    status: int,
    fault: str | None,
    prompt: int,
) -> None:
    """The truth file's line of a request answered with no stream (none without --truth)."""
    if truth is None:
        return
    record: dict[str, Any] = {
        "request_id": rid,
        "path": req.path,
        "recv_ns": req.recv_ns,
        "token_ns": [],
        "prompt_tokens": prompt,
        "cached_tokens": 0,
        "output_tokens": 0,
        "reasoning_tokens": 0,
        "status": status,
        "fault": fault,
        "end_ns": time.perf_counter_ns(),
    }
    truth.add(record)
