"""A small JSON-schema instance maker: a value valid for a schema, seeded; and one that is not.

Covers what tool parameters and response formats use: ``type`` (object,
array, string, number, integer, boolean, null, or a list of them: the first),
``enum`` and ``const``, ``properties`` with ``required`` (every required
property, and the optional ones too), ``items`` with ``minItems`` /
``maxItems``, ``minLength`` / ``maxLength``, ``minimum`` / ``maximum``, and
``anyOf`` / ``oneOf`` (the first branch). Anything else yields a string.

:func:`broken` makes an answer invalid the way a faulty decoder does: its
JSON text cut short, or one value of the wrong type.
"""

from __future__ import annotations

import json
import random
from typing import Any

__all__ = ["broken", "instance"]

_WORDS = ("tok", "the", "a", "of", "and", "to", "in")


def instance(schema: Any, rng: random.Random, depth: int = 0) -> Any:
    """A value valid for ``schema`` (within the keywords above)."""
    if not isinstance(schema, dict):
        return {}
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return rng.choice(schema["enum"])
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return instance(schema[key][0], rng, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = kind[0] if kind else None
    if kind is None and "properties" in schema:
        kind = "object"
    if kind == "object":
        return _object(schema, rng, depth)
    if kind == "array":
        low = int(schema.get("minItems", 1))
        high = max(low, min(int(schema.get("maxItems", low + 2)), low + 2))
        n = 0 if depth > 4 else rng.randint(low, high)
        return [instance(schema.get("items", {}), rng, depth + 1) for _ in range(n)]
    if kind == "integer":
        return rng.randint(int(schema.get("minimum", 0)), int(schema.get("maximum", 100)))
    if kind == "number":
        lo, hi = float(schema.get("minimum", 0)), float(schema.get("maximum", 100))
        return round(rng.uniform(lo, hi), 2)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    return _string(schema, rng)


def _object(schema: dict[str, Any], rng: random.Random, depth: int) -> dict[str, Any]:
    props = schema.get("properties")
    if not isinstance(props, dict):
        return {}
    return {name: instance(sub, rng, depth + 1) for name, sub in props.items()}


def _string(schema: dict[str, Any], rng: random.Random) -> str:
    low = int(schema.get("minLength", 1))
    high = int(schema.get("maxLength", max(low, 24)))
    words: list[str] = []
    while len(" ".join(words)) < low or (not words and high > 0):
        words.append(rng.choice(_WORDS))
    return " ".join(words)[:high].ljust(low, "x")


def broken(schema: Any, value: Any, rng: random.Random) -> str:
    """JSON text for ``value`` that is invalid for ``schema``: one value of the wrong type
    (a number where the schema wants text, text for anything else) or the text cut short."""
    if isinstance(value, dict) and value and rng.random() < 0.5:
        key = rng.choice(sorted(value))
        sub = (schema.get("properties") or {}).get(key, {}) if isinstance(schema, dict) else {}
        kind = sub.get("type") if isinstance(sub, dict) else None
        value = {**value, key: 12345 if kind == "string" or "enum" in sub else "wrong type"}
        return json.dumps(value, separators=(",", ":"))
    text = json.dumps(value, separators=(",", ":"))
    return text[: max(1, len(text) * 2 // 3)]
