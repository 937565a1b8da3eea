"""loadgen's own error, measured over real sockets: a read that carries several token
events gives the earlier ones its stamp, and their slack covers how early they came.

A scripted server (a thread with blocking sockets, tests/integration/test_h1_transport.py)
writes one token event every 10 ms and notes the clock around each write; the client's
event loop is held up for 300 ms once the first is out, so one read takes several.
Each token event's stamp is never before its write, and its stamp less its slack is
never after it: the bound covers the error, on the same run's truth.
"""

from __future__ import annotations

import asyncio
import socket
import time
from typing import Any

import orjson
import pytest

from loadgen.client import ADAPTERS, Requester, RequestTimeouts
from loadgen.client.h1 import H1Transport
from loadgen.records import Record
from loadgen.workload import RequestSpec
from tests.integration.test_h1_transport import CHUNKED_HEAD, chunk, run
from tests.integration.test_h1_transport import serve as serve  # the scripted server

# durations held to tight bounds: run apart from the parallel tests (-m timing)
pytestmark = pytest.mark.timing

MS = 1_000_000
#: the clock's own reading and the kernel's, a hair apart at most
TOLERANCE_NS = 200_000


def event(text: str) -> bytes:
    return b"data: " + orjson.dumps({"choices": [{"text": text, "finish_reason": None}]}) + b"\n\n"


def tokens_10_ms_apart(written: list[tuple[int, int]], hold: list[Any]) -> Any:
    """Six token events 10 ms apart, then [DONE]; (before, after) each write, noted. Once
    the first is out, the client's loop is held up 300 ms (``hold``: that loop), so the
    others arrive while loadgen is busy elsewhere: one read takes several of them."""

    def script(conn: socket.socket, _: int) -> None:
        conn.sendall(CHUNKED_HEAD)
        for i in range(6):
            time.sleep(0.01)
            before = time.perf_counter_ns()
            conn.sendall(chunk(event(str(i))))
            written.append((before, time.perf_counter_ns()))
            if i == 0 and hold:
                hold[0].call_soon_threadsafe(time.sleep, 0.3)
        time.sleep(0.01)
        conn.sendall(chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n")

    return script


def send(url: str, hold: list[Any]) -> Record:
    """One request; its loop goes into ``hold`` for the server to hold it up."""

    async def main() -> Record:
        transport = H1Transport(limit=1, connect_timeout_s=5)
        requester = Requester(
            transport,
            ADAPTERS["openai-completions"],
            base_url=url.removesuffix("/v1/completions"),
            model="m",
            extra_body={},
            headers={},
            timeouts=RequestTimeouts.from_seconds(10, 10, 10),
            run_id="t",
        )
        hold.append(asyncio.get_running_loop())
        spec = RequestSpec(index=0, prompt="hi", prompt_tokens=1, max_tokens=6)
        rec = await requester.send(spec, 0)
        await transport.aclose()
        return rec

    result: Record = run(main())
    return result


def test_the_slack_of_tokens_that_shared_a_read_covers_how_early_they_came(serve: Any) -> None:
    written: list[tuple[int, int]] = []
    hold: list[Any] = []
    server = serve(tokens_10_ms_apart(written, hold))
    rec = send(server.url, hold)
    assert rec.ok, rec.error_detail
    assert len(rec.token_ns) == len(written) == 6
    slack = rec.token_slack_ns
    assert slack is not None and any(slack)  # the held loop read several events at once
    slack = slack + [0] * (6 - len(slack))
    for stamp, late, (before, after) in zip(rec.token_ns, slack, written, strict=True):
        assert stamp >= before - TOLERANCE_NS  # a stamp is never before the write
        assert stamp - late <= after + TOLERANCE_NS  # ... nor, less its slack, after it
    shared = [i for i, s in enumerate(slack) if s and i + 1 < len(slack)]
    # an event the held read carried before another token event has that read's stamp
    assert all(rec.token_ns[i] == rec.token_ns[i + 1] for i in shared)
    assert rec.end_slack_ns == 0 and rec.end_ns >= rec.token_ns[-1]  # the end: exact
