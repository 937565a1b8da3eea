"""The run's environment, gathered once before the first step: ``summary.environment``.

:func:`gather_environment` asks the target what it states about itself and the
telemetry agents what GPUs they watch, each call bounded (:mod:`loadgen.control`):

- ``GET /v1/models``: the model id and ``max_model_len`` (a card's
  ``context_length`` else), as :mod:`~loadgen.target.probe` reads them;
- the engine endpoints of :data:`~loadgen.target.probe.ENGINE_ENDPOINTS`
  (SGLang ``/get_server_info``, llama.cpp ``/props``, TGI ``/info``, vLLM
  ``/version``), recognised as ``loadgen init`` recognises them; the same
  answer's dtype, quantization and KV cache dtype where it states them
  (:mod:`~loadgen.target.precision` reads them, and says where);
- for vLLM, ``GET /server_info?config_format=json``: its dtype, quantization
  and KV cache dtype (served only with ``VLLM_SERVER_DEV_MODE=1``);
- ``GET /metrics``: the labels of ``*:cache_config_info`` (vLLM's
  ``vllm:cache_config_info``: block_size, gpu_memory_utilization,
  num_gpu_blocks, enable_prefix_caching, cache_dtype, ...), and a ``dtype``
  or ``quantization`` label of any ``*_config_info`` gauge;
- each agent's ``GET /health``: the GPUs (name, UUID, memory, compute
  processes), the driver and CUDA version;
- and this host: hostname, CPU count, Python, OS.

What the scenario declares of the precision (``target.declared``) is kept
apart, as declared (``Environment.declared``). It never fails the run: a piece
it cannot learn is null, and ``Environment.missing`` says why.
"""

from __future__ import annotations

import os
import platform
import socket
import ssl
from collections.abc import Sequence
from typing import Any

from loadgen._version import __version__
from loadgen.control import AGENT, METRICS, MODELS, ControlError, Limit, fetch
from loadgen.redact import redact_text, strip_userinfo
from loadgen.scenario import Scenario
from loadgen.summary import ClientHost, EnvGpu, Environment, GpuProcess
from loadgen.target.options import target_headers, tls_options
from loadgen.target.precision import (
    DEV_MODE,
    PRECISION_KEYS,
    SERVER_INFO,
    from_config_info,
    from_engine_info,
    from_vllm_server_info,
)
from loadgen.target.probe import ENGINE_ENDPOINTS, SMALL
from loadgen.telemetry import parse_prometheus_text

__all__ = ["client_host", "environment_of", "gather_environment"]

#: each engine endpoint's bound (four are asked in turn; a server that is slow to say
#: 404 costs the run at most four of these before its first step)
ENGINE_INFO = Limit("engine info", SMALL, 3.0)
#: vLLM's /server_info: its first answer gathers the host's details (pip, lscpu, GPUs)
#: and took 5.5 s on a 2-core machine; asked only of vLLM, a 404 without dev mode
VLLM_SERVER_INFO = Limit("vLLM server info", 4 * SMALL, 20.0)
#: the label of an info gauge that only says it is one
_INFO_NOISE = frozenset({"__name__", "engine"})


def client_host() -> ClientHost:
    """The machine loadgen runs on."""
    return ClientHost(
        hostname=socket.gethostname(),
        cpu_count=os.cpu_count(),
        python=platform.python_version(),
        os=platform.platform(),
    )


def environment_of(sc: Scenario, url: str, *, healthy: bool = True) -> Environment:
    """The environment of a run of ``sc`` against ``url`` (its first endpoint); the
    server is not asked when the pre-flight found it down (``healthy`` False)."""
    spec = sc.telemetry
    token = os.environ.get(spec.token_env) if spec.token_env else None
    agents = list(spec.agents)
    try:
        if not healthy:
            env = gather_environment(url, "", agents=agents, agent_token=token, server=False)
            for key in ("model", "max_model_len", "engine", "cache_config"):
                env.missing[key] = "the target did not answer /health at the pre-flight"
        else:
            env = gather_environment(
                url,
                sc.target.model_names[0],
                headers=target_headers(sc),
                verify=tls_options(sc).context(),
                agents=agents,
                agent_token=token,
            )
    except Exception as exc:  # never fails the run
        env = Environment(loadgen_version=__version__, client=client_host())
        env.missing["environment"] = redact_text(f"{type(exc).__name__}: {exc}")
    env.declared = sc.target.declared.given()
    return env


def gather_environment(
    url: str,
    model: str,
    *,
    headers: dict[str, str] | None = None,
    verify: ssl.SSLContext | None = None,
    agents: Sequence[str] = (),
    agent_token: str | None = None,
    server: bool = True,
) -> Environment:
    """What ``url`` and ``agents`` say of themselves (the module docstring lists the calls).

    ``model``: the one the run sends (its card gives the context length).
    """
    env = Environment(loadgen_version=__version__, client=client_host())
    base = url.rstrip("/")
    heads = dict(headers or {})
    for step in (_models, _engine, _vllm_config, _metrics) if server else ():
        try:
            step(env, base, model, heads, verify)
        except Exception as exc:  # never fails the run: say what went wrong instead
            env.missing[step.__name__.strip("_")] = redact_text(f"{type(exc).__name__}: {exc}")
    for key in PRECISION_KEYS if server else ():
        if getattr(env, key) is None:
            env.missing.setdefault(key, "neither the engine's info nor /metrics states it")
    _agents(env, agents, agent_token)
    return env


def _get(base: str, path: str, limit: Limit, headers: dict[str, str], verify: Any) -> Any:
    """The JSON of a 200 to GET ``path``; raises ``LookupError`` saying why there is none."""
    try:
        reply = fetch("GET", base + path, limit, headers=headers, verify=verify)
    except ControlError as exc:
        raise LookupError(f"GET {path}: {exc.detail}") from None
    if reply.status != 200:
        raise LookupError(f"GET {path} answered {reply.status}")
    try:
        return reply.json()
    except ValueError:
        raise LookupError(f"GET {path}: not JSON") from None


def _models(env: Environment, base: str, model: str, heads: dict[str, str], verify: Any) -> None:
    try:
        body = _get(base, "/v1/models", MODELS, heads, verify)
    except LookupError as exc:
        env.missing["model"] = env.missing["max_model_len"] = str(exc)
        return
    data = body.get("data") if isinstance(body, dict) else None
    cards = [c for c in data or [] if isinstance(c, dict) and isinstance(c.get("id"), str)]
    card = next((c for c in cards if c["id"] == model), cards[0] if len(cards) == 1 else None)
    if card is None:
        env.missing["model"] = f"GET /v1/models lists no card {model!r}"
        return
    env.model = card["id"]
    for key in ("max_model_len", "context_length"):
        n = card.get(key)
        if type(n) is int and n > 0:
            env.max_model_len = n
            return
    env.missing["max_model_len"] = "GET /v1/models states no max_model_len"


def _engine(env: Environment, base: str, _model: str, heads: dict[str, str], verify: Any) -> None:
    for path, read in ENGINE_ENDPOINTS:
        try:
            body = _get(base, path, ENGINE_INFO, heads, verify)
        except LookupError:
            continue
        found = read(body) if isinstance(body, dict) else None
        if found is None:
            continue
        env.engine, version, context = found
        env.engine_from = f"GET {path}"
        env.engine_version = version if isinstance(version, str) and version else None
        if env.max_model_len is None and type(context) is int and context > 0:
            env.max_model_len = context
            env.missing.pop("max_model_len", None)
        from_engine_info(env, env.engine, path, body)
        if env.engine_version is None:
            env.missing["engine_version"] = f"GET {path} states no version"
        return
    env.missing["engine"] = (
        "no engine endpoint answered (" + ", ".join(p for p, _ in ENGINE_ENDPOINTS) + ")"
    )


def _vllm_config(
    env: Environment, base: str, _model: str, heads: dict[str, str], verify: Any
) -> None:
    """vLLM's dtype, quantization and KV cache dtype, from its development endpoint."""
    if env.engine != "vllm":
        return
    try:
        body = _get(base, SERVER_INFO, VLLM_SERVER_INFO, heads, verify)
    except LookupError as exc:
        why = f"vLLM states it only at GET /server_info, served with {DEV_MODE} ({exc})"
        for key in ("dtype", "quantization"):  # the KV cache's: /metrics may state it
            env.missing[key] = why
        return
    if not from_vllm_server_info(env, body):
        env.missing["dtype"] = "GET /server_info: not vLLM's answer (no vllm_config)"


def _metrics(env: Environment, base: str, _model: str, heads: dict[str, str], verify: Any) -> None:
    try:
        reply = fetch("GET", base + "/metrics", METRICS, headers=heads, verify=verify)
    except ControlError as exc:
        env.missing["cache_config"] = f"GET /metrics: {exc.detail}"
        return
    if reply.status != 200:
        env.missing["cache_config"] = f"GET /metrics answered {reply.status}"
        return
    samples, _bad = parse_prometheus_text(reply.text)
    for s in samples:
        if not s.name.endswith("config_info"):
            continue
        labels = {k: v for k, v in s.labels.items() if k not in _INFO_NOISE}
        if s.name.endswith("cache_config_info") and env.cache_config is None:
            env.cache_config = labels
        from_config_info(env, s.name, labels)
    if env.cache_config is None:
        env.missing["cache_config"] = "GET /metrics has no *cache_config_info gauge"


def _agents(env: Environment, agents: Sequence[str], token: str | None) -> None:
    if not agents:
        env.missing["gpus"] = "no telemetry agent named (telemetry.agents)"
        return
    heads = {"Authorization": f"Bearer {token}"} if token else {}
    gpus: list[EnvGpu] = []
    drivers: list[str] = []
    cudas: list[str] = []
    answered = 0
    for agent in agents:
        base = agent.rstrip("/")
        label = strip_userinfo(base)  # no password of the agent's URL in summary.json
        try:
            health = _get(base, "/health", AGENT, heads, None)
        except LookupError as exc:
            env.missing[f"gpus {label}"] = redact_text(str(exc))
            continue
        if not isinstance(health, dict):
            env.missing[f"gpus {label}"] = "GET /health: not a JSON object"
            continue
        answered += 1
        for key, into in (("driver_version", drivers), ("cuda_version", cudas)):
            value = health.get(key)
            if isinstance(value, str) and value and value not in into:
                into.append(value)
        gpus += [_gpu(label, g) for g in health.get("gpus") or [] if isinstance(g, dict)]
    env.gpus = gpus if answered else None
    if not answered:
        env.missing["gpus"] = "no agent answered GET /health"
    env.gpu_driver = ", ".join(drivers) or None
    env.cuda_version = ", ".join(cudas) or None
    if env.gpu_driver is None:
        env.missing["gpu_driver"] = "no agent stated a driver"
    if env.cuda_version is None:
        env.missing["cuda_version"] = "no agent stated a CUDA version"


def _gpu(agent: str, g: dict[str, Any]) -> EnvGpu:
    def num(key: str) -> int | None:
        v = g.get(key)
        return v if type(v) is int else None

    procs = g.get("processes")
    return EnvGpu(
        agent=agent,
        index=num("index") or 0,
        name=g.get("name") if isinstance(g.get("name"), str) else None,
        uuid=g.get("uuid") if isinstance(g.get("uuid"), str) else None,
        mem_total_bytes=num("mem_total_bytes"),
        processes=[
            GpuProcess(
                pid=p["pid"],
                used_bytes=p.get("used_bytes") if type(p.get("used_bytes")) is int else None,
            )
            for p in procs
            if isinstance(p, dict) and type(p.get("pid")) is int
        ]
        if isinstance(procs, list)
        else None,
    )
