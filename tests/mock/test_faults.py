"""Every fault kind happens, looks like it should on the wire, and is logged and recorded."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path

import orjson
import pytest
from mockhttp import Conn, MockProc, Reply, completion_body, fetch_sync, read_truth

from loadgen.mock.settings import FaultRule, parse_fault

COMPLETIONS = "/v1/completions"
Start = Callable[..., MockProc]


def faulty(start_mock: Start, tmp_path: Path, *args: str) -> tuple[MockProc, Path]:
    truth = tmp_path / "truth.jsonl"
    return start_mock("--ttft-ms", "0", "--itl-ms", "1", "--truth", str(truth), *args), truth


def test_parse_fault() -> None:
    assert parse_fault("http500=0.1,disconnect=every:7") == [
        FaultRule("http500", probability=0.1),
        FaultRule("disconnect", every=7),
    ]
    for bad in ("http500", "http500=1.5", "x=0.1", "stall=every:0", "stall=every:x"):
        with pytest.raises(ValueError, match="bad fault"):
            parse_fault(bad)


@pytest.mark.parametrize("kind", ["http500", "http503", "http429"])
def test_http_errors(start_mock: Start, tmp_path: Path, kind: str) -> None:
    mock, truth = faulty(start_mock, tmp_path, "--fault", f"{kind}=every:1", "--retry-after-s", "3")
    status = int(kind[4:])
    reply = fetch_sync(
        mock.port, "POST", COMPLETIONS, completion_body(), headers={"x-request-id": "e"}
    )
    assert reply.status == status and reply.complete
    assert reply.json()["error"]["code"] == status
    if status == 429:
        assert reply.headers["retry-after"] == "3"
    tgi = fetch_sync(mock.port, "POST", "/generate_stream", {"inputs": "x"})
    assert tgi.status == status and set(tgi.json()) == {"error", "error_type"}
    mock.stop()
    assert f"fault {kind} request=e" in mock.log()
    record = read_truth(truth)[0]
    assert (record["status"], record["fault"], record["output_tokens"]) == (status, kind, 0)


def test_reset_before_headers(start_mock: Start, tmp_path: Path) -> None:
    mock, truth = faulty(start_mock, tmp_path, "--fault", "reset=every:1")
    reply = fetch_sync(mock.port, "POST", COMPLETIONS, completion_body())
    assert reply.status is None and reply.error in ("reset", "eof") and not reply.reads
    mock.stop()
    assert read_truth(truth)[0]["status"] == 0 and read_truth(truth)[0]["fault"] == "reset"


def test_disconnect_mid_stream(start_mock: Start, tmp_path: Path) -> None:
    mock, truth = faulty(start_mock, tmp_path, "--fault", "disconnect=every:1")
    reply = fetch_sync(mock.port, "POST", COMPLETIONS, completion_body(max_tokens=10))
    assert reply.status == 200 and not reply.complete and reply.error == "eof"
    assert len(reply.json_events()) == 5  # cut half-way
    mock.stop()
    record = read_truth(truth)[0]
    assert record["fault"] == "disconnect" and record["output_tokens"] == 5


def test_stall_mid_stream(start_mock: Start, tmp_path: Path) -> None:
    mock, truth = faulty(start_mock, tmp_path, "--fault", "stall=every:1", "--stall-s", "0.3")
    reply = fetch_sync(mock.port, "POST", COMPLETIONS, completion_body(max_tokens=10))
    assert reply.complete and len(reply.json_events()) == 10
    times = [t for t, _ in reply.reads]
    assert max(b - a for a, b in pairwise(times)) >= 0.29e9
    mock.stop()
    record = read_truth(truth)[0]
    gaps = [b - a for a, b in pairwise(record["token_ns"])]
    assert max(gaps) >= 0.29e9 and record["fault"] == "stall"


def test_malformed_event(start_mock: Start, tmp_path: Path) -> None:
    mock, _ = faulty(start_mock, tmp_path, "--fault", "malformed=every:1")
    reply = fetch_sync(mock.port, "POST", COMPLETIONS, completion_body(max_tokens=6))
    events = reply.events()
    assert reply.complete and events[-1] == b"[DONE]" and len(events) == 7
    broken = []
    for event in events[:-1]:
        try:
            orjson.loads(event)
        except orjson.JSONDecodeError:
            broken.append(event)
    assert len(broken) == 1


def test_split_events_across_writes(start_mock: Start, tmp_path: Path) -> None:
    mock, _ = faulty(start_mock, tmp_path, "--fault", "split=every:1")
    reply = fetch_sync(mock.port, "POST", COMPLETIONS, completion_body(max_tokens=12))
    assert reply.complete and len(reply.json_events()) == 12
    assert reply.events()[-1] == b"[DONE]"
    assert sum(not chunk.endswith(b"\n\n") for chunk in reply.chunks) >= 12  # cut mid-event


def test_slow_first_byte(start_mock: Start, tmp_path: Path) -> None:
    mock, _ = faulty(
        start_mock, tmp_path, "--fault", "slow_first_byte=every:1", "--slow-first-byte-s", "0.3"
    )
    reply = fetch_sync(mock.port, "POST", COMPLETIONS, completion_body(max_tokens=4))
    assert reply.complete and len(reply.json_events()) == 4
    assert reply.reads[0][0] - reply.sent_ns >= 0.29e9


def test_no_done_keeps_the_connection_usable(start_mock: Start, tmp_path: Path) -> None:
    mock, _ = faulty(start_mock, tmp_path, "--fault", "no_done=every:2")

    async def run() -> None:
        conn = await Conn.open(mock.port)
        first = await conn.request("POST", COMPLETIONS, completion_body(max_tokens=3))
        second = await conn.request("POST", COMPLETIONS, completion_body(max_tokens=3))
        third = await conn.request("POST", COMPLETIONS, completion_body(max_tokens=3))
        conn.close()
        assert first.events()[-1] == b"[DONE]"
        assert second.complete and b"[DONE]" not in second.body
        assert len(second.json_events()) == 3
        assert third.events()[-1] == b"[DONE]"

    asyncio.run(run())


def test_probabilities_are_seeded(start_mock: Start, tmp_path: Path) -> None:
    def pattern() -> list[int | None]:
        mock = start_mock(
            "--ttft-ms", "0", "--itl-ms", "0", "--seed", "5", "--fault", "http500=0.5"
        )
        body = completion_body(max_tokens=1)
        out = [fetch_sync(mock.port, "POST", COMPLETIONS, body).status for _ in range(16)]
        mock.stop()
        return out

    first = pattern()
    assert 500 in first and 200 in first
    assert pattern() == first


def test_stream_faults_spare_non_streaming_requests(start_mock: Start, tmp_path: Path) -> None:
    mock, _ = faulty(start_mock, tmp_path, "--fault", "disconnect=every:1")
    reply = fetch_sync(mock.port, "POST", COMPLETIONS, completion_body(max_tokens=4, stream=False))
    assert reply.status == 200 and reply.json()["usage"]["completion_tokens"] == 4


def test_error_event_mid_stream_then_done(start_mock: Start, tmp_path: Path) -> None:
    """error_event: half the tokens, an SSE ``event: error`` frame with vLLM's error
    JSON, then ``[DONE]`` and a whole body (a server whose engine failed mid-stream)."""
    mock, truth = faulty(start_mock, tmp_path, "--fault", "error_event=every:1")
    reply = fetch_sync(
        mock.port, "POST", COMPLETIONS, completion_body(max_tokens=8), headers={"x-request-id": "x"}
    )
    assert reply.complete
    blocks = [b for b in reply.body.split(b"\n\n") if b]
    assert blocks[-1] == b"data: [DONE]"
    assert blocks[-2].startswith(b"event: error\ndata: ")
    error = orjson.loads(blocks[-2].split(b"data: ", 1)[1])["error"]
    assert error["code"] == 500 and "error_event" in error["message"]
    assert len(blocks) - 2 == 4  # the tokens before it: half of 8
    (row,) = read_truth_soon(truth)
    assert row["fault"] == "error_event" and row["status"] == 500 and row["output_tokens"] == 4


def test_bom_before_the_first_event(start_mock: Start, tmp_path: Path) -> None:
    """bom: the body opens with a UTF-8 byte order mark, then the stream as usual."""
    mock, _ = faulty(start_mock, tmp_path, "--fault", "bom=every:1")
    reply = fetch_sync(mock.port, "POST", COMPLETIONS, completion_body(max_tokens=5))
    assert reply.complete and reply.body.startswith(b"\xef\xbb\xbfdata: {")
    events = Reply(chunks=[reply.body[3:]]).events()
    assert len(events) == 6 and events[-1] == b"[DONE]"


def test_idle_408_closes_a_kept_alive_connection_unread(start_mock: Start, tmp_path: Path) -> None:
    """idle_408: the response is whole; then the kept-alive connection gets ``408`` and
    ``connection: close`` and is closed, the next request on it never read."""
    mock, truth = faulty(start_mock, tmp_path, "--fault", "idle_408=every:1")

    async def run() -> tuple[Reply, Reply]:
        conn = await Conn.open(mock.port)
        first = await conn.request("POST", COMPLETIONS, completion_body(max_tokens=3))
        second = await conn.request("POST", COMPLETIONS, completion_body(max_tokens=3))
        tail = await conn.reader.read()  # the server closed it: EOF
        conn.close()
        assert tail == b""
        return first, second

    first, second = asyncio.run(run())
    assert first.status == 200 and first.complete and len(first.json_events()) == 3
    assert second.status == 408 and second.headers["connection"] == "close"
    rows = read_truth_soon(truth)
    assert len(rows) == 1 and rows[0]["fault"] == "idle_408"  # the second was never read


def read_truth_soon(path: Path) -> list[dict[str, object]]:
    """The truth file once the mock has flushed it (every 0.2 s)."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if path.exists() and path.stat().st_size:
            time.sleep(0.3)  # a second row would be in the same flush
            return read_truth(path)
        time.sleep(0.05)
    return []
