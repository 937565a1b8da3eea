"""What a run could see of where it ran: :class:`Environment`, ``summary.environment``.

Owns the shape of the environment block: the server (model, context length,
engine and version, dtype, quantization, KV cache dtype and where each was
read, cache configuration), what the scenario declared of them, the GPUs the
agents saw (name, memory, driver, CUDA, the memory each compute process
holds), loadgen's version and the client host. Every piece may be missing: it
is then null, and :attr:`Environment.missing` says why, keyed by the field's
name. Gathered by :mod:`loadgen.target.environment`; compared by
:mod:`loadgen.compare.workloads`.
"""

from __future__ import annotations

from pydantic import Field

from loadgen.strict import Strict

__all__ = ["ClientHost", "EnvGpu", "Environment", "GpuProcess"]


class GpuProcess(Strict):
    """One compute process on a GPU, as NVML listed it at the pre-flight."""

    pid: int
    used_bytes: int | None = Field(None, description="GPU memory it holds; null if withheld.")


class EnvGpu(Strict):
    """One GPU, from an agent's ``/health``."""

    agent: str = Field(description="The agent's URL.")
    index: int
    name: str | None = None
    uuid: str | None = None
    mem_total_bytes: int | None = None
    processes: list[GpuProcess] | None = Field(
        None, description="Its compute processes (NVML's running-process list); null: unread."
    )


class ClientHost(Strict):
    """The machine loadgen ran on."""

    hostname: str
    cpu_count: int | None = None
    python: str
    os: str


class Environment(Strict):
    """The environment of the run, gathered once before the first step."""

    loadgen_version: str
    client: ClientHost
    model: str | None = Field(None, description="The model id /v1/models lists (the one run).")
    max_model_len: int | None = Field(None, description="Its context length, tokens.")
    engine: str | None = Field(None, description="vllm | sglang | tgi | llama.cpp.")
    engine_version: str | None = None
    engine_from: str | None = Field(None, description="Which answer named the engine.")
    dtype: str | None = Field(None, description="The weights' dtype, where the server says.")
    quantization: str | None = Field(None, description="Where the server says; none: 'none'.")
    cache_config: dict[str, str] | None = Field(
        None,
        description="The labels of the engine's cache-configuration info gauge "
        "(vLLM's vllm:cache_config_info: block_size, gpu_memory_utilization, ...).",
    )
    gpus: list[EnvGpu] | None = Field(None, description="The GPUs the agents report.")
    gpu_driver: str | None = Field(None, description="The NVIDIA driver (agents' /health).")
    cuda_version: str | None = Field(None, description="The CUDA version the driver supports.")
    missing: dict[str, str] = Field(
        default_factory=dict,
        description="Why a null field is null, by field name (e.g. gpus: no agent named).",
    )
    # -- precision: where each was read, and what the scenario declared
    kv_cache_dtype: str | None = Field(
        None, description="The KV cache's dtype, where the server says (auto: the model's)."
    )
    precision_from: dict[str, str] = Field(
        default_factory=dict,
        description="Where dtype, quantization and kv_cache_dtype were read, by field name: "
        "the answer and its key (GET /server_info vllm_config.model_config.dtype) or the "
        "gauge and its label.",
    )
    declared: dict[str, str] = Field(
        default_factory=dict,
        description="target.declared as the scenario gave it (dtype, quantization, "
        "kv_cache_dtype): declared by the user, not stated by the server.",
    )
