"""The mock server's command line: the argparse parser and the ``Settings`` it resolves.

Owns :func:`build_parser` (its help laid out as click's, :mod:`loadgen.clihelp`)
and :func:`settings_from_argv` (flags checked, the profile's overrides applied,
TLS loaded). The data it fills, the named engine profiles (``PROFILES``), the
fault-rule syntax and ``Settings``, are :mod:`loadgen.mock.settings`'.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import ssl

from loadgen.clihelp import ClickStyleParser
from loadgen.mock.settings import (
    DEFAULT_PROFILE,
    FAULT_KINDS,
    PROFILES,
    REASONING_FIELDS,
    FaultRule,
    Profile,
    Settings,
    parse_fault,
)
from loadgen.mock.spec import parse_spec_decode

__all__ = ["build_parser", "settings_from_argv"]


def _fault_arg(text: str) -> list[FaultRule]:
    try:
        return parse_fault(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _spec_arg(text: str) -> tuple[int, float]:
    try:
        return parse_spec_decode(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


#: the longest one-way delay --network-delay-ms takes
MAX_NETWORK_DELAY_MS = 60_000.0


def _delay_arg(text: str) -> float:
    try:
        ms = float(text)
    except ValueError:
        ms = math.nan
    if not (math.isfinite(ms) and 0.0 <= ms <= MAX_NETWORK_DELAY_MS):
        msg = f"expected milliseconds in 0..{MAX_NETWORK_DELAY_MS:g}, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return ms


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
        help="the most tokens of cached prefixes (default: the profile's kv_cache_tokens); "
        "cached blocks live in the KV cache, and running requests evict them when they need it",
    )
    cache.add_argument("--no-prefix-cache", action="store_true", help="turn the prefix cache off")
    spec = p.add_argument_group("Speculative decoding (engine mode)")
    spec.add_argument(
        "--spec-decode",
        type=_spec_arg,
        metavar="K:RATE",
        help="simulate a draft model: each decoding step drafts K tokens per request, each "
        "accepted with probability RATE (seeded), and emits 1 + accepted tokens in one "
        "event; /metrics gets vLLM's spec_decode counters (default: off)",
    )
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
    net = p.add_argument_group("Network")
    net.add_argument(
        "--network-delay-ms",
        type=_delay_arg,
        default=0.0,
        metavar="D",
        help="simulate a network path of one-way delay D between client and server: "
        "a request reaches the server D after it reached the socket, and each write "
        "leaves D after the server made it (token gaps unchanged), so the client sees "
        "about 2*D more TTFT and E2E than /metrics' histograms, which leave it out. "
        "--truth's recv_ns and token_ns stay the socket's moments (the client's end of "
        "the path) and each line gets network_delay_ns. The TCP connect and TLS "
        "handshake are not delayed (default 0: none)",
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
    if fixed and ns.spec_decode is not None:
        parser.error("--spec-decode needs the engine mode (no --ttft-ms, --itl-ms or --burst)")
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
        spec_decode=ns.spec_decode,
        network_delay_ms=ns.network_delay_ms,
    )
