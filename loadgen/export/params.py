"""The resolved scenario as flat MLflow parameters: ``load.concurrency`` -> ``[1, 4, 16]``.

A nested mapping becomes dotted keys; a list, an empty mapping or a scalar is
the value, as JSON (``null``, ``true``, ``[1,4]``; a string as itself). Secrets
are redacted again, though scenario.yaml was written redacted: header values
(:func:`loadgen.redact.redact_headers`) and credential-like keys of
``target.extra_body`` (:func:`loadgen.redact.redact_body`) hold ``<redacted>``,
as scenario.yaml has them, and every value passes
:func:`loadgen.redact.redact_text` (URL passwords, the secrets this process was
given). Keys keep only the characters
MLflow allows (others become ``_``); a key or value past MLflow's limit is cut
and ends in ``...``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson

from loadgen.redact import redact_body, redact_headers, redact_text

__all__ = ["MAX_KEY", "MAX_VALUE", "flatten"]

#: MLflow's limits on a parameter's key and value (characters)
MAX_KEY = 250
MAX_VALUE = 6000
_BAD_KEY_CHARS = re.compile(r"[^\w\-. /]")


def flatten(data: Mapping[str, Any]) -> dict[str, str]:
    """Every leaf of ``data`` under its dotted key, as text, secrets redacted."""
    out: dict[str, str] = {}
    data = dict(data)
    target = data.get("target")
    if isinstance(target, Mapping):
        target = data["target"] = dict(target)
        if isinstance(headers := target.get("headers"), Mapping):
            target["headers"] = redact_headers({str(k): str(v) for k, v in headers.items()})
        if isinstance(body := target.get("extra_body"), Mapping):
            target["extra_body"] = redact_body(body)
    _walk(data, "", out)
    return out


def _walk(data: Mapping[str, Any], prefix: str, out: dict[str, str]) -> None:
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            _walk(value, f"{name}.", out)
        else:
            out[_cut(_BAD_KEY_CHARS.sub("_", name), MAX_KEY)] = _cut(_text(value), MAX_VALUE)


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else orjson.dumps(value, default=str).decode()
    return redact_text(text)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
