"""The precision a server states, gathered over real sockets on 127.0.0.1, and what the
scenario declares beside it.

Raw servers answer as vLLM 0.32 does (its real answers, trimmed:
tests/unit/target/data/): with ``VLLM_SERVER_DEV_MODE=1`` ``/server_info``
states the dtype, quantization and KV cache dtype; without it that route is a
404, and only ``/metrics`` states the KV cache dtype. SGLang states its
arguments in ``/get_server_info``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from loadgen.target.environment import environment_of, gather_environment
from tests.integration.conftest import make_scenario
from tests.integration.test_no_file import Routes, RouteServer

DATA = Path(__file__).parents[1] / "unit" / "target" / "data"
MODELS = {"object": "list", "data": [{"id": "tiny-llama", "max_model_len": 2048}]}


def _vllm_routes(dev_mode: bool) -> Routes:
    info = json.loads((DATA / "vllm-0.32-server_info.json").read_text())
    metrics = (DATA / "vllm-0.32-cache_config_info.prom").read_text()
    routes: Routes = {
        ("GET", "/v1/models"): lambda _b: (200, MODELS),
        ("GET", "/version"): lambda _b: (200, {"version": "0.32.0"}),
        ("GET", "/metrics"): lambda _b: (200, metrics),
    }
    if dev_mode:
        routes[("GET", "/server_info?config_format=json")] = lambda _b: (200, info)
    return routes


@contextmanager
def _serving(routes: Routes) -> Iterator[RouteServer]:
    server = RouteServer(routes)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def test_vllm_in_dev_mode_states_all_three_at_server_info() -> None:
    with _serving(_vllm_routes(dev_mode=True)) as server:
        env = gather_environment(server.root, "tiny-llama")
    assert (env.engine, env.engine_version) == ("vllm", "0.32.0")
    assert (env.dtype, env.quantization, env.kv_cache_dtype) == ("torch.bfloat16", "none", "auto")
    assert env.precision_from == {
        "dtype": "GET /server_info vllm_config.model_config.dtype",
        "quantization": "GET /server_info vllm_config.model_config.quantization",
        "kv_cache_dtype": "GET /server_info vllm_config.cache_config.cache_dtype",
    }
    assert not {"dtype", "quantization", "kv_cache_dtype"} & set(env.missing)
    assert env.cache_config is not None and env.cache_config["cache_dtype"] == "auto"


def test_vllm_without_dev_mode_states_the_cache_dtype_and_says_why_not_the_rest() -> None:
    with _serving(_vllm_routes(dev_mode=False)) as server:
        env = gather_environment(server.root, "tiny-llama")
        asked = [path for _m, path, _b in server.asked]
    assert "/server_info?config_format=json" in asked
    assert (env.dtype, env.quantization, env.kv_cache_dtype) == (None, None, "auto")
    assert env.precision_from == {
        "kv_cache_dtype": "GET /metrics vllm:cache_config_info cache_dtype"
    }
    for key in ("dtype", "quantization"):
        assert env.missing[key] == (
            "vLLM states it only at GET /server_info, served with VLLM_SERVER_DEV_MODE=1 "
            "(GET /server_info?config_format=json answered 404)"
        )
    assert "kv_cache_dtype" not in env.missing


def test_sglang_states_its_arguments_and_server_info_is_not_asked() -> None:
    info = {"model_path": "m", "dtype": "bfloat16", "quantization": None, "version": "0.4.6"}
    routes: Routes = {
        ("GET", "/v1/models"): lambda _b: (200, {"data": [{"id": "m"}]}),
        ("GET", "/get_server_info"): lambda _b: (200, info),
    }
    with _serving(routes) as server:
        env = gather_environment(server.root, "m")
        asked = [path for _m, path, _b in server.asked]
    assert env.engine == "sglang" and env.dtype == "bfloat16"
    assert env.precision_from == {"dtype": "GET /get_server_info dtype"}
    assert env.quantization is None and "quantization" in env.missing
    assert not any(path.startswith("/server_info") for path in asked)


def test_the_scenario_declares_what_the_server_does_not_state() -> None:
    with _serving(_vllm_routes(dev_mode=False)) as server:
        sc = make_scenario(
            target={
                "url": server.root,
                "model": "tiny-llama",
                "declared": {"dtype": "bfloat16", "quantization": "none"},
            }
        )
        env = environment_of(sc, server.root)
    assert env.declared == {"dtype": "bfloat16", "quantization": "none"}
    assert env.dtype is None and "dtype" in env.missing  # declared, not taken for stated
    down = environment_of(sc, "http://127.0.0.1:1", healthy=False)
    assert down.declared == env.declared


def test_vllm_without_dev_mode_or_metrics_states_none_of_them() -> None:
    routes = _vllm_routes(dev_mode=False)
    del routes[("GET", "/metrics")]
    with _serving(routes) as server:
        env = gather_environment(server.root, "tiny-llama")
    assert (env.dtype, env.quantization, env.kv_cache_dtype) == (None, None, None)
    assert env.precision_from == {}
    assert "VLLM_SERVER_DEV_MODE=1" in env.missing["quantization"]
    assert env.missing["kv_cache_dtype"] == "neither the engine's info nor /metrics states it"
