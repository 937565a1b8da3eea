"""What a server serves, asked once: the probe behind ``loadgen init URL``.

:func:`probe_server` asks, in this order, each call bounded in size and time
(:mod:`loadgen.control`):

1. ``GET /v1/models``: the model ids and the context length (vLLM's
   ``max_model_len``, else a card's ``context_length``). A server that gives
   no HTTP answer here (nothing listening, no answer within the deadline, not
   HTTP) ends the probe: :class:`~loadgen.errors.ScenarioError`, one line.
2. One tiny request per API loadgen speaks (:data:`PROBES`), each asking for
   one token (``max_tokens: 1``; embeddings and rerank generate none): 2xx
   means served; 404, 405 and 501 mean not served; 401 and 403 mean the server
   wants a key; any other status means the route is there but refused the
   probe (its status is kept).
3. ``/tokenize`` in the dialects :mod:`~loadgen.target.tokenize` knows (vLLM
   and SGLang, llama.cpp, TGI): the calibration a run would make.
4. ``GET /metrics``: Prometheus text, and whose names it carries (vLLM,
   TGI, SGLang; :mod:`loadgen.telemetry.server_metrics`).
5. The engine and its version (:data:`ENGINE_ENDPOINTS`): SGLang's
   ``/get_server_info``, llama.cpp's ``/props``, TGI's ``/info``, vLLM's
   ``/version``, each recognised by the shape of its answer; else the engine
   the ``/metrics`` names point to, without a version. llama.cpp's ``n_ctx``
   and TGI's ``max_total_tokens`` stand in for a context length
   ``/v1/models`` did not give.

Nothing here writes a file or prints: the command (:mod:`loadgen.cli.init`)
does, from the :class:`Probe`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from loadgen.client import ADAPTERS, TlsOptions
from loadgen.control import METRICS, MODELS, ControlError, Limit, Reply, fetch
from loadgen.errors import ScenarioError
from loadgen.target.tokenize import calibrate
from loadgen.telemetry import extract_server_metrics, parse_prometheus_text
from loadgen.vocab import CHAT_APIS
from loadgen.workload import Calibration

__all__ = [
    "ENGINE_ENDPOINTS",
    "METRICS_NAMES",
    "PREFERRED",
    "PROBES",
    "ApiProbe",
    "Probe",
    "probe_server",
]

#: the generation APIs a scenario prefers, in order, when several answered; pooling last
PREFERRED = (
    "openai-chat",
    "openai-completions",
    "openai-responses",
    "anthropic-messages",
    "tgi",
    "openai-embeddings",
    "rerank",
)
#: statuses that say the route is not there
NOT_SERVED = frozenset({404, 405, 501})
#: statuses that say a key is wanted
NEEDS_KEY = frozenset({401, 403})
#: ``Probe.engine_from`` when only the /metrics names told the engine
METRICS_NAMES = "/metrics names"
#: the answer of a small GET (/v1/models, /version, /info, /props)
SMALL = 1024 * 1024


def _bodies(model: str) -> dict[str, dict[str, Any]]:
    """api -> the smallest request that asks it for (at most) one token."""
    hi = [{"role": "user", "content": "Hi"}]
    return {
        "openai-chat": {"model": model, "messages": hi, "max_tokens": 1},
        "openai-completions": {"model": model, "prompt": "Hi", "max_tokens": 1},
        "openai-responses": {"model": model, "input": "Hi", "max_output_tokens": 1},
        "anthropic-messages": {"model": model, "messages": hi, "max_tokens": 1},
        "tgi": {"inputs": "Hi", "parameters": {"max_new_tokens": 1}},
        "openai-embeddings": {"model": model, "input": "Hi"},
        "rerank": {"model": model, "query": "Hi", "documents": ["Hi"]},
    }


#: the APIs probed, in order (transcriptions need an audio upload: not probed)
PROBES = PREFERRED


@dataclass(slots=True, frozen=True)
class ApiProbe:
    """One API's answer to its tiny request."""

    api: str
    path: str
    status: int | None  # None: no HTTP answer (see detail)
    detail: str = ""

    @property
    def served(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    def says(self) -> str:
        """The answer in words: ``served``, ``not served (404)``, ``wants a key (401)``."""
        if self.served:
            return "served"
        if self.status in NOT_SERVED:
            return f"not served ({self.status})"
        if self.status in NEEDS_KEY:
            return f"wants a key ({self.status})"
        if self.status is None:
            return f"no answer ({self.detail})"
        return f"answered {self.status}" + (f": {self.detail}" if self.detail else "")


@dataclass(slots=True)
class Probe:
    """What the server said; None where it said nothing."""

    url: str
    models: list[str] | None = None
    #: the model the API probes named (given, or the first listed)
    model: str | None = None
    max_model_len: int | None = None
    max_model_len_from: str | None = None  # "GET /v1/models", "GET /props", ...
    apis: list[ApiProbe] = field(default_factory=list)
    tokenize: Calibration | None = None
    metrics: bool = False  # /metrics answered Prometheus text
    metrics_engine: str | None = None  # whose names /metrics carries
    engine: str | None = None
    version: str | None = None
    engine_from: str | None = None  # "GET /version", "/metrics names"

    @property
    def served(self) -> list[str]:
        return [a.api for a in self.apis if a.served]

    @property
    def best_api(self) -> str | None:
        """The API a scenario should use: the first of :data:`PREFERRED` that answered."""
        return next((api for api in PREFERRED if api in self.served), None)

    @property
    def wants_key(self) -> bool:
        return any(a.status in NEEDS_KEY for a in self.apis)

    @property
    def no_api(self) -> bool:
        """No API probe found a route: each was not served, wanted a key, or got no
        answer (a route that refused the probe with another status is there)."""
        return not self.served and all(
            a.status is None or a.status in NOT_SERVED or a.status in NEEDS_KEY for a in self.apis
        )


def probe_server(
    url: str,
    *,
    model: str | None = None,
    api_key: str | None = None,
    tls: TlsOptions | None = None,
    timeout_s: float = 10.0,
) -> Probe:
    """Ask ``url`` what it serves (the module docstring lists the calls).

    ``model``: the model the API probes name (else the first ``/v1/models``
    lists); ``api_key``: sent as each API sends it (a Bearer token; Anthropic's
    ``x-api-key`` too); ``timeout_s``: the deadline of each call (connect to
    last byte).
    """
    base = url.rstrip("/")
    out = Probe(url=base)
    verify = (tls or TlsOptions()).context()
    heads = ADAPTERS["openai-chat"].auth_headers(api_key) if api_key else {}

    def get(path: str, limit: Limit) -> Any:
        """The JSON of a 200 to GET ``path``; None for any other answer, or none."""
        try:
            reply = fetch("GET", base + path, limit, headers=heads, verify=verify)
        except ControlError:
            return None
        return _json(reply) if reply.status == 200 else None

    try:
        reply = fetch(
            "GET", base + "/v1/models", MODELS.within(timeout_s), headers=heads, verify=verify
        )
    except ControlError as exc:
        raise ScenarioError(f"{exc}; is the server up at this URL?") from None
    if reply.status == 200:
        _read_models(out, _json(reply), model)
    out.model = model or (out.models[0] if out.models else None)
    _probe_apis(out, api_key, verify, timeout_s)
    chat = (out.best_api or "openai-chat") in CHAT_APIS
    tls_opts = tls or TlsOptions()
    out.tokenize = calibrate(
        base, out.model or "default", chat, heads, tls_opts, api=out.best_api or "openai-chat"
    )
    _probe_metrics(out, heads, verify, timeout_s)
    _probe_engine(out, get, timeout_s)
    return out


def _json(reply: Reply) -> Any:
    """The body as JSON; None when it is not."""
    try:
        return reply.json()
    except ValueError:
        return None


def _read_models(out: Probe, body: Any, model: str | None) -> None:
    """The listed ids, and the context length of the card of ``model`` (else the first)."""
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        return
    cards = [c for c in data if isinstance(c, dict) and isinstance(c.get("id"), str)]
    out.models = [c["id"] for c in cards]
    chosen = [c for c in cards if c["id"] == (model or c["id"])][:1]
    for card in chosen:
        for key in ("max_model_len", "context_length"):
            n = card.get(key)
            if type(n) is int and n > 0:
                out.max_model_len, out.max_model_len_from = n, f"GET /v1/models {key}"
                break


def _probe_apis(out: Probe, api_key: str | None, verify: Any, timeout_s: float) -> None:
    limit = Limit("API probe", SMALL, timeout_s)
    for api, body in _bodies(out.model or "default").items():
        adapter = ADAPTERS[api]
        where = out.url + adapter.path_no_stream
        headers = {**adapter.headers, **(adapter.auth_headers(api_key) if api_key else {})}
        try:
            reply = fetch("POST", where, limit, headers=headers, verify=verify, json=body)
        except ControlError as exc:
            out.apis.append(ApiProbe(api, adapter.path_no_stream, None, exc.detail))
            continue
        detail = "" if reply.status < 300 else _error_words(_json(reply))
        out.apis.append(ApiProbe(api, adapter.path_no_stream, reply.status, detail))


def _error_words(body: Any) -> str:
    """The message of an error body (OpenAI's ``{"error": {"message"}}``, others'), short."""
    err = body.get("error", body) if isinstance(body, dict) else None
    msg = err.get("message") if isinstance(err, dict) else err
    if not isinstance(msg, str):
        msg = body.get("detail") if isinstance(body, dict) else None
    text = " ".join(msg.split()) if isinstance(msg, str) else ""
    return text[:117] + "..." if len(text) > 120 else text


def _probe_metrics(out: Probe, headers: dict[str, str], verify: Any, timeout_s: float) -> None:
    try:
        reply = fetch(
            "GET", out.url + "/metrics", METRICS.within(timeout_s), headers=headers, verify=verify
        )
    except ControlError:
        return
    if reply.status != 200:
        return
    samples, _bad = parse_prometheus_text(reply.text)
    if samples:
        out.metrics = True
        out.metrics_engine = extract_server_metrics(samples).engine


def _sglang(body: dict[str, Any]) -> tuple[str, Any, None] | None:
    return ("sglang", body.get("version"), None) if "version" in body else None


def _llama_cpp(body: dict[str, Any]) -> tuple[str, Any, Any] | None:
    settings = body.get("default_generation_settings")
    if not isinstance(settings, dict):
        return None
    return ("llama.cpp", body.get("build_info"), settings.get("n_ctx"))


def _tgi(body: dict[str, Any]) -> tuple[str, Any, Any] | None:
    if "model_id" not in body:
        return None
    return ("tgi", body.get("version"), body.get("max_total_tokens"))


def _vllm(body: dict[str, Any]) -> tuple[str, Any, None] | None:
    return ("vllm", body.get("version"), None) if set(body) == {"version"} else None


#: (path, its answer -> (engine, version, context length) or None) in the order asked
ENGINE_ENDPOINTS: tuple[
    tuple[str, Callable[[dict[str, Any]], tuple[str, Any, Any] | None]], ...
] = (
    ("/get_server_info", _sglang),
    ("/props", _llama_cpp),
    ("/info", _tgi),
    ("/version", _vllm),
)


def _probe_engine(out: Probe, get: Callable[[str, Limit], Any], timeout_s: float) -> None:
    limit = Limit("engine info", SMALL, timeout_s)
    for path, read in ENGINE_ENDPOINTS:
        body = get(path, limit)
        found = read(body) if isinstance(body, dict) else None
        if found is None:
            continue
        engine, version, context = found
        out.engine, out.engine_from = engine, f"GET {path}"
        out.version = version if isinstance(version, str) and version else None
        if out.max_model_len is None and type(context) is int and context > 0:
            out.max_model_len, out.max_model_len_from = context, f"GET {path}"
        return
    if out.metrics_engine is not None:
        out.engine, out.engine_from = out.metrics_engine, METRICS_NAMES
