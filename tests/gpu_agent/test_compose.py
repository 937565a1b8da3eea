"""docker-compose.yml and Dockerfile, checked without a Docker engine.

Every ``loadgen ...`` command the compose file runs must name a real
subcommand; ``loadgen agent`` flags must parse with the agent's own parser.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from loadgen.gpu_agent import build_parser

ROOT = Path(__file__).resolve().parents[2]
SUBCOMMANDS = {"run", "mock", "agent", "report", "compare"}
LOADGEN_IMAGE = "loadgen:local"


@pytest.fixture(scope="module")
def services() -> dict[str, dict[str, Any]]:
    doc = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return dict(doc["services"])


def _loadgen_services(services: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {name: s for name, s in services.items() if s.get("image") == LOADGEN_IMAGE}


def test_every_loadgen_command_exists(services: dict[str, dict[str, Any]]) -> None:
    ours = _loadgen_services(services)
    assert {"agent", "runner", "mock", "agent-cpu", "runner-cpu"} <= set(ours)
    for name, svc in ours.items():
        command = svc["command"]
        assert isinstance(command, list), f"{name}: use the exec (list) form"
        assert command[0] in SUBCOMMANDS, f"{name}: unknown subcommand {command[0]!r}"
        if command[0] == "agent":
            try:
                args = build_parser().parse_args(command[1:])
            except SystemExit:
                pytest.fail(f"{name}: `loadgen {' '.join(command)}` does not parse")
            assert args.host == "0.0.0.0" and args.token_env, f"{name}: public bind needs a token"
            assert args.token_env in svc["environment"]
        if command[0] == "run":
            assert command[1].startswith("scenarios/") and "--out" in command
            assert command[command.index("--out") + 1].startswith("/results")
            assert any(v.endswith(":/results") for v in svc["volumes"])


def test_gpu_and_cpu_profiles(services: dict[str, dict[str, Any]]) -> None:
    for name, svc in services.items():
        assert svc.get("profiles") in (["gpu"], ["cpu"], ["monitoring"]), f"{name}: one profile"
    vllm = services["vllm"]
    assert vllm["image"].startswith("${VLLM_IMAGE:-vllm/vllm-openai")
    assert "${MODEL" in vllm["command"] and "${VLLM_ARGS" in vllm["command"]
    for gpu_user in ("vllm", "agent"):
        devices = services[gpu_user]["deploy"]["resources"]["reservations"]["devices"]
        assert devices[0]["driver"] == "nvidia" and "gpu" in devices[0]["capabilities"]
    assert services["runner"]["depends_on"]["vllm"]["condition"] == "service_healthy"
    assert services["runner-cpu"]["depends_on"]["mock"]["condition"] == "service_healthy"
    assert "--host-stats" in services["agent-cpu"]["command"]
    mock = services["mock"]["command"]
    assert mock[:5] == ["mock", "--host", "0.0.0.0", "--port", "8000"]
    for name in ("vllm", "agent", "mock", "agent-cpu"):
        assert "healthcheck" in services[name], name


def test_dockerfile_shape() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.11-slim$", text, re.M)
    assert 'ENTRYPOINT ["loadgen"]' in text
    assert re.search(r"^RUN pip install \.", text, re.M)


def test_entry_point_runs() -> None:
    """What the image's ENTRYPOINT runs, run here: the console script's target."""
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'loadgen = "loadgen.cli:main"' in pyproject
    for argv in (["--help"], ["agent", "--help"]):
        done = subprocess.run(
            [sys.executable, "-c", "from loadgen.cli import main; main()", *argv],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
    assert "--token-env" in done.stdout
