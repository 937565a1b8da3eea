"""The ``target`` section: the server under test, how to reach it, and the built-in mock.

One base URL (``url``) or several replicas (``urls``) and how requests are
spread over them (``routing``); the wire protocol, model, headers, TLS,
timeouts and the memory bounds of one request; the built-in mock's options.
:func:`check_base_url` is the one judge of a base URL (the telemetry section
uses it too). Nothing here does I/O: that ``tls.ca_file`` loads and
``api_key_env`` is set is checked with the scenario's other inputs
(:mod:`~loadgen.scenario.inputs`).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field, field_validator, model_validator

from loadgen.scenario.declared_spec import DeclaredSpec
from loadgen.scenario.limits import MAX_SECONDS, MIN_SECONDS
from loadgen.scenario.model_mix import MAX_MODELS, ModelWeight, check_mix
from loadgen.strict import Spec
from loadgen.vocab import CHAT_APIS, POOLING_APIS

__all__ = [
    "MAX_ENDPOINTS",
    "MAX_MOCK_REPLICAS",
    "MOCK_MODEL",
    "ROUTING_POLICIES",
    "LimitsSpec",
    "MockSpec",
    "TargetSpec",
    "Timeouts",
    "TlsSpec",
    "check_base_url",
]

#: the model name sent to the built-in mock when the scenario names none
MOCK_MODEL = "mock-model"

#: most base URLs in ``target.urls``
MAX_ENDPOINTS = 64
#: most copies of the built-in mock (``target.mock.replicas``)
MAX_MOCK_REPLICAS = 16
#: how a request picks its endpoint among ``target.urls`` (loadgen.client.routing)
ROUTING_POLICIES = ("round_robin", "least_in_flight", "session")


def check_base_url(url: str) -> str:
    """``url`` if it is http(s)://host[:port][/base-path]; a ValueError saying what is wrong.

    A path is a prefix: loadgen appends /v1/chat/completions, /health and the like to it.
    """
    expected = "expected http[s]://host[:port][/base-path] or mock"
    if any(c.isspace() or not c.isprintable() for c in url):
        raise ValueError(f"{expected}: no spaces or control characters")
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise ValueError(f"{expected}: {exc}") from None
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"{expected}: the scheme must be http or https")
    if not parts.hostname:
        raise ValueError(f"{expected}: no host")
    try:
        parts.port  # noqa: B018  # raises on a port that is not a number in range
    except ValueError:
        raise ValueError(f"{expected}: the port is not a number from 0 to 65535") from None
    if parts.query or parts.fragment or url.endswith(("?", "#")):
        raise ValueError(f"{expected}: a base URL takes no query (?) or fragment (#)")
    return url


def _endpoint_url(url: str) -> str:
    """One entry of ``target.urls``: a base URL as ``target.url`` takes, but not ``mock``."""
    if url == "mock":
        raise ValueError("the built-in mock is `url: mock` with `mock.replicas`, not an entry here")
    try:
        return check_base_url(url)
    except ValueError as exc:
        raise ValueError(str(exc).replace(" or mock:", ":")) from None


class Timeouts(Spec):
    connect: float = Field(
        10.0, ge=MIN_SECONDS, le=MAX_SECONDS, description="Seconds to open the TCP connection."
    )
    first_token: float = Field(
        300.0,
        ge=MIN_SECONDS,
        le=MAX_SECONDS,
        description="Seconds from send to the first generated token.",
    )
    idle: float = Field(
        120.0,
        ge=MIN_SECONDS,
        le=MAX_SECONDS,
        description="Longest gap in seconds between two chunks of one stream.",
    )
    total: float = Field(
        1800.0, ge=MIN_SECONDS, le=MAX_SECONDS, description="Seconds for the whole request."
    )


class LimitsSpec(Spec):
    event_bytes: int = Field(
        1_048_576,
        ge=1024,
        le=1_073_741_824,
        description="Largest SSE event in bytes; a larger one ends the request (event_too_large).",
    )
    body_bytes: int = Field(
        67_108_864,
        ge=1024,
        le=4_294_967_296,
        description="Largest non-streaming answer in bytes (event_too_large).",
    )
    tokens_factor: int = Field(
        4,
        ge=1,
        le=1000,
        description="Token events allowed per request: tokens_factor x max_tokens + tokens_extra "
        "(beyond: too_many_tokens).",
    )
    tokens_extra: int = Field(
        16, ge=0, le=1_000_000, description="Token events allowed beyond the factor."
    )


class TlsSpec(Spec):
    verify: bool = Field(
        True, description="Check an https:// server's certificate (false: accept any)."
    )
    ca_file: str | None = Field(
        None,
        description="PEM file of the CA certificates to trust instead of the system's "
        "(relative paths: from the scenario's folder).",
    )


class MockSpec(Spec):
    profile: str | None = Field(
        None, description="Built-in mock engine profile (see docs/mock.md); None = its default."
    )
    args: list[str] = Field(
        default_factory=list,
        max_length=1000,
        description="Extra command-line arguments for `loadgen mock` (e.g. ['--itl-ms', '10']).",
    )
    replicas: int = Field(
        1,
        ge=1,
        le=MAX_MOCK_REPLICAS,
        description="Copies of the built-in mock to start, each on its own port; requests "
        "are spread over them by target.routing (only with url: mock).",
    )


class TargetSpec(Spec):
    url: str = Field(
        "mock",
        description="Base URL of the server (http[s]://host[:port][/base-path], no query), "
        "or `mock` for the built-in server.",
    )
    urls: list[Annotated[str, AfterValidator(_endpoint_url)]] | None = Field(
        None,
        min_length=1,
        max_length=MAX_ENDPOINTS,
        description="Several base URLs, replicas serving one model (instead of url); each "
        "request goes to the one target.routing picks.",
    )
    routing: Literal["round_robin", "least_in_flight", "session"] = Field(
        "round_robin",
        description="How a request picks its endpoint (urls or mock.replicas): round_robin, "
        "least_in_flight (fewest requests in flight), session (every turn of a multi-turn "
        "session on one endpoint; round robin between sessions).",
    )
    api: Literal[
        "openai-completions",
        "openai-chat",
        "tgi",
        "openai-responses",
        "anthropic-messages",
        "openai-embeddings",
        "rerank",
        "openai-transcriptions",  # -- inputs beyond text (audio)
    ] = Field(
        "openai-chat",
        description="Wire protocol: openai-completions | openai-chat | tgi | openai-responses "
        "| anthropic-messages | openai-embeddings | rerank (these two never stream) | "
        "openai-transcriptions.",
    )
    model: str = Field(
        MOCK_MODEL,  # the default only stands for url mock (_model_needed)
        min_length=1,
        description="Model name sent in each request; required unless url is mock. "
        "`auto`: the only model the server lists at /v1/models.",
    )
    api_key_env: str | None = Field(
        None,
        description="Environment variable holding the API key (sent as a Bearer token; "
        "anthropic-messages: as x-api-key too).",
    )
    extra_body: dict[str, Any] = Field(
        default_factory=dict, description="Merged into every request body (e.g. ignore_eos)."
    )
    headers: dict[str, str] = Field(
        default_factory=dict,
        max_length=100,
        description="Extra HTTP headers sent with every request (values are redacted "
        "in outputs unless the header is known to be harmless, e.g. Content-Type).",
    )
    http2: bool = Field(False, description="Use HTTP/2 (through httpx).")
    transport: Literal["auto", "h1", "aiohttp", "httpx"] = Field(
        "auto",
        description="HTTP client: auto (h1, or httpx for http2), h1 (loadgen's own, "
        "kernel-stamped), aiohttp, httpx.",
    )
    tls: TlsSpec = Field(default_factory=TlsSpec, description="TLS for https:// targets.")
    stream: bool = Field(
        True, description="Streaming requests (false: one JSON answer; TTFT is then E2E)."
    )
    wait_for_health_s: float = Field(
        0.0,
        ge=0,
        le=MAX_SECONDS,
        description="Before the first step, wait up to this long for GET /health = 200.",
    )
    timeouts_s: Timeouts = Field(
        default_factory=Timeouts, description="Per-request timeouts in seconds."
    )
    mock: MockSpec = Field(
        default_factory=MockSpec, description="Options for the built-in mock (url: mock)."
    )
    limits: LimitsSpec = Field(
        default_factory=LimitsSpec,
        description="Memory bounds of one request (a hostile or broken server cannot grow "
        "loadgen without end).",
    )
    # -- model mixes (LoRA adapters, several models behind one URL)
    models: Annotated[list[ModelWeight], AfterValidator(check_mix)] | None = Field(
        None,
        min_length=1,
        max_length=MAX_MODELS,
        description="Several models (or LoRA adapters) instead of target.model: "
        "[{name, weight}], each request picks one by weight (seeded; a session keeps "
        "its model), and every step is broken down per model.",
    )
    # -- declared precision (what the server may not state)
    declared: DeclaredSpec = Field(
        default_factory=DeclaredSpec,
        description="The dtype, quantization and KV cache dtype as the user knows them, "
        "recorded as declared (summary.environment.declared), not measured.",
    )

    @model_validator(mode="before")
    @classmethod
    def _model_needed(cls, data: Any) -> Any:
        """The built-in mock serves any name; a real server needs its model named."""
        if not isinstance(data, dict):
            return data
        if set(data) - set(cls.model_fields):
            return data  # an unknown key (a misspelt `model`?) is reported, not its absence
        if data.get("urls") is not None and "url" in data:
            raise ValueError("give target.url (one server) or target.urls (replicas), not both")
        if data.get("models") is not None:
            return _mix_model(data)
        if data.get("model") is None and data.get("urls") is not None:
            raise ValueError(
                "target.model is required with target.urls "
                "(`auto` takes the only model the servers list)"
            )
        if data.get("model") is None and data.get("url", "mock") != "mock":
            raise ValueError(
                "target.model is required unless target.url is mock "
                "(`auto` takes the only model the server lists)"
            )
        return data

    @field_validator("headers")
    @classmethod
    def _headers_are_http(cls, headers: dict[str, str]) -> dict[str, str]:
        for name, value in headers.items():
            if not _HEADER_NAME.fullmatch(name):
                raise ValueError(f"header name {name[:40]!r} is not an HTTP token")
            if len(value) > 8192 or any(c in value for c in "\r\n\0"):
                raise ValueError(f"header {name}: at most 8192 characters, no line breaks")
        return headers

    @field_validator("url")
    @classmethod
    def _url_is_base(cls, url: str) -> str:
        if url == "mock":
            return url
        return check_base_url(url)

    @field_validator("urls")
    @classmethod
    def _urls_differ(cls, urls: list[str] | None) -> list[str] | None:
        seen: dict[str, int] = {}
        for i, url in enumerate(urls or ()):
            if url in seen:
                raise ValueError(f"[{i}] repeats [{seen[url]}] ({url}): list each endpoint once")
            seen[url] = i
        return urls

    @model_validator(mode="after")
    def _transport_fits(self) -> TargetSpec:
        if self.http2 and self.transport in ("h1", "aiohttp"):
            raise ValueError(f"transport {self.transport} speaks HTTP/1.1 only; http2 needs httpx")
        if self.mock.replicas > 1 and not self.is_mock:
            raise ValueError("target.mock.replicas needs target.url: mock (the built-in mock)")
        return self

    @property
    def model_names(self) -> list[str]:
        """Every model requests name: ``models``' names, or ``[model]``."""
        return [m.name for m in self.models] if self.models is not None else [self.model]

    @property
    def mix(self) -> tuple[tuple[str, float], ...]:
        """``models`` as (name, weight) pairs; empty for one model (``target.model``)."""
        return tuple((m.name, m.weight) for m in self.models or ())

    @property
    def chat(self) -> bool:
        """The API takes chat messages (prompts are made as messages; sessions work)."""
        return self.api in CHAT_APIS

    @property
    def is_mock(self) -> bool:
        """The target is the built-in mock (``url: mock``, no ``urls``)."""
        return self.urls is None and self.url == "mock"

    @property
    def endpoints(self) -> list[str]:
        """The base URLs requests go to: ``urls``, or ``[url]`` (``["mock"]`` for the mock)."""
        return list(self.urls) if self.urls is not None else [self.url]

    @property
    def endpoint_count(self) -> int:
        """How many endpoints requests are spread over (mock replicas included)."""
        return self.mock.replicas if self.is_mock else len(self.endpoints)

    # -- pooling APIs (embeddings, rerank)
    @property
    def streams(self) -> bool:
        """Requests are streamed: ``stream``, but never for a pooling API (one JSON answer)."""
        return self.stream and self.api not in POOLING_APIS


def _mix_model(data: dict[str, Any]) -> dict[str, Any]:
    """``target.models`` given: no ``target.model`` beside it; ``model`` then stands for the
    mix's first name (what the pre-flight check and /tokenize are asked about first)."""
    if "model" in data:
        raise ValueError("give target.model (one model) or target.models (a mix), not both")
    models = data["models"]
    first = models[0] if isinstance(models, list) and models else None
    name = first.get("name") if isinstance(first, dict) else getattr(first, "name", None)
    return {**data, "model": name} if isinstance(name, str) and name else data


#: an HTTP header name (RFC 9110 token)
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}")
