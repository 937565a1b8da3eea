"""Before the first step: is the server up, and does it serve the model?

Control-plane calls go through httpx (never the load path's session). A
server that is down is not an error here (the run records what happens); the
caller decides whether to wait for it (``target.wait_for_health_s``).

Imports: httpx, loadgen.clock, loadgen.errors, loadgen.client.transport (TLS options).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import httpx

from loadgen.client.transport import TlsOptions
from loadgen.clock import NS_PER_S, block_for, now_ns
from loadgen.errors import TargetError

__all__ = ["Preflight", "check_target", "pick_model"]


@dataclass(slots=True)
class Preflight:
    healthy: bool = False
    waited_s: float = 0.0
    models: list[str] | None = None  # from /v1/models, when the server answers it
    warnings: list[str] = field(default_factory=list)


def check_target(
    url: str,
    model: str,
    api: str,
    headers: dict[str, str],
    wait_s: float = 0.0,
    tls: TlsOptions | None = None,
) -> Preflight:
    """Poll ``/health`` for up to ``wait_s`` seconds, then list the served models."""
    out = Preflight()
    base = url.rstrip("/")
    start = now_ns()
    give_up = start + int(wait_s * NS_PER_S)
    verify = (tls or TlsOptions()).context()
    with httpx.Client(timeout=httpx.Timeout(5.0), headers=headers, verify=verify) as client:
        while True:
            answer = "did not answer 200"
            try:
                status = client.get(f"{base}/health").status_code
                out.healthy = status == 200
                answer = f"answered {status}, not 200"
            except httpx.ConnectError as exc:
                out.healthy = False
                answer = _refused(exc)
            except httpx.HTTPError:
                out.healthy = False
            if out.healthy or now_ns() >= give_up:
                break
            block_for(0.5)
        out.waited_s = (now_ns() - start) / NS_PER_S
        if not out.healthy:
            out.warnings.append(f"{base}/health {answer}; the run goes on regardless")
        if api.startswith("openai"):
            out.models = _models(client, base)
    if out.models is not None and model != "auto" and model not in out.models:
        served = ", ".join(out.models[:5]) or "none"
        out.warnings.append(f"model {model!r} is not among the served models ({served})")
    return out


def _models(client: httpx.Client, base: str) -> list[str] | None:
    try:
        resp = client.get(f"{base}/v1/models")
        if resp.status_code != 200:
            return None
        return [str(m.get("id")) for m in resp.json().get("data", []) if isinstance(m, dict)]
    except (httpx.HTTPError, ValueError, AttributeError):
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


def _refused(exc: httpx.ConnectError) -> str:
    """What a failed connect to /health was, in words: refused, a name that does not resolve."""
    text = str(exc).lower()
    if "refused" in text or "errno 111" in text:
        return "refused the connection (nothing listening)"
    if "name or service not known" in text or "nodename nor servname" in text:
        return "has a host name that does not resolve"
    return f"could not be reached ({str(exc)[:80]})"
