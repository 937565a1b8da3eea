"""A hostile server cannot crash a run or grow its memory: each abuse is one failed row.

A raw-asyncio server on 127.0.0.1 (an ephemeral port, in a thread of its own)
answers ``/health`` and ``/v1/models`` and abuses ``/v1/completions``: usage
counts that are strings, lists, objects, huge or negative (ignored: the stream
is counted); a token stream that never ends; one ``data:`` line of 2 MiB.
Every run ends with a valid summary. More wire cases: test_hostile_wire.py.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from loadgen.client.h1.connection import READ_SIZE
from loadgen.records import Record
from loadgen.scenario import Scenario
from loadgen.summary import Summary
from tests.integration.conftest import Runner, make_scenario
from tests.integration.rawserver import LoopServer

Abuse = Callable[[int, asyncio.StreamWriter], Awaitable[None]]
HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"
#: raw JSON text of hostile completion counts (2**70 as text: orjson cannot write it)
HOSTILE_USAGE = ['"12"', "[1]", '{"n": 1}', "1e308", str(2**70), "-5"]
TOKEN = b'data: {"choices":[{"text":"a","finish_reason":null}]}\n\n'


class HostileServer(LoopServer):
    """Serves ``abuse(n, writer)`` for the n-th completion request (0-based)."""

    def __init__(self, abuse: Abuse) -> None:
        super().__init__()
        self.abuse = abuse
        self.completions = 0

    def __enter__(self) -> str:
        self.start()
        return self.root

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(30):
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                await reader.readexactly(length)
                path = head.split(b" ", 2)[1]
                if path.startswith(b"/v1/completions"):
                    n = self.completions
                    self.completions += 1
                    writer.write(HEAD)
                    await self.abuse(n, writer)
                elif path == b"/v1/models":
                    body = b'{"data":[{"id":"m"}]}'
                    writer.write(
                        b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
                    )
                else:
                    code = b"200 OK" if path == b"/health" else b"404 Not Found"
                    writer.write(b"HTTP/1.1 " + code + b"\r\ncontent-length: 0\r\n\r\n")
                await writer.drain()
        except (TimeoutError, ConnectionError, asyncio.IncompleteReadError):
            pass  # the client gave up on the abuse: what we wanted
        finally:
            writer.transport.abort()


async def hostile_usage(n: int, writer: asyncio.StreamWriter) -> None:
    """Request n: one token, then a usage block; the last request's counts are good."""
    value = HOSTILE_USAGE[n] if n < len(HOSTILE_USAGE) else "1"
    usage = f'{{"choices":[],"usage":{{"prompt_tokens":4,"completion_tokens":{value}}}}}'
    writer.write(TOKEN + b"data: " + usage.encode() + b"\n\ndata: [DONE]\n\n")


async def endless_tokens(n: int, writer: asyncio.StreamWriter) -> None:
    """Tokens in batches of 8, 1 ms apart, until the client hangs up (bounded at 100,000)."""
    for _ in range(100_000 // 8):
        writer.write(TOKEN * 8)
        await writer.drain()
        await asyncio.sleep(0.001)


async def endless_line(n: int, writer: asyncio.StreamWriter) -> None:
    """One ``data:`` line of 2 MiB, in 64 KiB writes, then its end."""
    writer.write(b"data: ")
    for _ in range(32):
        writer.write(b"x" * 65536)
        await writer.drain()
    writer.write(b"\n\n")


@pytest.fixture
def runner(tmp_path: Any) -> Runner:
    return Runner(tmp_path)


def run_against(
    runner: Runner, abuse: Abuse, requests: int, **target: Any
) -> tuple[Summary, list[Record]]:
    with HostileServer(abuse) as url:
        sc: Scenario = make_scenario(
            target={
                "url": url,
                "api": "openai-completions",
                "timeouts_s": {"first_token": 10, "idle": 10, "total": 20},
                **target,
            },
            workload={"calibrate": False, "output_tokens": {"dist": "fixed", "value": 16}},
            load={"concurrency": [1], "requests_per_step": requests, "stop_early": None},
        )
        summary, records, _ = runner(sc)
    return summary, records


def counted(summary: Summary) -> dict[str, int]:
    assert len(summary.steps) == 1
    return summary.steps[0].requests.errors


def test_hostile_usage_counts_are_ignored_and_the_streams_measured(runner: Runner) -> None:
    """Each hostile count: the row is ok, its usage ignored (and said so), its output
    counted from the stream; the step warns how many (issue #20: it was ``malformed_usage``,
    and a server that always did it made the run "target unusable")."""
    n = len(HOSTILE_USAGE) + 1
    summary, records = run_against(runner, hostile_usage, n)
    measured = sorted((r for r in records if not r.warmup), key=lambda r: r.id)
    assert all(r.ok for r in measured), [r.error_detail for r in measured if not r.ok]
    flagged = [r.usage_ignored is not None for r in measured]
    assert flagged == [True] * len(HOSTILE_USAGE) + [False], flagged
    assert all(r.output_tokens_server in (None, 1) and r.output_tokens == 1 for r in records)
    assert counted(summary) == {}
    assert summary.steps[0].requests.ok == n
    warning = f"{len(HOSTILE_USAGE)} of {n} requests had unusable usage"
    assert any(w.startswith(warning) for w in summary.steps[0].warnings)
    json.loads(summary.model_dump_json())  # the summary is whole and serialisable


def test_a_never_ending_stream_ends_as_too_many_tokens(runner: Runner) -> None:
    summary, records = run_against(runner, endless_tokens, 2)
    for r in records:
        assert r.error_kind == "too_many_tokens", r.error_detail
        # stopped at the first read past 4 * 16 + 16 (a read is at most 256 KiB)
        assert 4 * 16 + 16 < r.output_events <= 4 * 16 + 16 + READ_SIZE // len(TOKEN) + 1
        assert len(r.token_ns) == r.output_events
    assert counted(summary) == {"too_many_tokens": 2}


def test_a_2_mib_data_line_ends_as_event_too_large(runner: Runner) -> None:
    summary, records = run_against(runner, endless_line, 2)
    for r in records:
        assert r.error_kind == "event_too_large", r.error_detail
    assert counted(summary) == {"event_too_large": 2}


def test_target_limits_reach_the_requests(runner: Runner) -> None:
    """target.limits from the scenario: a tighter token bound cuts the stream sooner."""
    limits = {"tokens_factor": 1, "tokens_extra": 0}
    _summary, records = run_against(runner, endless_tokens, 1, limits=limits)
    (r,) = records
    assert r.error_kind == "too_many_tokens"
    assert r.error_detail == "more than 16 token events for max_tokens 16"  # not 4 x 16 + 16
    assert 16 < r.output_events <= 16 + READ_SIZE // len(TOKEN) + 1
