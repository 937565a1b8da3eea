"""The environment gathered before the first step never fails the run: what it cannot
learn is null, and ``missing`` says why."""

from __future__ import annotations

import socket

from loadgen.target.environment import gather_environment


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_nothing_listening_is_null_with_reasons() -> None:
    port = _closed_port()
    env = gather_environment(f"http://127.0.0.1:{port}", "m", agents=[f"http://127.0.0.1:{port}"])
    assert (env.model, env.engine, env.cache_config, env.gpus) == (None, None, None, None)
    assert env.missing["model"].startswith("GET /v1/models")
    assert env.missing["engine"].startswith("no engine endpoint answered")
    assert env.missing["cache_config"].startswith("GET /metrics")
    assert env.missing["gpus"] == "no agent answered GET /health"
    assert f"gpus http://127.0.0.1:{port}" in env.missing
    assert env.client.hostname == socket.gethostname() and env.loadgen_version


def test_no_agent_named_says_so() -> None:
    env = gather_environment("http://127.0.0.1:1", "m", server=False)
    assert env.missing == {"gpus": "no telemetry agent named (telemetry.agents)"}
