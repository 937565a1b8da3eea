"""The environment block of a run against a real vLLM (0.32, CPU): what the server states.

vLLM names itself and its version at ``GET /version``, lists the model and its
``max_model_len`` (2048, scripts/vllm-cpu.sh) at ``/v1/models``, and states its
cache configuration in ``/metrics`` as the labels of ``vllm:cache_config_info``,
the KV cache dtype (``cache_dtype``) among them. Its dtype and quantization it
states only at ``/server_info``, a development route (``VLLM_SERVER_DEV_MODE=1``):
the session's server has none, so they are null with the reason, and what the
scenario declares stands apart; ``vllm_dev`` has it, and its ``/server_info``
is read (``--dtype bfloat16``, scripts/vllm-cpu.sh; unquantized).
A run records all of it in ``summary.environment`` before its first step.
Only ever run under ``flock /tmp/vllm.lock`` on a shared host (docs/vllm-cpu.md).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import orjson
import pytest

from loadgen.run import RunOptions, run_scenario
from loadgen.scenario import Scenario
from loadgen.summary import Summary
from loadgen.target.environment import gather_environment

if TYPE_CHECKING:  # the fixture's type; conftest is not imported at run time
    from conftest import VllmServer

pytestmark = pytest.mark.vllm

MAX_MODEL_LEN = 2048  # scripts/vllm-cpu.sh: --max-model-len 2048


def test_vllm_in_dev_mode_states_dtype_and_quantization(vllm_dev: VllmServer) -> None:
    env = gather_environment(vllm_dev.url, vllm_dev.model)
    truth = httpx.get(f"{vllm_dev.url}/server_info?config_format=json", timeout=60).json()
    model, cache = truth["vllm_config"]["model_config"], truth["vllm_config"]["cache_config"]
    assert env.dtype == model["dtype"] == "torch.bfloat16"  # --dtype bfloat16
    assert model["quantization"] is None and env.quantization == "none"
    assert env.kv_cache_dtype == cache["cache_dtype"] == "auto"
    at = "GET /server_info vllm_config"
    assert env.precision_from == {
        "dtype": f"{at}.model_config.dtype",
        "quantization": f"{at}.model_config.quantization",
        "kv_cache_dtype": f"{at}.cache_config.cache_dtype",
    }
    assert not {"dtype", "quantization", "kv_cache_dtype"} & set(env.missing), env.missing
    assert (env.engine, env.max_model_len) == ("vllm", MAX_MODEL_LEN)


def test_environment_of_a_vllm_run(
    vllm_server: VllmServer, scenario: Callable[..., Scenario], tmp_path: Path
) -> None:
    sc = scenario(
        target={
            "url": vllm_server.url,
            "api": "openai-completions",
            "model": vllm_server.model,
            "extra_body": {"ignore_eos": True},
            "timeouts_s": {"first_token": 60, "idle": 30, "total": 300},
            "declared": {"dtype": "bfloat16", "quantization": "none"},
        },
        workload={
            "prompt_tokens": {"dist": "fixed", "value": 16},
            "output_tokens": {"dist": "fixed", "value": 4},
        },
        load={"mode": "concurrency", "concurrency": [1], "requests_per_step": 2},
    )
    run_scenario(sc, RunOptions(out_dir=tmp_path, quiet=True, reports=False))
    env = Summary.model_validate(orjson.loads((tmp_path / "summary.json").read_bytes())).environment
    assert env is not None
    assert (env.engine, env.engine_from) == ("vllm", "GET /version")
    assert env.engine_version is not None and env.engine_version.startswith("0.32."), env
    assert env.model == vllm_server.model == "tiny-llama"
    assert env.max_model_len == MAX_MODEL_LEN
    cache = env.cache_config or {}
    assert int(cache["block_size"]) > 0, cache
    assert cache["enable_prefix_caching"] == "True", cache  # on by default in vLLM V1
    assert 0 < float(cache["gpu_memory_utilization"]) <= 1, cache
    # no agent named: no GPUs, and why
    assert env.gpus is None and "gpus" in env.missing
    # the KV cache dtype from the gauge; dtype and quantization stated nowhere without
    # dev mode: null, the reason, and the scenario's word kept apart as declared
    assert env.kv_cache_dtype == cache["cache_dtype"] == "auto", cache
    assert env.precision_from == {
        "kv_cache_dtype": "GET /metrics vllm:cache_config_info cache_dtype"
    }
    for key in ("dtype", "quantization"):
        assert getattr(env, key) is None
        assert env.missing[key] == (
            "vLLM states it only at GET /server_info, served with VLLM_SERVER_DEV_MODE=1 "
            "(GET /server_info?config_format=json answered 404)"
        )
    assert env.declared == {"dtype": "bfloat16", "quantization": "none"}
