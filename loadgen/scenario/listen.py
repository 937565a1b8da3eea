"""``telemetry.serve_metrics``: where loadgen serves its own metrics, as ``[HOST:]PORT``.

Owns the parse (a bare port binds loopback; an IPv6 host goes in brackets,
``[::1]:9348``) and the rule that a bind beyond loopback needs a token, the
agent's rule (:mod:`loadgen.bearer`).
"""

from __future__ import annotations

from loadgen.bearer import is_loopback

__all__ = ["DEFAULT_HOST", "needs_token", "parse_listen"]

#: where a bare PORT binds
DEFAULT_HOST = "127.0.0.1"

_EXPECTED = "expected [HOST:]PORT, e.g. 9348, 127.0.0.1:9348, 0.0.0.0:9348 or [::1]:9348"


def parse_listen(text: str) -> tuple[str, int]:
    """``"9348"`` -> ``("127.0.0.1", 9348)``; ``"0.0.0.0:9348"``; ``"[::1]:9348"``.

    Port 0 picks a free port. Raises ValueError (a pydantic validator's message).
    """
    value = text.strip()
    host, sep, port = value.rpartition(":")
    if not sep:
        host = DEFAULT_HOST
    elif host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host or not host:
        raise ValueError(f"{text!r}: {_EXPECTED}")
    if not port.isdigit() or not 0 <= int(port) <= 65535 or not host:
        raise ValueError(f"{text!r}: {_EXPECTED} (port 0..65535)")
    return host, int(port)


def needs_token(text: str) -> bool:
    """The address binds beyond loopback: a token is required."""
    return not is_loopback(parse_listen(text)[0])
