"""scripts/gpu-check.sh paths that run without a GPU."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "gpu-check.sh"


def _nvml_present() -> bool:
    import pynvml

    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        return False
    pynvml.nvmlShutdown()
    return True


def _run(**env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHON": sys.executable, **env},
    )


@pytest.mark.skipif(_nvml_present(), reason="this machine has a GPU")
def test_no_gpu_says_so_and_exits_2() -> None:
    done = _run()
    assert done.returncode == 2
    assert "no NVIDIA GPU" in done.stdout or "cannot open a GPU" in done.stdout


@pytest.mark.skipif(importlib.util.find_spec("torch") is not None, reason="torch would load")
def test_fake_gpus_run_the_whole_script() -> None:
    done = _run(GPU_CHECK_FAKE="1", BASELINE_S="0.5")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "GPU 0: Fake GPU" in done.stdout and "SKIPPED load checks" in done.stdout
