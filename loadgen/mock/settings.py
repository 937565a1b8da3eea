"""The mock's engine profiles, fault rules and resolved settings: data, no command line.

Owns :class:`Profile` and the named ``PROFILES`` (docs/mock.md, "Profiles"),
``FAULT_KINDS`` and the fault-rule syntax (:class:`FaultRule`,
:func:`parse_fault`), ``REASONING_FIELDS`` and :class:`Settings`, what the
server runs with. The command line that fills them is
:mod:`loadgen.mock.config`'s.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass, field

__all__ = [
    "DEFAULT_PROFILE",
    "FAULT_KINDS",
    "PROFILES",
    "REASONING_FIELDS",
    "FaultRule",
    "Profile",
    "Settings",
    "parse_fault",
]


@dataclass(frozen=True, slots=True)
class Profile:
    """Knobs of the continuous-batching engine model.

    step duration = step_base_ms + decode_ms_per_seq * running
                    + prefill_ms_per_token * prompt tokens admitted this step
    """

    max_num_seqs: int
    kv_cache_tokens: int
    step_base_ms: float
    decode_ms_per_seq: float
    prefill_ms_per_token: float
    max_model_len: int
    mean_output_tokens: int
    preemption: bool = True


# Where the shapes come from: docs/mock.md ("Profiles").
PROFILES: dict[str, Profile] = {
    "tiny-cpu": Profile(
        max_num_seqs=16,
        kv_cache_tokens=65_536,
        step_base_ms=6.0,
        decode_ms_per_seq=0.5,
        prefill_ms_per_token=0.05,
        max_model_len=8192,
        mean_output_tokens=128,
    ),
    "a100-llama8b": Profile(
        max_num_seqs=256,
        kv_cache_tokens=430_000,
        step_base_ms=7.5,
        decode_ms_per_seq=0.08,
        prefill_ms_per_token=0.085,
        max_model_len=131_072,
        mean_output_tokens=256,
    ),
    "h200-llama70b": Profile(
        max_num_seqs=256,
        kv_cache_tokens=180_000,
        step_base_ms=15.0,
        decode_ms_per_seq=0.1,
        prefill_ms_per_token=0.18,
        max_model_len=131_072,
        mean_output_tokens=256,
    ),
}
DEFAULT_PROFILE = "tiny-cpu"

FAULT_KINDS = (
    "reset",
    "http500",
    "http503",
    "http429",
    "slow_first_byte",
    "disconnect",
    "stall",
    "malformed",
    "split",
    "no_done",
    "error_event",
    "bom",
    "idle_408",
    "invalid_json",
)
# Where vLLM's reasoning parsers put the text: reasoning_content in older releases,
# reasoning since the rename (vLLM RFC #27755).
REASONING_FIELDS = ("reasoning_content", "reasoning")


@dataclass(frozen=True, slots=True)
class FaultRule:
    """One fault kind, fired with ``probability`` or on every ``every``-th request."""

    kind: str
    probability: float = 0.0
    every: int = 0


@dataclass(slots=True)
class Settings:
    """The resolved configuration the server runs with."""

    host: str = "127.0.0.1"
    port: int = 8000
    model: str | None = None
    profile_name: str = DEFAULT_PROFILE
    profile: Profile = field(default_factory=lambda: PROFILES[DEFAULT_PROFILE])
    fixed: bool = False
    ttft_ms: float = 0.0
    itl_ms: float = 0.0
    burst: bool = False
    seed: int = 0
    truth: str | None = None
    faults: tuple[FaultRule, ...] = ()
    stall_s: float = 2.0
    slow_first_byte_s: float = 2.0
    retry_after_s: int = 1
    log_level: str = "warning"
    tls: ssl.SSLContext | None = None  # serve https with it
    block_size: int = 16  # prefix-cache block, in tokens
    prefix_cache_tokens: int | None = None  # None: the profile's kv_cache_tokens; 0: off
    reasoning_tokens: int = 0  # chat answers open with up to this many reasoning tokens
    reasoning_field: str = "reasoning_content"  # the delta/message key they go under
    # -- model mixes: LoRA adapters served beside --model (any of them may be asked for)
    loras: tuple[str, ...] = ()

    @property
    def served(self) -> str | tuple[str, ...] | None:
        """The names requests may ask for: None (any), one, or the model and its adapters."""
        if not self.loras:
            return self.model
        return (self.model or "loadgen-mock", *self.loras)

    # -- pooling APIs (embeddings, rerank)
    embedding_dim: int = 64  # the dimension of every /v1/embeddings vector
    # -- inputs beyond text (images, audio): prompt tokens per megapixel / per second
    image_tokens_per_mp: float = 1280.0
    audio_tokens_per_s: float = 25.0
    # -- speculative decoding: (K draft tokens per step, acceptance rate); None: off
    spec_decode: tuple[int, float] | None = None
    # -- a simulated network path: the one-way delay each way, in ms (0: none)
    network_delay_ms: float = 0.0


def parse_fault(text: str) -> list[FaultRule]:
    """Parse ``KIND=P`` or ``KIND=every:N``, several separated by commas.

    ``"http500=0.1,disconnect=every:7"`` gives two rules: HTTP 500 on 10 % of the
    requests (seeded), a mid-stream disconnect on requests 7, 14, 21, ...
    """
    rules = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        kind, sep, spec = part.partition("=")
        if not sep or kind not in FAULT_KINDS:
            msg = f"bad fault {part!r}; expected KIND=P or KIND=every:N, KIND one of {FAULT_KINDS}"
            raise ValueError(msg)
        if spec.startswith("every:"):
            every = _parse_int(spec[6:], part)
            if every < 1:
                msg = f"bad fault {part!r}; every:N needs N >= 1"
                raise ValueError(msg)
            rules.append(FaultRule(kind, every=every))
            continue
        try:
            p = float(spec)
        except ValueError:
            p = -1.0
        if not 0.0 <= p <= 1.0:
            msg = f"bad fault {part!r}; a probability must be a number in [0, 1]"
            raise ValueError(msg)
        rules.append(FaultRule(kind, probability=p))
    return rules


def _parse_int(text: str, part: str) -> int:
    try:
        return int(text)
    except ValueError:
        msg = f"bad fault {part!r}; every:N needs an integer N"
        raise ValueError(msg) from None
