"""One agent as the collector asks it: clock probes, /samples, rows into samples and lines.

A tiny agent stand-in over 127.0.0.1 whose clock runs a known offset ahead of
loadgen's, and which can be told to answer slowly (a server under load).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar
from urllib.parse import parse_qs, urlsplit

import orjson
import pytest

from loadgen import clock
from loadgen.control import AGENT, SAMPLES, ControlClient
from loadgen.telemetry.agent_source import LOOKBACK_NS, AgentSource
from loadgen.telemetry.rows import GpuSample, HostSample

AHEAD_NS = 7 * clock.NS_PER_S  # the stand-in's clock, ahead of loadgen's


class _Agent(BaseHTTPRequestHandler):
    delay_s = 0.0
    asked_since: ClassVar[list[int]] = []  # what each /samples asked from

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        if url.path == "/clock":
            time.sleep(type(self).delay_s)
            body = orjson.dumps({"mono_ns": clock.now_ns() + AHEAD_NS})
            time.sleep(type(self).delay_s)
        else:
            type(self).asked_since.append(int(parse_qs(url.query)["since"][0]))
            body = orjson.dumps({"samples": [], "truncated": False})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def agent_url() -> Iterator[str]:
    _Agent.delay_s, _Agent.asked_since = 0.0, []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Agent)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(5)


async def _estimate(source: AgentSource, tries: int) -> dict[str, object] | None:
    async with ControlClient() as client:
        return await source.estimate(client, AGENT, tries)


def test_the_first_estimate_finds_the_offset_and_asks_from_before_it(agent_url: str) -> None:
    source = AgentSource(agent_url, "agent-a")
    before = clock.now_ns()
    line = asyncio.run(_estimate(source, 4))
    after = clock.now_ns()
    assert source.offset is not None
    assert abs(source.offset.offset_ns - AHEAD_NS) <= source.offset.uncertainty_ns
    assert line == {
        "type": "clock",
        "source": "agent-a",
        "t_ns": source.offset.measured_at_ns,
        "offset_ns": source.offset.offset_ns,
        "uncertainty_ns": source.offset.uncertainty_ns,
    }
    assert source.since_ns is not None  # the agent's clock, LOOKBACK_NS before the probes
    assert before + AHEAD_NS - LOOKBACK_NS <= source.since_ns <= after + AHEAD_NS - LOOKBACK_NS
    asyncio.run(_samples(source))
    assert _Agent.asked_since == [source.since_ns]


async def _samples(source: AgentSource) -> object:
    async with ControlClient() as client:
        return await source.samples(client, SAMPLES)


def test_a_noisy_batch_keeps_the_tighter_estimate(agent_url: str) -> None:
    source = AgentSource(agent_url, "agent-a")
    asyncio.run(_estimate(source, 4))
    tight = source.offset
    assert tight is not None and tight.uncertainty_ns < 40 * clock.NS_PER_MS
    _Agent.delay_s = 0.1  # each round trip >= 200 ms: uncertainty >= 100 ms
    assert asyncio.run(_estimate(source, 2)) is None
    kept = source.offset
    assert kept is not None
    assert (kept.offset_ns, kept.uncertainty_ns) == (tight.offset_ns, tight.uncertainty_ns)
    assert kept.measured_at_ns > tight.measured_at_ns  # probed again now, not re-probed soon


def test_rows_become_samples_and_lines_in_loadgen_s_clock(agent_url: str) -> None:
    source = AgentSource(agent_url, "agent-a")
    asyncio.run(_estimate(source, 2))
    assert source.offset is not None
    off = source.offset.offset_ns
    t = 10**15
    gpu = {"t_ns": t, "wall_ns": 5, "gpu": 0, "util_gpu_pct": 40.0, "power_w": 100.0}
    sample, line = source.take(gpu)
    assert isinstance(sample, GpuSample) and (sample.t_ns, sample.gpu) == (t - off, 0)
    assert (sample.util_pct, sample.power_w) == (40.0, 100.0)
    assert line == {
        "type": "gpu",
        "source": "agent-a",
        "t_ns": t - off,
        "agent_t_ns": t,
        "agent_wall_ns": 5,
        "gpu": 0,
        "util_gpu_pct": 40.0,
        "power_w": 100.0,
    }
    host, line = source.take({"t_ns": t + 9, "kind": "host", "cpu_util_pct": 3.0})
    assert isinstance(host, HostSample) and host.t_ns == t + 9 - off
    assert (line["type"], line["agent_wall_ns"], line["cpu_util_pct"]) == ("host", None, 3.0)
    nameless, line = source.take({"t_ns": t + 4})  # a GPU row naming no GPU: no sample
    assert nameless is None and line["type"] == "gpu"
    assert source.since_ns == t + 9  # the newest held, not the last taken
