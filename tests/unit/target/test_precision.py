"""What servers state of their dtype, quantization and KV cache dtype, and where.

The vLLM shapes are a real vLLM 0.32 (CPU) server's answers, trimmed
(``data/``): ``/server_info?config_format=json`` and its text form, and the
``vllm:cache_config_info`` gauge of ``/metrics``. SGLang's and TGI's are the
keys their info answers carry (SGLang ``/get_server_info``: its server
arguments, ``dataclasses.asdict(server_args)``; TGI ``/info``: ``model_dtype``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from loadgen.summary import ClientHost, Environment
from loadgen.target.precision import (
    from_config_info,
    from_engine_info,
    from_vllm_server_info,
)
from loadgen.telemetry.prom import parse_prometheus_text

DATA = Path(__file__).parent / "data"
CLIENT = ClientHost(hostname="h", cpu_count=2, python="3.11", os="Linux")


def _env() -> Environment:
    return Environment(loadgen_version="0", client=CLIENT)


def _json(name: str) -> Any:
    return json.loads((DATA / name).read_text())


def _cache_info() -> tuple[str, dict[str, str]]:
    samples, bad = parse_prometheus_text((DATA / "vllm-0.32-cache_config_info.prom").read_text())
    assert bad == 0
    (info,) = [s for s in samples if s.name.endswith("config_info")]
    return info.name, dict(info.labels)


def test_vllm_server_info_json_states_all_three() -> None:
    env = _env()
    assert from_vllm_server_info(env, _json("vllm-0.32-server_info.json"))
    assert (env.dtype, env.quantization, env.kv_cache_dtype) == ("torch.bfloat16", "none", "auto")
    at = "GET /server_info vllm_config"
    assert env.precision_from == {
        "dtype": f"{at}.model_config.dtype",
        "quantization": f"{at}.model_config.quantization",
        "kv_cache_dtype": f"{at}.cache_config.cache_dtype",
    }


def test_vllm_quantized_and_fp8_cache() -> None:
    body = _json("vllm-0.32-server_info.json")
    body["vllm_config"]["model_config"]["quantization"] = "fp8"
    body["vllm_config"]["cache_config"]["cache_dtype"] = "fp8_e4m3"
    env = _env()
    from_vllm_server_info(env, body)
    assert (env.quantization, env.kv_cache_dtype) == ("fp8", "fp8_e4m3")


def test_a_null_quantization_beside_a_quantization_config_states_nothing() -> None:
    body = _json("vllm-0.32-server_info.json")
    body["vllm_config"]["model_config"]["quantization_config"] = {"linear": {"method": "fp8"}}
    env = _env()
    from_vllm_server_info(env, body)
    assert env.quantization is None and "quantization" not in env.precision_from
    assert env.dtype == "torch.bfloat16"


def test_vllm_server_info_text_form() -> None:
    env = _env()
    assert from_vllm_server_info(env, _json("vllm-0.32-server_info-text.json"))
    assert (env.dtype, env.quantization, env.kv_cache_dtype) == ("torch.bfloat16", "none", "auto")
    assert env.precision_from["dtype"] == "GET /server_info vllm_config (text) dtype"
    # kv_cache_dtype=auto is not read as dtype=auto: the key is matched whole
    assert (
        env.precision_from["kv_cache_dtype"] == "GET /server_info vllm_config (text) kv_cache_dtype"
    )


def test_another_answer_is_not_taken_for_vllms() -> None:
    env = _env()
    assert not from_vllm_server_info(env, {"uptime": 3.0, "resources": {}})
    assert not from_vllm_server_info(env, ["vllm_config"])
    assert (env.dtype, env.quantization, env.kv_cache_dtype, env.precision_from) == (
        None,
        None,
        None,
        {},
    )


def test_vllm_metrics_state_the_cache_dtype_only() -> None:
    name, labels = _cache_info()
    env = _env()
    from_config_info(env, name, labels)
    assert env.kv_cache_dtype == "auto"
    assert env.precision_from == {
        "kv_cache_dtype": "GET /metrics vllm:cache_config_info cache_dtype"
    }
    assert env.dtype is None and env.quantization is None  # the gauge has neither


def test_the_first_source_wins_and_clears_the_reason() -> None:
    env = _env()
    env.missing["kv_cache_dtype"] = "why not"
    from_vllm_server_info(env, _json("vllm-0.32-server_info.json"))
    name, labels = _cache_info()
    from_config_info(env, name, {**labels, "cache_dtype": "fp8"})
    assert env.kv_cache_dtype == "auto"
    assert env.precision_from["kv_cache_dtype"].startswith("GET /server_info")
    assert "kv_cache_dtype" not in env.missing


def test_config_info_labels_of_dtype_and_quantization() -> None:
    env = _env()
    from_config_info(env, "eng:model_config_info", {"dtype": "float16", "quantization": "None"})
    assert env.dtype == "float16" and env.quantization is None  # "None" is no statement
    assert env.precision_from == {"dtype": "GET /metrics eng:model_config_info dtype"}


def test_sglang_server_info_states_its_arguments() -> None:
    body = {
        "model_path": "meta-llama/Llama-3.1-8B-Instruct",
        "dtype": "auto",
        "kv_cache_dtype": "fp8_e5m2",
        "quantization": None,  # --quantization not given: says nothing of the checkpoint
        "context_length": None,
        "version": "0.4.6",
    }
    env = _env()
    from_engine_info(env, "sglang", "/get_server_info", body)
    assert (env.dtype, env.quantization, env.kv_cache_dtype) == ("auto", None, "fp8_e5m2")
    assert env.precision_from == {
        "dtype": "GET /get_server_info dtype",
        "kv_cache_dtype": "GET /get_server_info kv_cache_dtype",
    }
    env = _env()
    from_engine_info(env, "sglang", "/get_server_info", {**body, "quantization": "awq"})
    assert env.quantization == "awq"


def test_tgi_info_states_the_dtype_only() -> None:
    body = {
        "model_id": "bigscience/bloom-560m",
        "model_sha": "e985a63cdc139290c5f700ff1929f0b5942cced2",
        "model_dtype": "torch.float16",
        "model_device_type": "cuda",
        "max_total_tokens": 2048,
        "version": "3.3.4",
    }
    env = _env()
    from_engine_info(env, "tgi", "/info", body)
    assert (env.dtype, env.quantization, env.kv_cache_dtype) == ("torch.float16", None, None)
    assert env.precision_from == {"dtype": "GET /info model_dtype"}
    env = _env()
    from_engine_info(env, "llama.cpp", "/props", {"model_dtype": "f16"})
    assert env.dtype is None  # only the engines known to state it are read
