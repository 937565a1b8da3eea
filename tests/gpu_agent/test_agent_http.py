"""The agent's HTTP endpoints, for real over a socket on 127.0.0.1 (ephemeral port)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

import httpx

from loadgen.gpu_agent.fake_nvml import FakeNvml
from loadgen.gpu_agent.host import HostSampler
from loadgen.gpu_agent.ring import Ring, SamplingThread
from loadgen.gpu_agent.sampler import Sampler
from loadgen.gpu_agent.server import AgentState, build_app, start_server
from loadgen.telemetry.prom import parse_prometheus_text


def _state(token: str | None = None) -> AgentState:
    nv = FakeNvml(2)
    nv.gpus[1].unsupported.add("energy")
    sampler = Sampler(nv)
    host = HostSampler()
    ring = Ring(100)
    thread = SamplingThread(ring, [sampler.sample, lambda: [host.sample()]], 10**9)
    thread.tick()
    thread.tick()
    return AgentState(ring, thread, sampler, 0.1, 600.0, True, True, token)


def _serve(state: AgentState, body: Callable[[httpx.AsyncClient], Awaitable[None]]) -> None:
    async def run() -> None:
        serving = await start_server(build_app(state), "127.0.0.1", 0)
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{serving.port}") as client:
                await body(client)
        finally:
            await serving.close()

    asyncio.run(run())


def test_health_clock_samples_metrics() -> None:
    state = _state()

    async def body(c: httpx.AsyncClient) -> None:
        health = (await c.get("/health")).json()
        assert health["status"] == "ok" and health["driver_version"] == "fake-555.42"
        assert [g["energy_source"] for g in health["gpus"]] == ["counter", "integrated"]
        assert health["interval_s"] == 0.1 and health["host_stats"] is True
        assert health["cuda_version"] == "12.4"
        assert [g["processes"] for g in health["gpus"]] == [
            [{"pid": 4200, "used_bytes": 1 << 30}],
            [{"pid": 4201, "used_bytes": 1 << 30}],
        ]

        before = time.monotonic_ns()
        clock = (await c.get("/clock")).json()
        assert before <= clock["mono_ns"] <= time.monotonic_ns()

        data = (await c.get("/samples", params={"since": 0})).json()
        kinds = [s["kind"] for s in data["samples"]]
        assert kinds == ["gpu", "gpu", "host"] * 2
        assert data["truncated"] is False and data["now_ns"] >= data["samples"][-1]["t_ns"]
        newest = data["samples"][-1]["t_ns"]
        assert (await c.get("/samples", params={"since": newest})).json()["samples"] == []
        assert (await c.get("/samples", params={"since": "soon"})).status_code == 400

        text = (await c.get("/metrics")).text
        samples, bad = parse_prometheus_text(text)
        assert bad == 0
        names = {s.name for s in samples}
        assert "loadgen_agent_gpu_utilization_percent" in names
        assert "loadgen_agent_host_memory_used_bytes" in names
        energy = [s for s in samples if s.name == "loadgen_agent_gpu_energy_joules_total"]
        assert {s.labels["source"] for s in energy} == {"counter", "integrated"}
        assert any(s.name == "loadgen_agent_sampling_ticks_total" and s.value == 2 for s in samples)

    _serve(state, body)


def test_token_guards_everything_but_health() -> None:
    state = _state(token="s3cret")

    async def body(c: httpx.AsyncClient) -> None:
        assert (await c.get("/health")).status_code == 200
        for path in ("/samples", "/metrics", "/clock"):
            denied = await c.get(path)
            assert denied.status_code == 401 and denied.headers["WWW-Authenticate"] == "Bearer"
            wrong = await c.get(path, headers={"Authorization": "Bearer nope"})
            assert wrong.status_code == 401
            ok = await c.get(path, headers={"Authorization": "Bearer s3cret"})
            assert ok.status_code == 200

    _serve(state, body)
