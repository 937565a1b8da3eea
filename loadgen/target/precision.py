"""What a server states of its numeric precision: dtype, quantization, KV cache dtype.

Each value goes into ``summary.environment`` with where it was read
(``Environment.precision_from``: the answer and its key, or the gauge and its
label); the first source that states a field wins, in the order
:mod:`~loadgen.target.environment` asks them:

1. the engine's info answer, once recognised (:func:`from_engine_info`):
   SGLang's ``GET /get_server_info`` (its server arguments ``dtype``,
   ``quantization`` and ``kv_cache_dtype``; ``auto`` where the argument was
   not given; a null ``quantization`` only says ``--quantization`` was not
   given, not that the checkpoint is unquantized, so it states nothing) and
   TGI's ``GET /info`` (``model_dtype``, the dtype it loaded: ``torch.float16``;
   TGI states no quantization there);
2. vLLM's ``GET /server_info?config_format=json`` (:func:`from_vllm_server_info`;
   vLLM serves it only with ``VLLM_SERVER_DEV_MODE=1``):
   ``vllm_config.model_config.dtype`` (resolved: ``torch.bfloat16``),
   ``.quantization`` (resolved from the checkpoint too, so null is ``none``,
   unless a ``quantization_config`` stands beside it) and
   ``vllm_config.cache_config.cache_dtype``; a ``vllm_config`` given as text
   (``..., dtype=torch.bfloat16, ..., quantization=None, ...,
   kv_cache_dtype=auto, ...``, the default ``config_format``) is read too;
3. ``GET /metrics`` (:func:`from_config_info`): the ``cache_dtype`` label of a
   ``*cache_config_info`` gauge (vLLM's ``vllm:cache_config_info``: ``auto``
   is the model's dtype), a ``dtype`` or ``quantization`` label of any
   ``*config_info`` gauge.

vLLM states no dtype or quantization anywhere else (not in ``/v1/models``,
``/version`` or its info gauges). What the scenario declares
(``target.declared``) is kept apart, in ``Environment.declared``.

Nothing here does I/O: the answers are handed in.
"""

from __future__ import annotations

import re
from typing import Any

from loadgen.summary import Environment

__all__ = [
    "DEV_MODE",
    "PRECISION_KEYS",
    "SERVER_INFO",
    "from_config_info",
    "from_engine_info",
    "from_vllm_server_info",
    "state",
]

#: the fields of the environment this module fills, in the order they are shown
PRECISION_KEYS = ("dtype", "quantization", "kv_cache_dtype")
#: vLLM's development endpoint of its whole configuration, in JSON
SERVER_INFO = "/server_info?config_format=json"
#: what vLLM needs to serve :data:`SERVER_INFO`
DEV_MODE = "VLLM_SERVER_DEV_MODE=1"
#: (environment field, key of the answer) per engine whose info answer states them
_INFO_KEYS: dict[str, tuple[tuple[str, str], ...]] = {
    "sglang": (
        ("dtype", "dtype"),
        ("quantization", "quantization"),
        ("kv_cache_dtype", "kv_cache_dtype"),
    ),
    "tgi": (("dtype", "model_dtype"),),
}


def state(env: Environment, key: str, value: object, source: str) -> None:
    """Record ``value`` as ``env.<key>``, read at ``source``, unless a source before said it."""
    if getattr(env, key) is not None or not isinstance(value, str) or not value.strip():
        return
    setattr(env, key, value.strip())
    env.precision_from[key] = source
    env.missing.pop(key, None)


def from_engine_info(env: Environment, engine: str, path: str, body: dict[str, Any]) -> None:
    """What the engine's own info answer (``GET path``) states, for SGLang and TGI."""
    for key, field in _INFO_KEYS.get(engine, ()):
        state(env, key, body.get(field), f"GET {path} {field}")


def from_vllm_server_info(env: Environment, body: Any) -> bool:
    """What vLLM's ``/server_info`` answer states; False if it is not that answer."""
    config = body.get("vllm_config") if isinstance(body, dict) else None
    where = f"GET {SERVER_INFO.split('?')[0]}"
    if isinstance(config, str):
        _from_text(env, config, where)
        return True
    if not isinstance(config, dict):
        return False
    model = config.get("model_config")
    cache = config.get("cache_config")
    if isinstance(model, dict):
        prefix = f"{where} vllm_config.model_config"
        state(env, "dtype", model.get("dtype"), f"{prefix}.dtype")
        quant = model.get("quantization")
        if quant is None and "quantization" in model and model.get("quantization_config") is None:
            quant = "none"  # resolved at start from the checkpoint too: null is unquantized
        state(env, "quantization", quant, f"{prefix}.quantization")
    if isinstance(cache, dict):
        state(
            env,
            "kv_cache_dtype",
            cache.get("cache_dtype"),
            f"{where} vllm_config.cache_config.cache_dtype",
        )
    return True


def _from_text(env: Environment, text: str, where: str) -> None:
    """vLLM's configuration as text: ``key=value`` pairs, ``, `` between them, a value
    bare or in single quotes; the keys are the environment's field names."""
    for key in PRECISION_KEYS:
        found = re.search(rf"(?:^|, ){key}=('[^']*'|[^,\s]+)", text)
        if found is None:
            continue
        value = found.group(1).strip("'")
        if key == "quantization" and value == "None":
            value = "none"
        if value != "None":
            state(env, key, value, f"{where} vllm_config (text) {key}")


def from_config_info(env: Environment, name: str, labels: dict[str, str]) -> None:
    """What the labels of one ``*config_info`` gauge of ``/metrics`` state."""
    where = f"GET /metrics {name}"
    if name.endswith("cache_config_info"):
        state(env, "kv_cache_dtype", labels.get("cache_dtype"), f"{where} cache_dtype")
    for key in ("dtype", "quantization"):
        value = labels.get(key)
        if value not in (None, "", "None"):
            state(env, key, value, f"{where} {key}")
