"""Secrets out of everything loadgen writes or prints; the requests still carry them.

Three kinds of secret reach loadgen from a scenario: a password in a URL
(``http://user:pw@host``), a header value (``Authorization``, ``x-goog-api-key``,
...) and a credential-like key in ``extra_body``. Outputs (summary.json, the
reports, scenario.yaml, warnings) pass through these functions; the client is
given the original values. :func:`warn` is the one way a warning or error line
reaches stderr, redacted.

Header values are shown only for names on :data:`SAFE_HEADERS`: a deny-list
cannot know every vendor's key header.

Imports: the standard library only.
"""

from __future__ import annotations

import re
import sys
from typing import Any
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "REDACTED",
    "SAFE_HEADERS",
    "redact_body",
    "redact_headers",
    "redact_text",
    "strip_userinfo",
    "warn",
]

REDACTED = "<redacted>"

#: Header names (lower case) whose values are harmless to write down.
SAFE_HEADERS = frozenset(
    {
        "accept",
        "accept-encoding",
        "accept-language",
        "cache-control",
        "connection",
        "content-type",
        "user-agent",
    }
)

#: A body key is a credential when its flattened form (lower case, no ``-``/``_``)
#: holds one of these ...
_SECRET_KEY_PARTS = ("apikey", "secret", "password", "passwd", "authorization", "credential")
#: ... or its last word is one of these (``access_token`` but not ``max_tokens``).
_SECRET_LAST_WORDS = frozenset({"key", "token", "auth", "cookie", "signature", "pw", "pwd"})

#: ``scheme://userinfo@`` anywhere in a text
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/?#@\s\"'<>]*@")


def strip_userinfo(url: str) -> str:
    """``url`` without ``user:password@``; anything that is not a URL comes back as is."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact_text(url)
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def redact_text(text: str) -> str:
    """``text`` with the userinfo of every URL in it removed (for messages)."""
    return _USERINFO.sub(r"\g<scheme>", text)


def redact_headers(headers: dict[str, str]) -> dict[str, str]:
    """Header values replaced by :data:`REDACTED` unless the name is on :data:`SAFE_HEADERS`."""
    return {k: v if k.lower() in SAFE_HEADERS else REDACTED for k, v in headers.items()}


def _secret_key(key: str) -> bool:
    words = re.findall(r"[a-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", key).lower())
    if words and words[-1] in _SECRET_LAST_WORDS:
        return True
    flat = "".join(words)
    return any(part in flat for part in _SECRET_KEY_PARTS)


def redact_body(body: Any) -> Any:
    """A copy of a JSON-like ``body`` whose credential-like keys hold :data:`REDACTED`."""
    if isinstance(body, dict):
        return {k: REDACTED if _secret_key(str(k)) else redact_body(v) for k, v in body.items()}
    if isinstance(body, list):
        return [redact_body(v) for v in body]
    return body


def warn(text: str) -> None:
    """One warning or error line, on stderr; a URL's password is left out."""
    print(redact_text(text), file=sys.stderr, flush=True)
