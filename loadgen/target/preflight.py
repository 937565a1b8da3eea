"""Before the first step: is the server up, and does it serve the model?

Control-plane calls go through :mod:`loadgen.control` (never the load path's
session): each answer is bounded in size and time (``HEALTH``, ``MODELS``). A
server that is down is not an error here (the run records what happens); the
caller decides whether to wait for it (``target.wait_for_health_s``). An
answer cut off at its bound is a warning naming the URL and the bound.
"""

from __future__ import annotations

import ssl
from collections.abc import Sequence
from dataclasses import dataclass, field

from loadgen.client import TlsOptions
from loadgen.clock import NS_PER_S, block_for, now_ns
from loadgen.control import HEALTH, MODELS, ControlError, fetch
from loadgen.errors import TargetError

__all__ = ["Preflight", "check_target", "lists_models", "pick_model"]


def lists_models(api: str) -> bool:
    """Whether the server of ``api`` is asked for ``/v1/models``: the OpenAI APIs, and
    ``rerank`` (vLLM serves /v1/models beside /rerank)."""
    return api.startswith("openai") or api == "rerank"


@dataclass(slots=True)
class Preflight:
    healthy: bool = False
    waited_s: float = 0.0
    models: list[str] | None = None  # from /v1/models, when the server answers it
    warnings: list[str] = field(default_factory=list)


def check_target(
    url: str,
    model: str | Sequence[str],
    api: str,
    headers: dict[str, str],
    wait_s: float = 0.0,
    tls: TlsOptions | None = None,
) -> Preflight:
    """Poll ``/health`` for up to ``wait_s`` seconds, then list the served models.

    ``model``: the name requests send, or every name of a model mix (each checked).
    """
    out = Preflight()
    base = url.rstrip("/")
    start = now_ns()
    give_up = start + int(wait_s * NS_PER_S)
    verify = (tls or TlsOptions()).context()
    while True:
        try:
            status = fetch("GET", f"{base}/health", HEALTH, headers=headers, verify=verify).status
            out.healthy = status == 200
            answer = f"answered {status}, not 200"
        except ControlError as exc:
            out.healthy = False
            answer = exc.detail if exc.kind == "connect" else f"gave no usable answer: {exc.detail}"
        if out.healthy or now_ns() >= give_up:
            break
        block_for(0.5)
    out.waited_s = (now_ns() - start) / NS_PER_S
    if not out.healthy:
        out.warnings.append(f"{base}/health {answer}; the run goes on regardless")
    if lists_models(api):
        out.models = _models(base, headers, verify, out.warnings)
    names = [model] if isinstance(model, str) else list(model)
    missing = [m for m in names if m != "auto" and m not in (out.models or ())]
    if out.models is not None and missing:
        served = ", ".join(out.models[:5]) or "none"
        which = (
            f"model {missing[0]!r} is"
            if len(missing) == 1
            else ("models " + ", ".join(repr(m) for m in missing[:5]) + " are")
        )
        out.warnings.append(f"{which} not among the served models ({served})")
    return out


def _models(
    base: str, headers: dict[str, str], verify: ssl.SSLContext, warnings: list[str]
) -> list[str] | None:
    try:
        reply = fetch("GET", f"{base}/v1/models", MODELS, headers=headers, verify=verify)
        if reply.status != 200:
            return None
        return [str(m.get("id")) for m in reply.json().get("data", []) if isinstance(m, dict)]
    except ControlError as exc:
        if exc.limit_hit:  # cut off by our bound: say so (a refusal or a 404 says nothing)
            warnings.append(f"{exc}; the served models are not known")
        return None
    except (ValueError, AttributeError):
        return None


def pick_model(models: object, url: str) -> str:
    """``target.model: auto``: the one model the server lists, or a TargetError saying why not."""
    where = f"{url.rstrip('/')}/v1/models"
    if not isinstance(models, list):
        msg = f"target.model auto: {where} did not list the served models; name the model"
        raise TargetError(msg)
    if len(models) != 1:
        listed = ", ".join(str(m) for m in models[:10]) or "none"
        which = "no model" if not models else f"{len(models)} models"
        msg = f"target.model auto: {where} lists {which} ({listed}); name one in target.model"
        raise TargetError(msg)
    return str(models[0])
