"""The environment block and the comparisons that refuse unequal runs, on real runs.

Three runs against the built-in mock over 127.0.0.1, each with a fake-NVML
agent as telemetry: A and B the same workload on differently named GPUs, C
A's workload with longer outputs. The environment A recorded is what the mock
and the agent answer; ``loadgen compare`` warns of B's GPUs in one line,
refuses C in one line (exit 2), and takes C with ``--allow-workload-mismatch``.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from loadgen.cli import main
from loadgen.mock.server import MOCK_VERSION
from loadgen.run import RunOptions, run_scenario
from loadgen.summary import Summary
from tests.conftest import spawn_agent, stop_agent
from tests.integration.conftest import make_scenario

GIB = 1 << 30


def _run(out: Path, agent: str, output_tokens: int) -> Summary:
    sc = make_scenario(
        name="env-it",
        target={"mock": {"args": ["--ttft-ms", "5", "--itl-ms", "8"]}},
        workload={"output_tokens": {"dist": "fixed", "value": output_tokens}},
        load={"concurrency": [1], "requests_per_step": 6, "warmup_requests": 0},
        telemetry={"agents": [agent], "interval_s": 0.1},
    )
    return run_scenario(sc, RunOptions(out_dir=out, quiet=True, reports=False))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    root = tmp_path_factory.mktemp("env")
    agents: list[subprocess.Popen[str]] = []
    try:
        proc_a, url_a = spawn_agent("--fake-nvml", "2", "--interval-ms", "50")
        agents.append(proc_a)
        proc_b, url_b = spawn_agent(
            "--fake-nvml", "2", "--interval-ms", "50", "--fake-gpu-name", "Other GPU"
        )
        agents.append(proc_b)
        dirs = {"a": root / "a", "b": root / "b", "c": root / "c"}
        _run(dirs["a"], url_a, 16)
        _run(dirs["b"], url_b, 16)
        _run(dirs["c"], url_a, 32)
        yield dirs
    finally:
        for proc in agents:
            stop_agent(proc)


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = 0
    try:
        main(args)
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_environment_is_what_the_mock_and_agent_say(runs: dict[str, Path]) -> None:
    data = orjson.loads((runs["a"] / "summary.json").read_bytes())
    env = Summary.model_validate(data).environment
    assert env is not None
    assert env.model == "m" and env.max_model_len == 8192  # the mock's default profile
    assert (env.engine, env.engine_version, env.engine_from) == (
        "vllm",
        MOCK_VERSION,
        "GET /version",
    )
    assert env.cache_config == {
        "block_size": "16",
        "cache_dtype": "auto",
        "enable_prefix_caching": "True",
        "num_gpu_blocks": str(65_536 // 16),
    }
    assert env.gpus is not None and [g.name for g in env.gpus] == ["Fake GPU"] * 2
    assert [g.mem_total_bytes for g in env.gpus] == [80 * GIB] * 2
    assert [[(p.pid, p.used_bytes) for p in g.processes or []] for g in env.gpus] == [
        [(4200, GIB)],
        [(4201, GIB)],
    ]
    assert env.gpu_driver == "fake-555.42" and env.cuda_version == "12.4"
    assert env.client.cpu_count is not None and env.client.python and env.client.hostname
    # the mock states neither dtype nor quantization (no /server_info): null, and why;
    # its vllm:cache_config_info states the KV cache dtype
    assert env.dtype is None and "dtype" in env.missing and "quantization" in env.missing
    assert "VLLM_SERVER_DEV_MODE=1" in env.missing["dtype"]
    assert env.kv_cache_dtype == "auto" and "kv_cache_dtype" not in env.missing
    assert env.precision_from == {
        "kv_cache_dtype": "GET /metrics vllm:cache_config_info cache_dtype"
    }
    assert env.declared == {}
    assert "gpus" not in env.missing and "model" not in env.missing
    # the server's footprint under load, from the agent's samples
    step = Summary.model_validate(data).steps[0]
    assert step.telemetry is not None
    peaks = [g.processes_mem_bytes for g in step.telemetry.gpus]
    assert [p.peak if p else None for p in peaks] == [GIB, GIB]


def test_compare_warns_of_other_gpus_in_one_line(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _cli(
        ["compare", str(runs["a"]), str(runs["b"]), "--out", str(tmp_path / "ab")], capsys
    )
    assert code == 0, err
    warned = [line for line in err.splitlines() if line.startswith("warning:")]
    assert warned == ["warning: the runs ran on different GPUs (a: 2 x Fake GPU; b: 2 x Other GPU)"]
    rows = {line.split("  ")[0]: line for line in out.splitlines()}
    assert "differs" in rows["GPUs"] and "differs" not in rows["engine"]
    assert "differs: GPUs" in out.splitlines()
    assert "2.0 GiB (server processes)" in rows["peak GPU memory"]  # 1 GiB on each GPU
    assert "## Environment" in (tmp_path / "ab" / "comparison.md").read_text()


def test_compare_refuses_another_workload_in_one_line(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _cli(
        ["compare", str(runs["a"]), str(runs["c"]), "--out", str(tmp_path / "ac")], capsys
    )
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "workload.output_tokens.value: 16 (a) vs 32 (c)" in lines[0]
    assert "--allow-workload-mismatch" in lines[0]
    assert not (tmp_path / "ac").exists()

    code, out, err = _cli(
        [
            "compare",
            str(runs["a"]),
            str(runs["c"]),
            "--out",
            str(tmp_path / "ac"),
            "--allow-workload-mismatch",
        ],
        capsys,
    )
    assert code == 0, err
    assert err.splitlines() == [
        "warning: the workloads differ: workload.output_tokens.value: 16 (a) vs 32 (c)"
    ]
    assert (tmp_path / "ac" / "comparison.md").is_file()
