"""The agent as a process: start-up line, exit codes, flags, shutdown by signal."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from loadgen.gpu_agent import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
Spawn = Callable[..., tuple[subprocess.Popen[str], str]]
Stop = Callable[[subprocess.Popen[str]], int]


def _nvml_present() -> bool:
    import pynvml

    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        return False
    pynvml.nvmlShutdown()
    return True


@pytest.mark.skipif(_nvml_present(), reason="this machine has NVML")
def test_no_nvml_one_line_and_exit_2() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "loadgen.gpu_agent", "--port", "0"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "no NVML" in lines[0] and "--host-stats" in lines[0]


def test_host_stats_serves_host_rows_and_stops_cleanly(agent_proc: Spawn, stop: Stop) -> None:
    proc, url = agent_proc("--host-stats", "--interval-ms", "50")
    assert url.startswith("http://127.0.0.1:")
    rows = httpx.get(f"{url}/samples?since=0", timeout=5).json()["samples"]
    assert rows and all(r["kind"] == "host" for r in rows)
    assert stop(proc) == 0


def test_fake_nvml_with_token(agent_proc: Spawn) -> None:
    _, url = agent_proc("--fake-nvml", "3", "--token-env", "AGENT_TOKEN", env={"AGENT_TOKEN": "t"})
    assert httpx.get(f"{url}/samples", timeout=5).status_code == 401
    health = httpx.get(f"{url}/health", timeout=5).json()
    assert len(health["gpus"]) == 3 and health["fake_nvml"] and health["auth"]
    ok = httpx.get(f"{url}/samples", headers={"Authorization": "Bearer t"}, timeout=5)
    assert {r["gpu"] for r in ok.json()["samples"]} == {0, 1, 2}


def test_public_bind_without_token_refused_in_one_line() -> None:
    args = ["--port", "0", "--fake-nvml", "1", "--host", "0.0.0.0"]
    done = subprocess.run(
        [sys.executable, "-m", "loadgen.gpu_agent", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "0.0.0.0" in lines[0] and "--insecure" in lines[0]


def test_public_bind_with_insecure_warns_and_serves(agent_proc: Spawn) -> None:
    proc, url = agent_proc("--fake-nvml", "1", "--host", "0.0.0.0", "--insecure")
    port = url.rsplit(":", 1)[1]
    assert httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).status_code == 200
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0 and "--insecure" in err and "without a token" in err


def test_token_flag_refused_token_file_accepted(
    agent_proc: Spawn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (["--token", "X"], ["--token=X"]):
        assert main(["--fake-nvml", "1", *argv]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "--token-file" in err[0] and "--token-env" in err[0]
    empty = tmp_path / "empty"
    empty.write_text("\n")
    assert main(["--fake-nvml", "1", "--token-file", str(empty)]) == 2
    assert main(["--fake-nvml", "1", "--token-file", str(tmp_path / "missing")]) == 2
    token = tmp_path / "token"
    token.write_text("s3cret\n")
    _, url = agent_proc("--fake-nvml", "1", "--host", "0.0.0.0", "--token-file", str(token))
    port = url.rsplit(":", 1)[1]
    base = f"http://127.0.0.1:{port}"
    assert httpx.get(f"{base}/samples", timeout=5).status_code == 401
    ok = httpx.get(f"{base}/samples", headers={"Authorization": "Bearer s3cret"}, timeout=5)
    assert ok.status_code == 200


def test_bad_input_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--no-such-flag"]) == 2
    assert main(["--interval-ms", "0"]) == 2
    assert main(["--max-connections", "0"]) == 2
    assert main(["--header-timeout-s", "0"]) == 2
    assert main(["--fake-nvml", "1", "--token-env", "LOADGEN_TEST_UNSET_VAR"]) == 2
    assert "LOADGEN_TEST_UNSET_VAR" in capsys.readouterr().err
    assert main(["--help"]) == 0


def test_port_in_use_exit_2() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "loadgen.gpu_agent", "--fake-nvml", "1", "--port", str(port)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert done.returncode == 2 and "cannot listen" in done.stderr


def test_parser_flags() -> None:
    flags = {opt for a in build_parser()._actions for opt in a.option_strings}
    expected = {"--host", "--port", "--interval-ms", "--buffer-s", "--token-env", "--host-stats"}
    assert expected <= flags


def test_a_token_file_that_never_ends_is_refused_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The probe: `loadgen agent --token-file /dev/zero` read forever (a MemoryError, or
    gigabytes until the kernel killed it). Only a regular file of at most 4 KiB is read."""
    assert main(["--fake-nvml", "1", "--token-file", "/dev/zero"]) == 2
    assert "--token-file /dev/zero: not a regular file" in capsys.readouterr().err
    big = tmp_path / "big"
    big.write_bytes(b"x" * 5000)
    assert main(["--fake-nvml", "1", "--token-file", str(big)]) == 2
    assert "over 4,096 bytes" in capsys.readouterr().err
