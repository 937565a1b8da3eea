"""Secrets out of everything loadgen writes or prints; the requests still carry them.

Three kinds of secret reach loadgen from a scenario: a password in a URL
(``http://user:pw@host``), a header value (``Authorization``, ``x-goog-api-key``,
...) and a credential-like key in ``extra_body``. A fourth comes back from the
server: a 401 body or an error event that echoes the key it was sent. Outputs
(summary.json, records.jsonl, the reports, scenario.yaml, warnings, error
lines) pass through these functions; the client is given the original values.
:func:`warn` is the one way a warning or error line reaches stderr, redacted.

- :func:`redact_text`: for any text loadgen stores or prints that came from a
  user or a server. In every URL the userinfo is dropped (it ends at the last
  ``@`` before the host: ``user:p@ss@host``; where a password holds an unencoded
  ``/``, ``?`` or ``#`` the URL cannot be parsed, and everything up to its last
  ``@`` goes), query values of key-like names are masked (``?key=<redacted>``),
  and every secret value the scenario configured (:func:`set_secrets`: the API
  key, header values, URL passwords, the agents' token) is replaced wherever
  it appears.
- :func:`strip_userinfo`: one URL without its userinfo (for a URL field).
- :func:`redact_headers`: header values shown only for names on
  :data:`SAFE_HEADERS` (a deny-list cannot know every vendor's key header).
- :func:`redact_body`: a JSON-like mapping whose credential-like keys
  (:func:`secret_key`) hold :data:`REDACTED`, at any depth.
"""

from __future__ import annotations

import base64
import json
import re
import sys
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, unquote, urlsplit, urlunsplit

__all__ = [
    "MIN_SECRET_CHARS",
    "REDACTED",
    "SAFE_HEADERS",
    "redact_body",
    "redact_headers",
    "redact_text",
    "secret_key",
    "set_secrets",
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

#: A key is a credential when one of its words (``-``/``_``/camelCase, a plural
#: ``s`` dropped) is one of these ...
_SECRET_WORDS = frozenset(
    {
        *("secret", "password", "passwd", "passphrase", "passcode", "pass", "pwd", "pw"),
        *("auth", "authorization", "authentication", "bearer", "jwt", "cookie", "credential"),
        *("apikey", "signature", "sig", "privatekey", "authtoken", "accesstoken"),
    }
)
#: ... or its words run together hold one of these (``X-ApiKey``, ``mysecretvalue``) ...
_SECRET_PARTS = (
    *("apikey", "secret", "password", "passwd", "passphrase", "credential"),
    *("authorization", "bearer", "jwt", "cookie", "accesstoken", "authtoken"),
)
#: ... or one of its words is one of these and its value is not a number, a flag or
#: a list of them (``access_tokens: [...]`` is a credential, ``max_tokens: 64`` a count,
#: ``stop_token_ids: [2]`` token ids).
_VALUE_WORDS = frozenset({"key", "token"})

#: ``scheme://`` and the rest of the URL, up to a space or a quote
_URL = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<rest>[^\s\"'<>`]*)")

#: a configured secret shorter than this is not searched for in free text (it would
#: match ordinary words); its URL and header forms are redacted all the same
MIN_SECRET_CHARS = 4

#: the secret values :func:`set_secrets` was given, each in the forms a server may echo
_secrets: tuple[str, ...] = ()


def set_secrets(values: Iterable[str]) -> None:
    """Redact ``values`` from every later :func:`redact_text` (and :func:`warn`).

    Each is also searched for as JSON escapes it, percent-encoded and decoded, and,
    for ``user:password``, as the base64 of an HTTP Basic header. Replaces the
    values set before (an empty list: none).
    """
    forms: set[str] = set()
    for value in values:
        escaped = json.dumps(value)[1:-1]
        variants = {value, unquote(value), quote(value, safe=""), escaped}
        variants.add(escaped.replace("/", "\\/"))  # JSON may escape a slash too
        if ":" in value:  # userinfo: what aiohttp and httpx send as Basic auth
            variants.add(base64.b64encode(unquote(value).encode()).decode())
        forms |= {v for v in variants if len(v) >= MIN_SECRET_CHARS}
    global _secrets
    _secrets = tuple(sorted(forms, key=len, reverse=True))  # the longest form first


def _words(key: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", key)
    return re.findall(r"[a-z0-9]+", spaced.lower())


def _is_plain(value: Any) -> bool:
    """A number, a flag, None, or a list of those: a count or an id, not a credential."""
    if isinstance(value, list):
        return all(_is_plain(v) for v in value)
    return value is None or isinstance(value, bool | int | float)


def secret_key(key: str, value: Any = "") -> bool:
    """Whether a mapping's ``key`` (holding ``value``) names a credential.

    ``passphrase``, ``auth_header``, ``bearer``, ``jwt``, ``session_cookies``,
    ``access_tokens`` and ``api_key`` do; ``max_tokens: 64``, ``top_k``,
    ``ignore_eos``, ``stop_token_ids: [2]`` do not.
    """
    words = _words(key)
    singular = [w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words]
    if any(w in _SECRET_WORDS for w in (*words, *singular)):
        return True
    flat = "".join(words)
    if any(part in flat for part in _SECRET_PARTS):
        return True
    return any(w in _VALUE_WORDS for w in singular) and not _is_plain(value)


def _mask_query(rest: str) -> str:
    """``rest`` (a URL after ``scheme://``) with the values of key-like query names masked."""
    start = rest.find("?")
    if start < 0:
        return rest
    end = rest.find("#", start)
    end = len(rest) if end < 0 else end
    pairs = rest[start + 1 : end].split("&")
    for i, pair in enumerate(pairs):
        name, eq, value = pair.partition("=")
        if eq and value and secret_key(unquote(name)):  # a query value is text: key= masked
            pairs[i] = f"{name}={REDACTED}"
    return rest[: start + 1] + "&".join(pairs) + rest[end:]


def _drop_userinfo(rest: str) -> str:
    """``rest`` (a URL after ``scheme://``) without its userinfo.

    The userinfo ends at the last ``@`` before the first ``/`` (``user:p@ss@host/``).
    An ``@`` only after it means a password with an unencoded ``/``, ``?`` or ``#``
    (``user:pa/ss@host``), or an ``@`` in the path: everything up to the last ``@``
    goes (for a message, a host lost is better than a password shown).
    """
    slash = rest.find("/")
    head = rest if slash < 0 else rest[:slash]
    if "@" in head:
        return rest[head.rindex("@") + 1 :]
    if "@" in rest:
        return rest[rest.rindex("@") + 1 :]
    return rest


def _redact_url(match: re.Match[str]) -> str:
    return match["scheme"] + _mask_query(_drop_userinfo(match["rest"]))


def _redact_secrets(text: str) -> str:
    for secret in _secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def strip_userinfo(url: str) -> str:
    """``url`` without ``user:password@`` and with key-like query values masked.

    Anything that is not a URL comes back through :func:`redact_text`.
    """
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  # raises on a port that is not a number
    except ValueError:
        return redact_text(url)
    if "@" not in parts.netloc:
        if "@" in url and not parts.hostname:
            return redact_text(url)
        query = _mask_query("?" + parts.query)[1:] if parts.query else parts.query
        return _redact_secrets(urlunsplit(parts._replace(query=query)))
    host = parts.netloc.rsplit("@", 1)[1]
    query = _mask_query("?" + parts.query)[1:] if parts.query else parts.query
    return _redact_secrets(urlunsplit((parts.scheme, host, parts.path, query, parts.fragment)))


def redact_text(text: str) -> str:
    """``text`` with every URL's userinfo and key-like query values, and every configured
    secret (:func:`set_secrets`), removed: for anything stored or printed."""
    if "://" in text:
        text = _URL.sub(_redact_url, text)
    return _redact_secrets(text) if _secrets else text


def redact_headers(headers: dict[str, str]) -> dict[str, str]:
    """Header values replaced by :data:`REDACTED` unless the name is on :data:`SAFE_HEADERS`."""
    return {k: v if k.lower() in SAFE_HEADERS else REDACTED for k, v in headers.items()}


def redact_body(body: Any) -> Any:
    """A copy of a JSON-like ``body`` whose credential-like keys (:func:`secret_key`)
    hold :data:`REDACTED`, in every mapping at any depth."""
    if isinstance(body, dict):
        return {k: REDACTED if secret_key(str(k), v) else redact_body(v) for k, v in body.items()}
    if isinstance(body, list):
        return [redact_body(v) for v in body]
    return body


def warn(text: str) -> None:
    """One warning or error line, on stderr; no URL password or configured secret in it."""
    print(redact_text(text), file=sys.stderr, flush=True)
