"""Who may read a metrics port: the loopback test and the bearer-token check.

Shared by the agent's HTTP side and loadgen's own metrics exporter, so both
refuse the same way: a port bound beyond loopback needs a token, and a
request's ``Authorization`` header is compared in constant time.
"""

from __future__ import annotations

import hmac
import ipaddress

__all__ = ["bearer_matches", "is_loopback"]


def is_loopback(host: str) -> bool:
    """``host`` is ``localhost`` or a loopback address; a host name counts as reachable."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: assume it is reachable from elsewhere
        return False


def bearer_matches(header: str | None, token: str) -> bool:
    """``header`` is exactly ``Bearer <token>`` (constant-time comparison)."""
    given = (header or "").encode()
    return hmac.compare_digest(given, f"Bearer {token}".encode())
