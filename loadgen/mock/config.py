"""Command line, engine profiles and fault rules of the mock server.

Owns everything the user can configure: the argparse parser (its help laid
out as click's, :mod:`loadgen.clihelp`), the named engine profiles
(``PROFILES``), the fault-rule syntax and the resolved ``Settings``.
Imports only the standard library (and the loadgen.clihelp leaf).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import ssl
from dataclasses import dataclass, field

from loadgen.clihelp import ClickStyleParser

__all__ = [
    "DEFAULT_PROFILE",
    "FAULT_KINDS",
    "PROFILES",
    "REASONING_FIELDS",
    "FaultRule",
    "Profile",
    "Settings",
    "build_parser",
    "parse_fault",
    "settings_from_argv",
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


def _fault_arg(text: str) -> list[FaultRule]:
    try:
        return parse_fault(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def build_parser() -> argparse.ArgumentParser:
    """The ``loadgen mock`` / ``python -m loadgen.mock`` command line."""
    p = ClickStyleParser(
        prog="loadgen mock",
        allow_abbrev=False,
        epilog="Examples:\n  loadgen mock --port 8000 --ttft-ms 50 --itl-ms 10\n"
        "  loadgen mock --port 8000 --profile a100-llama8b --model my-model",
        description="Built-in LLM inference server simulator (OpenAI and TGI "
        "protocols). Without --ttft-ms/--itl-ms/--burst it runs the continuous-batching "
        "engine model of --profile; with any of them, fixed mode: every request "
        "independent, first token TTFT after receipt, then one every ITL.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default %(default)s)")
    p.add_argument("--port", type=int, default=8000, help="port; 0 picks a free one")
    p.add_argument("--model", help="serve only this model name (others get 404)")
    p.add_argument(
        "--lora",
        action="append",
        default=[],
        metavar="NAME",
        help="also serve this LoRA adapter name beside --model (repeatable); each is "
        "listed at /v1/models with the model as its parent",
    )
    p.add_argument(
        "--profile",
        choices=sorted(PROFILES),
        default=DEFAULT_PROFILE,
        help="the engine model's named settings (default %(default)s)",
    )
    for knob in dataclasses.fields(Profile):
        flag = "--" + knob.name.replace("_", "-")
        if knob.type == "bool":
            p.add_argument(flag, type=_bool, metavar="BOOLEAN", help="profile override")
        else:
            kind = int if knob.type == "int" else float
            p.add_argument(flag, type=kind, help="profile override")
    fixed = p.add_argument_group("Fixed mode")
    fixed.add_argument("--ttft-ms", type=float, help="fixed time to first token")
    fixed.add_argument("--itl-ms", type=float, help="fixed gap between tokens")
    fixed.add_argument(
        "--burst",
        action="store_true",
        help="write each response in one go at TTFT (one SSE event per token still)",
    )
    cache = p.add_argument_group("Prefix cache (engine mode)")
    cache.add_argument(
        "--block-size", type=int, default=16, help="prefix-cache block size in tokens (%(default)s)"
    )
    cache.add_argument(
        "--prefix-cache-tokens",
        type=int,
        help="prefix-cache capacity in tokens (default: the profile's kv_cache_tokens)",
    )
    cache.add_argument("--no-prefix-cache", action="store_true", help="turn the prefix cache off")
    reasoning = p.add_argument_group("Reasoning (openai-chat)")
    reasoning.add_argument(
        "--reasoning-tokens",
        type=int,
        default=0,
        help="send the first N output tokens of a chat answer as reasoning (default 0)",
    )
    reasoning.add_argument(
        "--reasoning-field",
        choices=REASONING_FIELDS,
        default=REASONING_FIELDS[0],
        help="key of the reasoning text in deltas and messages (default %(default)s)",
    )
    pooling = p.add_argument_group("Pooling (/v1/embeddings, /rerank)")
    pooling.add_argument(
        "--embedding-dim",
        type=int,
        default=64,
        help="dimension of every embedding vector (default %(default)s)",
    )
    media = p.add_argument_group("Images and audio (openai-chat parts, transcriptions)")
    media.add_argument(
        "--image-tokens-per-megapixel",
        type=float,
        default=1280.0,
        help="prompt tokens an image costs per megapixel (default %(default)s, Qwen2-VL's)",
    )
    media.add_argument(
        "--audio-tokens-per-second",
        type=float,
        default=25.0,
        help="prompt tokens a second of audio costs (default %(default)s)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of lengths, texts and faults")
    p.add_argument("--truth", metavar="FILE", help="append one JSON line per request")
    faults = p.add_argument_group("Faults")
    faults.add_argument(
        "--fault",
        type=_fault_arg,
        action="append",
        default=[],
        metavar="KIND=P|KIND=every:N",
        help=f"inject a fault; KIND one of {', '.join(FAULT_KINDS)}; repeatable",
    )
    faults.add_argument("--stall-s", type=float, default=2.0, help="stall length")
    faults.add_argument("--slow-first-byte-s", type=float, default=2.0, help="first-byte delay")
    faults.add_argument("--retry-after-s", type=int, default=1, help="Retry-After of http429")
    p.add_argument(
        "--log-level",
        default="warning",
        choices=["debug", "info", "warning", "error"],
        help="the mock's log level (default %(default)s)",
    )
    tls = p.add_argument_group("HTTPS")
    tls.add_argument("--tls-cert", metavar="PEM", help="serve https with this certificate chain")
    tls.add_argument("--tls-key", metavar="PEM", help="its private key (default: in --tls-cert)")
    return p


def _tls_context(
    parser: argparse.ArgumentParser, cert: str | None, key: str | None
) -> ssl.SSLContext | None:
    if cert is None:
        if key is not None:
            parser.error("--tls-key needs --tls-cert")
        return None
    for flag, path in (("--tls-cert", cert), ("--tls-key", key)):
        if path is not None and not os.path.isfile(path):
            parser.error(f"{flag} {path}: no such file")

    def no_password() -> str:
        parser.error(f"--tls-key {key or cert}: expected a key without a password")

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.options |= ssl.OP_NO_RENEGOTIATION  # the in-memory layer does not renegotiate
    try:
        context.load_cert_chain(cert, key, password=no_password)
    except ssl.SSLError as exc:
        hint = "; give --tls-key if the key is in another file" if key is None else ""
        parser.error(f"--tls-cert {cert}: expected a PEM certificate and its key ({exc}{hint})")
    context.set_alpn_protocols(["http/1.1"])
    return context


def _bool(text: str) -> bool:
    if text.lower() in ("1", "true", "yes", "on"):
        return True
    if text.lower() in ("0", "false", "no", "off"):
        return False
    msg = f"expected true or false, got {text!r}"
    raise argparse.ArgumentTypeError(msg)


def settings_from_argv(argv: list[str] | None) -> Settings:
    """Parse the command line into ``Settings`` (argparse exits 2 on bad input)."""
    parser = build_parser()
    ns = parser.parse_args(argv)
    overrides = {
        f.name: getattr(ns, f.name)
        for f in dataclasses.fields(Profile)
        if getattr(ns, f.name) is not None
    }
    profile = dataclasses.replace(PROFILES[ns.profile], **overrides)
    if profile.max_num_seqs < 1 or profile.kv_cache_tokens < 1 or profile.max_model_len < 2:
        parser.error("max-num-seqs, kv-cache-tokens and max-model-len must be positive")
    fixed = ns.ttft_ms is not None or ns.itl_ms is not None or ns.burst
    if min(ns.ttft_ms or 0.0, ns.itl_ms or 0.0, ns.stall_s, ns.slow_first_byte_s) < 0:
        parser.error("times must not be negative")
    if ns.block_size < 1:
        parser.error("--block-size must be at least 1")
    if not 1 <= ns.embedding_dim <= 65_536:
        parser.error("--embedding-dim must be in 1..65536")
    if min(ns.image_tokens_per_megapixel, ns.audio_tokens_per_second) < 0:
        parser.error(
            "--image-tokens-per-megapixel and --audio-tokens-per-second must not be negative"
        )
    if min(ns.prefix_cache_tokens or 0, ns.reasoning_tokens) < 0:
        parser.error("--prefix-cache-tokens and --reasoning-tokens must not be negative")
    cache_tokens = (
        profile.kv_cache_tokens if ns.prefix_cache_tokens is None else ns.prefix_cache_tokens
    )
    return Settings(
        host=ns.host,
        port=ns.port,
        model=ns.model,
        profile_name=ns.profile,
        profile=profile,
        fixed=fixed,
        ttft_ms=ns.ttft_ms or 0.0,
        itl_ms=ns.itl_ms or 0.0,
        burst=ns.burst,
        seed=ns.seed,
        truth=ns.truth,
        faults=tuple(rule for group in ns.fault for rule in group),
        stall_s=ns.stall_s,
        slow_first_byte_s=ns.slow_first_byte_s,
        retry_after_s=ns.retry_after_s,
        log_level=ns.log_level,
        tls=_tls_context(parser, ns.tls_cert, ns.tls_key),
        block_size=ns.block_size,
        prefix_cache_tokens=0 if ns.no_prefix_cache else cache_tokens,
        reasoning_tokens=ns.reasoning_tokens,
        embedding_dim=ns.embedding_dim,
        reasoning_field=ns.reasoning_field,
        loras=tuple(dict.fromkeys(ns.lora)),
        image_tokens_per_mp=ns.image_tokens_per_megapixel,
        audio_tokens_per_s=ns.audio_tokens_per_second,
    )
