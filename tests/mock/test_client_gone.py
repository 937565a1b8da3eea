"""A client that closes the connection mid-answer (a user who stops): the engine frees the
request's slot and KV at once, /metrics says so, and the truth line says it was aborted."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from pathlib import Path

import orjson
from mockhttp import MockProc, completion_body, fetch, read_truth

COMPLETIONS = "/v1/completions"


def metric(text: str, name: str) -> float:
    match = re.search(rf"^{re.escape(name)}(?:{{[^}}]*}})? (\S+)$", text, re.M)
    assert match, name
    return float(match.group(1))


async def read_then_close(port: int, rid: str, events: int) -> int:
    """Stream one completion, close the socket after ``events`` token events; when."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    data = orjson.dumps(completion_body(words=8, max_tokens=200))
    head = (
        f"POST {COMPLETIONS} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: {len(data)}\r\n"
        f"x-request-id: {rid}\r\n\r\n"
    )
    writer.write(head.encode() + data)
    got = b""
    while got.count(b"data: ") < events:
        chunk = await reader.read(65536)
        assert chunk, got
        got += chunk
    writer.close()
    return time.perf_counter_ns()


async def running(port: int) -> float:
    text = (await fetch(port, "GET", "/metrics")).body.decode()
    return metric(text, "vllm:num_requests_running")


def test_the_engine_frees_a_gone_clients_slot_at_once(
    start_mock: Callable[..., MockProc], tmp_path: Path
) -> None:
    truth = tmp_path / "truth.jsonl"
    # a step of 400 ms: a slot freed only at the step's end would still show below
    mock = start_mock(
        "--max-num-seqs", "2", "--step-base-ms", "400", "--decode-ms-per-seq", "0",
        "--prefill-ms-per-token", "0", "--truth", str(truth),
    )  # fmt: skip

    async def run() -> tuple[float, float, float, float]:
        keep = asyncio.create_task(fetch(mock.port, "POST", COMPLETIONS, completion_body(8, 6)))
        closed = await read_then_close(mock.port, "gone-1", 2)
        before = await running(mock.port)  # the other request still runs
        await asyncio.sleep(0.05)
        after = await running(mock.port)
        late_ms = (time.perf_counter_ns() - closed) / 1e6
        reply = await keep
        assert len(reply.json_events()) == 6
        return before, after, late_ms, await running(mock.port)

    before, after, late_ms, end = asyncio.run(run())
    assert after == 1 and late_ms < 300  # the gone one left the batch well inside the step
    assert before in (1, 2)  # the server may not have seen the close yet at the first scrape
    assert end == 0
    mock.stop()
    lines = {line["request_id"]: line for line in read_truth(truth)}
    gone = lines["gone-1"]
    assert gone["aborted"] is True and 2 <= gone["output_tokens"] < 200
    others = [line for rid, line in lines.items() if rid != "gone-1"]
    assert others and all("aborted" not in line for line in others)
