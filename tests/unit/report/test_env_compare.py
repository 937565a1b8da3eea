"""What compare says of workloads and environments, on constructed runs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from loadgen.compare.workloads import WorkloadMismatchError, check_workloads, workload_differences
from loadgen.report.environment import environment_table, hardware_warnings
from loadgen.summary import ClientHost, EnvGpu, Environment, Summary

CLIENT = ClientHost(hostname="h", cpu_count=2, python="3.11", os="Linux")


@dataclass(frozen=True)
class FakeRun:
    name: str
    path: Path
    summary: Summary


def _summary(env: Environment | None) -> Summary:
    return Summary.model_validate(
        {
            "loadgen_version": "0",
            "name": "x",
            "run_id": "r",
            "target_url": "http://t",
            "api": "openai-chat",
            "model": "m",
            "clock_anchor": {"monotonic_ns": 0, "wall_ns": 0},
            "environment": env.model_dump() if env else None,
        }
    )


def _run(tmp: Path, name: str, scenario: dict[str, Any], env: Environment | None) -> FakeRun:
    folder = tmp / name
    folder.mkdir()
    (folder / "scenario.yaml").write_text(yaml.safe_dump(scenario))
    return FakeRun(name, folder, _summary(env))


def _sc(output: int = 16, rate: list[float] | None = None, arrival: str = "poisson") -> dict:
    return {
        "target": {"api": "openai-chat", "model": "m"},
        "workload": {"seed": 0, "output_tokens": {"dist": "fixed", "value": output}},
        "load": {"mode": "rate", "rate": rate or [1.0], "arrival": arrival},
    }


def _env(gpu: str = "H100", driver: str = "550", engine_version: str = "0.32.0") -> Environment:
    return Environment(
        loadgen_version="0",
        client=CLIENT,
        engine="vllm",
        engine_version=engine_version,
        gpus=[EnvGpu(agent="a", index=i, name=gpu) for i in range(2)],
        gpu_driver=driver,
    )


def test_load_values_are_not_a_workload_difference(tmp_path: Path) -> None:
    a = _run(tmp_path, "a", _sc(rate=[1.0, 2.0]), _env())
    b = _run(tmp_path, "b", _sc(rate=[4.0]), _env())
    assert workload_differences([a, b]) == []
    assert check_workloads([a, b]) == []


def test_each_difference_named_and_the_first_refused(tmp_path: Path) -> None:
    a = _run(tmp_path, "a", _sc(), _env())
    b = _run(tmp_path, "b", _sc(output=32, arrival="constant"), _env())
    assert workload_differences([a, b]) == [
        "load.arrival: poisson (a) vs constant (b)",
        "workload.output_tokens.value: 16 (a) vs 32 (b)",
    ]
    with pytest.raises(WorkloadMismatchError) as caught:
        check_workloads([a, b])
    assert "load.arrival: poisson (a) vs constant (b) (and 1 more)" in str(caught.value)
    assert "\n" not in str(caught.value) and caught.value.exit_code == 2
    allowed = check_workloads([a, b], allow_mismatch=True)
    assert len(allowed) == 2 and all(w.startswith("warning: the workloads differ") for w in allowed)


def test_environment_rows_flag_differences(tmp_path: Path) -> None:
    a = _run(tmp_path, "a", _sc(), _env())
    b = _run(tmp_path, "b", _sc(), _env(engine_version="0.32.1"))
    table, flagged = environment_table([a, b])
    assert flagged == ["engine version"]
    rows = {r[0]: r for r in table.rows}
    assert rows["engine version"] == ("engine version", "0.32.0", "0.32.1", "differs")
    assert rows["GPUs"] == ("GPUs", "2 x H100", "2 x H100", "")
    assert hardware_warnings([a, b]) == []


def test_hardware_warns_once_per_kind_and_skips_unknown(tmp_path: Path) -> None:
    a = _run(tmp_path, "a", _sc(), _env())
    b = _run(tmp_path, "b", _sc(), _env(gpu="A100", driver="535"))
    old = _run(tmp_path, "old", _sc(), None)  # a run before the environment block
    assert hardware_warnings([a, b, old]) == [
        "warning: the runs ran on different GPUs (a: 2 x H100; b: 2 x A100)",
        "warning: the runs ran on different GPU drivers (a: 550; b: 535)",
    ]
    _, flagged = environment_table([a, old])
    assert "recorded" in flagged


def test_stated_and_declared_precision_are_rows_apart_each_flagged(tmp_path: Path) -> None:
    fp16 = _env()
    fp16.dtype, fp16.quantization, fp16.kv_cache_dtype = "torch.float16", "none", "auto"
    fp16.declared = {"dtype": "float16"}
    fp8 = _env()
    fp8.dtype, fp8.quantization, fp8.kv_cache_dtype = "torch.float16", "fp8", "fp8_e4m3"
    fp8.declared = {"dtype": "float16", "quantization": "fp8"}
    a = _run(tmp_path, "a", _sc(), fp16)
    b = _run(tmp_path, "b", _sc(), fp8)
    table, flagged = environment_table([a, b])
    rows = {r[0]: r for r in table.rows}
    assert flagged == ["quantization", "KV cache dtype", "declared quantization"]
    assert rows["dtype"] == ("dtype", "torch.float16", "torch.float16", "")
    assert rows["declared dtype"] == ("declared dtype", "float16", "float16", "")
    assert rows["declared quantization"] == ("declared quantization", "–", "fp8", "differs")
    assert rows["KV cache dtype"] == ("KV cache dtype", "auto", "fp8_e4m3", "differs")
    names = [r[0] for r in table.rows]  # declared beside what the server stated
    assert names.index("declared dtype") == names.index("KV cache dtype") + 1


def test_a_declared_value_the_other_run_did_not_declare_is_flagged(tmp_path: Path) -> None:
    said = _env()
    said.declared = {"kv_cache_dtype": "fp8"}
    a = _run(tmp_path, "a", _sc(), said)
    b = _run(tmp_path, "b", _sc(), _env())
    _, flagged = environment_table([a, b])
    assert flagged == ["declared KV cache dtype"]
    _, flagged = environment_table([b, b])
    assert flagged == []
