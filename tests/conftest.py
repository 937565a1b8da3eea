"""Fixtures shared by the test folders: a real agent process on an ephemeral port, by PID;
a self-signed TLS certificate for 127.0.0.1."""

from __future__ import annotations

import os
import select
import shutil
import signal
import ssl
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
Spawn = Callable[..., tuple[subprocess.Popen[str], str]]


def spawn_agent(*args: str, env: dict[str, str] | None = None, timeout_s: float = 15.0):
    """Start ``python -m loadgen.gpu_agent --port 0 ARGS``; return (process, base URL)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "loadgen.gpu_agent", "--port", "0", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout_s)
    line = proc.stdout.readline() if ready else ""
    if not line.startswith("loadgen-agent listening on "):
        stop_agent(proc)
        pytest.fail(f"agent did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}")
    return proc, line.strip().rsplit(" ", 1)[1]


def stop_agent(proc: subprocess.Popen[str]) -> int:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    return proc.returncode


@pytest.fixture
def stop() -> Callable[[subprocess.Popen[str]], int]:
    """Stop an agent by PID (SIGTERM, then SIGKILL); returns its exit code."""
    return stop_agent


@pytest.fixture
def agent_proc() -> Iterator[Spawn]:
    started: list[subprocess.Popen[str]] = []

    def spawn(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str]:
        proc, url = spawn_agent(*args, env=env)
        started.append(proc)
        return proc, url

    yield spawn
    for proc in started:
        stop_agent(proc)


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost, made here with openssl; its key."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a test certificate")
    tmp = tmp_path_factory.mktemp("tls")
    cert, key = tmp / "cert.pem", tmp / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost"),
            *("-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


@pytest.fixture(scope="session")
def tls_certificate(tls_files: tuple[Path, Path]) -> tuple[Path, ssl.SSLContext]:
    """The certificate of ``tls_files`` and a server context that uses it."""
    cert, key = tls_files
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    return cert, ctx


@pytest.fixture(autouse=True)
def _no_secrets_carried_over() -> Iterator[None]:
    """A scenario loaded in one test registers its secrets with loadgen.redact (for the
    process's life, as in a run): forget them after each test, so none redacts another's."""
    yield
    from loadgen.redact import set_secrets

    set_secrets([])
